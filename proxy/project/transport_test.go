package project

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// The project's upstream transport keeps a connection for every request that
// was in flight at once (one per client session under load), so the next
// wave reuses them instead of dialling: Go's default keeps 2 per host, and at
// 64 sessions mcplocal spent 13% of its CPU dialling (docs/performance.md).
func TestUpstreamTransportReusesConnectionsUnderConcurrency(t *testing.T) {
	const inFlight = 48
	var dials atomic.Int64
	release := make(chan struct{})
	var arrived sync.WaitGroup
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Done()
		<-release // hold every request until all are in flight: one connection each
		_, _ = io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dials.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	tr := newUpstreamTransport()
	defer tr.CloseIdleConnections()
	wave := func() {
		arrived.Add(inFlight)
		var done sync.WaitGroup
		for range inFlight {
			done.Add(1)
			go func() {
				defer done.Done()
				resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}()
		}
		arrived.Wait()
		close(release)
		done.Wait()
		release = make(chan struct{})
	}
	wave()
	first := dials.Load()
	wave()
	if again := dials.Load() - first; again > inFlight/8 {
		t.Fatalf("the second wave of %d concurrent requests dialled %d new connections (first wave: %d); want them reused", inFlight, again, first)
	}
}
