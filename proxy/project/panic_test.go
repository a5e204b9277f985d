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
