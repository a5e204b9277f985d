package catalogue

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// instancesScenarios: what /api/v1/instances shows to whom.
func instancesScenarios() []Scenario {
	env := twoUsers
	env.DocmostHealth = &harness.HealthCheck{IntervalSeconds: 0.1, TimeoutSeconds: 0.5, FailureThreshold: 1}
	return []Scenario{
		{Fault: harness.LinkDown{}, Operation: LastErrorForAdmins, Promise: "8 secrets never leave",
			Labels: []string{"security", "secrets", "audit-api"}, Env: env, Budget: func(harness.Bounds) time.Duration { return lastErrorWait }, Expect: sessionAnswered,
			Needs: ownsSessions},
		{Fault: harness.LinkDown{}, Operation: ReadyzWithoutUpstreamText, Promise: "8 secrets never leave",
			Labels: []string{"security", "secrets", "readyz"}, Env: env, Budget: func(harness.Bounds) time.Duration { return lastErrorWait }, Expect: sessionAnswered,
			Needs: ownsSessions},
	}
}

// lastErrorWait bounds the wait for the health prober to see the upstream
// down.
const lastErrorWait = 5 * time.Second

type instancesBody struct {
	Instances []struct {
		Server    string `json:"server"`
		Status    string `json:"status"`
		LastError string `json:"lastError"`
	} `json:"instances"`
}

// LastErrorForAdmins: with the upstream down, an admin's GET
// /api/v1/instances names its last error (a service's words, which may
// quote an internal body); any other token holder's shows its status only.
var LastErrorForAdmins = Operation{Name: "an upstream's lastError in /api/v1/instances, for an admin and for a user", Do: func(ctx context.Context, env *harness.Env) Observation {
	clk := startClock()
	get := func(token string) (instancesBody, error) {
		var b instancesBody
		hc := harness.HTTPClient(token)
		defer hc.CloseIdleConnections()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, env.Target.URL()+"/api/v1/instances", nil)
		if err != nil {
			return b, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return b, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return b, fmt.Errorf("/api/v1/instances answered %d", resp.StatusCode)
		}
		return b, json.NewDecoder(resp.Body).Decode(&b)
	}
	lastError := func(b instancesBody) string {
		for _, in := range b.Instances {
			if in.Server == "docmost" {
				return in.LastError
			}
		}
		return ""
	}
	var o Observation
	deadline := time.Now().Add(lastErrorWait)
	for {
		admin, err := get(env.AdminToken())
		if err != nil {
			return clk.stop(Observation{Err: err})
		}
		if lastError(admin) != "" {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			o.Broken = append(o.Broken, "an admin's /api/v1/instances never named the down upstream's lastError: the fault did not strike")
			clk.into(&o)
			return o
		}
		time.Sleep(50 * time.Millisecond)
	}
	user, err := get(env.Token("alice"))
	if err != nil {
		return clk.stop(Observation{Err: err})
	}
	if le := lastError(user); le != "" {
		o.Broken = append(o.Broken, "8 a non-admin's /api/v1/instances shows the upstream's lastError: "+excerpt(le))
	}
	clk.into(&o)
	return o
}}

// ReadyzWithoutUpstreamText: with the upstream down, /readyz (which anyone
// who reaches the proxy may read, without a token) is 503 and names the
// server that is not ready, never the upstream's own words: the admin's
// lastError (which may quote an internal service's body) is in no string of
// its body.
var ReadyzWithoutUpstreamText = Operation{Name: "/readyz with an upstream down names it, not its lastError", Do: func(ctx context.Context, env *harness.Env) Observation {
	clk := startClock()
	var o Observation
	deadline := time.Now().Add(lastErrorWait)
	var le string
	for le == "" {
		status, body, err := apiGetWith(ctx, env, env.AdminToken(), "/api/v1/instances")
		if err != nil {
			return clk.stop(Observation{Err: err})
		}
		var b instancesBody
		if status == http.StatusOK && json.Unmarshal([]byte(body), &b) == nil {
			for _, in := range b.Instances {
				if in.Server == "docmost" {
					le = in.LastError
				}
			}
		}
		if le != "" {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			o.Broken = append(o.Broken, "an admin's /api/v1/instances never named the down upstream's lastError: the fault did not strike")
			clk.into(&o)
			return o
		}
		time.Sleep(50 * time.Millisecond)
	}
	status, body, err := apiGetWith(ctx, env, "", "/readyz")
	if err != nil {
		return clk.stop(Observation{Err: err})
	}
	if status != http.StatusServiceUnavailable {
		o.Broken = append(o.Broken, fmt.Sprintf("/readyz answered %d with the upstream down, not 503: %s", status, excerpt(body)))
	}
	if !strings.Contains(body, "docmost") {
		o.Broken = append(o.Broken, "/readyz does not name the server that is not ready: "+excerpt(body))
	}
	if strings.Contains(body, le) || strings.Contains(body, jsonText(le)) {
		o.Broken = append(o.Broken, "8 /readyz, open to anyone, carries the upstream's lastError: "+excerpt(body))
	}
	clk.into(&o)
	return o
}}

// jsonText is s as it reads inside a JSON string (quotes dropped).
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return strings.TrimSuffix(strings.TrimPrefix(string(b), `"`), `"`)
}

// apiGetWith GETs path from the proxy with token ("" sends none) and
// returns the status and body.
func apiGetWith(ctx context.Context, env *harness.Env, token, path string) (int, string, error) {
	hc := harness.HTTPClient(token)
	defer hc.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, env.Target.URL()+path, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b), err
}

// probedOften is o with the docmost server probed every 200 ms, so a row
// that reads what a probe recorded waits a moment, not the default minute.
func probedOften(o harness.EnvOptions) harness.EnvOptions {
	o.DocmostHealth = &harness.HealthCheck{IntervalSeconds: 0.2}
	return o
}
