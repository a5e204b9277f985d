// Package profiling serves Go's runtime profiles (net/http/pprof) for
// mcplocal on a loopback address of their own, apart from the proxy's
// listener, so profiles are never reachable from another host and never
// share a port with MCP traffic. It is off unless `mcplocal serve --pprof`
// asks for it; docs/performance.md says which profile answers which question.
package profiling

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
	"time"
)

// mutexFraction samples one in this many mutex contention events for the
// mutex profile (/debug/pprof/mutex), which is empty unless a fraction is
// set: contention is what a busy proxy's CPU profile does not show.
const mutexFraction = 10

// shutdownTimeout bounds how long stopping the profile server waits for a
// profile being written (a CPU profile runs for its ?seconds=N).
const shutdownTimeout = 2 * time.Second

// CheckLoopback returns an error unless addr (HOST:PORT) names a loopback
// host: 127.0.0.0/8, ::1 or localhost. An empty host (":6060") would listen
// on every interface and is refused too.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not HOST:PORT: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%q is not a loopback address: profiles expose the process's memory and stacks, so they are served on 127.0.0.1 or [::1] only", addr)
	}
	return nil
}

// Handler serves the pprof index and profiles under /debug/pprof/.
func Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// Serve listens on addr, which must be loopback (CheckLoopback), and serves
// Handler in the background until stop is called. stop may be called more
// than once.
func Serve(addr string, logger *slog.Logger) (stop func(), err error) {
	if err := CheckLoopback(addr); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		// "localhost" resolved to something that is not loopback.
		ln.Close()
		return nil, fmt.Errorf("%q resolved to %v, which is not loopback", addr, ln.Addr())
	}
	prevFraction := runtime.SetMutexProfileFraction(mutexFraction)
	srv := &http.Server{Handler: Handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("pprof server", "err", err)
		}
	}()
	logger.Info("pprof listening", "addr", ln.Addr().String(), "profiles", "http://"+ln.Addr().String()+"/debug/pprof/")
	var stopped bool
	return func() {
		if stopped {
			return
		}
		stopped = true
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			_ = srv.Close()
		}
		<-done
		runtime.SetMutexProfileFraction(prevFraction)
	}, nil
}
