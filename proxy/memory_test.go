//go:build linux

// The memory bounds are measured with Linux's /proc (peak RSS reset through
// clear_refs): the file builds on Linux only, where nothing in it is skipped.

package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
)

// Memory under attack (promise 8, docs/security.md): what an attacker sends, or a hostile
// upstream answers, must not grow the proxy. The figures are the process's
// peak RSS (VmHWM, reset through /proc/self/clear_refs before the attack)
// minus its RSS before it: what the kernel had to give the process, GC
// slack included. These tests run the proxy in the test's own process, so
// the attacker's side is written to stream (no buffer of its own) and is
// counted too; the bounds below are generous for that. Under -race (make
// test's unit run) every bound is raceMemoryFactor times larger: the
// detector's shadow memory, not the proxy's.

// peakRSS measures a process's RSS and its peak since the last reset.
type peakRSS struct{ t *testing.T }

// reset returns the RSS now, after a GC that returns what it can, and
// restarts the peak from it.
func (m peakRSS) reset() int64 {
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		m.t.Fatalf("cannot reset the peak RSS (%v): the bound needs /proc/self/clear_refs", err)
	}
	return m.field("VmRSS:")
}

// peak is the highest RSS since the last reset.
func (m peakRSS) peak() int64 { return m.field("VmHWM:") }

func (m peakRSS) field(name string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		m.t.Fatalf("no /proc/self/status (%v)", err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, name); ok {
			f := strings.Fields(v)
			if n, err := strconv.ParseInt(f[0], 10, 64); err == nil && len(f) == 2 && f[1] == "kB" {
				return n << 10
			}
		}
	}
	m.t.Fatalf("no %s in /proc/self/status", name)
	return 0
}

const mib = 1 << 20

// hugeAnswerBytes is the size of the hostile upstream's answer: the issue's
// 150 MB of valid JSON.
const hugeAnswerBytes = 150 * 1000 * 1000

// hugeUpstream is an MCP server whose tool "huge" answers hugeAnswerBytes of
// valid JSON-RPC, written as it is generated (the upstream holds 64 KiB).
// With declare it sends the Content-Length up front; without, the answer is
// chunked and its size shows only as it is read.
func hugeUpstream(t *testing.T, declare bool) *httptest.Server {
	up := mcp.NewServer(&mcp.Implementation{Name: "hostile", Version: "0"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "huge"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, fmt.Errorf("the streaming handler answers huge")
	})
	mcp.AddTool(up, &mcp.Tool{Name: "small"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "small"}}}, nil, nil
	})
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &m) == nil && m.Method == "tools/call" && m.Params.Name == "huge" {
			head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, m.ID)
			tail := `"}]}}`
			w.Header().Set("Content-Type", "application/json")
			if declare {
				w.Header().Set("Content-Length", strconv.Itoa(hugeAnswerBytes))
			}
			_, _ = io.WriteString(w, head)
			chunk := bytes.Repeat([]byte("a"), 64<<10)
			for left := hugeAnswerBytes - len(head) - len(tail); left > 0; left -= len(chunk) {
				if _, err := w.Write(chunk[:min(left, len(chunk))]); err != nil {
					return // the proxy stopped reading: what it should do
				}
			}
			_, _ = io.WriteString(w, tail)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		sdk.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestHugeUpstreamAnswerDoesNotGrowTheProxy: an upstream answering 150 MB
// is refused at MCPCTL_UPSTREAM_MAX_RESPONSE_BYTES (an isError naming it),
// and the proxy's peak RSS grows by at most 4 times the knob (the SDK's
// read buffer doubling up to it, and a GC cycle of slack) plus 48 MiB of
// tolerance for the test process itself; without the bound, the body alone
// is 150 MB and its decoding as much again.
func TestHugeUpstreamAnswerDoesNotGrowTheProxy(t *testing.T) {
	for _, declare := range []bool{true, false} {
		name := map[bool]string{true: "Content-Length declared", false: "chunked"}[declare]
		t.Run(name, func(t *testing.T) { hugeAnswer(t, declare) })
	}
}

func hugeAnswer(t *testing.T, declare bool) {
	up := hugeUpstream(t, declare)
	kv := knobs.Defaults()
	kv.UpstreamMaxResponseBytes = 8 * mib
	p := startProxy(t, "memory", up.URL, &kv)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: "http://" + p.Addr() + "/projects/p/mcp", DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(name string) (*mcp.CallToolResult, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: "s_" + name, Arguments: map[string]any{}})
	}
	if _, err := call("small"); err != nil { // warm: upstream session, pools
		t.Fatal(err)
	}
	m := peakRSS{t}
	before := m.reset()
	res, err := call("huge")
	peak := m.peak()
	if err != nil {
		t.Fatalf("the huge answer was not answered: %v", err)
	}
	text := ""
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if !res.IsError || !strings.Contains(text, "MCPCTL_UPSTREAM_MAX_RESPONSE_BYTES") {
		t.Errorf("a %d-byte upstream answer: isError=%v %.300q; want an isError naming MCPCTL_UPSTREAM_MAX_RESPONSE_BYTES", hugeAnswerBytes, res.IsError, text)
	}
	bound := (4*kv.UpstreamMaxResponseBytes + 48*mib) * raceMemoryFactor
	t.Logf("RSS %d MiB before, peak %d MiB during a %d MB upstream answer (MCPCTL_UPSTREAM_MAX_RESPONSE_BYTES=%d MiB): growth %d MiB, bound %d MiB",
		before/mib, peak/mib, hugeAnswerBytes/1000/1000, kv.UpstreamMaxResponseBytes/mib, (peak-before)/mib, bound/mib)
	if peak-before > bound {
		t.Errorf("peak RSS grew by %d MiB, more than the bound of %d MiB", (peak-before)/mib, bound/mib)
	}
	if small, err := call("small"); err != nil || small.IsError {
		t.Errorf("a small call after the huge one: %v %+v", err, small)
	}
}

// TestHugeSessionIDsDoNotGrowTheProxy: 200 DELETEs and 200 POSTs carrying
// 1 MB session ids (the attack: RSS 160 MB to 625 MB, audit.db +159
// MB) are refused before any lookup: 431 by the header bound
// (MCPCTL_MAX_HEADER_BYTES). 200 more with 60 KB ids, under that bound, get
// the entry's 400. Neither grows the audit store by one byte, nor the peak
// RSS by more than 48 MiB (the 60 KB ids are parsed into header maps, 24 MB
// of garbage in all, and the GC lets the heap grow before collecting it;
// the test's own client is counted too).
func TestHugeSessionIDsDoNotGrowTheProxy(t *testing.T) {
	dir := t.TempDir()
	kv := knobs.Defaults()
	p := startProxy(t, "sqlite:"+filepath.Join(dir, "audit.db"), "http://127.0.0.1:1/mcp", &kv)
	storeSize := func() int64 {
		var n int64
		for _, f := range []string{"audit.db", "audit.db-wal"} {
			if st, err := os.Stat(filepath.Join(dir, f)); err == nil {
				n += st.Size()
			}
		}
		return n
	}
	// send writes one request by hand (net/http's client refuses nothing,
	// but a raw write needs no client buffer of the id) and returns the status.
	send := func(method, id string) int {
		c, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
		if method == http.MethodDelete {
			body = ""
		}
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(c, "%s /projects/p/mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\nMcp-Session-Id: ", method, p.Addr(), len(body))
		_, _ = io.WriteString(c, id) // a server that refuses early may close before the id is all sent
		_, _ = fmt.Fprintf(c, "\r\n\r\n%s", body)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return 0
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	send(http.MethodPost, "warm-up") // pools, the first connection's buffers
	m := peakRSS{t}
	before, storeBefore := m.reset(), storeSize()
	huge, big := strings.Repeat("x", 1000*1000), strings.Repeat("y", 60*1000)
	statuses := map[string]map[int]int{"1 MB": {}, "60 KB": {}}
	for i := range 200 {
		for _, method := range []string{http.MethodDelete, http.MethodPost} {
			statuses["1 MB"][send(method, huge[:len(huge)-4]+fmt.Sprintf("%04d", i))]++
			statuses["60 KB"][send(method, big[:len(big)-4]+fmt.Sprintf("%04d", i))]++
		}
	}
	peak := m.peak()
	if got := statuses["1 MB"]; got[http.StatusRequestHeaderFieldsTooLarge]+got[0] != 400 || got[http.StatusRequestHeaderFieldsTooLarge] == 0 {
		t.Errorf("1 MB session ids were answered %v; want 431 (MCPCTL_MAX_HEADER_BYTES) or a closed connection for all 400", got)
	}
	if got := statuses["60 KB"]; got[http.StatusBadRequest] != 400 {
		t.Errorf("60 KB session ids were answered %v; want 400 for all 400", got)
	}
	if n := p.sessions.Len(); n != 0 {
		t.Errorf("%d sessions live after requests that only carried invalid ids", n)
	}
	_ = p.Close(context.Background()) // flushes the audit recorder: anything it had is in the store now
	storeAfter := storeSize()
	const tolerance = 48 * mib * raceMemoryFactor
	t.Logf("RSS %d MiB before, peak %d MiB during 800 requests with 1 MB and 60 KB session ids: growth %d MiB (bound %d MiB); audit store %d -> %d bytes",
		before/mib, peak/mib, (peak-before)/mib, tolerance/mib, storeBefore, storeAfter)
	if peak-before > tolerance {
		t.Errorf("peak RSS grew by %d MiB, more than %d MiB", (peak-before)/mib, tolerance/mib)
	}
	if storeAfter > storeBefore { // closing checkpoints the WAL: the store may shrink
		t.Errorf("the audit store grew from %d to %d bytes: refused ids were stored", storeBefore, storeAfter)
	}
}

// startProxy starts a proxy with one project p whose server s is at
// upstream, and closes it when the test ends.
func startProxy(t *testing.T, audit, upstream string, kv *knobs.Values) *Proxy {
	t.Helper()
	cfg := &config.Config{
		Listen: "127.0.0.1:0", Audit: audit,
		Projects: map[string]*config.Project{"p": {Servers: map[string]*config.Server{"s": {URL: upstream}}}},
	}
	p, err := New(context.Background(), cfg, Options{Knobs: kv, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}
