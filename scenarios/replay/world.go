package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gopkg.in/yaml.v3"

	fakellm "github.com/mcpchaos/mcpchaos/fakes/llm"
	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/bundle"
	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// Plan is how a bundle's recording is played back in the harness's world:
// a fake of the recorded upstream server (the docmost-like fake, or one
// standing in for any other server the config names) answers the recorded
// tool after the recorded latency with a neutral body of the recorded size
// and content kinds (or hangs, or fails, as recorded), the fake LLMs play
// each recorded attempt back, and the proxy runs with the recorded knobs,
// pipeline and gate.
type Plan struct {
	// Tool is the tool the client called (server_tool), Server and
	// UpstreamTool the upstream call it made.
	Tool, Server, UpstreamTool string
	// Compress divides every recorded duration and knob.
	Compress int
	Knobs    knobs.Values
	Env      harness.EnvOptions
	// Upstream is each upstream tool's recorded behaviour.
	Upstream map[string]upstream.Behavior
	// LLM and Fallback are the recorded attempts of the primary provider
	// and of the others, in order.
	LLM, Fallback []fakellm.Step
	// Recreate replays the recorded session's sequence: the proxy restarts
	// between the client's handshake and its call, so the call arrives with
	// a session id the proxy does not know (the recording holds a
	// session_recreated row).
	Recreate bool
	// Network, when the recorded upstream call failed in the network, is
	// how: the replay fails it the same way on the way to the upstream's
	// fake, armed after the handshake.
	Network Network
	// Answered says whether the recorded request was answered; an attempt
	// the recording never closed is played as a hang.
	Answered bool
	// ClientTimeout is how long the replay's client waits.
	ClientTimeout time.Duration
}

// Network is a kind of network failure a replay plays on the way to the
// upstream's fake.
type Network string

// The network failures a replay plays.
const (
	// NetworkRefused: connecting is refused (the server pointed at an
	// address where nothing listens).
	NetworkRefused Network = "refused"
	// NetworkReset: the link resets the connection (toxiproxy reset_peer).
	NetworkReset Network = "reset"
	// NetworkTimeout: the link takes the request and never answers
	// (toxiproxy timeout 0, a blackhole).
	NetworkTimeout Network = "timeout"
)

// networkOf is how the recorded failure kind is played ("": not a network
// failure).
var networkOf = map[string]Network{
	FailureRefused:    NetworkRefused,
	FailureNetwork:    NetworkReset,
	FailureNetTimeout: NetworkTimeout,
}

// The replay world's own upstream is the docmost-like fake, server
// docmost of its project; a call recorded through another server, or
// through a tool that fake does not serve, gets a fake of its own.
const fakeServer = "docmost"

var statusRE = regexp.MustCompile(`\b(40[0-9]|429|5[0-9][0-9])\b`)

// PlanOf reads the plan of a replay from a bundle; compress >= 1.
func PlanOf(b bundle.Bundle, compress int) (Plan, error) {
	if compress < 1 {
		compress = 1
	}
	p := Plan{Compress: compress, Upstream: map[string]upstream.Behavior{}, Answered: Answered(b.Rows)}
	kv := knobs.Defaults()
	for env, n := range b.Knobs {
		k := n
		if isMillis(env) && compress > 1 && n > 0 { // a wait that is off stays off
			k = max(1, n/int64(compress))
		}
		kv.SetRaw(env, k)
	}
	p.Knobs = kv
	var cfg config.Config
	if err := yaml.Unmarshal([]byte(b.Config), &cfg); err != nil {
		return p, fmt.Errorf("the bundle's config: %w", err)
	}
	var project string
	for _, r := range b.Rows {
		if r.ParentID == "" && r.Kind == audit.KindToolCallTrace {
			p.Tool, project = r.Tool, r.Project
		}
		if r.Kind == audit.KindSessionRecreated {
			p.Recreate = true
		}
		if r.Kind == audit.KindUpstreamCall && p.UpstreamTool == "" {
			p.Server, p.UpstreamTool = r.Server, r.Tool
			if project == "" {
				project = r.Project
			}
		}
	}
	if p.UpstreamTool == "" {
		return p, errors.New("the bundle records no upstream call: nothing to replay it against")
	}
	if p.Tool == "" {
		p.Tool = p.Server + "_" + p.UpstreamTool
	}
	pc := cfg.Projects[project]
	if pc == nil && len(cfg.Projects) == 1 {
		for _, only := range cfg.Projects {
			pc = only
		}
	}
	if pc == nil {
		return p, fmt.Errorf("the bundle's config has no project %q", project)
	}
	if _, ok := pc.Servers[p.Server]; !ok {
		return p, fmt.Errorf("the recorded upstream is server %q, which the bundle's config does not name: nothing says it was an upstream of the project", p.Server)
	}
	p.Env = harness.EnvOptions{Bounds: mcplocal.BoundsOf(p.Knobs), Pipeline: mcplocal.PipelineOf(pc.Pipeline), Gate: pc.Gate.Enabled, Prompts: mcplocal.PromptsOf(pc.Prompts)}
	primary := ""
	if cfg.LLM != nil && cfg.LLM.Enabled() {
		p.Env.LLM, p.Env.Fallback = true, len(cfg.LLM.Providers) > 1
		primary = cfg.LLM.Primary
	}
	// An attempt the recording never closed hung: the request was never
	// answered and wrote no row for it.
	p.Env.LLMDefault = fakellm.Step{Kind: fakellm.OK}
	if !p.Answered {
		p.Env.LLMDefault = fakellm.Step{Kind: fakellm.HangBeforeHeaders}
	}
	for _, a := range bundle.New(b.Trace, b.Rows, b.Context, b.Created).Answers {
		d := time.Duration(a.Duration*float64(time.Millisecond)) / time.Duration(compress)
		switch a.Kind {
		case audit.KindUpstreamCall:
			p.Upstream[a.Tool] = upstreamBehavior(a, d)
			if a.Status == audit.StatusError {
				p.Network = networkOf[UpstreamFailure(a.Error)]
			}
		case audit.KindLLMAttempt:
			st := llmStep(a, d)
			if a.Provider == "" || a.Provider == primary {
				p.LLM = append(p.LLM, st)
			} else {
				p.Fallback = append(p.Fallback, st)
			}
		}
	}
	p.ClientTimeout = p.Knobs.RequestDeadline + time.Second
	return p, nil
}

func isMillis(env string) bool {
	for _, k := range knobs.Table {
		if k.Env == env {
			return k.Unit == knobs.Millis
		}
	}
	return false
}

// upstreamBehavior plays one recorded upstream answer back: after its
// latency, with a neutral body of its size and content kinds when its row
// says them; hung; or an error result.
func upstreamBehavior(a bundle.Answer, d time.Duration) upstream.Behavior {
	var b upstream.Behavior
	switch a.Status {
	case audit.StatusOK:
		b = upstream.Behavior{Kind: upstream.Slow, Delay: d}
		if d <= 0 {
			b = upstream.Behavior{Kind: upstream.OK}
		}
	case audit.StatusTimeout, audit.StatusCancelled:
		return upstream.Behavior{Kind: upstream.Hang}
	default:
		b = upstream.Behavior{Kind: upstream.ErrorResult}
	}
	if a.Content != "" { // a row that says the answer's kinds (older rows do not)
		b.Shape = shapeOf(a)
	}
	return b
}

// shapeOf is the recorded answer's shape as the fake takes it.
func shapeOf(a bundle.Answer) *upstream.Shape {
	rec := audit.ParseShape(a.Content)
	s := &upstream.Shape{Bytes: max(a.Bytes, 0), Structured: rec.Structured, IsError: rec.IsError}
	for _, b := range rec.Blocks {
		s.Blocks = append(s.Blocks, upstream.Block{Type: b.Type, N: b.N})
	}
	return s
}

// llmStep plays one recorded attempt back: answered after its duration,
// hung until the budget, or the recorded refusal (HTTP 404, 429, 5xx...),
// reset, cut stream, empty or malformed answer.
func llmStep(a bundle.Answer, d time.Duration) fakellm.Step {
	switch a.Status {
	case audit.StatusOK:
		return fakellm.SlowFor(d)
	case audit.StatusTimeout, audit.StatusCancelled:
		return fakellm.Do(fakellm.HangBeforeHeaders)
	}
	outcome := strings.ToLower(AttemptOutcome(a.Error))
	if outcome == "" {
		outcome = strings.ToLower(a.Error)
	}
	if strings.HasPrefix(outcome, "http ") {
		switch statusRE.FindString(outcome) {
		case "404":
			return fakellm.Do(fakellm.NotFound)
		case "429":
			return fakellm.Do(fakellm.RateLimited)
		case "401", "403":
			return fakellm.Do(fakellm.Unauthorized)
		case "400":
			return fakellm.Do(fakellm.BadRequest)
		case "529":
			return fakellm.Do(fakellm.Overloaded)
		}
		return fakellm.Do(fakellm.ServerError)
	}
	switch {
	case strings.Contains(outcome, "stream"):
		return fakellm.Do(fakellm.TruncatedStream)
	case strings.HasPrefix(outcome, "transport") || strings.Contains(outcome, "reset"):
		return fakellm.Do(fakellm.Reset)
	case strings.HasPrefix(outcome, "empty"):
		return fakellm.Do(fakellm.Empty)
	case strings.HasPrefix(outcome, "invalid"):
		return fakellm.Do(fakellm.Malformed)
	}
	switch statusRE.FindString(outcome) {
	case "404":
		return fakellm.Do(fakellm.NotFound)
	case "429":
		return fakellm.Do(fakellm.RateLimited)
	}
	return fakellm.Do(fakellm.ServerError)
}

// attemptRE reads the proxy's llm_attempt text: "provider (model): OUTCOME
// after D[: detail]".
var attemptRE = regexp.MustCompile(`^\S+ \([^)]*\): (.+?) after [0-9.]+[µnmh]?s\b`)

// AttemptOutcome is the outcome an llm_attempt row's text names ("HTTP
// 404", "timeout", "transport", "invalid (HTTP 200)"), "" when the text is
// not the proxy's.
func AttemptOutcome(detail string) string {
	if m := attemptRE.FindStringSubmatch(detail); m != nil {
		return m[1]
	}
	return ""
}

// Result is what one replay saw.
type Result struct {
	Answered bool
	IsError  bool // answered with an isError result
	Latency  time.Duration
	Trace    string
	Text     string
	Rows     []audit.Row
}

// Run builds the plan's world around target, sends the recorded call and
// returns the rows the proxy wrote for it.
func Run(ctx context.Context, p Plan, target harness.Target) (Result, error) {
	o := p.Env
	o.Target = target
	env, err := harness.NewEnv(ctx, o)
	if err != nil {
		return Result{}, err
	}
	defer env.Close(context.Background())
	return Play(ctx, p, env)
}

// Play plays the recording back in env, a world built from p.Env (Run
// builds one; a kept scenario's world is built by the catalogue's runner):
// the fakes are set as recorded, the recorded call is sent, and the rows
// the proxy wrote for it are returned.
func Play(ctx context.Context, p Plan, env *harness.Env) (Result, error) {
	var res Result
	up, err := upstreamFor(ctx, p, env)
	if err != nil {
		return res, err
	}
	defer up.close()
	for tool, b := range p.Upstream {
		up.fake.Set(tool, b)
	}
	if env.LLM != nil && len(p.LLM) > 0 {
		if err := env.LLM.Set(fakellm.AnyModel, append(p.LLM, p.Env.LLMDefault)...); err != nil {
			return res, err
		}
	}
	if env.Fallback != nil && len(p.Fallback) > 0 {
		if err := env.Fallback.Set(fakellm.AnyModel, append(p.Fallback, p.Env.LLMDefault)...); err != nil {
			return res, err
		}
	}
	cs, err := harness.SDKClient(ctx, env.ProjectURL(), "")
	if err != nil {
		return res, err
	}
	defer cs.Close()
	args, err := argumentsFor(ctx, cs, p.Tool)
	if err != nil {
		return res, err
	}
	if p.Recreate {
		if err := env.Target.Restart(ctx); err != nil {
			return res, fmt.Errorf("restarting the proxy before the call, as recorded: %w", err)
		}
		if err := up.register(ctx); err != nil { // a server added at run time is gone with the process
			return res, err
		}
	}
	if p.Network != "" {
		if err := up.fail(ctx, p.Network); err != nil {
			return res, fmt.Errorf("failing the way to %s as recorded (%s): %w", p.Server, p.Network, err)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, p.ClientTimeout)
	defer cancel()
	t0 := time.Now()
	r, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: p.Tool, Arguments: args})
	res.Latency = time.Since(t0)
	if err == nil {
		res.Answered, res.IsError = true, r.IsError
		res.Trace, _ = r.Meta[trace.MetaKey].(string)
		for _, c := range r.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				res.Text += t.Text + "\n"
			}
		}
	} else if cctx.Err() == nil || ctx.Err() != nil {
		// Only the client's own timeout makes a call unanswered as
		// played; a transport failure, or the replay itself cut short
		// by its caller, is an error of the replay.
		return res, fmt.Errorf("calling %s: %w", p.Tool, err)
	}
	if res.Trace != "" {
		res.Rows, err = settledRows(ctx, func() ([]audit.Row, error) { return mcplocal.Audit(ctx, env, res.Trace) })
		return res, err
	}
	// Not answered: the call's rows are the session's rows of the trace
	// that called the upstream tool. The proxy writes the root row when it
	// sees the client give up: wait for it, a bounded while.
	deadline := time.Now().Add(rootWait)
	for {
		rows, err := mcplocal.AuditSession(ctx, env, cs.ID())
		if err != nil {
			return res, err
		}
		res.Trace, res.Rows = callRows(rows, p)
		if time.Now().After(deadline) || hasRoot(res.Rows) {
			return res, nil
		}
		select {
		case <-ctx.Done():
			return res, nil
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// rootWait bounds how long a replay waits for the root row of a call its
// client gave up on, and for the rows of an answered call to settle.
const rootWait = 3 * time.Second

// settleQuiet is how long an answered call's rows must stay the same before
// they are taken as whole: a span that ends after the answer (an LLM
// attempt cut by its stage's budget as the fallback goes out) is written a
// moment later, more on a loaded machine.
const settleQuiet = 200 * time.Millisecond

// settledRows reads an answered call's rows until they hold its root row and
// have not changed for settleQuiet, within rootWait; it returns the last
// read.
func settledRows(ctx context.Context, read func() ([]audit.Row, error)) ([]audit.Row, error) {
	deadline := time.Now().Add(rootWait)
	var (
		last   []audit.Row
		stable time.Time
	)
	for {
		rows, err := read()
		if err != nil {
			return rows, err
		}
		if len(rows) != len(last) || !hasRoot(rows) {
			last, stable = rows, time.Now()
		} else if time.Since(stable) >= settleQuiet {
			return rows, nil
		}
		if time.Now().After(deadline) {
			return rows, nil
		}
		select {
		case <-ctx.Done():
			return rows, nil
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// callRows picks the rows of the trace that called the plan's tool.
func callRows(rows []audit.Row, p Plan) (string, []audit.Row) {
	code := ""
	for _, r := range rows {
		if r.Kind == audit.KindUpstreamCall && r.Tool == p.UpstreamTool || r.Kind == audit.KindToolCallTrace && r.Tool == p.Tool {
			code = r.CorrelationID
		}
	}
	var out []audit.Row
	for _, r := range rows {
		if code != "" && r.CorrelationID == code {
			out = append(out, r)
		}
	}
	return code, out
}

func hasRoot(rows []audit.Row) bool {
	for _, r := range rows {
		if r.ParentID == "" && r.Kind == audit.KindToolCallTrace {
			return true
		}
	}
	return false
}

// argumentsFor fills the tool's required string arguments with a neutral
// text: the recorded arguments are private content a bundle leaves out.
func argumentsFor(ctx context.Context, cs *mcp.ClientSession, tool string) (map[string]any, error) {
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("tools/list: %w", err)
	}
	for _, t := range lt.Tools {
		if t.Name != tool {
			continue
		}
		args := map[string]any{}
		if s, ok := t.InputSchema.(map[string]any); ok {
			if req, ok := s["required"].([]any); ok {
				for _, r := range req {
					if name, ok := r.(string); ok {
						args[name] = "replay"
					}
				}
			}
		}
		return args, nil
	}
	return nil, fmt.Errorf("the proxy lists no tool %s", tool)
}

// playedUpstream is the fake that plays the recorded upstream server, and
// the toxiproxy link the proxy reaches it through.
type playedUpstream struct {
	env    *harness.Env
	server string
	fake   *upstream.Server
	link   *harness.Link
	// own: the fake is the replay's, added to the proxy through its
	// servers API; moved: the server was pointed elsewhere (fail).
	own, moved bool
}

// links numbers the links of own fakes: a toxiproxy link's name is unique.
var links atomic.Int64

// upstreamFor is the fake of the plan's upstream server: the world's
// docmost fake when the recording went to its docmost server through a
// tool it serves; otherwise a fake of its own, named as the recorded
// server and serving the recorded tool, behind a link of its own, added to
// the world's project through the proxy's servers API (replacing a server
// of that name while the replay runs).
func upstreamFor(ctx context.Context, p Plan, env *harness.Env) (*playedUpstream, error) {
	u := &playedUpstream{env: env, server: p.Server, fake: env.Docmost, link: env.DocmostLink}
	if p.Server == fakeServer && env.Docmost.Serves(p.UpstreamTool) {
		return u, nil
	}
	fake, err := upstream.NewNamed(p.Server, p.UpstreamTool)
	if err != nil {
		return nil, err
	}
	link, err := env.Toxi.Link(fmt.Sprintf("replay-%s-%d", p.Server, links.Add(1)), fake.Addr())
	if err != nil {
		_ = fake.Close()
		return nil, err
	}
	u.fake, u.link, u.own = fake, link, true
	if err := u.register(ctx); err != nil {
		u.close()
		return nil, err
	}
	return u, nil
}

// register tells the proxy where the fake is: an own fake is added (or
// put back) through the servers API; the world's docmost is in its config.
func (u *playedUpstream) register(ctx context.Context) error {
	if !u.own {
		return nil
	}
	if err := putServer(ctx, u.env, u.server, "http://"+u.link.Addr()+"/mcp"); err != nil {
		return fmt.Errorf("adding a fake of server %s to the proxy: %w", u.server, err)
	}
	return nil
}

// close gives the world back as it was: an own fake removed from the proxy
// (a replaced docmost put back) and stopped, a moved docmost put back.
func (u *playedUpstream) close() {
	if !u.own && !u.moved {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if u.server == fakeServer {
		_ = putServer(ctx, u.env, fakeServer, "http://"+u.env.DocmostLink.Addr()+"/mcp")
	} else {
		_ = serversCall(ctx, u.env, http.MethodDelete, u.server, nil)
	}
	if u.own {
		_ = u.fake.Close()
	}
}

// fail fails the way to the fake as recorded: a reset or a network timeout
// on its link (toxiproxy reset_peer, a blackhole), a refusal by pointing
// the server at an address where nothing listens. Taking the link down
// would refuse new connections too, but a connection the proxy pooled
// could still see the close first, as an EOF: a reset, not a refusal.
func (u *playedUpstream) fail(ctx context.Context, n Network) error {
	switch n {
	case NetworkRefused:
		addr, err := refusingAddr()
		if err != nil {
			return err
		}
		u.moved = true
		return putServer(ctx, u.env, u.server, "http://"+addr+"/mcp")
	case NetworkReset:
		return u.link.Toxic("replay-reset", "reset_peer", "downstream", map[string]any{"timeout": 0})
	case NetworkTimeout:
		return u.link.Toxic("replay-blackhole", "timeout", "upstream", map[string]any{"timeout": 0})
	}
	return fmt.Errorf("no way to play network failure %q", n)
}

// refusingAddr is a loopback address where nothing listens: a port just
// taken and let go.
func refusingAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	return addr, ln.Close()
}

// putServer creates or replaces server name of the world's project,
// served at url.
func putServer(ctx context.Context, env *harness.Env, name, url string) error {
	body, _ := json.Marshal(map[string]string{"url": url})
	return serversCall(ctx, env, http.MethodPut, name, body)
}

// serversCall sends one request to the proxy's servers API about server
// name of the world's project.
func serversCall(ctx context.Context, env *harness.Env, method, name string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, method, env.Target.URL()+"/api/v1/servers/"+harness.Project+"/"+name, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s /api/v1/servers/%s/%s: %s: %s", method, harness.Project, name, resp.Status, bytes.TrimSpace(msg))
	}
	return nil
}
