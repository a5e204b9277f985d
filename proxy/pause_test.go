package proxy_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy"
	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/failpoint"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// pauseTolerance is the slack of every timing assertion here: loopback,
// -race, two shared cores.
const pauseTolerance = 200 * time.Millisecond

// pauseWorld is a proxy serving project docmost (a fake docmost upstream)
// with a compressed request deadline and pause bound.
type pauseWorld struct {
	t     *testing.T
	base  string
	up    *testUpstream
	fp    *failpoint.Set
	knobs knobs.Values
	token string // "" when the proxy has no users
}

func newPauseWorld(t *testing.T, deadline, maxWait time.Duration, withUsers bool, tune ...func(*knobs.Values)) *pauseWorld {
	t.Helper()
	up := newTestUpstream(t)
	k := knobs.Defaults()
	k.RequestDeadline, k.UpstreamCallTimeout, k.UpstreamConnect = deadline, deadline, time.Second
	k.PauseMaxWait, k.ShutdownGrace = maxWait, 200*time.Millisecond
	for _, f := range tune {
		f(&k)
	}
	cfg := &config.Config{Listen: "127.0.0.1:0", Audit: "memory", Projects: map[string]*config.Project{
		"docmost": {Servers: map[string]*config.Server{"docmost": {URL: up.URL()}}},
	}}
	w := &pauseWorld{t: t, up: up, fp: failpoint.New(), knobs: k}
	if withUsers {
		w.token = "alice-token"
		cfg.Users = map[string]config.User{"alice": {Token: w.token, Admin: true}, "bob": {Token: bobToken}}
	}
	p, err := proxy.New(context.Background(), cfg, proxy.Options{Knobs: &k, Failpoints: w.fp})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	w.base = "http://" + p.Addr()
	return w
}

// bobToken is a configured user's token without admin: true.
const bobToken = "bob-token"

type bearerRT struct{ token string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.token != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// session opens an MCP session on the project (before any pause: initialize
// would wait too).
func (w *pauseWorld) session() *mcp.ClientSession {
	w.t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "pause-test", Version: "0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: w.base + "/projects/docmost/mcp", HTTPClient: &http.Client{Transport: bearerRT{w.token}},
		DisableStandaloneSSE: true, MaxRetries: -1,
	}, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// api POSTs or GETs path with token and returns the status and body.
func (w *pauseWorld) api(method, path, token string) (int, string) {
	w.t.Helper()
	req, _ := http.NewRequest(method, w.base+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (w *pauseWorld) pause(on bool) time.Time {
	w.t.Helper()
	path := "/api/v1/projects/docmost/resume"
	if on {
		path = "/api/v1/projects/docmost/pause"
	}
	if code, body := w.api(http.MethodPost, path, w.token); code != http.StatusOK {
		w.t.Fatalf("POST %s: %d %s", path, code, body)
	}
	return time.Now()
}

// waitWaiting polls /readyz until n requests wait on the paused project.
func (w *pauseWorld) waitWaiting(n int) {
	w.t.Helper()
	limit := time.Now().Add(3 * time.Second)
	for time.Now().Before(limit) {
		_, body := w.api(http.MethodGet, "/readyz", "")
		var r struct {
			Paused []struct {
				Project string `json:"project"`
				Waiting int    `json:"waiting"`
			} `json:"paused"`
		}
		if json.Unmarshal([]byte(body), &r) == nil && len(r.Paused) == 1 && r.Paused[0].Waiting == n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	w.t.Fatalf("%d request(s) never showed as waiting on the paused project", n)
}

type callResult struct {
	res *mcp.CallToolResult
	err error
	at  time.Time
}

func callAsync(ctx context.Context, cs *mcp.ClientSession, tool string) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"page_id": "p1", "content": "x"}})
		ch <- callResult{res, err, time.Now()}
	}()
	return ch
}

func text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// holdPaused keeps the project paused for d after its request queued: a
// condition of the spec (longer than the whole deadline), not a timing claim.
func holdPaused(d time.Duration) { <-time.After(d) }

// TestPausedRequestGetsItsFullDeadlineAfterResume: a request paused for
// longer than its whole deadline (MCPCTL_REQUEST_DEADLINE_MS) is not
// answered as timed out: its clock was suspended, and after resume it has
// the budget to finish a call that takes 60% of the deadline.
func TestPausedRequestGetsItsFullDeadlineAfterResume(t *testing.T) {
	const deadline = 500 * time.Millisecond
	w := newPauseWorld(t, deadline, 10*time.Second, false)
	w.up.SlowUpdates(deadline * 6 / 10)
	cs := w.session()
	w.pause(true)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := callAsync(ctx, cs, "docmost_update_page")
	w.waitWaiting(1)
	holdPaused(deadline * 3 / 2)
	resumed := w.pause(false)
	r := <-got
	if r.err != nil || r.res.IsError {
		t.Fatalf("a request paused for %v (longer than its %v deadline) did not get its budget after resume: err %v, result %q", deadline*3/2, deadline, r.err, text(r.res))
	}
	if took := r.at.Sub(resumed); took < deadline*6/10 || took > deadline+pauseTolerance {
		t.Errorf("answered %v after resume; the upstream takes %v and the deadline is %v (tolerance %v)", took, deadline*6/10, deadline, pauseTolerance)
	}
}

// TestHangAfterResumeIsAnsweredAtTheRearmedDeadline: the pause suspends the
// clock, it does not exempt the request: a handler that hangs after resume
// is answered at resume + the remaining deadline.
func TestHangAfterResumeIsAnsweredAtTheRearmedDeadline(t *testing.T) {
	const deadline = 500 * time.Millisecond
	w := newPauseWorld(t, deadline, 10*time.Second, false)
	w.fp.Arm(failpoint.ToolCall, "docmost_update_page", failpoint.Hang)
	cs := w.session()
	w.pause(true)
	ctx, cancel := context.WithTimeout(context.Background(), 3*deadline+5*time.Second)
	defer cancel()
	got := callAsync(ctx, cs, "docmost_update_page")
	w.waitWaiting(1)
	holdPaused(deadline * 3 / 2)
	resumed := w.pause(false)
	r := <-got
	if r.err != nil {
		t.Fatalf("the hung request was not answered (exempted from its deadline?): %v", r.err)
	}
	if !r.res.IsError || !strings.Contains(text(r.res), "did not complete within") {
		t.Fatalf("want the deadline's isError answer, got %q", text(r.res))
	}
	if took := r.at.Sub(resumed); took < deadline-pauseTolerance || took > deadline+pauseTolerance {
		t.Errorf("answered %v after resume, want the re-armed deadline %v ± %v", took, deadline, pauseTolerance)
	}
}

// TestPauseMaxWaitAnswersARequestLeftWaiting: MCPCTL_PAUSE_MAX_WAIT_MS alone
// decides when a request left waiting on a paused project is answered: a
// tools/call with an isError result, another method with -32001, both
// quoting the trace code, and a pause_wait audit row with status timeout.
func TestPauseMaxWaitAnswersARequestLeftWaiting(t *testing.T) {
	const maxWait = 300 * time.Millisecond
	w := newPauseWorld(t, 5*time.Second, maxWait, false)
	cs := w.session()
	start := w.pause(true)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := callAsync(ctx, cs, "docmost_update_page")
	_, listErr := cs.ListTools(ctx, nil)
	r := <-got
	if r.err != nil || !r.res.IsError {
		t.Fatalf("want an isError result, got err %v", r.err)
	}
	want := "project docmost paused for longer than 300ms"
	code, _ := r.res.Meta[trace.MetaKey].(string)
	if msg := text(r.res); !strings.Contains(msg, want) || !trace.Valid(code) || !strings.Contains(msg, code) {
		t.Errorf("isError text %q does not say %q with its trace code %q", msg, want, code)
	}
	if took := r.at.Sub(start); took < maxWait || took > maxWait+pauseTolerance {
		t.Errorf("answered after %v, want MCPCTL_PAUSE_MAX_WAIT_MS %v (tolerance %v)", took, maxWait, pauseTolerance)
	}
	var werr *jsonrpc.Error
	if !errors.As(listErr, &werr) || werr.Code != -32001 || !strings.Contains(werr.Message, want) {
		t.Errorf("tools/list: want a -32001 error saying %q, got %v", want, listErr)
	}
	_, body := w.api(http.MethodGet, "/api/v1/audit?trace="+code, "")
	var rows struct {
		Rows []audit.Row `json:"rows"`
	}
	_ = json.Unmarshal([]byte(body), &rows)
	found := false
	for _, row := range rows.Rows {
		found = found || (row.Kind == audit.KindPauseWait && row.Status == audit.StatusTimeout && strings.Contains(row.Detail, want))
	}
	if !found {
		t.Errorf("no pause_wait row with status timeout under trace %s: %s", code, body)
	}
}

// TestPausedProjectShowsAsPaused: /readyz and /api/v1/instances show the
// pause; with users configured the admin API wants a token; an unknown
// project is refused by name.
func TestPausedProjectShowsAsPaused(t *testing.T) {
	w := newPauseWorld(t, 2*time.Second, 10*time.Second, true)
	if code, _ := w.api(http.MethodPost, "/api/v1/projects/docmost/pause", ""); code != http.StatusUnauthorized {
		t.Errorf("pause without a token: %d, want 401", code)
	}
	if code, body := w.api(http.MethodPost, "/api/v1/projects/nope/pause", w.token); code != http.StatusNotFound || !strings.Contains(body, "docmost") {
		t.Errorf("pause of an unknown project: %d %s", code, body)
	}
	w.pause(true)
	for path, tok := range map[string]string{"/readyz": "", "/api/v1/instances": w.token} { // /api/v1 answers only users
		if _, body := w.api(http.MethodGet, path, tok); !strings.Contains(body, `"paused":[{"project":"docmost","paused":true`) {
			t.Errorf("%s does not show docmost paused: %s", path, body)
		}
	}
	_, body := w.api(http.MethodGet, "/api/v1/instances", w.token)
	var ins struct {
		Instances []struct {
			Project string `json:"project"`
			Paused  bool   `json:"paused"`
		} `json:"instances"`
	}
	if err := json.Unmarshal([]byte(body), &ins); err != nil || len(ins.Instances) != 1 || !ins.Instances[0].Paused {
		t.Errorf("the docmost instance is not marked paused: %s", body)
	}
	w.pause(false)
	if _, body := w.api(http.MethodGet, "/readyz", ""); !strings.Contains(body, `"paused":[]`) {
		t.Errorf("/readyz still shows a pause after resume: %s", body)
	}
}

// TestPauseQueueMaxAnswersTheOverflowAtOnce: MCPCTL_PAUSE_QUEUE_MAX alone
// decides how many requests may wait on a paused project: with 1, a second
// request is answered at once (not queued) saying the queue is full, and the
// first still runs after resume.
func TestPauseQueueMaxAnswersTheOverflowAtOnce(t *testing.T) {
	w := newPauseWorld(t, 2*time.Second, 10*time.Second, false, func(k *knobs.Values) { k.PauseQueueMax = 1 })
	cs := w.session()
	w.pause(true)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	first := callAsync(ctx, cs, "docmost_update_page")
	w.waitWaiting(1)
	sent := time.Now()
	second := <-callAsync(ctx, cs, "docmost_update_page")
	if second.err != nil || !second.res.IsError || !strings.Contains(text(second.res), "1 requests already wait on it (MCPCTL_PAUSE_QUEUE_MAX)") {
		t.Fatalf("the overflow was not refused by the queue bound: err %v, result %v", second.err, second.res)
	}
	if took := second.at.Sub(sent); took > pauseTolerance {
		t.Errorf("the overflow was answered after %v, want at once (tolerance %v)", took, pauseTolerance)
	}
	w.pause(false)
	if r := <-first; r.err != nil || r.res.IsError {
		t.Fatalf("the queued request did not run after resume: %v %v", r.err, r.res)
	}
}

// TestCloseAnswersHeldRequests: a proxy shutting down answers the requests
// held by a pause at once; they neither run nor outlive it until
// MCPCTL_PAUSE_MAX_WAIT_MS.
func TestCloseAnswersHeldRequests(t *testing.T) {
	const maxWait = 5 * time.Second
	up := newTestUpstream(t)
	k := knobs.Defaults()
	k.PauseMaxWait, k.ShutdownGrace = maxWait, time.Second
	cfg := &config.Config{Listen: "127.0.0.1:0", Audit: "memory", Projects: map[string]*config.Project{
		"docmost": {Servers: map[string]*config.Server{"docmost": {URL: up.URL()}}},
	}}
	p, err := proxy.New(context.Background(), cfg, proxy.Options{Knobs: &k})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(""); err != nil {
		t.Fatal(err)
	}
	w := &pauseWorld{t: t, base: "http://" + p.Addr(), up: up, knobs: k}
	cs := w.session()
	w.pause(true)
	ctx, cancel := context.WithTimeout(context.Background(), 2*maxWait)
	defer cancel()
	got := callAsync(ctx, cs, "docmost_update_page")
	w.waitWaiting(1)
	start := time.Now()
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if took := time.Since(start); took >= k.ShutdownGrace {
		t.Errorf("Close and the held request's answer took %v: the held request kept the server busy for the whole shutdown grace %v (it should be answered at once, not at the pause bound %v)", took, k.ShutdownGrace, maxWait)
	}
	if r.err == nil && !r.res.IsError {
		t.Errorf("a request held by the pause ran during shutdown: %q", text(r.res))
	}
}
