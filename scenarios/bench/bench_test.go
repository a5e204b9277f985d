package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
)

func TestRunMeasuresEveryTargetAtEveryConcurrency(t *testing.T) {
	fake, err := upstream.NewDocmost(upstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	targets := []Target{
		{Name: "a", URL: fake.URL(), Tool: "update_page"},
		{Name: "b", URL: fake.URL(), Tool: "update_page"},
	}
	rep, err := Run(context.Background(), targets, Options{
		Args: map[string]any{"page_id": "p"}, Sessions: []int{1, 4}, Rounds: 2, Duration: 100 * time.Millisecond, Idle: 5,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range rep.Targets {
		if len(tr.Latency) != 2 {
			t.Fatalf("%s: %d concurrency levels, want 2", tr.Target.Name, len(tr.Latency))
		}
		for _, l := range tr.Latency {
			if l.Calls == 0 || l.Errors != 0 || l.ReqPerSec <= 0 {
				t.Errorf("%s at %d: %+v", tr.Target.Name, l.Sessions, l)
			}
			if !(l.P50Ms <= l.P90Ms && l.P90Ms <= l.P99Ms) {
				t.Errorf("%s at %d: percentiles out of order: %+v", tr.Target.Name, l.Sessions, l)
			}
		}
		if len(tr.Idle) != len(IdleKinds) {
			t.Fatalf("%s: %d idle measurements, want one per kind %v", tr.Target.Name, len(tr.Idle), IdleKinds)
		}
		for k, id := range tr.Idle {
			if id.Kind != IdleKinds[k] || id.Opened != 5 {
				t.Errorf("%s: idle %d: %+v, want kind %q and 5 sessions opened", tr.Target.Name, k, id, IdleKinds[k])
			}
		}
	}
	var b strings.Builder
	if err := WriteTable(&b, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "REQ/S vs BASE") {
		t.Errorf("table lacks the comparison columns:\n%s", b.String())
	}
}

// getCounter forwards to an MCP endpoint and counts the standalone streams
// (GETs) clients open through it: in all, and at most at once.
type getCounter struct {
	mu         sync.Mutex
	open, peak int
	total      int
	next       *httputil.ReverseProxy
}

func (g *getCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		g.mu.Lock()
		g.open++
		g.total++
		g.peak = max(g.peak, g.open)
		g.mu.Unlock()
		defer func() {
			g.mu.Lock()
			g.open--
			g.mu.Unlock()
		}()
	}
	g.next.ServeHTTP(w, r)
}

func TestIdleSessionsOfTheSecondKindHoldTheirStandaloneStreamsAndTheFirstNone(t *testing.T) {
	fake, err := upstream.NewDocmost(upstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	u, err := url.Parse(fake.URL())
	if err != nil {
		t.Fatal(err)
	}
	g := &getCounter{next: httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})}
	g.next.FlushInterval = -1 // the SSE stream flows through
	srv := httptest.NewServer(g)
	defer srv.Close()
	const n = 6
	// Each kind is measured on a fresh process of the target: here the
	// counted endpoint, while the target itself answers nothing.
	var fresh, stopped int
	counted := Target{Name: "counted", URL: srv.URL + u.Path, Tool: "update_page"}
	target := Target{Name: "counted", URL: "http://127.0.0.1:1/nothing", Tool: "update_page",
		Fresh: func(context.Context) (Target, func(), error) { fresh++; return counted, func() { stopped++ }, nil }}
	rep, err := Run(context.Background(), []Target{target}, Options{Args: map[string]any{"page_id": "p"}, Rounds: 1, Idle: n})
	if err != nil {
		t.Fatal(err)
	}
	if fresh != len(IdleKinds) || stopped != fresh {
		t.Errorf("%d fresh processes started, %d stopped; want one per kind of idle session (%d), each stopped", fresh, stopped, len(IdleKinds))
	}
	for _, id := range rep.Targets[0].Idle {
		if id.Opened != n {
			t.Fatalf("idle %q: %d of %d sessions opened: %s", id.Kind, id.Opened, n, id.FirstError)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.total != n || g.peak != n {
		t.Errorf("standalone streams: %d opened, at most %d at once; want %d and %d: none for %q, one held by each of the %q sessions while they idle together",
			g.total, g.peak, n, n, IdleNoStream, IdleStream)
	}
}

func TestRunFailsOnAToolTheTargetDoesNotHave(t *testing.T) {
	fake, err := upstream.NewDocmost(upstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	_, err = Run(context.Background(), []Target{{Name: "a", URL: fake.URL(), Tool: "no_such_tool"}},
		Options{Sessions: []int{1}, Duration: 50 * time.Millisecond})
	if err == nil {
		t.Fatal("a bench whose every call fails reported success")
	}
}

func TestPercentileIsNearestRank(t *testing.T) {
	var s []time.Duration
	for i := 1; i <= 100; i++ {
		s = append(s, time.Duration(i)*time.Millisecond)
	}
	for p, want := range map[int]time.Duration{50: 50 * time.Millisecond, 90: 90 * time.Millisecond, 99: 99 * time.Millisecond} {
		if got := pct(s, p); got != want {
			t.Errorf("p%d = %v, want %v", p, got, want)
		}
	}
}

// A server that issues no Mcp-Session-Id (stateless, which the MCP spec
// allows) is measured like any other target.
func TestRunMeasuresAStatelessTarget(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "stateless", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	defer srv.Close()
	rep, err := Run(context.Background(), []Target{{Name: "stateless", URL: srv.URL, Tool: "echo"}}, Options{
		Args: map[string]any{"text": "hi"}, Sessions: []int{2}, Rounds: 1, Duration: 100 * time.Millisecond, Idle: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	tr := rep.Targets[0]
	if l := tr.Latency[0]; l.Calls == 0 || l.Errors != 0 {
		t.Errorf("stateless target at 2 sessions: %+v", l)
	}
	if id := tr.Idle[0]; id.Kind != IdleNoStream || id.Opened != 3 {
		t.Errorf("stateless target, idle sessions without a stream: %+v", id)
	}
}

// countsServer is a pprof endpoint whose goroutine count is the next of
// counts at each reading (the last one once they run out).
func countsServer(t *testing.T, counts ...int) (string, *atomic.Int32) {
	t.Helper()
	var reads atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/goroutine") {
			http.NotFound(w, r)
			return
		}
		i := min(int(reads.Add(1))-1, len(counts)-1)
		fmt.Fprintf(w, "goroutine profile: total %d\n", counts[i])
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/debug/pprof", &reads
}

// A settled snapshot waits out goroutines that are still going away (a
// connection the client just closed) and reads the count once it holds
// still; a count that never holds still is read at the bound.
func TestASettledSnapshotWaitsForTheGoroutinesToHoldStill(t *testing.T) {
	ctx := context.Background()
	url, reads := countsServer(t, 16, 12, 10, 10, 3)
	if got := settledSnapshot(ctx, http.DefaultClient, Target{Pprof: url}).Goroutines; got != 10 || reads.Load() != 4 {
		t.Errorf("counts 16, 12, 10, 10: read %d after %d readings, want 10 after 4", got, reads.Load())
	}
	moving := make([]int, settleReads+5)
	for i := range moving {
		moving[i] = 100 - i
	}
	url, reads = countsServer(t, moving...)
	if got := settledSnapshot(ctx, http.DefaultClient, Target{Pprof: url}).Goroutines; got != 100-settleReads || int(reads.Load()) != settleReads+1 {
		t.Errorf("a count that never holds still: read %d after %d readings, want %d after %d", got, reads.Load(), 100-settleReads, settleReads+1)
	}
}
