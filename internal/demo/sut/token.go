package sut

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Token errors; the front answers 401 for all of them.
var (
	errTokenMalformed = errors.New("malformed token")
	errTokenSignature = errors.New("bad token signature")
	errTokenExpired   = errors.New("token expired")
)

// tokenSigner issues and verifies stateless bearer tokens. A token is
// base64url(payload) "." base64url(HMAC-SHA256(secret, payload)) with
// payload = expiry-unix "|" nonce "|" user. Because verification needs only
// the shared secret, a token issued by one front instance is valid on every
// other, as behind the reference's round-robin load balancer. Safe for
// concurrent use.
type tokenSigner struct {
	secret []byte
	ttl    time.Duration
}

// issue returns a new token for user that expires ttl after now.
func (s tokenSigner) issue(user string, now time.Time) string {
	var nonce [12]byte
	_, _ = rand.Read(nonce[:]) // never fails (Go ≥ 1.24)
	payload := strconv.FormatInt(now.Add(s.ttl).Unix(), 10) + "|" +
		base64.RawURLEncoding.EncodeToString(nonce[:]) + "|" + user
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(payload)) + "." + enc.EncodeToString(s.mac([]byte(payload)))
}

// verify checks tok's signature and expiry at now and returns its user.
func (s tokenSigner) verify(tok string, now time.Time) (string, error) {
	p64, sig64, ok := strings.Cut(tok, ".")
	if !ok {
		return "", errTokenMalformed
	}
	enc := base64.RawURLEncoding
	payload, err := enc.DecodeString(p64)
	if err != nil {
		return "", errTokenMalformed
	}
	sig, err := enc.DecodeString(sig64)
	if err != nil {
		return "", errTokenMalformed
	}
	if !hmac.Equal(sig, s.mac(payload)) {
		return "", errTokenSignature
	}
	exp, rest, ok := strings.Cut(string(payload), "|")
	if !ok {
		return "", errTokenMalformed
	}
	_, user, ok := strings.Cut(rest, "|")
	if !ok {
		return "", errTokenMalformed
	}
	unix, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return "", errTokenMalformed
	}
	if !now.Before(time.Unix(unix, 0)) {
		return "", errTokenExpired
	}
	return user, nil
}

func (s tokenSigner) mac(payload []byte) []byte {
	m := hmac.New(sha256.New, s.secret)
	m.Write(payload)
	return m.Sum(nil)
}

// bearer extracts the token from an "Authorization: Bearer …" header value.
func bearer(h string) (string, bool) {
	const prefix = "bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return "", false
	}
	return strings.TrimSpace(h[len(prefix):]), true
}
