package catalogue

import (
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pipe is both ends of a connection: the client's and the proxy's.
func pipe(t *testing.T) (client, proxy net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	proxy = <-accepted
	t.Cleanup(func() { client.Close(); proxy.Close() })
	return client, proxy
}

// closedWithin tells a connection the proxy closed (what it sent before
// read and passed over) from one still open when the limit passed.
func TestClosedWithinTellsClosedFromOpen(t *testing.T) {
	client, proxy := pipe(t)
	go func() {
		_, _ = io.WriteString(proxy, "HTTP/1.1 408 Request Timeout\r\n\r\n")
		time.Sleep(50 * time.Millisecond)
		proxy.Close()
	}()
	if took, closed := closedWithin(client, 5*time.Second); !closed || took >= 5*time.Second {
		t.Errorf("a connection the proxy closed: closed=%v after %v", closed, took)
	}
	open, _ := pipe(t)
	if took, closed := closedWithin(open, 100*time.Millisecond); closed || took < 100*time.Millisecond {
		t.Errorf("a connection left open: closed=%v after %v, want open past the 100ms limit", closed, took)
	}
}

// connRefused reads the answer a proxy sent a connection unasked (its
// status and body), and nothing from one that waits for a request.
func TestConnRefusedReadsAnAnswerSentUnasked(t *testing.T) {
	client, proxy := pipe(t)
	const body = `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"MCPCTL_CONNS_MAX reached"}}`
	go func() {
		_, _ = io.WriteString(proxy, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: "+
			strconv.Itoa(len(body))+"\r\nConnection: close\r\n\r\n"+body)
	}()
	status, got, err := connRefused(client, 5*time.Second)
	if err != nil || status != 503 || got != body {
		t.Errorf("a 503 sent unasked: %d %q %v", status, got, err)
	}
	waiting, _ := pipe(t)
	if status, got, err := connRefused(waiting, 100*time.Millisecond); err != nil || status != 0 || got != "" {
		t.Errorf("a connection waiting for a request: %d %q %v, want nothing read and no error", status, got, err)
	}
	garbled, proxyEnd := pipe(t)
	go func() { _, _ = io.WriteString(proxyEnd, "not an HTTP answer\r\n\r\n"); proxyEnd.Close() }()
	if _, _, err := connRefused(garbled, 5*time.Second); err == nil || strings.Contains(err.Error(), "timeout") {
		t.Errorf("an answer that is no HTTP: %v, want an error", err)
	}
}

// waitForWithin waits for a notification at most its bound, however long
// the operation may still run, and no longer than the operation may; it
// returns as soon as the condition holds.
func TestWaitForWithinIsBounded(t *testing.T) {
	s := &surfaceSession{}
	start := time.Now()
	if s.waitForWithin(context.Background(), 100*time.Millisecond, func() bool { return false }) {
		t.Error("a condition that never held was said to hold")
	}
	if took := time.Since(start); took < 100*time.Millisecond || took > 5*time.Second {
		t.Errorf("waited %v for a 100ms bound", took)
	}
	start = time.Now()
	if !s.waitForWithin(context.Background(), time.Minute, func() bool { return true }) || time.Since(start) > 5*time.Second {
		t.Errorf("a condition that held at once took %v", time.Since(start))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start = time.Now()
	if s.waitForWithin(ctx, time.Minute, func() bool { return false }) || time.Since(start) > 5*time.Second {
		t.Errorf("the wait outlived its operation's context: %v", time.Since(start))
	}
	calls := 0
	if !s.waitForWithin(context.Background(), 5*time.Second, func() bool { calls++; return calls == 3 }) || calls != 3 {
		t.Errorf("a condition that held on its third look: %d looks", calls)
	}
}
