// Package grpc makes the engine's gRPC calls: unary and server-streaming
// methods with dynamic messages (google.golang.org/protobuf's dynamicpb),
// described by .proto files compiled at plan load (package
// plan/protofile) or asked of the server's reflection service. Transport,
// framing and status handling are google.golang.org/grpc's.
//
// A call fills the same httpc.Result as an HTTP request, so the engine
// times, checks and extracts a gRPC response like an HTTP one: Body is
// the response message in its JSON form (protojson, field names as
// written in the .proto, unset fields included), a JSON array of the
// messages for a server stream; response metadata (headers, then
// trailers) are the Result's header fields; Class is core.GRPCClass of
// the status code.
package grpc

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	ggrpc "google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/jhump/protoreflect/v2/grpcreflect"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/engine/httpc"
	"github.com/plateau-perf/plateau/internal/plan/protofile"
)

// Config tunes a Conn.
type Config struct {
	// ConnectTimeout bounds one connection attempt (TCP and TLS); 0: 5s.
	ConnectTimeout time.Duration
	// Timeout is a call's deadline when the Call gives none; 0: 30s.
	Timeout time.Duration
	// TLS, when set, connects over TLS with this configuration (cloned);
	// nil connects in cleartext (HTTP/2 with prior knowledge).
	TLS *tls.Config
	// MaxBody bounds the bytes of a response's JSON form kept in
	// Result.Body: a stream keeps its first messages that fit, a unary
	// response is cut.
	MaxBody   int
	UserAgent string
}

// Conn is a client connection to one target (host:port), shared by the
// calls of one user or of all users (http.connections). It is safe for
// concurrent use. grpc-go connects on the first call and reconnects after
// failures.
type Conn struct {
	cc  *ggrpc.ClientConn
	cfg Config

	mu      sync.Mutex
	methods map[string]*methodOnce // reflection results, by method name
}

type methodOnce struct {
	once sync.Once
	m    *Method
	err  error
}

// Dial makes a connection to target (host:port); nothing is sent until
// the first call.
func Dial(target string, cfg Config) (*Conn, error) {
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = 5 * time.Second
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	creds := insecure.NewCredentials()
	if cfg.TLS != nil {
		creds = credentials.NewTLS(cfg.TLS.Clone())
	}
	opts := []ggrpc.DialOption{
		ggrpc.WithTransportCredentials(creds),
		ggrpc.WithConnectParams(ggrpc.ConnectParams{Backoff: backoff.DefaultConfig, MinConnectTimeout: cfg.ConnectTimeout}),
		// The message size is bounded by the server; the load generator
		// reads what it is sent (only the JSON form kept is capped).
		ggrpc.WithDefaultCallOptions(ggrpc.MaxCallRecvMsgSize(1 << 30)),
	}
	if cfg.UserAgent != "" {
		opts = append(opts, ggrpc.WithUserAgent(cfg.UserAgent))
	}
	// passthrough: the address is dialled as given, without grpc-go's DNS
	// resolver polling it.
	cc, err := ggrpc.NewClient("passthrough:///"+target, opts...)
	if err != nil {
		return nil, fmt.Errorf("grpc target %s: %w", target, err)
	}
	return &Conn{cc: cc, cfg: cfg, methods: map[string]*methodOnce{}}, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.cc.Close() }

// Method is a method ready to call. It is immutable.
type Method struct {
	Path     string // "/package.Service/Method"
	Name     string // "package.Service/Method"
	In, Out  protoreflect.MessageDescriptor
	Streamed bool // server streaming
}

// NewMethod makes a Method of a descriptor. Client and bidirectional
// streaming methods are refused: plateau sends one request message.
func NewMethod(md protoreflect.MethodDescriptor) (*Method, error) {
	if md.IsStreamingClient() {
		return nil, fmt.Errorf("method %s is client streaming; grpc steps call unary and server-streaming methods", md.FullName())
	}
	name := string(md.Parent().FullName()) + "/" + string(md.Name())
	return &Method{Path: "/" + name, Name: name, In: md.Input(), Out: md.Output(), Streamed: md.IsStreamingServer()}, nil
}

// Reflect finds a method by asking the server's reflection service (v1,
// else v1alpha), once per Conn and method; later calls return the first
// answer. A failure is a *status.Status error when the server answered
// with one (UNIMPLEMENTED: no reflection service; UNAVAILABLE: no server).
func (c *Conn) Reflect(ctx context.Context, name string) (*Method, error) {
	c.mu.Lock()
	mo := c.methods[name]
	if mo == nil {
		mo = &methodOnce{}
		c.methods[name] = mo
	}
	c.mu.Unlock()
	mo.once.Do(func() { mo.m, mo.err = c.reflect(ctx, name) })
	return mo.m, mo.err
}

func (c *Conn) reflect(ctx context.Context, name string) (*Method, error) {
	svc, meth, err := protofile.SplitMethod(name)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	rc := grpcreflect.NewClientAuto(ctx, c.cc)
	defer rc.Reset()
	fd, err := rc.FileContainingSymbol(protoreflect.FullName(svc))
	if err != nil {
		if s, ok := status.FromError(err); ok && s.Code() != codes.Unknown {
			return nil, fmt.Errorf("reflection: %w", statusError{s})
		}
		if grpcreflect.IsElementNotFoundError(err) {
			return nil, fmt.Errorf("reflection: the server has no service %s", svc)
		}
		return nil, fmt.Errorf("reflection: %w", err)
	}
	var sd protoreflect.ServiceDescriptor
	for i := 0; i < fd.Services().Len(); i++ {
		if fd.Services().Get(i).FullName() == protoreflect.FullName(svc) {
			sd = fd.Services().Get(i)
		}
	}
	if sd == nil {
		return nil, fmt.Errorf("reflection: %s is not a service", svc)
	}
	md := sd.Methods().ByName(protoreflect.Name(meth))
	if md == nil {
		return nil, fmt.Errorf("reflection: service %s has no method %s", svc, meth)
	}
	return NewMethod(md)
}

// Call is one call's request. Message is the request message in JSON
// (protojson: field names as in the .proto or in lowerCamelCase);
// Metadata are key, value pairs (keys lower case).
type Call struct {
	Method   *Method
	Message  []byte
	Metadata []string
	Timeout  time.Duration // the call's deadline; 0: Config.Timeout
}

// Outcome is what a call's httpc.Result cannot say.
type Outcome struct {
	Code     codes.Code
	Messages int // response messages received
	// NotSent: the request message did not fit the method's input type
	// (Result.Err says why); nothing was sent.
	NotSent bool
	// Arrivals are when each message of a server stream arrived, from
	// Result.Start; valid until the Client's next Do. Nil for unary calls.
	Arrivals []time.Duration
}

// Client makes one user's calls on a Conn; it owns the buffers a Result
// points into. A Client is not safe for concurrent use.
type Client struct {
	conn *Conn
	body []byte
	arr  []time.Duration
	tmp  []byte       // one message's JSON form
	cbuf bytes.Buffer // the same, compacted
}

// NewClient makes a Client on conn.
func NewClient(conn *Conn) *Client { return &Client{conn: conn} }

// Conn is the Client's connection.
func (cl *Client) Conn() *Conn { return cl.conn }

var jsonOut = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}

// frameHeader is the gRPC length-prefix of a message on the wire.
const frameHeader = 5

// Do makes the call and fills res (overwriting every field): Start, TTFB
// (to the first response message), Total (to the status), BytesSent and
// BytesRecv (messages with their 5-byte gRPC frame prefix; HTTP/2 frames
// and headers are not counted), Body (see the package doc; valid until
// the next Do), BodySize (the whole JSON form's size), the metadata as
// header fields, Class and Err. A request message that does not fit the
// method's input type fails before anything is sent (class other).
func (cl *Client) Do(ctx context.Context, call *Call, res *httpc.Result) Outcome {
	*res = httpc.Result{Start: time.Now(), Proto: "gRPC"}
	m := call.Method
	in := dynamicpb.NewMessage(m.In)
	if err := (protojson.UnmarshalOptions{}).Unmarshal(call.Message, in); err != nil {
		res.Class, res.Err = core.ErrOther, fmt.Errorf("request message %s: %w", m.In.FullName(), err)
		res.Total = time.Since(res.Start)
		return Outcome{Code: codes.Unknown, NotSent: true}
	}
	timeout := call.Timeout
	if timeout <= 0 {
		timeout = cl.conn.cfg.Timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if len(call.Metadata) > 0 {
		ctx = metadata.AppendToOutgoingContext(ctx, call.Metadata...)
	}
	var header, trailer metadata.MD
	out := dynamicpb.NewMessage(m.Out)
	cl.body = cl.body[:0]
	var o Outcome
	var err error
	res.BytesSent = int64(proto.Size(in) + frameHeader)
	if !m.Streamed {
		err = cl.conn.cc.Invoke(ctx, m.Path, in, out, ggrpc.Header(&header), ggrpc.Trailer(&trailer))
		res.Total = time.Since(res.Start)
		if err == nil {
			o.Messages = 1
			res.TTFB = res.Total
			res.BytesRecv = int64(proto.Size(out) + frameHeader)
			cl.appendJSON(out, res)
		}
	} else {
		o.Messages, err = cl.stream(ctx, m, in, out, res, &header, &trailer)
		res.Total = time.Since(res.Start)
		o.Arrivals = cl.arr
	}
	st := status.Convert(err)
	o.Code = st.Code()
	res.Class = core.GRPCClass(uint32(o.Code))
	if err != nil {
		res.Err = statusError{st}
		if o.Code == codes.Unknown && !isStatus(err) {
			res.Class = core.ErrOther
		}
	}
	for _, md := range []metadata.MD{header, trailer} {
		for k, vs := range md {
			for _, v := range vs {
				res.AddHeader(k, v)
			}
		}
	}
	res.Body = cl.body
	return o
}

func (cl *Client) stream(ctx context.Context, m *Method, in, out *dynamicpb.Message, res *httpc.Result, header, trailer *metadata.MD) (int, error) {
	st, err := cl.conn.cc.NewStream(ctx, &ggrpc.StreamDesc{ServerStreams: true}, m.Path)
	if err != nil {
		return 0, err
	}
	if err := st.SendMsg(in); err != nil && err != io.EOF {
		return 0, err
	}
	// io.EOF from SendMsg means the stream ended; RecvMsg says how.
	_ = st.CloseSend()
	n := 0
	cl.arr = cl.arr[:0]
	cl.body = append(cl.body, '[')
	res.BodySize = 2 // the brackets
	full := false
	for {
		proto.Reset(out)
		err = st.RecvMsg(out)
		if err != nil {
			break
		}
		at := time.Since(res.Start)
		if n == 0 {
			res.TTFB = at
		}
		cl.arr = append(cl.arr, at)
		n++
		res.BytesRecv += int64(proto.Size(out) + frameHeader)
		mark := len(cl.body)
		if n > 1 {
			cl.body = append(cl.body, ',')
			res.BodySize++
		}
		cl.appendJSON(out, res)
		if full || (cl.conn.cfg.MaxBody > 0 && len(cl.body)+1 > cl.conn.cfg.MaxBody) {
			// Keep whole messages only, so the kept part stays JSON.
			cl.body, full = cl.body[:mark], true
		}
	}
	cl.body = append(cl.body, ']')
	if h, herr := st.Header(); herr == nil {
		*header = h
	}
	*trailer = st.Trailer()
	if err == io.EOF {
		err = nil
	}
	return n, err
}

// appendJSON appends out's JSON form to the body, cut at MaxBody for a
// unary response, and adds its size to BodySize.
func (cl *Client) appendJSON(out *dynamicpb.Message, res *httpc.Result) {
	start := len(cl.body)
	var err error
	cl.tmp, err = jsonOut.MarshalAppend(cl.tmp[:0], out)
	if err != nil {
		// Not expected for a message that was just decoded; kept visible.
		cl.tmp = fmt.Appendf(cl.tmp[:0], "%q", err.Error())
	}
	// protojson varies its spacing on purpose (so that nobody relies on
	// it); compacted, the text a body: or regex: check sees is stable.
	cl.cbuf.Reset()
	if json.Compact(&cl.cbuf, cl.tmp) == nil {
		cl.tmp = append(cl.tmp[:0], cl.cbuf.Bytes()...)
	}
	cl.body = append(cl.body, cl.tmp...)
	res.BodySize += int64(len(cl.body) - start)
	if mb := cl.conn.cfg.MaxBody; mb > 0 && len(cl.body) > mb && start == 0 {
		cl.body = cl.body[:mb]
	}
}

// statusError is a call's failure: "grpc UNAVAILABLE: connection refused".
type statusError struct{ st *status.Status }

func (e statusError) Error() string {
	return "grpc " + core.GRPCCodeName(uint32(e.st.Code())) + ": " + e.st.Message()
}

// GRPCStatus lets status.FromError see the status.
func (e statusError) GRPCStatus() *status.Status { return e.st }

func isStatus(err error) bool {
	var s interface{ GRPCStatus() *status.Status }
	return errors.As(err, &s)
}
