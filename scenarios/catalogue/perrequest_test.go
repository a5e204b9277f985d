package catalogue

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/fakes/plainproxy"
	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// perRequestTarget is a stateless proxy speaking harness.PerRequestRevision
// at url, with the everything fake on /everything/mcp under its own names.
type perRequestTarget struct {
	bare
	url string
}

func (p perRequestTarget) URL() string            { return p.url }
func (p perRequestTarget) Endpoint(string) string { return p.url + "/everything/mcp" }
func (p perRequestTarget) ServerEndpoint(_, server string) string {
	return p.url + "/" + server + "/mcp"
}
func (perRequestTarget) ToolName(_, tool string) string { return tool }
func (perRequestTarget) Stateless() bool                { return true }
func (perRequestTarget) Protocol() string               { return harness.PerRequestRevision }
func (perRequestTarget) Budgets(b harness.Bounds) harness.Bounds {
	return b.WithD(harness.BoundRequest, 3*time.Second)
}
func (perRequestTarget) Forwards(method string) bool        { return true }
func (perRequestTarget) PromptName(_, prompt string) string { return prompt }
func (perRequestTarget) FrontsEverything() bool             { return true }

// A stateless proxy speaking MCP 2026-07-28 passes the log and subscription
// rows that revision's way when it carries the level a call's _meta asks
// for and the update a listen stream waits for (the fake proxy's stateless
// mode), and fails them when it drops the level (a proxy rebuilding _meta
// without it) or the update (a proxy that passes a listen stream's
// acknowledgement but not what follows, as the verdict says).
func TestAStatelessProxyDroppingTheLevelOrTheUpdateFails(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	every, err := upstream.NewEverything(upstream.Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer every.Close()
	p, err := plainproxy.Start(ctx, plainproxy.Options{Addr: "127.0.0.1:0", Servers: map[string]string{"everything": every.URL()},
		Path: "/{server}/mcp", Stateless: true, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	base := strings.TrimSuffix(p.URL(), "/{server}/mcp")
	spec := shape(t, "stateless: true\nprotocol: \""+harness.PerRequestRevision+"\"\nforwards: ["+strings.Join(harness.PerRequestWays, ", ")+"]\n")
	rows := map[string]Scenario{
		"log":       byName(t, "none × "+SetLevelAndLog.Name),
		"subscribe": byName(t, "none × "+SubscribeUpdate.Name),
	}
	for _, c := range []struct {
		name, row  string
		level      string // what the proxy passes for the call's level
		dropUpdate bool
		pass       bool
		says       string // what a failing verdict names
	}{
		{name: "carried", row: "log", pass: true},
		{name: "carried", row: "subscribe", pass: true},
		{name: "the level dropped", row: "log", level: `"x-dropped":"error"`},
		{name: "the level ignored", row: "log", level: `"io.modelcontextprotocol/logLevel":"debug"`},
		{name: "the update dropped", row: "subscribe", dropUpdate: true, says: "never reached the subscriptions/listen stream"},
	} {
		t.Run(c.row+" "+c.name, func(t *testing.T) {
			front := httptest.NewServer(dropping(t, base, c.level, c.dropUpdate))
			defer front.Close()
			target := perRequestTarget{url: front.URL}
			s := rows[c.row]
			o := s.Operation.Do(ctx, harness.JudgedOn(target, harness.DefaultBounds()))
			r := s.JudgeOn(spec, harness.DefaultBounds(), o)
			if r.Pass != c.pass {
				t.Errorf("%s with %s: pass=%v, want %v: %s %v", s.Name(), c.name, r.Pass, c.pass, r.Reason, o.Err)
			}
			if !strings.Contains(r.Reason, c.says) {
				t.Errorf("%s with %s: the verdict does not say %q: %s", s.Name(), c.name, c.says, r.Reason)
			}
			t.Logf("%s: %s", c.name, r.Reason)
		})
	}
}

// dropping is a reverse proxy to base that, if told, passes level in place
// of a request's _meta log level (error), and drops a listen stream's
// resource updates.
func dropping(t *testing.T, base, level string, update bool) http.Handler {
	rp := httputil.NewSingleHostReverseProxy(mustParse(t, base))
	rp.FlushInterval = -1
	rp.ModifyResponse = func(resp *http.Response) error {
		if update && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			resp.Body = withoutUpdates(resp.Body)
		}
		return nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if level != "" && r.Body != nil {
			body, _ := io.ReadAll(r.Body)
			body = bytes.ReplaceAll(body, []byte(`"io.modelcontextprotocol/logLevel":"error"`), []byte(level))
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		rp.ServeHTTP(w, r)
	})
}

// withoutUpdates is an event stream less its notifications/resources/updated.
func withoutUpdates(body io.ReadCloser) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		defer body.Close()
		sc := bufio.NewScanner(body)
		var event strings.Builder
		for sc.Scan() {
			event.WriteString(sc.Text() + "\n")
			if sc.Text() != "" {
				continue
			}
			if !strings.Contains(event.String(), "notifications/resources/updated") {
				if _, err := io.WriteString(pw, event.String()); err != nil {
					return
				}
			}
			event.Reset()
		}
		pw.CloseWithError(sc.Err())
	}()
	return pr
}
