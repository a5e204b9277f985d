package health

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/upstream"
)

// rawUpstream is an MCP server written out by hand (no go-sdk server, which
// lists tools sorted): it answers initialize, takes notifications, lists
// tools in the given order, and, with hangList, never answers tools/list.
// It counts the tools/list requests.
type rawUpstream struct {
	URL   string
	lists atomic.Int32 // tools/list requests
}

func newRawUpstream(t *testing.T, tools []string, hangList bool) *rawUpstream {
	t.Helper()
	u := &rawUpstream{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &msg)
		answer := func(result string) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", "raw-1")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":`+result+`}`)
		}
		switch {
		case r.Method != http.MethodPost:
			w.WriteHeader(http.StatusMethodNotAllowed)
		case msg.Method == "initialize":
			answer(`{"protocolVersion":"` + upstream.ProtocolVersion + `","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"0"}}`)
		case msg.Method == "tools/list":
			u.lists.Add(1)
			if hangList {
				<-r.Context().Done()
				return
			}
			var list []string
			for _, name := range tools {
				list = append(list, `{"name":"`+name+`","inputSchema":{"type":"object"}}`)
			}
			answer(`{"tools":[` + strings.Join(list, ",") + `]}`)
		case len(msg.ID) == 0: // a notification
			w.WriteHeader(http.StatusAccepted)
		default:
			http.Error(w, "unexpected "+msg.Method, http.StatusBadRequest)
		}
	}))
	t.Cleanup(ts.Close)
	u.URL = ts.URL
	return u
}

// waitFor polls cond every few ms until it holds, failing the test after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestTheMissingToolsListIsSortedWhateverTheUpstreamsOrder: the tools a
// misconfigured check names are sorted by the proxy, not taken in the order
// the upstream lists them.
func TestTheMissingToolsListIsSortedWhateverTheUpstreamsOrder(t *testing.T) {
	u := newRawUpstream(t, []string{"zeta", "alpha", "mid"}, false)
	conn := upstream.New("s", u.URL, upstream.Options{ConnectTimeout: 5 * time.Second, CallTimeout: 5 * time.Second})
	defer conn.Close()
	err := run(context.Background(), Target{Project: "p", Server: "s", Check: &config.HealthCheck{Tool: "search"}}, conn)
	want := `configuration error: healthCheck.tool "search" is not a tool of server s (it has: alpha, mid, zeta)`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

// TestAProbeWithoutAnAnswerSaysSo: a probe the upstream does not answer
// within its timeout shows "no answer within" the timeout as its lastError.
func TestAProbeWithoutAnAnswerSaysSo(t *testing.T) {
	u := newRawUpstream(t, nil, true)
	check := &config.HealthCheck{IntervalSeconds: 60, TimeoutSeconds: 0.1, FailureThreshold: 1}
	p := Start([]Target{{Project: "p", Server: "s", URL: u.URL, Check: check}}, 5*time.Second, 100*time.Millisecond)
	defer p.Stop()
	waitFor(t, 5*time.Second, "a probe result", func() bool { return p.Instances()[0].Status != Unknown })
	in := p.Instances()[0]
	if in.Status != Unhealthy || !strings.HasPrefix(in.LastError, "no answer within 100ms (") {
		t.Fatalf("status %s, lastError %q; want unhealthy, \"no answer within 100ms (...)\"", in.Status, in.LastError)
	}
}

// TestPutReplacingAServerStopsItsOldProbes: Put of a server probed already
// (an operator replaced it) stops the old probe loop before it returns: the
// old address gets no probe after Put, while the new one is probed.
func TestPutReplacingAServerStopsItsOldProbes(t *testing.T) {
	old, repl := newRawUpstream(t, []string{"a"}, false), newRawUpstream(t, []string{"a"}, false)
	check := &config.HealthCheck{IntervalSeconds: 0.01, TimeoutSeconds: 1}
	p := Start([]Target{{Project: "p", Server: "s", URL: old.URL, Check: check}}, 5*time.Second, 100*time.Millisecond)
	defer p.Stop()
	waitFor(t, 5*time.Second, "two probes of the old address", func() bool { return old.lists.Load() >= 2 })
	p.Put(Target{Project: "p", Server: "s", URL: repl.URL, Check: check})
	after := old.lists.Load()
	waitFor(t, 5*time.Second, "ten probes of the new address", func() bool { return repl.lists.Load() >= 10 })
	// One probe the old loop sent as Put stopped it may reach the server
	// late; an old loop still running sends one per 10 ms.
	if n := old.lists.Load() - after; n > 1 {
		t.Errorf("the old address got %d probes after Put replaced it (the new one %d)", n, repl.lists.Load())
	}
	if got := p.Instances(); len(got) != 1 || got[0].Status != Live {
		t.Errorf("instances %+v, want the one server, live", got)
	}
}
