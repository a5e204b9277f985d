// Package smoke checks a running MCP proxy the way a deployment needs it
// checked: a handful of requests (fewer than 20), read-only tools only (the
// ones it is given; it never calls another), no faults. Each check is a
// plain function, so the Ginkgo suite in this directory runs them as specs
// and its self-test runs them against a proxy that hangs, to show they fail.
//
// What is checked, each call within the per-call budget:
//   - initialize and tools/list answer, and list the given tools;
//   - the read-only tool answers, its result carries a trace code in _meta,
//     and GET /api/v1/audit?trace=CODE resolves that code;
//   - the large read-only tool answers with a trace code;
//   - an unknown Mcp-Session-Id is answered: recreated, or a 404 whose body
//     is a JSON-RPC error (correlatable), never a bare 404 or silence;
//   - DELETE with Content-Type: application/json and an empty body closes a
//     session, and the closed id then gets a JSON-RPC 404.
package smoke

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Defaults of a smoke run.
const (
	DefaultProject     = "docmost"
	DefaultBudget      = 30 * time.Second // per call; a deployment's request deadline bounds it
	DefaultMaxRequests = 19               // the whole run stays under 20 requests
	auditAttempts      = 3                // audit rows are written off the request path
	auditPause         = 250 * time.Millisecond
)

// The environment variables ConfigFromEnv reads.
const (
	EnvURL       = "MCPCHAOS_SMOKE_URL"
	EnvToken     = "MCPCHAOS_SMOKE_TOKEN"
	EnvProject   = "MCPCHAOS_SMOKE_PROJECT"
	EnvReadTool  = "MCPCHAOS_SMOKE_READ_TOOL"
	EnvReadArgs  = "MCPCHAOS_SMOKE_READ_ARGS" // JSON object
	EnvLargeTool = "MCPCHAOS_SMOKE_LARGE_TOOL"
	EnvLargeArgs = "MCPCHAOS_SMOKE_LARGE_ARGS" // JSON object
	EnvBudget    = "MCPCHAOS_SMOKE_BUDGET"     // Go duration (30s) or milliseconds
)

// Config says which proxy to check and how.
type Config struct {
	// URL is the proxy's base URL (scheme://host:port[/prefix]); the MCP
	// endpoint is URL/projects/PROJECT/mcp and the audit API URL/api/v1/audit.
	URL     string
	Token   string // bearer token, if the proxy wants one
	Project string // default DefaultProject
	// ReadTool is a read-only tool to call with ReadArgs (required).
	ReadTool string
	ReadArgs map[string]any
	// LargeTool is a read-only tool whose answer is large (paginated by the
	// proxy), called with LargeArgs; optional.
	LargeTool string
	LargeArgs map[string]any
	// Budget bounds every call; default DefaultBudget.
	Budget time.Duration
	// MaxRequests bounds the run; default DefaultMaxRequests.
	MaxRequests int
	// HTTPClient, if set, sends the requests (its own timeout is not used:
	// Budget bounds each call).
	HTTPClient *http.Client
}

func (c Config) withDefaults() Config {
	if c.Project == "" {
		c.Project = DefaultProject
	}
	if c.Budget <= 0 {
		c.Budget = DefaultBudget
	}
	if c.MaxRequests <= 0 {
		c.MaxRequests = DefaultMaxRequests
	}
	return c
}

// Validate reports a config the checks cannot run with.
func (c Config) Validate() error {
	var errs []error
	if u, err := url.Parse(c.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("URL %q: want http(s)://host:port", c.URL))
	}
	if c.ReadTool == "" {
		errs = append(errs, errors.New("a read-only tool is required ("+EnvReadTool+")"))
	}
	if c.MaxRequests > DefaultMaxRequests {
		errs = append(errs, fmt.Errorf("MaxRequests %d: a smoke run stays under 20 requests", c.MaxRequests))
	}
	return errors.Join(errs...)
}

// ConfigFromEnv reads a Config from the MCPCHAOS_SMOKE_* variables; URL is
// empty when MCPCHAOS_SMOKE_URL is unset.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Config{URL: getenv(EnvURL), Token: getenv(EnvToken), Project: getenv(EnvProject),
		ReadTool: getenv(EnvReadTool), LargeTool: getenv(EnvLargeTool)}
	var errs []error
	for _, a := range []struct {
		env string
		dst *map[string]any
	}{{EnvReadArgs, &c.ReadArgs}, {EnvLargeArgs, &c.LargeArgs}} {
		if v := getenv(a.env); v != "" {
			if err := json.Unmarshal([]byte(v), a.dst); err != nil {
				errs = append(errs, fmt.Errorf("%s: want a JSON object: %w", a.env, err))
			}
		}
	}
	if v := getenv(EnvBudget); v != "" {
		d, err := ParseBudget(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", EnvBudget, err))
		}
		c.Budget = d
	}
	return c.withDefaults(), errors.Join(errs...)
}

// ParseBudget reads a Go duration ("30s") or a number of milliseconds.
func ParseBudget(s string) (time.Duration, error) {
	if ms, err := strconv.Atoi(s); err == nil && ms > 0 {
		return time.Duration(ms) * time.Millisecond, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q: want a positive Go duration or milliseconds", s)
	}
	return d, nil
}

// Check is one smoke check.
type Check struct {
	Name string
	// Skip, if set, says why the check does not apply to cfg ("" if it does).
	Skip func(Config) string
	Do   func(ctx context.Context, c *Client) error
}

// Checks returns every check, in the order they run.
func Checks() []Check {
	return []Check{
		{Name: "initialize and tools/list answer within the budget and list the given tools", Do: checkToolsList},
		{Name: "the read-only tool answers within the budget with a trace code the audit API resolves", Do: checkReadTool},
		{Name: "the large read-only tool answers within the budget with a trace code", Do: checkLargeTool,
			Skip: func(c Config) string {
				if c.LargeTool == "" {
					return "no large tool given (" + EnvLargeTool + ")"
				}
				return ""
			}},
		{Name: "an unknown session id is answered: recreated, or a 404 with a JSON-RPC error", Do: checkUnknownSession},
		{Name: "DELETE with an empty JSON body closes the session; its id then gets a JSON-RPC 404", Do: checkDelete},
	}
}

func checkToolsList(ctx context.Context, c *Client) error {
	id, err := c.Session(ctx)
	if err != nil {
		return err
	}
	a, err := c.rpc(ctx, "tools/list", id, "tools/list", map[string]any{})
	if err != nil {
		return err
	}
	if a.rpc.Error != nil {
		return fmt.Errorf("tools/list: %w", a.rpc.Error)
	}
	var res struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(a.rpc.Result, &res); err != nil {
		return fmt.Errorf("tools/list: result: %w", err)
	}
	have := map[string]bool{}
	for _, t := range res.Tools {
		have[t.Name] = true
	}
	for _, want := range []string{c.cfg.ReadTool, c.cfg.LargeTool} {
		if want != "" && !have[want] {
			return fmt.Errorf("tools/list does not list %q (%d tools listed)", want, len(res.Tools))
		}
	}
	return nil
}

// callTool calls a given read-only tool on the client's session and returns
// its result and trace code; an isError result or a missing code is an error.
func callTool(ctx context.Context, c *Client, tool string, args map[string]any) (string, error) {
	if tool != c.cfg.ReadTool && tool != c.cfg.LargeTool {
		return "", fmt.Errorf("refusing to call %q: only the given read-only tools are called", tool)
	}
	id, err := c.Session(ctx)
	if err != nil {
		return "", err
	}
	if args == nil {
		args = map[string]any{}
	}
	a, err := c.rpc(ctx, "tools/call "+tool, id, "tools/call", map[string]any{"name": tool, "arguments": args})
	if err != nil {
		return "", err
	}
	if a.rpc.Error != nil {
		return "", fmt.Errorf("tools/call %s: %w", tool, a.rpc.Error)
	}
	var res toolResult
	if err := json.Unmarshal(a.rpc.Result, &res); err != nil {
		return "", fmt.Errorf("tools/call %s: result: %w", tool, err)
	}
	code, _ := res.Meta[TraceMetaKey].(string)
	switch {
	case res.IsError:
		return code, fmt.Errorf("tools/call %s answered isError (trace %s): %s", tool, code, excerpt(res.text()))
	case !ValidTraceCode(code):
		return code, fmt.Errorf("tools/call %s: the result carries no trace code in _meta.%s (got %q)", tool, TraceMetaKey, code)
	}
	return code, nil
}

func checkReadTool(ctx context.Context, c *Client) error {
	code, err := callTool(ctx, c, c.cfg.ReadTool, c.cfg.ReadArgs)
	if err != nil {
		return err
	}
	return c.resolveTrace(ctx, code)
}

func checkLargeTool(ctx context.Context, c *Client) error {
	_, err := callTool(ctx, c, c.cfg.LargeTool, c.cfg.LargeArgs)
	return err
}

// resolveTrace asks the audit API for code's rows until one carries it
// (rows are written off the request path), a bounded number of times.
func (c *Client) resolveTrace(ctx context.Context, code string) error {
	u := strings.TrimRight(c.cfg.URL, "/") + "/api/v1/audit?trace=" + url.QueryEscape(code)
	var last error
	for i := range auditAttempts {
		if i > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(auditPause):
			}
		}
		rows, err := c.audit(ctx, u)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if r.CorrelationID == code {
				return nil
			}
		}
		last = fmt.Errorf("GET /api/v1/audit?trace=%s: no row carries the code (%d rows)", code, len(rows))
	}
	return last
}

type auditRow struct {
	Kind          string `json:"kind"`
	CorrelationID string `json:"correlationId"`
}

// audit sends one GET to the audit API, counted and bounded like every call.
func (c *Client) audit(ctx context.Context, u string) ([]auditRow, error) {
	c.mu.Lock()
	if c.requests >= c.cfg.MaxRequests {
		c.mu.Unlock()
		return nil, fmt.Errorf("audit: not sent: the smoke run is bounded to %d requests", c.cfg.MaxRequests)
	}
	c.requests++
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Budget)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if c.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.Token)
	}
	start := time.Now()
	resp, err := c.hc.Do(req)
	var rows []auditRow
	status := 0
	if err == nil {
		status = resp.StatusCode
		var body struct {
			Rows  []auditRow `json:"rows"`
			Error string     `json:"error"`
		}
		derr := json.NewDecoder(resp.Body).Decode(&body)
		_ = resp.Body.Close()
		switch {
		case status != http.StatusOK:
			err = fmt.Errorf("answered %d: %s", status, body.Error)
		case derr != nil:
			err = fmt.Errorf("answer is not {\"rows\": [...]}: %w", derr)
		}
		rows = body.Rows
	}
	lat := time.Since(start)
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("no answer within the %v budget: %w", c.cfg.Budget, err)
	}
	c.record(Call{What: "GET /api/v1/audit", Status: status, Latency: lat, Err: err})
	if err != nil {
		return nil, fmt.Errorf("GET /api/v1/audit: %w", err)
	}
	return rows, nil
}

func checkUnknownSession(ctx context.Context, c *Client) error {
	id := randomSessionID()
	a, err := c.rpc(ctx, "tools/list on an unknown session", id, "tools/list", map[string]any{})
	switch {
	case err != nil && a.status == http.StatusNotFound:
		return fmt.Errorf("unknown session id: a 404 whose body is not a JSON-RPC error (clients cannot correlate it and stay broken): %s", excerpt(a.body))
	case err != nil:
		return err
	case a.status == http.StatusNotFound && a.rpc.Error != nil:
		return nil // correlatable: the client's call fails alone
	case a.status == http.StatusOK && a.rpc.Error == nil:
		// Recreated: close it again, so the smoke leaves nothing behind.
		if s := a.header.Get(headerSession); s != "" && s != id {
			return fmt.Errorf("unknown session id %s recreated under a different id %s", id, s)
		}
		status, body, err := c.delete(ctx, id)
		if err != nil {
			return fmt.Errorf("closing the recreated session: %w", err)
		}
		if status/100 != 2 {
			return fmt.Errorf("closing the recreated session: DELETE answered %d: %s", status, excerpt(body))
		}
		return nil
	}
	return fmt.Errorf("unknown session id answered %d: %s", a.status, excerpt(a.body))
}

func checkDelete(ctx context.Context, c *Client) error {
	id, err := c.open(ctx)
	if err != nil {
		return fmt.Errorf("opening a session to delete: %w", err)
	}
	if id == "" {
		return errors.New("the proxy issued no Mcp-Session-Id: nothing to DELETE")
	}
	status, body, err := c.delete(ctx, id)
	if err != nil {
		return err
	}
	if status/100 != 2 {
		return fmt.Errorf("DELETE with Content-Type: application/json and an empty body answered %d: %s", status, excerpt(body))
	}
	a, err := c.rpc(ctx, "tools/list on the deleted session", id, "tools/list", map[string]any{})
	switch {
	case err != nil && a.status == http.StatusNotFound:
		return fmt.Errorf("the deleted id got a 404 whose body is not a JSON-RPC error: %s", excerpt(a.body))
	case err != nil:
		return err
	case a.status != http.StatusNotFound:
		return fmt.Errorf("the deleted id answered %d, want 404 (a DELETEd session must not be adopted again): %s", a.status, excerpt(a.body))
	}
	return nil
}

// Result is one check's verdict.
type Result struct {
	Check    string
	Skipped  string // why it did not run
	Err      error  // nil when it passed
	Duration time.Duration
}

// Report is a whole run.
type Report struct {
	Endpoint string
	Budget   time.Duration
	Results  []Result
	Calls    []Call
	Requests int
}

// Failed lists the checks that failed.
func (r Report) Failed() []Result {
	var out []Result
	for _, x := range r.Results {
		if x.Err != nil {
			out = append(out, x)
		}
	}
	return out
}

// String renders the report: one line per check, then every request sent.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "smoke checks of %s (budget %v per call, %d requests)\n", r.Endpoint, r.Budget, r.Requests)
	for _, x := range r.Results {
		switch {
		case x.Skipped != "":
			fmt.Fprintf(&b, "SKIP  %s: %s\n", x.Check, x.Skipped)
		case x.Err != nil:
			fmt.Fprintf(&b, "FAIL  %s (%v): %v\n", x.Check, x.Duration.Round(time.Millisecond), x.Err)
		default:
			fmt.Fprintf(&b, "PASS  %s (%v)\n", x.Check, x.Duration.Round(time.Millisecond))
		}
	}
	b.WriteString("requests:\n")
	for _, c := range r.Calls {
		verdict := "ok"
		if c.Err != nil {
			verdict = c.Err.Error()
		}
		fmt.Fprintf(&b, "  %-40s %3d %8v  %s\n", c.What, c.Status, c.Latency.Round(time.Millisecond), verdict)
	}
	fmt.Fprintf(&b, "%d of %d checks failed\n", len(r.Failed()), len(r.Results))
	return b.String()
}

// Run runs checks (every check when none are given) against cfg with one
// client, closes its session, and reports. It never sends more than
// cfg.MaxRequests requests and each waits at most cfg.Budget.
func Run(ctx context.Context, cfg Config, checks ...Check) Report {
	cfg = cfg.withDefaults()
	if len(checks) == 0 {
		checks = Checks()
	}
	c := NewClient(cfg)
	r := Report{Endpoint: c.Endpoint(), Budget: cfg.Budget}
	if err := cfg.Validate(); err != nil {
		r.Results = append(r.Results, Result{Check: "config", Err: err})
		return r
	}
	for _, ch := range checks {
		if ch.Skip != nil {
			if why := ch.Skip(cfg); why != "" {
				r.Results = append(r.Results, Result{Check: ch.Name, Skipped: why})
				continue
			}
		}
		start := time.Now()
		err := ch.Do(ctx, c)
		r.Results = append(r.Results, Result{Check: ch.Name, Err: err, Duration: time.Since(start)})
	}
	if err := c.Close(ctx); err != nil {
		r.Results = append(r.Results, Result{Check: "closing the smoke session", Err: err})
	}
	r.Calls, r.Requests = c.Calls(), c.Requests()
	return r
}
