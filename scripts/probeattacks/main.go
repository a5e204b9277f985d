// Command probeattacks runs the batch and connection-flood attacks against a
// running mcplocal (loopback only, bounded counts) and prints its RSS and
// /healthz latency before, during and after each: the figures
// docs/security.md quotes. scripts/probe-attacks.sh builds and starts the
// proxy and runs it.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	base := flag.String("url", "", "the proxy, http://127.0.0.1:PORT")
	pid := flag.Int("pid", 0, "the proxy's process id (its RSS is read from /proc)")
	token := flag.String("token", "", "the attacker's bearer token")
	other := flag.String("other-token", "", "another user's bearer token: their initialize during the flood")
	project := flag.String("project", "p", "the project")
	batch := flag.Int("batch", 20000, "tools/calls in one batch")
	posts := flag.Int("posts", 20, "batch POSTs")
	inits := flag.Int("inits", 1200, `initializes disguised by a "METHOD" key`)
	conns := flag.Int("conns", 3500, "silent connections of the flood")
	flag.Parse()
	if !strings.HasPrefix(*base, "http://127.0.0.1:") || *pid <= 0 {
		fmt.Fprintln(os.Stderr, "probeattacks: --url http://127.0.0.1:PORT and --pid are required (loopback only)")
		os.Exit(2)
	}
	p := &probe{base: *base, pid: *pid, token: *token, other: *other, endpoint: *base + "/projects/" + *project + "/mcp"}
	p.report("start")
	p.batches(*batch, *posts)
	p.disguised(*inits)
	p.flood(*conns)
	fmt.Printf("peak RSS over the run (VmHWM): %s\n", p.status("VmHWM"))
}

type probe struct {
	base, endpoint, token, other string
	pid                          int
}

// status reads one field of /proc/PID/status.
func (p *probe) status(field string) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/status")
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

// healthz times one GET /healthz on a new connection (at most 5 s).
func (p *probe) healthz() string {
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	start := time.Now()
	resp, err := hc.Get(p.base + "/healthz")
	if err != nil {
		return fmt.Sprintf("failed after %v (%v)", time.Since(start).Round(time.Millisecond), err)
	}
	resp.Body.Close()
	return fmt.Sprintf("%d in %v", resp.StatusCode, time.Since(start).Round(time.Millisecond))
}

func (p *probe) report(when string) {
	fmt.Printf("%-44s RSS %-10s /healthz %s\n", when+":", p.status("VmRSS"), p.healthz())
}

func (p *probe) post(session, version, body string) (int, string, string) {
	req, _ := http.NewRequest(http.MethodPost, p.endpoint, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if p.token != "" {
		req.Header.Set("Authorization", "Bearer "+p.token)
	}
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	hc := &http.Client{Timeout: 60 * time.Second}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
}

// batches opens a 2025-03-26 session (batches exist there) and sends posts
// POSTs of n tools/calls each, four at a time, while /healthz is timed.
func (p *probe) batches(n, posts int) {
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"probe","version":"0"}}}`
	status, sid, body := p.post("", "", init)
	if status != 200 || sid == "" {
		fmt.Printf("batch attack: initialize answered %d: %.200s\n", status, body)
		return
	}
	p.post(sid, "2025-03-26", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"docmost_search","arguments":{"query":"q"}}}`, i+1)
	}
	b.WriteByte(']')
	statuses := map[int]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	start := time.Now()
	for range posts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			s, _, _ := p.post(sid, "2025-03-26", b.String())
			mu.Lock()
			statuses[s]++
			mu.Unlock()
		}()
	}
	during := p.healthz()
	wg.Wait()
	fmt.Printf("batch attack: %d POSTs of a %d-message batch (%d KiB each) in %v: statuses %v; /healthz during: %s\n",
		posts, n, b.Len()>>10, time.Since(start).Round(time.Millisecond), statuses, during)
	p.report("after the batch attack")
}

// disguised sends n initializes carrying an extra "METHOD":"x" key, 8 at a
// time, and counts the sessions opened.
func (p *probe) disguised(n int) {
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","METHOD":"x","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"probe","version":"0"}}}`
	var opened, refused, other atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			switch s, _, _ := p.post("", "2025-11-25", body); s {
			case 200:
				opened.Add(1)
			case 429:
				refused.Add(1)
			default:
				other.Add(1)
			}
		}()
	}
	wg.Wait()
	fmt.Printf(`disguised initializes: %d sent, %d opened a session, %d refused 429 by the caps, %d other`+"\n", n, opened.Load(), refused.Load(), other.Load())
	p.report("after the disguised initializes")
}

// flood opens n connections that never send a byte, then times /healthz and
// an initialize on new connections, and closes them all.
func (p *probe) flood(n int) {
	addr := strings.TrimPrefix(p.base, "http://")
	var open []net.Conn
	failed := 0
	for range n {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			failed++
			continue
		}
		open = append(open, c)
	}
	fmt.Printf("connection flood: %d silent connections open (%d dials failed)\n", len(open), failed)
	p.report("during the flood")
	time.Sleep(11 * time.Second) // past the read-header bound: silent ones may be evicted
	p.report("during the flood, 11 s on")
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"probe","version":"0"}}}`
	start := time.Now()
	attacker := p.token
	p.token = p.other
	s, _, body := p.post("", "2025-11-25", init)
	p.token = attacker
	fmt.Printf("another user's initialize during the flood: %d in %v %.120s\n", s, time.Since(start).Round(time.Millisecond), strings.TrimSpace(body))
	for _, c := range open {
		c.Close()
	}
	p.report("after the flood")
}
