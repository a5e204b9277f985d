package catalogue

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// credentialScenarios: a server's credentials stay with its URL.
func credentialScenarios() []Scenario {
	env := twoUsers
	env.UpstreamKey = true
	return []Scenario{
		{Fault: harness.None{}, Operation: CredentialsStayWithTheirURL, Promise: "8 secrets never leave",
			Labels: []string{"security", "secrets"}, Env: env, Budget: requestDeadline, Expect: sessionAnswered, Needs: ownsSessions},
	}
}

// keyRecorder is an upstream that answers nothing useful but remembers
// every X-Api-Key it was sent.
type keyRecorder struct {
	srv  *httptest.Server
	mu   sync.Mutex
	keys []string
}

func newKeyRecorder() *keyRecorder {
	k := &keyRecorder{}
	k.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
		k.mu.Lock()
		k.keys = append(k.keys, r.Header.Get("X-Api-Key"))
		k.mu.Unlock()
		http.Error(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"recorder"}}`, http.StatusInternalServerError)
	}))
	return k
}

func (k *keyRecorder) seen() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.keys...)
}

// CredentialsStayWithTheirURL: an admin creates server "creds" with header
// X-Api-Key by reference (valueEnv) through /api/v1/servers; the servers
// API shows the reference, a replacement that keeps the URL and names no
// header keeps it, and the upstream gets the key. Then the server is
// replaced with a new URL and no header: the new URL never gets the key,
// and the API shows no header.
var CredentialsStayWithTheirURL = Operation{Name: "a server's header key after its URL is replaced", Do: func(ctx context.Context, env *harness.Env) Observation {
	clk := startClock()
	a, b := newKeyRecorder(), newKeyRecorder()
	defer a.srv.Close()
	defer b.srv.Close()
	var o Observation
	put := func(body string) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, env.Target.URL()+"/api/v1/servers/"+harness.Project+"/creds", strings.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		hc := harness.HTTPClient(env.AdminToken())
		defer hc.CloseIdleConnections()
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		rb, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("PUT creds answered %d: %s", resp.StatusCode, excerpt(string(rb)))
		}
		return nil
	}
	spec := func() string {
		hc := harness.HTTPClient(env.AdminToken())
		defer hc.CloseIdleConnections()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, env.Target.URL()+"/api/v1/servers?project="+harness.Project, nil)
		resp, err := hc.Do(req)
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return string(b)
	}
	touch := func() { // a session lists the tools: the proxy connects to every server
		cs, err := connect(ctx, env, "alice")
		if err != nil {
			return
		}
		_, _ = cs.ListTools(ctx, nil)
		_ = cs.Close()
	}
	ref := `"headers":{"X-Api-Key":{"valueEnv":"` + harness.UpstreamKeyEnv + `"}}`
	if err := put(`{"url":"` + a.srv.URL + `",` + ref + `}`); err != nil {
		return clk.stop(Observation{Err: err})
	}
	if err := put(`{"url":"` + a.srv.URL + `","healthCheck":{"intervalSeconds":30}}`); err != nil {
		return clk.stop(Observation{Err: err})
	}
	if got := spec(); !strings.Contains(got, harness.UpstreamKeyEnv) {
		o.Broken = append(o.Broken, "8 the servers API lost the header reference of a server replaced under its own URL: "+excerpt(got))
	}
	if got := spec(); strings.Contains(got, harness.UpstreamKeyValue) {
		o.Broken = append(o.Broken, "8 the servers API shows a header's value: "+excerpt(got))
	}
	touch()
	if !strings.Contains(strings.Join(a.seen(), ","), harness.UpstreamKeyValue) {
		o.Broken = append(o.Broken, fmt.Sprintf("the server never got its own key (it saw %q): the header was not sent", a.seen()))
	}
	if err := put(`{"url":"` + b.srv.URL + `"}`); err != nil {
		return clk.stop(Observation{Err: err})
	}
	touch()
	if len(b.seen()) == 0 {
		o.Broken = append(o.Broken, "the replaced server's new URL was never asked: the check cannot tell")
	}
	for _, k := range b.seen() {
		if k != "" {
			o.Broken = append(o.Broken, "8 the server's new URL got the old URL's key: "+excerpt(k))
			break
		}
	}
	if got := spec(); strings.Contains(got, harness.UpstreamKeyEnv) {
		o.Broken = append(o.Broken, "8 a server replaced with a new URL and no header still names the old header: "+excerpt(got))
	}
	clk.into(&o)
	return o
}}
