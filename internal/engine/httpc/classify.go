package httpc

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"syscall"

	"github.com/plateau-perf/plateau/internal/core"
)

// phase is the step of an exchange an error came from; it settles cases the
// error value alone leaves open (an EOF during the TLS handshake is a TLS
// failure, during the response a reset).
type phase uint8

const (
	phaseNone phase = iota
	phaseDNS
	phaseConnect
	phaseTLS
	phaseWrite
	phaseRead
)

// Classify maps an error returned by Do (or found in Result.Err) to its
// class without looking at its text. It is exported for callers that wrap
// Do; Do itself fills Result.Class.
func Classify(err error) core.ErrorClass { return classify(err, phaseNone) }

func classify(err error, ph phase) core.ErrorClass {
	if err == nil {
		return core.ErrNone
	}
	var (
		dnsErr   *net.DNSError
		protoErr *ProtocolError
		hsErr    *handshakeError
	)
	switch {
	case errors.Is(err, context.Canceled):
		return core.ErrOther // the run was stopped: not the server's fault
	case errors.As(err, &dnsErr) || ph == phaseDNS:
		return core.ErrDNS // even a DNS timeout: the resolver is what failed
	case isTimeout(err):
		return core.ErrTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return core.ErrRefused
	case errors.As(err, &protoErr):
		return core.ErrProtocol
	case ph == phaseTLS || errors.As(err, &hsErr) || isTLSError(err):
		return core.ErrTLS
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
		return core.ErrReset
	}
	return core.ErrOther
}

// isTimeout covers connection deadlines, dial timeouts and context deadlines.
func isTimeout(err error) bool {
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// isTLSError recognises TLS and certificate errors outside the handshake
// (an alert on a later read, for instance).
func isTLSError(err error) bool {
	var (
		alert  tls.AlertError
		rec    tls.RecordHeaderError
		verify *tls.CertificateVerificationError
		ua     x509.UnknownAuthorityError
		host   x509.HostnameError
		inv    x509.CertificateInvalidError
	)
	if errors.As(err, &alert) || errors.As(err, &rec) || errors.As(err, &verify) ||
		errors.As(err, &ua) || errors.As(err, &host) || errors.As(err, &inv) {
		return true
	}
	// An alert the server sent (TLS 1.3's "certificate required" comes on
	// the first read, after the handshake): crypto/tls returns it as a
	// *net.OpError "remote error" around its unexported alert type.
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "remote error"
}

// connLost reports whether err means the peer closed or reset the
// connection, the signature of a kept-alive connection the server had
// already dropped.
func connLost(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNABORTED)
}

// handshakeError marks a failed TLS handshake, so that an EOF or reset
// during it classifies as ErrTLS from the error alone.
type handshakeError struct {
	addr string
	err  error
}

func (e *handshakeError) Error() string { return "tls handshake with " + e.addr + ": " + e.err.Error() }
func (e *handshakeError) Unwrap() error { return e.err }
