package project

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/session"
)

// asUser sets the entry's user header: on every request, or only on the
// initialize (a request without a session id).
type asUser struct {
	user           string
	initializeOnly bool
}

func (u asUser) RoundTrip(r *http.Request) (*http.Response, error) {
	if !u.initializeOnly || r.Header.Get("Mcp-Session-Id") == "" {
		r = r.Clone(r.Context())
		r.Header.Set(HeaderUser, u.user)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// Every row names the session and its user (and no degradation when none
// happened): the user the entry names on the
// request, else the one the session was initialized by (the initialize's own
// row included, written before the session is in the table).
func TestRowsNameTheSessionAndItsUser(t *testing.T) {
	up := newCountingUpstream(t)
	rows := &rowsSeen{}
	p := New("p", Options{Servers: map[string]string{"s": up.url}, Sessions: session.NewTable(), Audit: rows, Knobs: knobs.Defaults(), Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(p.Close)
	url := serveProject(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ids := map[string]string{}
	for _, u := range []asUser{{user: "alice"}, {user: "bob", initializeOnly: true}} {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: u}, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		callText(ctx, t, cs, "s_t")
		ids[cs.ID()] = u.user
	}
	rows.mu.Lock()
	var got []string
	for _, r := range rows.rows {
		got = append(got, fmt.Sprintf("%s %s %s degraded=%v%s", r.Kind, r.Tool, ids[r.SessionID]+"="+r.User, r.Degraded, r.DegradedReason))
	}
	rows.mu.Unlock()
	sort.Strings(got)
	want := []string{
		"mcp_request initialize alice=alice degraded=false", "mcp_request initialize bob=bob degraded=false",
		"tool_call_trace s_t alice=alice degraded=false", "tool_call_trace s_t bob=bob degraded=false",
		"upstream_call t alice=alice degraded=false", "upstream_call t bob=bob degraded=false",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows (kind, tool, the session's user=the row's user):\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
