// Package httpc is plateau's HTTP/1.1 client: the code every generated
// request runs through, written directly on net.Conn so that the generator
// costs about what the fastest C tools cost per request.
//
// # Why not net/http
//
// net/http's Transport is built for many goroutines sharing one client: each
// connection has a reader and a writer goroutine, requests and responses cross
// channels, every request allocates a Request, a Response, header maps and a
// body reader, and a per-request timeout needs a timer or a context. Tools
// built on it (hey, vegeta) spend 65–106 µs of CPU per request on loopback.
// A load generator's virtual user is sequential: it sends one request and
// waits for the answer. So here a Client belongs to one user and does the
// whole exchange on the calling goroutine: it writes the request into a
// reused buffer, sends it in one system call and, on plain TCP, parks on the
// socket's read readiness in the same RawConn.Read (a peek for a close the
// server queued, the write, the wait, one read), parses
// the response head in place into reused buffers and discards or keeps the
// body. With Config.Buffers, the write buffer is handed back before the wait
// for the response and the read buffer borrowed when it arrives, so a user
// waiting for the server or thinking holds neither. In steady state (GET on
// a kept-alive connection, no redirect, no gzip) Do allocates nothing; the
// tests assert it.
//
// Deadlines come from Config.Timeout (and the context's deadline) and are
// set on the connection with SetDeadline, so no timer goroutine exists per
// request. Re-arming the socket timer on every request showed up in the
// profile, so a Timeout deadline may fire up to Timeout/64 late (under half a
// second at the 30 s default) and is re-armed only when it would otherwise
// fire early; a context deadline is always exact. Cancelling the context interrupts an exchange through one
// context.AfterFunc per distinct context, which forces the deadline into the
// past.
//
// # Ownership
//
// Callers own Request and Result and reuse them. Result.Body and the header
// accessors (Result.HeaderBytes, Result.Headers) point into buffers of the
// Client and are valid until the next Do on that Client. A Client is not safe
// for concurrent use. By default each Client has its own connections (one
// idle connection per host, like one browser per user); a Pool shares them
// among Clients.
//
// # Timings
//
//   - Result.Start: when Do was called; nothing was sent before it.
//   - Result.Connect: time spent opening connections for this request: DNS
//     lookup (unless cached by this client), TCP connect and TLS handshake. It
//     is 0 when a kept-alive connection was reused.
//   - Result.TTFB: from Start until the first byte of the final response has
//     been read from the socket (including Connect, sending, server time and
//     earlier redirect hops).
//   - Result.Total: from Start until the last byte of the body was read.
//
// # Stale connections and the retry rule
//
// A server may close a kept-alive connection while it is idle, or
// half-close it right after a response (shut its sending side and read on,
// as lingering closes do). On a plain TCP connection the client peeks at the
// socket (one non-blocking MSG_PEEK) just before writing each request,
// inside the same poller registration as the wait for the response: a close,
// a reset or unasked bytes found there drop the connection and the request
// goes out on a new one (not a retry: nothing was sent, as net/http's
// transport drops an idle connection its reader saw closed), and a close
// that arrives after the peek wakes the wait. Before reusing a TLS
// connection idle for more than a second, or one for a streamed body, the
// client peeks the same way. A close can still race with the request, so
// when a reused connection fails the request is sent again, once, on a new
// connection if
//
//   - writing the request failed before any byte was accepted by the
//     connection (whatever the method: the server saw nothing), or
//   - the write failed or the connection was closed or reset before any byte
//     of the response arrived, and the method is idempotent (GET, HEAD,
//     OPTIONS, TRACE, PUT, DELETE).
//
// Timeouts are never retried, nor is anything on a connection that was just
// opened. Result.Retried records that a retry happened; Total includes the
// failed attempt.
//
// # Errors
//
// Failures are classified into core.ErrorClass values from the error chain
// and the phase that failed, never from error text: deadline → ErrTimeout
// (connect timeouts included), ECONNREFUSED → ErrRefused, reset, broken pipe
// or early end of stream → ErrReset, *net.DNSError → ErrDNS, handshake and
// certificate failures → ErrTLS, malformed status line, headers, chunking,
// oversized heads (MaxHeaderBytes) or bad gzip → ErrProtocol (*ProtocolError).
// A cancelled context gives ErrOther with an error matching context.Canceled.
// HTTP status codes are not errors here.
package httpc
