package project

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/gate"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/pause"
	"github.com/mcpchaos/mcpchaos/proxy/session"
)

var traceCode = regexp.MustCompile(`\[trace [0-9A-Z]+\]`)

// A gated project shows a session its own two tools only and refuses the
// upstream's, in its own words (with the recreation notice first when one is
// owed), until begin_session: that answers the prompts in order, tells the
// session its tools changed, and opens them.
func TestTheGateOpensOnBeginSession(t *testing.T) {
	up := newCountingUpstream(t)
	rows := &rowsSeen{}
	prompts := []config.Prompt{{Name: "b", Text: "bee", Priority: 1}, {Name: "a", Text: "ay", Priority: 1}}
	tbl := session.NewTable()
	p := New("p", Options{Servers: map[string]string{"s": up.url}, Gate: gate.New(prompts, nil, time.Second, rows), Relay: true,
		Sessions: tbl, Audit: rows, Knobs: knobs.Defaults(), Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(p.Close)
	url := serveRelaying(t, p) // the relay leaves a gated session's calls and the proxy's own tools to the SDK path
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	changed := make(chan struct{}, 4)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil) // list_changed comes on its standalone stream
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if caps := cs.InitializeResult().Capabilities; caps.Tools == nil || !caps.Tools.ListChanged {
		t.Errorf("a gated project advertises tools %+v, want listChanged: its tools change at begin_session", caps.Tools)
	}
	names := func() string {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, tl := range res.Tools {
			n = append(n, tl.Name)
		}
		return strings.Join(n, ",")
	}
	if got := names(); got != "begin_session,read_prompts" {
		t.Errorf("a gated session lists %s, want begin_session,read_prompts", got)
	}
	got, isErr := callText(ctx, t, cs, "s_t")
	if want := "project p is gated: call begin_session first (with your intent) to open its tools [trace X]"; !isErr || traceCode.ReplaceAllString(got, "[trace X]") != want {
		t.Errorf("s_t before begin_session: %q (error %v), want %q", got, isErr, want)
	}
	if got, _ := callText(ctx, t, cs, "read_prompts"); got != "1. a\nay\n\n2. b\nbee" {
		t.Errorf("read_prompts: %q", got)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "begin_session", Arguments: map[string]any{"intent": "anything"}})
	if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "Session started; the project's tools are open. Prompts, most relevant first:\n\n1. a\nay\n\n2. b\nbee" {
		t.Fatalf("begin_session: %+v, %v", res, err)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second): // a notification on loopback: far more than it needs
		t.Error("begin_session never told the session its tools changed")
	}
	if got := names(); got != "begin_session,read_prompts,s_block,s_t" {
		t.Errorf("after begin_session the session lists %s", got)
	}
	if n := p.Relayed(); n != 0 {
		t.Errorf("the relay took %d calls before begin_session opened the gate", n)
	}
	if got, isErr := callText(ctx, t, cs, "s_t"); got != "ok" || isErr {
		t.Errorf("s_t after begin_session: %q", got)
	}
	if n := p.Relayed(); n != 1 {
		t.Errorf("the relay took %d calls once the gate was open, want 1", n)
	}
	trace := rows.of(audit.KindToolCallTrace)
	sort.Strings(trace)
	if want := "s|s_t|ok||,s|s_t|refused|project p is gated: call begin_session first (with your intent) to open its tools [trace X]|,|begin_session|ok||,|read_prompts|ok||"; traceCode.ReplaceAllString(strings.Join(trace, ","), "[trace X]") != want {
		t.Errorf("tool_call_trace rows %q, want %q", trace, want)
	}
	if got := rows.of(audit.KindGateDecision); len(got) != 1 || got[0] != "|begin_session|ok|order: a, b|" {
		t.Errorf("gate_decision rows %q", got)
	}

	// A recreated session is gated again, and told why first.
	again, err := mcp.NewClient(&mcp.Implementation{Name: "again", Version: "0"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: withTrace{code: "ABCDEFGH", recreated: "the proxy restarted"}}, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	res, err = again.CallTool(ctx, &mcp.CallToolParams{Name: "s_t", Arguments: map[string]any{}})
	if err != nil || !res.IsError || len(res.Content) != 2 ||
		res.Content[0].(*mcp.TextContent).Text != "⚠ Session state unavailable (the proxy restarted). The proxy recreated this session under the same id; call begin_session again to restore session state. [trace ABCDEFGH]" ||
		res.Content[1].(*mcp.TextContent).Text != "project p is gated: call begin_session first (with your intent) to open its tools [trace ABCDEFGH]" {
		t.Errorf("a recreated session's first call: %+v, %v", res, err)
	}
	var degraded []string
	rows.mu.Lock()
	for _, r := range rows.rows {
		if r.Kind == audit.KindToolCallTrace && r.CorrelationID == "ABCDEFGH" {
			degraded = append(degraded, fmt.Sprint(r.Status, " ", r.Degraded, " ", r.DegradedReason))
		}
	}
	rows.mu.Unlock()
	if len(degraded) != 1 || degraded[0] != "refused true session state unavailable: the proxy restarted" {
		t.Errorf("its row: %q", degraded)
	}
}

// While an operator has the project paused a request waits, then runs when
// it resumes; one that waited past the bound, one that found the queue full
// and one its client gave up are answered so; each writes a pause_wait row
// saying which.
func TestAPausedProjectHoldsRequestsAndSaysHowEachWaitEnded(t *testing.T) {
	up := newCountingUpstream(t)
	rows := &rowsSeen{}
	q := pause.New(300*time.Millisecond, 1)
	t.Cleanup(q.Close)
	p := New("p", Options{Servers: map[string]string{"s": up.url}, Pause: q,
		Sessions: session.NewTable(), Audit: rows, Knobs: knobs.Defaults(), Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(p.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs := connectClient(ctx, t, serveProject(t, p))
	waiting := func(n int) {
		t.Helper()
		if !waitFor(ctx, func() bool { return q.Status("p").Waiting == n }) {
			t.Fatalf("%d requests waiting, want %d", q.Status("p").Waiting, n)
		}
	}
	type answer struct {
		text string
		err  error
	}
	callAside := func(ctx context.Context) chan answer {
		out := make(chan answer, 1)
		go func() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "s_t", Arguments: map[string]any{}})
			if err != nil {
				out <- answer{err: err}
				return
			}
			out <- answer{text: res.Content[0].(*mcp.TextContent).Text}
		}()
		return out
	}
	q.Pause("p")
	resumed := callAside(ctx)
	waiting(1)
	// The queue holds one: the next is refused at once.
	full, isErr := callText(ctx, t, cs, "s_t")
	if want := "project p is paused and 1 requests already wait on it (MCPCTL_PAUSE_QUEUE_MAX), so this request was not queued; retry once an operator resumes it (mcpctl resume p)"; !isErr || !strings.HasPrefix(full, want) {
		t.Errorf("a call past the queue: %q, want it to start %q", full, want)
	}
	q.Resume("p")
	if a := <-resumed; a.err != nil || a.text != "ok" {
		t.Errorf("the call that waited for the resume: %+v", a)
	}
	q.Pause("p")
	bounded, isErr := callText(ctx, t, cs, "s_t")
	if want := "project p paused for longer than 300ms (MCPCTL_PAUSE_MAX_WAIT_MS), so this request was not run; retry once an operator resumes it (mcpctl resume p)"; !isErr || !strings.HasPrefix(bounded, want) {
		t.Errorf("a call past the bound: %q, want it to start %q", bounded, want)
	}
	cctx, ccancel := context.WithCancel(ctx)
	given := callAside(cctx)
	waiting(1)
	ccancel()
	<-given
	waiting(0)
	q.Resume("p")

	waitFor(ctx, func() bool { return len(rows.of(audit.KindPauseWait)) == 4 }) // the cancelled wait's row follows its cancel
	got := rows.of(audit.KindPauseWait)
	sort.Strings(got)
	want := []string{
		"||cancelled|cancelled while the project was paused: context canceled|",
		"||ok|tools/call waited for the project to resume|",
		"||refused|project p is paused and 1 requests already wait on it (MCPCTL_PAUSE_QUEUE_MAX), so this request was not queued; retry once an operator resumes it (mcpctl resume p)|",
		"||timeout|project p paused for longer than 300ms (MCPCTL_PAUSE_MAX_WAIT_MS), so this request was not run; retry once an operator resumes it (mcpctl resume p)|",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("pause_wait rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
