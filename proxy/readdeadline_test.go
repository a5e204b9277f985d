package proxy

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
)

// TestRequestDeadlineCoversReadingTheBody (the bug: "the outer deadline
// never applied, the body is read before dispatch"): with
// MCPCTL_READ_TIMEOUT_MS far above MCPCTL_REQUEST_DEADLINE_MS, a body
// trickled one byte every 100 ms is cut off at the request deadline, within
// a tolerance, not at the read timeout.
func TestRequestDeadlineCoversReadingTheBody(t *testing.T) {
	kv := knobs.Defaults()
	kv.ReadTimeout, kv.RequestDeadline = 30*time.Second, 600*time.Millisecond
	const tolerance = 400 * time.Millisecond
	p := startProxy(t, "memory", "http://127.0.0.1:1/mcp", &kv)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	fmt.Fprintf(c, "POST /projects/p/mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n", p.Addr())
	done := make(chan time.Duration, 1)
	go func() {
		_ = c.SetReadDeadline(time.Now().Add(kv.ReadTimeout))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err == nil {
			resp.Body.Close()
		}
		done <- time.Since(start) // an answer or a closed connection: the proxy let go
	}()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	limit := time.NewTimer(kv.RequestDeadline + tolerance)
	defer limit.Stop()
	for {
		select {
		case took := <-done:
			if took > kv.RequestDeadline+tolerance {
				t.Fatalf("the trickled request was let go after %v; MCPCTL_REQUEST_DEADLINE_MS=%v + tolerance %v", took, kv.RequestDeadline, tolerance)
			}
			return
		case <-tick.C:
			_, _ = c.Write([]byte("{")) // one byte, forever: 1000 would take 100 s
		case <-limit.C:
			t.Fatalf("a body trickled byte by byte was still being read %v after it began (MCPCTL_REQUEST_DEADLINE_MS=%v, MCPCTL_READ_TIMEOUT_MS=%v)", kv.RequestDeadline+tolerance, kv.RequestDeadline, kv.ReadTimeout)
		}
	}
}
