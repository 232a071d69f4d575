package h2

import (
	"strconv"

	"golang.org/x/net/http2"
)

// The errors a request fails with keep the server's HTTP/2 error code and
// GOAWAY debug data, and never a stream id: failures are grouped by their
// message, and x/net's texts ("stream error: stream ID 7; …",
// "LastStreamID=199") made every reset a distinct message, so a run that
// failed on resets named "(other messages)" as its main reason (issue 31).

// ResetError is a stream the server reset with RST_STREAM while the
// connection stayed up: class h2_stream_reset.
type ResetError struct {
	Code http2.ErrCode
}

func (e *ResetError) Error() string { return "stream reset by the server: " + e.Code.String() }

// StreamError is a stream plateau reset because the server broke the
// protocol on it (a response without :status, DATA before the head, a
// header list too large): class protocol.
type StreamError struct {
	Code  http2.ErrCode
	Cause error // what was wrong; may be nil
}

func (e *StreamError) Error() string {
	s := "malformed HTTP/2 response, stream reset: " + e.Code.String()
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

func (e *StreamError) Unwrap() error { return e.Cause }

// GoAwayError is a request ended by the server's GOAWAY: refused (its
// stream above the last one the GOAWAY accepted, still refused after the
// retries), or cut off when the server closed the connection after the
// GOAWAY before the response was complete. With NO_ERROR it is a graceful
// shutdown that caught the request: class reset. Any other code is the
// server declaring a connection error (PROTOCOL_ERROR, ENHANCE_YOUR_CALM …):
// class protocol.
type GoAwayError struct {
	Code    http2.ErrCode
	Debug   string // the GOAWAY's debug data, at most maxDebug bytes
	Refused bool   // the stream was above the GOAWAY's last stream id
}

// maxDebug bounds the debug data kept in a message: a server decides its
// length (up to a frame, 16 KiB).
const maxDebug = 128

func (e *GoAwayError) Error() string {
	s := "server sent GOAWAY " + e.Code.String()
	if e.Refused {
		s += ", request refused unprocessed"
	} else {
		s += " and closed the connection before the response ended"
	}
	if e.Debug != "" {
		s += " (debug data " + strconv.Quote(e.Debug) + ")"
	}
	return s
}

// goAway makes the error of a GOAWAY frame's debug data and code.
func goAway(code http2.ErrCode, debug []byte, refused bool) *GoAwayError {
	if len(debug) > maxDebug {
		debug = debug[:maxDebug]
	}
	return &GoAwayError{Code: code, Debug: string(debug), Refused: refused}
}

// localReset turns x/net's StreamError (a stream plateau resets, or the
// Framer rejected) into a StreamError without the stream id.
func localReset(se http2.StreamError) *StreamError {
	return &StreamError{Code: se.Code, Cause: se.Cause}
}
