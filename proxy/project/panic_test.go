package project

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/failpoint"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/session"
)

// A tools/call whose handler panics (an armed failpoint; relay on, which
// leaves such a call to the SDK path) is answered, logged with its stack,
// and audited as panicked under the tool's name; every request is logged
// once with its outcome.
func TestAPanickingCallIsAnsweredLoggedAndAudited(t *testing.T) {
	up := newCountingUpstream(t)
	lines := &logLines{}
	rows := &rowsSeen{}
	fp := failpoint.New()
	fp.Arm(failpoint.ToolCall, "s_t", failpoint.Panic)
	p := New("p", Options{Servers: map[string]string{"s": up.url}, Failpoints: fp, Relay: true,
		Sessions: session.NewTable(), Audit: rows, Knobs: knobs.Defaults(), Logger: lines.logger()})
	t.Cleanup(p.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs := connectClient(ctx, t, serveRelaying(t, p))
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "s_t", Arguments: map[string]any{}})
	if err == nil && (res == nil || !res.IsError) {
		t.Fatalf("a panicking call answered %+v", res)
	}
	if p.Relayed() != 0 {
		t.Errorf("the relay took %d calls with a failpoint armed", p.Relayed())
	}
	panicked := lines.with(t, "handler panicked")
	if len(panicked) != 1 || panicked[0]["level"] != "ERROR" || panicked[0]["method"] != "tools/call" || panicked[0]["trace"] == "" ||
		!strings.Contains(panicked[0]["panic"].(string), "failpoint tools/call=s_t") || !strings.Contains(panicked[0]["stack"].(string), "goroutine") {
		t.Errorf("log lines %v, want one error with the trace, the method, the panic and its stack", panicked)
	}
	requests := lines.with(t, "request")
	var seen []string
	for _, r := range requests {
		if r["level"] != "INFO" || r["trace"] == "" || r["session"] != cs.ID() && r["method"] != "initialize" {
			t.Errorf("request line %v", r)
		}
		seen = append(seen, r["method"].(string)+" "+r["outcome"].(string))
	}
	if got := strings.Join(seen, ","); got != "initialize ok,tools/call panic" {
		t.Errorf("request lines: %s", got)
	}
	got := rows.of(audit.KindToolCallTrace)
	if len(got) != 1 || !strings.HasPrefix(got[0], "|s_t|panic|panic: failpoint tools/call=s_t") {
		t.Errorf("tool_call_trace rows %q, want one panicked row for s_t", got)
	}
}

// panickingRows panics when asked to record a row of kind; it keeps the
// rest.
type panickingRows struct {
	rowsSeen
	kind audit.Kind
}

func (s *panickingRows) Record(r audit.Row) {
	if r.Kind == s.kind {
		panic("recording " + string(r.Kind))
	}
	s.rowsSeen.Record(r)
}

// A panic on the raw relay's path (here: writing the upstream_call row) is
// answered, logged with its stack and audited as panicked, as on the SDK
// path: the relay's recover keeps the stack for the log.
func TestAPanicOnTheRelayIsAnsweredLoggedWithItsStackAndAudited(t *testing.T) {
	up := newCountingUpstream(t)
	lines := &logLines{}
	rows := &panickingRows{kind: audit.KindUpstreamCall}
	p := New("p", Options{Servers: map[string]string{"s": up.url}, Relay: true,
		Sessions: session.NewTable(), Audit: rows, Knobs: knobs.Defaults(), Logger: lines.logger()})
	t.Cleanup(p.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// A client holding its standalone stream, as go-sdk clients do: one
	// that offers roots without it stays off the relay.
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: serveRelaying(t, p), MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	for i := range 2 {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "s_t", Arguments: map[string]any{}})
		if err != nil || res == nil || !res.IsError {
			t.Fatalf("call %d: a call that panicked answered %+v, %v; want an isError", i, res, err)
		}
	}
	if n := p.Relayed(); n != 2 {
		t.Fatalf("the relay took %d calls, want both", n)
	}
	panicked := lines.with(t, "handler panicked")
	if len(panicked) != 2 {
		t.Fatalf("%d 'handler panicked' lines, want one per call: %v", len(panicked), panicked)
	}
	for _, l := range panicked {
		if l["method"] != "tools/call" || l["trace"] == "" || !strings.Contains(l["panic"].(string), "recording upstream_call") ||
			!strings.Contains(l["stack"].(string), "goroutine") {
			t.Errorf("log line %v, want the trace, the method, the panic and its stack", l)
		}
	}
	got := rows.of(audit.KindToolCallTrace)
	if len(got) != 2 || !strings.HasPrefix(got[0], "s|s_t|panic|panic: recording upstream_call") || got[0] != got[1] {
		t.Errorf("tool_call_trace rows %q, want two panicked rows for s_t", got)
	}
}
