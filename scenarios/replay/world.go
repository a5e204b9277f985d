package replay

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
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
// the docmost-like fake upstream answers the recorded tools after the
// recorded latencies (or hangs, or fails, as recorded), the fake LLMs play
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
	// UpstreamFault, when the recorded upstream call failed in the network
	// (reset, EOF, refused), is the toxiproxy fault that fails it the same
	// way on the docmost link, armed after the handshake.
	UpstreamFault harness.Fault
	// Answered says whether the recorded request was answered; an attempt
	// the recording never closed is played as a hang.
	Answered bool
	// ClientTimeout is how long the replay's client waits.
	ClientTimeout time.Duration
}

// The replay world's one upstream is the docmost-like fake.
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
		if isMillis(env) && compress > 1 {
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
	if p.Server != fakeServer {
		return p, fmt.Errorf("the recorded upstream is server %q: the replay world fakes only the docmost-like server %q", p.Server, fakeServer)
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
	p.Env = harness.EnvOptions{Knobs: &p.Knobs, Pipeline: pc.Pipeline, Gate: pc.Gate.Enabled, Prompts: pc.Prompts}
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
			p.Upstream[a.Tool] = upstreamBehavior(a.Status, d)
			if a.Status == audit.StatusError && UpstreamFailure(a.Error) == FailureNetwork {
				p.UpstreamFault = harness.ResetPeer{Link: harness.LinkDocmost}
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

func upstreamBehavior(status string, d time.Duration) upstream.Behavior {
	switch status {
	case audit.StatusOK:
		if d <= 0 {
			return upstream.Behavior{Kind: upstream.OK}
		}
		return upstream.Behavior{Kind: upstream.Slow, Delay: d}
	case audit.StatusTimeout, audit.StatusCancelled:
		return upstream.Behavior{Kind: upstream.Hang}
	default:
		return upstream.Behavior{Kind: upstream.ErrorResult}
	}
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
	for tool, b := range p.Upstream {
		env.Docmost.Set(tool, b)
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
	if p.UpstreamFault != nil {
		if err := env.Arm(ctx, p.UpstreamFault); err != nil {
			return res, fmt.Errorf("arming %s, as recorded: %w", p.UpstreamFault.Name(), err)
		}
	}
	if p.Recreate {
		if err := env.Target.Restart(ctx); err != nil {
			return res, fmt.Errorf("restarting the proxy before the call, as recorded: %w", err)
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
	} else if !errors.Is(err, context.DeadlineExceeded) {
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
