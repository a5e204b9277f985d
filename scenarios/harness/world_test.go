package harness

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	fakellm "github.com/mcpchaos/mcpchaos/fakes/llm"
	"github.com/mcpchaos/mcpchaos/fakes/upstream"
)

// newWorld starts an in-process world with o, closed when the test ends.
func newWorld(t *testing.T, o EnvOptions) *Env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := NewEnv(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(context.Background()); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return e
}

// toxicOn is the toxic named typ on l, as toxiproxy holds it ({} if none).
func toxicOn(t *testing.T, l *Link, typ string) map[string]any {
	t.Helper()
	w := l.p.Toxics.GetToxic(typ)
	if w == nil {
		return map[string]any{}
	}
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// refused reports whether a connection to addr is refused.
func refused(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return true
	}
	_ = c.Close()
	return false
}

// A world is built as its options say: the fakes it asks for behind their
// links, in the project the proxy serves, with the keys, users and second
// project asked for.
func TestAWorldHasWhatItsOptionsAskFor(t *testing.T) {
	fps := PanicInToolCall("docmost_search")
	if !strings.Contains(fps.String(), "docmost_search:panic") {
		t.Errorf("PanicInToolCall armed %q", fps.String())
	}
	e := newWorld(t, EnvOptions{
		Failpoints: fps, LLM: true, Fallback: true, LLMKeys: true, UpstreamKey: true, Everything: true,
		Unifi: &HealthCheck{}, Users: map[string]string{"alice": "alice-token"},
		SecondProject: true, SecondProjectOpen: true, DocmostQuery: "apikey=s3cret", Strict: true, Seed: 42,
	})
	w := e.World
	if e.Failpoints != fps {
		t.Error("the world does not arm the failpoints it was given")
	}
	if !w.Strict || e.Seed != 42 {
		t.Errorf("strict %v seed %d", w.Strict, e.Seed)
	}
	servers := w.Projects[Project].Servers
	if got := servers["docmost"].URL; got != "http://"+e.DocmostLink.Addr()+"/mcp?apikey=s3cret" {
		t.Errorf("docmost at %q, want its link with the query", got)
	}
	if got := servers["everything"].URL; got != "http://"+e.EverythingLink.Addr()+"/mcp" {
		t.Errorf("everything at %q, want its link", got)
	}
	if servers["unifi"] == nil || servers["unifi"].URL != e.Unifi.URL() || e.ControllerLink == nil {
		t.Errorf("unifi: %+v", servers["unifi"])
	}
	other := w.Projects[OtherProject]
	if other == nil || !other.Open || other.Servers["docmost"].URL != servers["docmost"].URL {
		t.Errorf("second project: %+v", other)
	}
	if len(w.LLMs) != 2 || w.LLMs[0].URL != "http://"+e.LLMLink.Addr()+"/v1" || w.LLMs[0].Model != PrimaryModel || w.LLMs[1].URL != e.Fallback.URL() {
		t.Fatalf("LLMs %+v", w.LLMs)
	}
	for i, key := range []string{LLMKeyPrimary, LLMKeyFallback} {
		if env := w.LLMs[i].KeyEnv; env == "" || e.SecretEnv[env] != key {
			t.Errorf("LLM %s: key in %q = %q, want %q", w.LLMs[i].Name, env, e.SecretEnv[env], key)
		}
	}
	if e.SecretEnv[UpstreamKeyEnv] != UpstreamKeyValue {
		t.Errorf("upstream key %q", e.SecretEnv[UpstreamKeyEnv])
	}
	if u := w.Users[Auditor]; !u.Admin || u.Token == "" || w.Users["alice"].Token != "alice-token" {
		t.Errorf("users %+v", w.Users)
	}
	if e.Token("alice") != "alice-token" || e.AdminToken() != w.Users[Auditor].Token {
		t.Errorf("tokens: alice %q admin %q", e.Token("alice"), e.AdminToken())
	}
	if got := e.ProjectURLOf(OtherProject); got != e.Target.URL()+"/projects/"+OtherProject+"/mcp" {
		t.Errorf("other project's endpoint %q", got)
	}
	// The auditor reads what other users may not.
	var status struct {
		Error string `json:"error"`
	}
	if err := e.GetJSON(context.Background(), "/api/v1/audit?trace=ABCDEFGH", &status, &status.Error); err != nil {
		t.Errorf("the auditor's read: %v", err)
	}
	if l, err := e.link(LinkController); err != nil || l != e.ControllerLink {
		t.Errorf("the controller's link: %v, %v", l, err)
	}
	if n, ok := e.LiveSessions(); !ok || n != 0 {
		t.Errorf("live sessions %d, %v", n, ok)
	}

	plain := newWorld(t, EnvOptions{LLM: true})
	if plain.SecretEnv != nil || plain.Fallback != nil || len(plain.World.LLMs) != 1 || plain.World.LLMs[0].KeyEnv != "" || plain.World.Users != nil {
		t.Errorf("a world asking for one LLM: secrets %v, LLMs %+v, users %v", plain.SecretEnv, plain.World.LLMs, plain.World.Users)
	}
	if plain.AdminToken() != "" {
		t.Errorf("a world without users has an admin token %q", plain.AdminToken())
	}
	keyed := newWorld(t, EnvOptions{UpstreamKey: true})
	if len(keyed.SecretEnv) != 1 || keyed.SecretEnv[UpstreamKeyEnv] != UpstreamKeyValue {
		t.Errorf("a world with the upstream key alone: %v", keyed.SecretEnv)
	}
	if d := (&Env{}).Draws(); d != nil {
		t.Errorf("a world without LLMs drew %v", d)
	}
}

// GetJSON quotes the API's error on a non-200 answer, and a body that is
// no JSON is an error too.
func TestGetJSONSaysWhyTheAPIRefused(t *testing.T) {
	e := newWorld(t, EnvOptions{Users: map[string]string{"alice": "alice-token"}})
	var v struct {
		Error string `json:"error"`
	}
	err := e.GetJSON(context.Background(), "/api/v1/audit", &v, &v.Error)
	if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), v.Error) || v.Error == "" {
		t.Errorf("an audit read without trace or session: %v (error %q)", err, v.Error)
	}
	if err := e.GetJSON(context.Background(), "/no/such/path", &v, &v.Error); err == nil {
		t.Error("a body that is no JSON decoded")
	}
	if err := (&Env{Target: &Live{MCP: "http://127.0.0.1:1/mcp"}}).GetJSON(context.Background(), "/x", &v, &v.Error); err == nil {
		t.Error("a GET to nothing succeeded")
	}
}

// Each fault does to the world what its doc says, on the link or fake it
// names.
func TestFaultsActOnTheWorld(t *testing.T) {
	ctx := context.Background()
	e := newWorld(t, EnvOptions{LLM: true, Everything: true, Seed: 7})
	arm := func(f Fault) {
		t.Helper()
		if err := e.Arm(ctx, f); err != nil {
			t.Fatalf("arm %s: %v", f.Name(), err)
		}
		if !e.Struck() {
			t.Errorf("%s armed before the call has not struck", f.Name())
		}
	}

	arm(ToolSlow{Tool: "search", Delay: 2 * time.Second})
	if b := e.Docmost.Behavior("search"); b.Kind != upstream.Slow || b.Delay != 2*time.Second {
		t.Errorf("tool-slow: %+v", b)
	}
	arm(ToolError{Tool: "get_page"})
	if b := e.Docmost.Behavior("get_page"); b.Kind != upstream.ErrorResult {
		t.Errorf("tool-error: %+v", b)
	}
	arm(ToolHang{Tool: "update_page"})
	if b := e.Docmost.Behavior("update_page"); b.Kind != upstream.Hang {
		t.Errorf("tool-hang: %+v", b)
	}
	arm(ToolHang{Tool: "echo", Server: LinkEverything})
	if b, d := e.Everything.Behavior("echo"), e.Docmost.Behavior("echo"); b.Kind != upstream.Hang || d.Kind == upstream.Hang {
		t.Errorf("tool-hang on everything: everything %+v, docmost %+v", b, d)
	}

	arm(Latency{Ms: 5})
	if got := toxicOn(t, e.DocmostLink, "latency"); got["stream"] != "downstream" || got["attributes"].(map[string]any)["latency"] != 5.0 {
		t.Errorf("latency on docmost: %v", got)
	}
	arm(Bandwidth{Link: LinkLLM, KBps: 3})
	if got := toxicOn(t, e.LLMLink, "bandwidth"); got["attributes"].(map[string]any)["rate"] != 3.0 {
		t.Errorf("bandwidth on llm: %v", got)
	}
	arm(Blackhole{Link: LinkEverything})
	if got := toxicOn(t, e.EverythingLink, "timeout"); got["stream"] != "upstream" {
		t.Errorf("blackhole on everything: %v", got)
	}
	arm(ResetPeer{TimeoutMs: 9})
	if got := toxicOn(t, e.DocmostLink, "reset_peer"); got["attributes"].(map[string]any)["timeout"] != 9.0 {
		t.Errorf("reset-peer: %v", got)
	}
	arm(Slicer{AvgBytes: 64, DelayUs: 10})
	if got := toxicOn(t, e.DocmostLink, "slicer"); got["attributes"].(map[string]any)["average_size"] != 64.0 {
		t.Errorf("slicer: %v", got)
	}
	arm(LimitData{Link: LinkLLM, Bytes: 100})
	if got := toxicOn(t, e.LLMLink, "limit_data"); got["attributes"].(map[string]any)["bytes"] != 100.0 {
		t.Errorf("limit-data: %v", got)
	}

	arm(LLMFault{Step: fakellm.Step{Kind: fakellm.NotFound}})
	if p := e.LLM.Plans()[fakellm.AnyModel]; len(p.Steps) != 1 || p.Steps[0].Kind != fakellm.NotFound {
		t.Errorf("llm-not_found: plan %+v", p)
	}
	arm(LLMRandom{Choices: []fakellm.Choice{{Step: fakellm.Step{Kind: fakellm.OK}, Weight: 1}}})
	if p := e.LLM.Plans()[fakellm.AnyModel]; p.Random == nil || p.Random.Seed != e.Seed {
		t.Errorf("llm-random: plan %+v, want draws seeded with %d", p, e.Seed)
	}

	if err := (HandlerHang{Tool: "docmost_search"}).Inject(ctx, e); err != nil {
		t.Fatal(err)
	}
	if err := (HandlerPanic{Tool: "docmost_get_page"}).Inject(ctx, e); err != nil {
		t.Fatal(err)
	}
	if got := e.Failpoints.String(); !strings.Contains(got, "docmost_search:hang") || !strings.Contains(got, "docmost_get_page:panic") {
		t.Errorf("failpoints %q", got)
	}

	arm(LinkDown{Link: LinkEverything})
	if !refused(e.EverythingLink.Addr()) || refused(e.DocmostLink.Addr()) {
		t.Error("down: the everything link still accepts, or docmost's does not")
	}

	addr := e.Docmost.Addr()
	old := e.Docmost
	if err := (UpstreamRestart{}).Inject(ctx, e); err != nil {
		t.Fatal(err)
	}
	if e.Docmost == old || e.Docmost.Addr() != addr || e.Docmost.Behavior("search").Kind != upstream.OK {
		t.Errorf("upstream-restart: a new docmost on %s, forgetting its behaviours; got %s, search %+v", addr, e.Docmost.Addr(), e.Docmost.Behavior("search"))
	}

	if err := (ProxyKill{}).Inject(ctx, e); err == nil || !strings.Contains(err.Error(), "cannot be killed") {
		t.Errorf("proxy-kill in process: %v", err)
	}
	if _, err := e.Toxi.Link("docmost", e.Docmost.Addr()); err == nil || !strings.Contains(err.Error(), "toxiproxy link docmost") {
		t.Errorf("a second link of one name: %v", err)
	}
	if err := e.DocmostLink.Toxic("odd", "no_such_toxic", "downstream", nil); err == nil || !strings.Contains(err.Error(), "toxic odd (no_such_toxic) on docmost") {
		t.Errorf("a toxic toxiproxy has not: %v", err)
	}
}

// A handshake stall answers initialize with a session id and holds what
// comes after it.
func TestHandshakeStallHoldsWhatFollowsInitialize(t *testing.T) {
	e := newWorld(t, EnvOptions{})
	if err := e.Arm(context.Background(), HandshakeStall{}); err != nil {
		t.Fatal(err)
	}
	post := func(body, session string, wait time.Duration) (*http.Response, error) {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.Docmost.URL(), strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
		return resp, err
	}
	resp, err := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`, "", 5*time.Second)
	if err != nil || resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize: %v %v", resp, err)
	}
	_, err = post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, resp.Header.Get("Mcp-Session-Id"), 300*time.Millisecond)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a request after initialize was answered: %v", err)
	}
}

// A hairpin answers in the link's place with a bare 403 until the world
// closes or is reused.
func TestTheHairpinAnswersInTheLinksPlace(t *testing.T) {
	e := newWorld(t, EnvOptions{})
	if err := e.Arm(context.Background(), IngressHairpin{}); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post("http://"+e.DocmostLink.Addr()+"/mcp", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Content-Type") != "text/plain" || string(body) != HairpinBody {
		t.Errorf("hairpin: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if len(e.closers) != 1 {
		t.Fatalf("%d closers, want the hairpin's", len(e.closers))
	}
	if err := e.closers[0](); err != nil {
		t.Errorf("stopping the hairpin: %v", err)
	}
	if err := e.closers[0](); err != nil {
		t.Errorf("stopping the hairpin twice: %v", err)
	}
	e.closers = nil
	if !refused(e.DocmostLink.Addr()) {
		t.Error("the hairpin still answers once stopped")
	}
}

// A fault on a link the world lacks, or on an LLM it lacks, is an error,
// not a silent no-op.
func TestAFaultOnWhatTheWorldLacksIsAnError(t *testing.T) {
	ctx := context.Background()
	e := &Env{DocmostLink: &Link{}}
	for _, f := range []Fault{
		Latency{Link: LinkLLM}, Bandwidth{Link: LinkEverything}, Blackhole{Link: LinkController}, ResetPeer{Link: "nowhere"},
		LinkDown{Link: LinkLLM}, IngressHairpin{Link: LinkEverything}, ToolHang{Server: LinkEverything},
		LLMFault{}, LLMRandom{},
	} {
		if err := f.Inject(ctx, e); err == nil {
			t.Errorf("%s %s injected into a world without it", f.Name(), f.Params())
		}
	}
	if l, err := e.link(""); err != nil || l != e.DocmostLink {
		t.Errorf(`link "": %v, %v; want docmost's`, l, err)
	}
}

// A midway fault waits for the operation's Strike; the world counts it as
// struck only then. One given to NewEnv strikes as its kind says.
func TestAMidwayFaultStrikesWhenTheOperationSays(t *testing.T) {
	ctx := context.Background()
	e := newWorld(t, EnvOptions{Fault: ProxyRestart{}})
	if e.Struck() {
		t.Fatal("a midway fault struck before the operation asked")
	}
	before := e.Target.(*InProcess).Proxy()
	struck, err := e.Strike(ctx)
	if !struck || err != nil || !e.Struck() {
		t.Fatalf("Strike: %v, %v; struck %v", struck, err, e.Struck())
	}
	if e.Target.(*InProcess).Proxy() == before {
		t.Error("proxy-restart did not restart the proxy")
	}
	if struck, err := e.Strike(ctx); struck || err != nil {
		t.Errorf("a second Strike: %v, %v", struck, err)
	}
	if err := e.Arm(ctx, None{}); err != nil || !e.Struck() {
		t.Errorf("none: %v, struck %v", err, e.Struck())
	}

	fps := newWorld(t, EnvOptions{Fault: HandlerPanic{Tool: "docmost_search"}})
	if !fps.Struck() || !strings.Contains(fps.Failpoints.String(), "docmost_search:panic") {
		t.Errorf("a before-start fault: struck %v, failpoints %q", fps.Struck(), fps.Failpoints.String())
	}
	lat := newWorld(t, EnvOptions{Fault: Latency{Ms: 1}})
	if !lat.Struck() || toxicOn(t, lat.DocmostLink, "latency")["type"] != "latency" {
		t.Errorf("a before-call fault: struck %v", lat.Struck())
	}
	if _, err := NewEnv(ctx, EnvOptions{Fault: LLMFault{}}); err == nil || !strings.Contains(err.Error(), "inject llm-") {
		t.Errorf("a fault that cannot strike: %v", err)
	}
}

// Draws lists what each fake LLM request got, the primary's first.
func TestDrawsListTheStepsTheLLMsPlayed(t *testing.T) {
	e := newWorld(t, EnvOptions{LLM: true, Fallback: true})
	if d := e.Draws(); len(d) != 0 {
		t.Fatalf("draws before any request: %v", d)
	}
	if err := e.LLM.Set(fakellm.AnyModel, fakellm.Step{Kind: fakellm.NotFound}); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{e.LLM.URL() + "/v1/chat/completions", e.Fallback.URL() + "/v1/messages"} {
		resp, err := http.Post(u, "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":5}`))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	d := e.Draws()
	if len(d) != 2 || !strings.HasPrefix(d[0], string(fakellm.NotFound)) || strings.HasPrefix(d[1], string(fakellm.NotFound)) {
		t.Errorf("draws %v, want the primary's not_found, then the fallback's", d)
	}
}

// Once the hairpin's closer returns, its address is free again, however
// soon after the fault struck: a reused world brings its link up there.
func TestAStoppedHairpinFreesItsAddressAtOnce(t *testing.T) {
	e := newWorld(t, EnvOptions{})
	for i := range 20 {
		if err := e.Arm(context.Background(), IngressHairpin{}); err != nil {
			t.Fatal(err)
		}
		for _, c := range e.closers {
			if err := c(); err != nil {
				t.Fatal(err)
			}
		}
		e.closers = nil
		ln, err := net.Listen("tcp", e.DocmostLink.Addr())
		if err != nil {
			t.Fatalf("try %d: the hairpin's address is still taken once it stopped: %v", i, err)
		}
		_ = ln.Close()
		if err := e.DocmostLink.Up(); err != nil {
			t.Fatal(err)
		}
	}
}

// A world that cannot start says why and leaves nothing behind.
func TestAWorldThatCannotStartLeavesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := NewEnv(ctx, EnvOptions{Target: &Binary{Path: "/no/such/mcplocal"}, Dir: filepath.Join(dir, "scratch")})
	if err == nil || !strings.HasPrefix(err.Error(), "target binary:/no/such/mcplocal: ") {
		t.Fatalf("a target that cannot start: %v", err)
	}
	if !refused(e.Docmost.Addr()) || !refused(e.DocmostLink.Addr()) {
		t.Error("the fake or its link still runs")
	}
	if _, err := os.Stat(e.Dir); !os.IsNotExist(err) {
		t.Errorf("the scratch dir is left: %v", err)
	}
	if _, err := NewEnv(ctx, EnvOptions{Pipeline: []Stage{{Name: "no-such-stage"}}}); err == nil || !strings.Contains(err.Error(), "harness config") {
		t.Errorf("a config the proxy refuses: %v", err)
	}
	if _, err := (&Env{}).link("bogus"); err == nil || !strings.Contains(err.Error(), "unknown link") {
		t.Errorf("an unknown link: %v", err)
	}
	w := newWorld(t, EnvOptions{})
	if err := w.Arm(ctx, IngressHairpin{}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if !refused(w.DocmostLink.Addr()) {
		t.Error("the hairpin outlived its world")
	}
	if err := w.Close(ctx); err != nil {
		t.Errorf("a second close: %v", err)
	}
}

// Under the slicer, answers arrive whole, in small pieces.
func TestASlicedLinkStillDeliversWholeAnswers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	e := newWorld(t, EnvOptions{Fault: Slicer{AvgBytes: 8, DelayUs: 1}})
	cs, err := SDKClient(ctx, e.ProjectURL(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for range 3 {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: e.Tool("search"), Arguments: map[string]any{"query": "backup"}})
		if err != nil || res.IsError || len(res.Content) == 0 {
			t.Fatalf("a call through the sliced link: %v %+v", err, res)
		}
	}
}
