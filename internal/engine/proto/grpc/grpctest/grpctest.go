// Package grpctest runs the gRPC test service (examples/grpc-echo/echo.proto) on
// 127.0.0.1 for the tests of the gRPC step: a real google.golang.org/grpc
// server whose handlers use dynamic messages, so no generated code is
// kept. It counts what it served, so tests compare plateau's figures with
// the server's own.
package grpctest

import (
	"context"
	"crypto/tls"
	"net"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/plateau-perf/plateau/internal/plan/protofile"
)

// Proto is the absolute path of the test service's .proto file.
func Proto() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "..", "examples", "grpc-echo", "echo.proto")
}

// Options configure a Server.
type Options struct {
	// Reflection registers the server reflection service (v1).
	Reflection bool
	// TLS, when set, serves TLS with this configuration.
	TLS *tls.Config
}

// Server is a running test server. Its counters are safe to read while it
// serves.
type Server struct {
	Addr string // 127.0.0.1:port
	// Say counts the unary calls, by the status code they ended with;
	// CountCalls the streaming calls, Sent the stream messages sent.
	CountCalls, Sent atomic.Int64
	// SayTime sums the time the Say handler spent per call (its delay),
	// in nanoseconds.
	SayTime atomic.Int64

	mu      sync.Mutex
	say     map[codes.Code]int64
	meta    map[string]string // last value seen of each request metadata key
	srv     *grpc.Server
	methods protoreflect.ServiceDescriptor
}

// Start starts a server on 127.0.0.1 and stops it when the test ends.
func Start(t testing.TB, opt Options) *Server {
	t.Helper()
	s, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.srv.Stop)
	return s
}

// New starts a server on 127.0.0.1; Stop stops it. (Start is New for a
// test; New serves a benchmark's server process, which has no test.)
func New(opt Options) (*Server, error) {
	set, err := protofile.Compile([]string{Proto()}, nil)
	if err != nil {
		return nil, err
	}
	files := new(protoregistry.Files)
	if err := register(files, set.Files()[0]); err != nil {
		return nil, err
	}
	sd := set.Files()[0].Services().ByName("Echo")
	s := &Server{say: map[codes.Code]int64{}, meta: map[string]string{}, methods: sd}
	var opts []grpc.ServerOption
	if opt.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(opt.TLS)))
	}
	s.srv = grpc.NewServer(opts...)
	say, count := sd.Methods().ByName("Say"), sd.Methods().ByName("Count")
	s.srv.RegisterService(&grpc.ServiceDesc{
		ServiceName: string(sd.FullName()),
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "Say", Handler: func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			in := dynamicpb.NewMessage(say.Input())
			if err := dec(in); err != nil {
				return nil, err
			}
			return s.handleSay(ctx, in, say.Output())
		}}},
		Streams: []grpc.StreamDesc{{StreamName: "Count", ServerStreams: true, Handler: func(_ any, st grpc.ServerStream) error {
			in := dynamicpb.NewMessage(count.Input())
			if err := st.RecvMsg(in); err != nil {
				return err
			}
			return s.handleCount(st, in, count.Output())
		}}},
		Metadata: "echo.proto",
	}, struct{}{})
	if opt.Reflection {
		reflectionpb.RegisterServerReflectionServer(s.srv, reflection.NewServerV1(reflection.ServerOptions{
			Services: s.srv, DescriptorResolver: files}))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.Addr = ln.Addr().String()
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// register adds f and its imports to files.
func register(files *protoregistry.Files, f protoreflect.FileDescriptor) error {
	if _, err := files.FindFileByPath(f.Path()); err == nil {
		return nil
	}
	for i := 0; i < f.Imports().Len(); i++ {
		if err := register(files, f.Imports().Get(i).FileDescriptor); err != nil {
			return err
		}
	}
	return files.RegisterFile(f)
}

// Stop stops the server at once (calls in flight fail).
func (s *Server) Stop() { s.srv.Stop() }

// Say returns how many unary calls ended with code.
func (s *Server) Say(code codes.Code) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.say[code]
}

// Metadata returns the last value the server received for a request
// metadata key ("" when never seen).
func (s *Server) Metadata(key string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.meta[key]
}

var seq atomic.Int64

func (s *Server) handleSay(ctx context.Context, in *dynamicpb.Message, out protoreflect.MessageDescriptor) (any, error) {
	f := in.Descriptor().Fields()
	code := codes.OK
	defer func() {
		s.mu.Lock()
		s.say[code]++
		s.mu.Unlock()
	}()
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		s.mu.Lock()
		for k, v := range md {
			s.meta[k] = v[len(v)-1]
		}
		s.mu.Unlock()
		if v := md.Get("x-echo"); len(v) > 0 {
			_ = grpc.SetHeader(ctx, metadata.Pairs("x-echoed", v[0]))
		}
	}
	start := time.Now()
	if d := time.Duration(in.Get(f.ByName("delay_ms")).Int()) * time.Millisecond; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			code = status.FromContextError(ctx.Err()).Code()
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	}
	s.SayTime.Add(int64(time.Since(start)))
	if c := in.Get(f.ByName("code")).Int(); c != 0 {
		code = codes.Code(c)
		return nil, status.Error(code, "failed as asked")
	}
	r := dynamicpb.NewMessage(out)
	of := out.Fields()
	r.Set(of.ByName("text"), in.Get(f.ByName("text")))
	r.Set(of.ByName("seq"), protoreflect.ValueOfInt64(seq.Add(1)))
	tags := r.Mutable(of.ByName("tags")).List()
	src := in.Get(f.ByName("tags")).List()
	for i := 0; i < src.Len(); i++ {
		tags.Append(src.Get(i))
	}
	if in.Has(f.ByName("inner")) {
		r.Set(of.ByName("inner"), in.Get(f.ByName("inner")))
	}
	at := r.Mutable(of.ByName("at")).Message()
	at.Set(at.Descriptor().Fields().ByName("seconds"), protoreflect.ValueOfInt64(1700000000))
	return r, nil
}

func (s *Server) handleCount(st grpc.ServerStream, in *dynamicpb.Message, out protoreflect.MessageDescriptor) error {
	s.CountCalls.Add(1)
	f := in.Descriptor().Fields()
	n := int(in.Get(f.ByName("n")).Int())
	every := time.Duration(in.Get(f.ByName("interval_ms")).Int()) * time.Millisecond
	for i := 1; i <= n; i++ {
		if i > 1 && every > 0 {
			time.Sleep(every)
		}
		r := dynamicpb.NewMessage(out)
		r.Set(out.Fields().ByName("i"), protoreflect.ValueOfInt32(int32(i)))
		if err := st.SendMsg(r); err != nil {
			return err
		}
		s.Sent.Add(1)
	}
	return nil
}
