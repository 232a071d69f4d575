package core

import (
	"strconv"
	"strings"
)

// StatusClass is the one rule from an HTTP status to an error class, shared
// by the engine and every importer:
//
//   - 400–499 → ErrHTTP4xx and 500–599 → ErrHTTP5xx, failed or not by the
//     tool's own judgement (a tool that accepted a 404 still got a 404; the
//     caller decides whether the exchange failed, see StatusFails);
//   - 100–399 → ErrCheck: a response with a success status that the tool
//     marked failed was failed by a check or an assertion;
//   - any other number (600 and above, or 1–99) → ErrProtocol: it is no
//     HTTP status;
//   - 0 → ErrOther: no response arrived, so the status cannot tell why; the
//     caller classifies the transport error instead.
func StatusClass(status int) ErrorClass {
	switch {
	case status >= 500 && status <= 599:
		return ErrHTTP5xx
	case status >= 400 && status <= 499:
		return ErrHTTP4xx
	case status >= 100 && status <= 399:
		return ErrCheck
	case status == 0:
		return ErrOther
	}
	return ErrProtocol
}

// StatusFails reports whether a response with this status fails when
// nothing else (a check, an assertion) judged it: 4xx, 5xx, and numbers that
// are no HTTP status. 0 (no response) fails too.
func StatusFails(status int) bool { return status < 100 || status >= 400 }

// GRPCClass is the one rule from a gRPC status code (0–16, as numbered by
// google.golang.org/grpc/codes) to an error class: OK (0) is ErrNone, each
// other code its own class (14 UNAVAILABLE → ErrGRPCUnavailable, 4
// DEADLINE_EXCEEDED → ErrGRPCDeadlineExceeded, …), and a number outside
// the table ErrProtocol: it is no gRPC status.
func GRPCClass(code uint32) ErrorClass {
	switch {
	case code == 0:
		return ErrNone
	case code <= 16:
		return ErrGRPCCanceled + ErrorClass(code-1)
	}
	return ErrProtocol
}

// GRPCCodeName is a gRPC status code's name as the gRPC specification
// writes it (OK, CANCELLED, DEADLINE_EXCEEDED, …), or CODE_n outside the
// table.
func GRPCCodeName(code uint32) string {
	if code < uint32(len(grpcCodeNames)) {
		return grpcCodeNames[code]
	}
	return "CODE_" + strconv.FormatUint(uint64(code), 10)
}

var grpcCodeNames = [...]string{"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
	"UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"}

// ParseGRPCCode reads a gRPC status code by name (any case; CANCELED is
// accepted for CANCELLED) or number (0–16).
func ParseGRPCCode(s string) (uint32, bool) {
	u := strings.ToUpper(strings.TrimSpace(s))
	if u == "CANCELED" {
		u = "CANCELLED"
	}
	for i, n := range grpcCodeNames {
		if n == u {
			return uint32(i), true
		}
	}
	if n, err := strconv.ParseUint(u, 10, 32); err == nil && n < uint64(len(grpcCodeNames)) {
		return uint32(n), true
	}
	return 0, false
}
