package project

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// TestAPolicyDenialIsNotAdvisedAsAnOutage: an L7 proxy's plain-text 403 in
// front of the upstream is a denial; the call's error says so and what to
// change, on both paths, and does not tell the agent to retry because the
// upstream may be down. A 502 from the same place still may be an outage.
func TestAPolicyDenialIsNotAdvisedAsAnOutage(t *testing.T) {
	for _, relayOn := range []bool{true, false} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		w := newFaultyWorld(ctx, t, relayOn, trace.New(), 5*time.Second)
		for _, c := range []struct {
			status      int
			want, never string
		}{
			{http.StatusForbidden, "denied by whatever answered in front of upstream s", "may be down"},
			{http.StatusUnauthorized, "denied by whatever answered in front of upstream s", "may be down"},
			{http.StatusBadGateway, "retry, and if it keeps failing the upstream s may be down", "denied by"},
		} {
			w.arm(wireFault{serve: func(rw http.ResponseWriter, _ *http.Request) {
				http.Error(rw, "Access denied", c.status)
			}})
			res, err := w.cs.CallTool(ctx, &mcp.CallToolParams{Name: "s_echo", Arguments: map[string]any{"s": "x"}})
			if err != nil {
				t.Fatalf("relay %v, %d: %v", relayOn, c.status, err)
			}
			var text string
			if len(res.Content) > 0 {
				if tc, ok := res.Content[0].(*mcp.TextContent); ok {
					text = tc.Text
				}
			}
			if !res.IsError || !strings.Contains(text, c.want) || strings.Contains(text, c.never) {
				t.Errorf("relay %v, %d: want an error saying %q and not %q, got: %s", relayOn, c.status, c.want, c.never, text)
			}
		}
		w.close()
		cancel()
	}
}
