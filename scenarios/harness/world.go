package harness

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	fakellm "github.com/mcpchaos/mcpchaos/fakes/llm"
	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
)

// Project is the project every scenario talks to.
const Project = "docmost"

// OtherProject is the second project of a world built with
// EnvOptions.SecondProject: the same docmost server, another project.
const OtherProject = "other"

// Env is one scenario's world: the docmost fake behind a toxiproxy link, and
// the proxy under test pointed at the link. Close tears it all down.
type Env struct {
	Toxi        *Toxi
	Docmost     *upstream.Server
	DocmostLink *Link
	Target      Target
	World       *World
	bounds      Bounds // Bounds()
	Dir         string // scratch directory (audit database)
	// Users maps user name to bearer token; empty means no auth.
	Users map[string]string
	// Failpoints armed in the proxy under test (in-process and binary targets).
	Failpoints *Failpoints
	// SecretEnv are the variables the config's *Env fields name (LLMKeys),
	// given to the proxy's environment.
	SecretEnv map[string]string
	// LLM is the primary fake LLM (OpenAI wire format, model PrimaryModel)
	// behind LLMLink; Fallback the Anthropic fake after it. Nil unless asked for.
	LLM      *fakellm.Server
	LLMLink  *Link
	Fallback *fakellm.Server
	// Unifi is the unifi-like upstream and Controller the fake controller its
	// list_sites reaches through ControllerLink. Nil unless asked for.
	Unifi          *upstream.Server
	Controller     *upstream.Controller
	ControllerLink *Link
	// Everything is the everything fake (server "everything" of the project)
	// behind EverythingLink. Nil unless asked for.
	Everything     *upstream.Server
	EverythingLink *Link
	// Seed drives every random draw of the world (the fakes' random plans):
	// the run's --seed mixed with the scenario's name (see SeedFor).
	Seed uint64
	// pending is a Midway fault waiting for the operation to call Strike.
	pending Fault
	// armed is the fault the world was built or armed with; struck tells
	// whether it has been injected (see Struck).
	armed  Fault
	struck bool
	// closers stop what faults started (a hairpin server); Close runs them.
	closers []func() error
}

// link returns the toxiproxy link named name ("" is the docmost link).
func (e *Env) link(name string) (*Link, error) {
	switch name {
	case "", LinkDocmost:
		return e.DocmostLink, nil
	case LinkController:
		if e.ControllerLink == nil {
			return nil, fmt.Errorf("link %q: this env has no unifi controller", name)
		}
		return e.ControllerLink, nil
	case LinkEverything:
		if e.EverythingLink == nil {
			return nil, fmt.Errorf("link %q: this env has no everything fake", name)
		}
		return e.EverythingLink, nil
	case LinkLLM:
		if e.LLMLink == nil {
			return nil, fmt.Errorf("link %q: this env has no LLM", name)
		}
		return e.LLMLink, nil
	}
	return nil, fmt.Errorf("unknown link %q (want %s or %s)", name, LinkDocmost, LinkLLM)
}

// Arm injects f as its Strike says: a before-call fault now, a Midway fault
// when the operation calls Strike; a before-start fault must have been given
// to NewEnv (EnvOptions.Fault), which armed it before the proxy started.
func (e *Env) Arm(ctx context.Context, f Fault) error {
	e.armed, e.struck = f, false
	switch f.Strikes() {
	case StrikeNever:
		e.struck = true
	case StrikeMidway:
		e.pending = f
	case StrikeBeforeStart:
		return fmt.Errorf("fault %s strikes before the proxy starts: give it to NewEnv as EnvOptions.Fault", f.Name())
	default:
		if err := f.Inject(ctx, e); err != nil {
			return err
		}
		e.struck = true
	}
	return nil
}

// Strike injects the pending Midway fault, if any, and reports whether one struck.
func (e *Env) Strike(ctx context.Context) (bool, error) {
	f := e.pending
	e.pending = nil
	if f == nil {
		return false, nil
	}
	e.struck = true
	return true, f.Inject(ctx, e)
}

// Struck reports whether the fault the world was armed with has struck (a
// fault that strikes never counts as struck); true when none was armed.
func (e *Env) Struck() bool { return e.armed == nil || e.struck }

// SeedFor derives a scenario's world seed from the run's seed and the
// scenario's name, so one scenario's draws do not depend on which others ran
// or in what order, and `--seed S` replays every one of them.
func SeedFor(runSeed uint64, scenario string) uint64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], runSeed)
	_, _ = h.Write(b[:])
	_, _ = h.Write([]byte(scenario))
	return h.Sum64()
}

// Draws lists what the world's random plans drew so far, in order: the step
// each fake LLM request got (the primary's, then the fallback's).
func (e *Env) Draws() []string {
	var out []string
	for _, f := range []*fakellm.Server{e.LLM, e.Fallback} {
		if f == nil {
			continue
		}
		for _, r := range f.Requests() {
			out = append(out, r.Step.String())
		}
	}
	return out
}

// Unmet says what of needs (capabilities and Need* values, as a fault's
// Requires lists them) target t or the world o lacks, as a reason for a
// not-applicable verdict ("" when nothing is missing).
func Unmet(t Target, o EnvOptions, needs ...string) string {
	_, readOnly := t.(ReadOnly)
	var caps, world []string
	for _, n := range needs {
		switch n {
		case NeedToxiproxy, NeedUpstreamFake:
			if readOnly {
				world = append(world, n)
			}
		case NeedLLM:
			if !o.LLM {
				world = append(world, n)
			}
		case NeedEverything:
			if !o.Everything {
				world = append(world, n)
			}
		case NeedUnifi:
			if o.Unifi == nil {
				world = append(world, n)
			}
		default:
			caps = append(caps, n)
		}
	}
	why := Lacks(t, caps...)
	if len(world) > 0 {
		w := "the scenario's world lacks " + strings.Join(world, ", ")
		if readOnly {
			w = "target " + t.Name() + " lacks " + strings.Join(world, ", ")
		}
		if why != "" {
			why += "; "
		}
		why += w
	}
	return why
}

// LiveSessions is the number of sessions the proxy holds, when the target
// can tell (in-process); ok is false otherwise.
func (e *Env) LiveSessions() (n int, ok bool) {
	if t, isIn := e.Target.(*InProcess); isIn && t.Proxy() != nil {
		return t.Proxy().Sessions().Len(), true
	}
	return 0, false
}

// EnvOptions shape an Env.
type EnvOptions struct {
	// Target runs the proxy; default &InProcess{}.
	Target Target
	// Bounds the proxy runs under, by name; none: CompressedBounds().
	Bounds Bounds
	// Override sets bounds by name (in their units) over Bounds: how the
	// catalogue, which knows bounds by name only, shapes a world.
	Override map[string]int64
	// Users maps user name to token; when set, the project requires a token.
	Users map[string]string
	// Strict makes the proxy answer unknown session ids with a 404.
	Strict bool
	// Relay forces the raw tools/call relay on (config `relay: true`)
	// whatever MCPCHAOS_RELAY says. A world that sets neither Relay nor
	// NoRelay follows the proxy's default (on) unless MCPCHAOS_RELAY=0.
	Relay bool
	// NoRelay forces the relay off (config `relay: false`), whatever
	// MCPCHAOS_RELAY says (the differential spec's SDK-path world). It wins
	// over Relay.
	NoRelay bool
	// Dir is the scratch directory; default a new temp dir removed by Close.
	Dir string
	// Failpoints armed in the proxy before it starts; default none.
	Failpoints *Failpoints
	// LLM starts a fake LLM as the proxy's primary provider; Fallback adds a
	// second (Anthropic) after it. Without LLM the proxy has no LLM configured.
	LLM, Fallback bool
	// LLMKeys gives the fake LLMs' providers API keys (LLMKeyPrimary,
	// LLMKeyFallback), by apiKeyEnv through the target's environment.
	LLMKeys bool
	// UpstreamKey puts UpstreamKeyValue in the proxy's environment as
	// UpstreamKeyEnv, for servers whose headers name it.
	UpstreamKey bool
	// LLMDefault is how the fake LLMs answer until a fault says otherwise;
	// the zero Step is ok with fakellm.Reply's text.
	LLMDefault fakellm.Step
	// Pipeline is the project's stage list.
	Pipeline []Stage
	// Unifi adds a unifi-like server "unifi" to the project with this health
	// check (its list_sites crosses ControllerLink); nil: no unifi server.
	Unifi *HealthCheck
	// DocmostQuery, if set, is appended to the docmost server's URL as its
	// query string (a secret an operator put in the URL, e.g. apikey=...).
	DocmostQuery string
	// DocmostHealth is the docmost server's health check (nil: liveness).
	DocmostHealth *HealthCheck
	// Gate enables begin_session gating with Prompts.
	Gate    bool
	Prompts []Prompt
	// Fault, if set, is armed as it strikes: before the proxy starts, before
	// the call (once the world is up), or kept for the operation's Strike.
	Fault Fault
	// Seed is the world's seed (Env.Seed); see SeedFor.
	Seed uint64
	// Everything adds the everything fake as server "everything" of the
	// project (every MCP feature: resources, prompts, completion, logging,
	// progress, sampling, elicitation, roots), behind EverythingLink.
	Everything bool
	// EverythingAdvertises, if set, are the capabilities the everything
	// fake advertises instead of its own (upstream.Options.Capabilities).
	EverythingAdvertises *mcp.ServerCapabilities
	// SecondProject adds OtherProject, serving the same docmost server, for
	// scenarios about what belongs to one project (its sessions).
	SecondProject bool
	// SecondProjectOpen makes OtherProject serve requests without a token
	// (requireAuth: false), for scenarios about a wrong token there.
	SecondProjectOpen bool
}

// The API keys of the fake LLMs' providers in a world with LLMKeys.
const (
	LLMKeyPrimary  = "sk-primary-K3Y-0001"
	LLMKeyFallback = "sk-ant-oat01-FALLBACK-T0KEN"
	// UpstreamKeyEnv holds UpstreamKeyValue in a world with UpstreamKey.
	UpstreamKeyEnv   = "MCPCHAOS_UPSTREAM_KEY"
	UpstreamKeyValue = "upstream-K3Y-7777"
)

// RelayEnv, set to 0, turns the raw tools/call relay off in every world
// whose options choose neither Relay nor NoRelay (to run the specs on the
// go-sdk path); unset or 1, such worlds follow the default: on.
const RelayEnv = "MCPCHAOS_RELAY"

// relayFor is the config's `relay` for a world with options o: nil (the
// key left out, so the proxy's default, on, holds in process and in the
// file a process target reads) unless o or MCPCHAOS_RELAY=0 chooses.
func relayFor(o EnvOptions) *bool {
	switch {
	case o.NoRelay:
		return new(false)
	case o.Relay:
		return new(true)
	case os.Getenv(RelayEnv) == "0":
		return new(false)
	}
	return nil
}

// The fake LLMs' model names, as the proxy's config names them.
const (
	PrimaryModel  = "qwen3-32b"
	FallbackModel = "claude-sonnet-latest" // auto-follows to the newest sonnet the fake lists
)

// PanicInToolCall is failpoints that panic the handler of tool's calls,
// for a target started on its own (a production start must ignore them).
func PanicInToolCall(tool string) *Failpoints {
	fps := NewFailpoints()
	fps.PanicToolCall(tool)
	return fps
}

// CompressedBounds are the proxy's bounds compressed to milliseconds, so
// that a scenario that waits out a budget takes well under a second or two:
// every world's, unless it is given its own.
func CompressedBounds() Bounds { return mcplocal.CompressedBounds() }

// DefaultBounds are the proxy's default bounds, uncompressed: for suites
// about a healthy proxy rather than a compressed incident, and what the
// harness assumes of a proxy that declares no budgets of its own.
func DefaultBounds() Bounds { return mcplocal.DefaultBounds() }

// Bounds are the bounds the world's proxy runs under, by name.
func (e *Env) Bounds() Bounds { return e.bounds }

// JudgedOn is a world that runs nothing: the target and the bounds a
// verdict is judged on, for judging an operation's observation by hand.
func JudgedOn(t Target, b Bounds) *Env { return &Env{Target: t, bounds: b} }

// Auditor is the admin user the harness adds to every world that has users,
// so that its checks can read every audit row (other users read only their own).
const Auditor = "mcpchaos-auditor"

const auditorToken = "mcpchaos-auditor-token"

// NewEnv builds and starts an Env. On error everything started is stopped.
func NewEnv(ctx context.Context, o EnvOptions) (e *Env, err error) {
	e = &Env{Toxi: NewToxi(), Users: o.Users, Target: o.Target, Dir: o.Dir, Failpoints: o.Failpoints, Seed: o.Seed}
	if e.Failpoints == nil {
		e.Failpoints = NewFailpoints()
	}
	defer func() {
		if err != nil {
			_ = e.Close(context.Background())
		}
	}()
	if e.Target == nil {
		e.Target = &InProcess{}
	}
	e.bounds = o.Bounds
	if e.bounds.IsZero() {
		e.bounds = CompressedBounds()
	}
	for _, name := range slices.Sorted(maps.Keys(o.Override)) {
		if !e.bounds.Has(name) {
			return e, fmt.Errorf("world: no bound named %s", name)
		}
		e.bounds = e.bounds.With(name, o.Override[name])
	}
	if e.Dir == "" {
		if e.Dir, err = os.MkdirTemp("", "mcpchaos-env-"); err != nil {
			return e, err
		}
	}
	if e.Docmost, err = upstream.NewDocmost(upstream.Options{}); err != nil {
		return e, err
	}
	if e.DocmostLink, err = e.Toxi.Link("docmost", e.Docmost.Addr()); err != nil {
		return e, err
	}
	if o.LLM {
		if e.LLM, err = fakellm.New(fakellm.Options{Provider: fakellm.OpenAI, Default: o.LLMDefault}); err != nil {
			return e, err
		}
		if e.LLMLink, err = e.Toxi.Link("llm", e.LLM.Addr()); err != nil {
			return e, err
		}
	}
	if o.Fallback {
		if e.Fallback, err = fakellm.New(fakellm.Options{Provider: fakellm.Anthropic, Default: o.LLMDefault}); err != nil {
			return e, err
		}
	}
	docmost := &WorldServer{URL: "http://" + e.DocmostLink.Addr() + "/mcp", Health: o.DocmostHealth}
	if o.DocmostQuery != "" {
		docmost.URL += "?" + o.DocmostQuery
	}
	pc := &WorldProject{Servers: map[string]*WorldServer{"docmost": docmost}, Pipeline: o.Pipeline, Gate: o.Gate, Prompts: o.Prompts}
	e.World = &World{
		Store:    "sqlite:" + filepath.Join(e.Dir, "audit.db"),
		Strict:   o.Strict,
		Relay:    relayFor(o),
		Projects: map[string]*WorldProject{Project: pc},
	}
	if o.Unifi != nil {
		if e.Controller, err = upstream.NewController(); err != nil {
			return e, err
		}
		if e.ControllerLink, err = e.Toxi.Link("controller", e.Controller.Addr()); err != nil {
			return e, err
		}
		if e.Unifi, err = upstream.NewUnifi(e.ControllerLink.Addr(), upstream.Options{}); err != nil {
			return e, err
		}
		pc.Servers["unifi"] = &WorldServer{URL: e.Unifi.URL(), Health: o.Unifi}
	}
	if o.Everything {
		if e.Everything, err = upstream.NewEverything(upstream.Options{Capabilities: o.EverythingAdvertises}); err != nil {
			return e, err
		}
		if e.EverythingLink, err = e.Toxi.Link("everything", e.Everything.Addr()); err != nil {
			return e, err
		}
		pc.Servers["everything"] = &WorldServer{URL: "http://" + e.EverythingLink.Addr() + "/mcp"}
	}
	if o.SecondProject {
		e.World.Projects[OtherProject] = &WorldProject{Servers: map[string]*WorldServer{"docmost": {URL: docmost.URL}}, Open: o.SecondProjectOpen}
	}
	if e.LLM != nil {
		e.World.LLMs = []LLMProvider{{Name: "vllm-current", Kind: LLMOpenAI, URL: "http://" + e.LLMLink.Addr() + "/v1", Model: PrimaryModel}}
		if e.Fallback != nil {
			e.World.LLMs = append(e.World.LLMs, LLMProvider{Name: "anthropic-fallback", Kind: LLMAnthropic, URL: e.Fallback.URL(), Model: FallbackModel})
		}
		if o.LLMKeys {
			e.SecretEnv = map[string]string{}
			keys := map[string]string{"vllm-current": LLMKeyPrimary, "anthropic-fallback": LLMKeyFallback}
			for i, p := range e.World.LLMs {
				p.KeyEnv = "MCPCHAOS_KEY_" + strings.ToUpper(strings.ReplaceAll(p.Name, "-", "_"))
				e.World.LLMs[i] = p
				e.SecretEnv[p.KeyEnv] = keys[p.Name]
			}
		}
	}
	if o.UpstreamKey {
		if e.SecretEnv == nil {
			e.SecretEnv = map[string]string{}
		}
		e.SecretEnv[UpstreamKeyEnv] = UpstreamKeyValue
	}
	if len(o.Users) > 0 {
		e.World.Users = map[string]User{}
		for name, tok := range o.Users {
			e.World.Users[name] = User{Token: tok}
		}
		e.World.Users[Auditor] = User{Token: auditorToken, Admin: true}
	}
	if err = mcplocal.Config(e.World).Validate(); err != nil {
		return e, fmt.Errorf("harness config: %w", err)
	}
	if o.Fault != nil && o.Fault.Strikes() == StrikeBeforeStart {
		// Armed now, it reaches a proxy in another process through its environment.
		if err = o.Fault.Inject(ctx, e); err != nil {
			return e, fmt.Errorf("inject %s: %w", o.Fault.Name(), err)
		}
		e.armed, e.struck = o.Fault, true
	}
	if err = e.Target.Start(ctx, Spec{World: e.World, Bounds: e.Bounds(), Failpoints: e.Failpoints, Env: e.SecretEnv}); err != nil {
		return e, fmt.Errorf("target %s: %w", e.Target.Name(), err)
	}
	if o.Fault != nil && o.Fault.Strikes() != StrikeBeforeStart {
		if err = e.Arm(ctx, o.Fault); err != nil {
			return e, fmt.Errorf("inject %s: %w", o.Fault.Name(), err)
		}
	}
	return e, nil
}

// Token is the bearer token of user ("" when the env has no users).
func (e *Env) Token(user string) string { return e.Users[user] }

// ProjectURL is the MCP endpoint of the harness project.
func (e *Env) ProjectURL() string {
	if ep, ok := e.Target.(Endpointer); ok {
		return ep.Endpoint(Project)
	}
	return e.Target.URL() + "/projects/" + Project + "/mcp"
}

// ProjectURLOf is the MCP endpoint of project (Project or OtherProject).
func (e *Env) ProjectURLOf(project string) string {
	if ep, ok := e.Target.(Endpointer); ok {
		return ep.Endpoint(project)
	}
	return e.Target.URL() + "/projects/" + project + "/mcp"
}

// GetJSON GETs path from the proxy, as the world's auditor when it has
// users, and decodes the answer into v; a non-200 answer is an error quoting
// *apiErr (the API's {"error": ...}). Evidence adapters read a target's own
// APIs through it (scenarios/evidence/mcplocal: the audit API).
func (e *Env) GetJSON(ctx context.Context, path string, v any, apiErr *string) error {
	return e.getJSONFrom(ctx, e.Target.URL(), path, v, apiErr)
}

// getJSONFrom is GetJSON from the server at base.
func (e *Env) getJSONFrom(ctx context.Context, base, path string, v any, apiErr *string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return err
	}
	if e.World != nil && len(e.World.Users) > 0 {
		req.Header.Set("Authorization", "Bearer "+auditorToken) // the harness's checks read every row
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", path, resp.Status, *apiErr)
	}
	return nil
}

// Close stops the target, the fakes and toxiproxy, and removes the scratch
// directory. Close may be called more than once.
func (e *Env) Close(ctx context.Context) error {
	var errs []error
	// The links healed first: a proxy stopping gracefully may still talk to
	// its upstream (closing its session there), which a blackholed or
	// throttled link would hold until the stop gives up and kills it (10 s
	// for a foreign proxy).
	for _, l := range e.links() {
		l.Heal()
	}
	if e.Target != nil {
		errs = append(errs, e.Target.Stop(ctx))
	}
	if e.Toxi != nil {
		e.Toxi.Close()
	}
	for _, c := range e.closers {
		errs = append(errs, c())
	}
	e.closers = nil
	for _, u := range []*upstream.Server{e.Docmost, e.Unifi, e.Everything} {
		if u != nil {
			errs = append(errs, u.Close())
		}
	}
	if e.Controller != nil {
		errs = append(errs, e.Controller.Close())
	}
	for _, f := range []*fakellm.Server{e.LLM, e.Fallback} {
		if f != nil {
			errs = append(errs, f.Close())
		}
	}
	if e.Dir != "" {
		errs = append(errs, os.RemoveAll(e.Dir))
	}
	http.DefaultClient.CloseIdleConnections()
	return errors.Join(errs...)
}
