package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/template"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
)

// The capabilities a foreign proxy may claim. A scenario that needs one the
// target lacks is reported as not applicable, by name, never as passed (see
// Lacks). mcplocal, in every target of this package, has them all.
const (
	// CapLLMStages: the proxy runs the harness config's LLM-backed stages
	// (paginate, summarize-tree) against the fake LLMs, with `⚠ … unavailable`
	// notices when they degrade.
	CapLLMStages = "llmStages"
	// CapAuditAPI: GET /api/v1/audit?trace=CODE and ?session=ID answer with
	// mcplocal's audit rows ({"rows": [...]}).
	CapAuditAPI = "auditAPI"
	// CapSessionAdoption: an unknown Mcp-Session-Id is recreated keeping the
	// client's id, with the `⚠ Session state unavailable` notice.
	CapSessionAdoption = "sessionAdoption"
	// CapGate: begin_session gating with the config's prompts.
	CapGate = "gate"
	// CapFailpoints: the proxy honours MCPLOCAL_FAILPOINTS (panics on demand).
	CapFailpoints = "failpoints"
	// CapKill: the proxy may be SIGKILLed and started again on its address
	// (the target is then a Killer).
	CapKill = "kill"
	// CapEverything: the proxy fronts the everything fake ({{.EverythingURL}})
	// as server "everything" beside docmost and forwards every method of
	// ForwardableMethods, under the spec's names (default everything_NAME).
	CapEverything = "everything"
	// CapTraceCode: every result carries a trace code in _meta (mcplocal's
	// "traceCode"), and an isError result's text quotes it. A target that
	// does not claim it is not held to it (see catalogue.Breach).
	CapTraceCode = "traceCode"
	// CapErrorShapes: mcplocal's error shapes: a tools/call whose upstream is
	// down, hung or reset is answered with an isError result (not a JSON-RPC
	// error), and a refused session id's 404 carries a JSON-RPC error body.
	// A target that does not claim it is held only to an answer.
	CapErrorShapes = "errorShapes"
)

// AllCapabilities lists every capability, in the order docs/targets.md gives them.
var AllCapabilities = []string{CapLLMStages, CapAuditAPI, CapSessionAdoption, CapGate, CapFailpoints, CapKill, CapEverything, CapTraceCode, CapErrorShapes}

// Capabilities is implemented by targets whose proxy claims only some
// features (a foreign proxy). Targets that do not implement it run mcplocal
// and have every capability, except CapKill, which needs a Killer.
type Capabilities interface {
	Has(capability string) bool
}

// Endpointer is implemented by targets whose MCP endpoint for a project is
// not URL()+"/projects/{project}/mcp": Endpoint returns the endpoint's full URL.
type Endpointer interface {
	Endpoint(project string) string
}

// Lacks says which of caps t lacks, as a reason for a not-applicable
// verdict ("" when t has them all).
func Lacks(t Target, caps ...string) string {
	var missing []string
	for _, c := range caps {
		if !has(t, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("target %s lacks %s", t.Name(), strings.Join(missing, ", "))
}

// Needs is Lacks as a catalogue Scenario.Needs hook:
//
//	Scenario{..., Needs: harness.Needs(harness.CapAuditAPI, harness.CapSessionAdoption)}
func Needs(caps ...string) func(Target) string {
	return func(t Target) string { return Lacks(t, caps...) }
}

func has(t Target, c string) bool {
	if c == CapKill {
		if _, ok := t.(Killer); !ok {
			return false
		}
	}
	if cs, ok := t.(Capabilities); ok {
		return cs.Has(c)
	}
	return true
}

// Bounds of the foreign target.
const (
	foreignLogBytes = 1 << 20 // output kept for failure reports
)

// ForeignSpec tells the harness how to start another MCP proxy: a command
// run on this host, or an image run as a container with host networking.
// Every string is a text/template over ForeignVars. See docs/targets.md.
type ForeignSpec struct {
	// Name names the target in reports ("foreign:NAME").
	Name string `yaml:"name"`
	// Command is the argv of the proxy process. A relative program path is
	// relative to the spec file's directory.
	Command []string `yaml:"command"`
	// Image, instead of Command, runs a locally built image (never pulled)
	// with Args as its command, on the host network.
	Image string   `yaml:"image"`
	Args  []string `yaml:"args"`
	// Env is added to the proxy's environment.
	Env map[string]string `yaml:"env"`
	// Files are written to the target's temp dir before the proxy starts,
	// name → content (the proxy's own config, say); {{index .Files "NAME"}}
	// is a file's path. Files may use every variable but Files.
	Files map[string]string `yaml:"files"`
	// Endpoint is the MCP endpoint path; default /projects/{{.Project}}/mcp.
	// A proxy with one path per upstream server names it with {{.Server}}
	// (/{{.Server}}/mcp): the harness then reaches each fake on its own path.
	Endpoint string `yaml:"endpoint"`
	// Health is a path answering 200 once the proxy is ready: the older
	// spelling of Ready: /PATH.
	Health string `yaml:"health"`
	// Ready says when the started proxy is ready: "initialize" (default: an
	// MCP initialize on the endpoint answers 2xx), "/PATH" (a GET answers
	// 200), "tcp" (the listen port accepts) or "tcp:PORT".
	Ready string `yaml:"ready"`
	// Tools maps the catalogue's logical tools, "SERVER/TOOL" (docmost/search),
	// to the proxy's names; ToolName, a template over .Server and .Tool, names
	// the rest (default mcplocal's {{.Server}}_{{.Tool}}).
	Tools    map[string]string `yaml:"tools"`
	ToolName string            `yaml:"toolName"`
	// PromptName, a template over .Server and .Prompt, is the proxy's name
	// for an upstream's prompt; default the toolName template with the
	// prompt as .Tool.
	PromptName string `yaml:"promptName"`
	// Stateless says the proxy issues no Mcp-Session-Id: the scenarios about
	// a session's lifecycle do not apply to it.
	Stateless bool `yaml:"stateless"`
	// Protocol is the MCP revision the proxy speaks beyond the harness's
	// own (ClientRevision): PerRequestRevision or none. A stateless proxy
	// speaking it is asked for a log level and a subscription that
	// revision's way (PerRequest).
	Protocol string `yaml:"protocol"`
	// Forwards lists the MCP methods beyond tools the proxy claims to
	// forward (ForwardableMethods), of the everything fake: as server
	// "everything" ({{.EverythingURL}}), or in docmost's place for a proxy
	// of one server (StandsIn). The capability everything claims them all.
	Forwards []string `yaml:"forwards"`
	// Budgets are the proxy's own budgets per scenario kind (BudgetKinds),
	// as Go durations, for a proxy that does not read the harness's knobs;
	// a kind not given keeps the knob's value.
	Budgets map[string]string `yaml:"budgets"`
	// Headers are sent with every client request (auth); values are templates.
	Headers map[string]string `yaml:"headers"`
	// Capabilities the proxy claims (AllCapabilities names them).
	Capabilities []string `yaml:"capabilities"`
	// PassKnobs passes the harness's knobs as MCPCTL_*_MS variables, as
	// mcplocal reads them.
	PassKnobs bool `yaml:"passKnobs"`
	// StopTimeout is the graceful stop's bound before SIGKILL (Go duration);
	// default 10s.
	StopTimeout string `yaml:"stopTimeout"`
	// Cluster says how the proxy runs as N replicas behind HAProxy
	// (--target cluster:N:SPEC.yaml, ForeignCluster); optional.
	Cluster *ForeignClusterSpec `yaml:"cluster"`

	// Dir is the spec file's directory (relative command paths).
	Dir string `yaml:"-"`

	stopTimeout time.Duration
	budgets     map[string]time.Duration
}

// ForeignClusterSpec is a foreign spec's cluster: block.
type ForeignClusterSpec struct {
	// Check is what HAProxy health-checks on each replica: "/PATH" (a GET
	// answering 200) or "tcp" (the port accepts a connection). Default: the
	// spec's ready path if it is one, else "tcp".
	Check string `yaml:"check"`
	// Store, "postgres", has the harness start one throwaway PostgreSQL the
	// replicas share: each replica sees it as {{.StoreDSN}}, through its own
	// toxiproxy link. Default: none, each replica keeps its own state.
	Store string `yaml:"store"`
}

// StorePostgres is the one shared store a foreign cluster may declare.
const StorePostgres = "postgres"

// CheckTCP is the cluster check of a proxy with no health path.
const CheckTCP = "tcp"

// clusterCheck is the check HAProxy runs on each replica: the cluster
// block's, else the ready path, else tcp.
func (s *ForeignSpec) clusterCheck() string {
	if s.Cluster != nil && s.Cluster.Check != "" {
		return s.Cluster.Check
	}
	if strings.HasPrefix(s.Ready, "/") && !strings.Contains(s.Ready, "{{") {
		return s.Ready
	}
	return CheckTCP
}

// SharedStore is the store the spec's replicas share ("" for none).
func (s *ForeignSpec) SharedStore() string {
	if s.Cluster == nil {
		return ""
	}
	return s.Cluster.Store
}

// checkCluster checks a spec's cluster: block.
func (s *ForeignSpec) checkCluster() []error {
	usesStore := slices.ContainsFunc(s.templates(), func(t string) bool { return strings.Contains(t, ".StoreDSN") })
	if s.Cluster == nil {
		if usesStore {
			return []error{errors.New("a template uses {{.StoreDSN}}, but no cluster: block declares store: postgres")}
		}
		return nil
	}
	var errs []error
	switch c := s.Cluster.Check; {
	case c == "" || c == CheckTCP:
	case !strings.HasPrefix(c, "/"):
		errs = append(errs, fmt.Errorf("cluster: check %q: want /PATH (a GET answering 200) or tcp", c))
	case strings.ContainsAny(c, " \t\"'{}#"):
		errs = append(errs, fmt.Errorf("cluster: check %q: want a plain path (no spaces, quotes, braces or #): HAProxy sends it as it is", c))
	}
	switch s.Cluster.Store {
	case "", StorePostgres:
	default:
		errs = append(errs, fmt.Errorf("cluster: store %q: want %s (the harness starts one the replicas share) or none", s.Cluster.Store, StorePostgres))
	}
	if s.Cluster.Store == StorePostgres && !usesStore {
		errs = append(errs, errors.New("cluster: store: postgres, but no template gives the proxy {{.StoreDSN}}"))
	}
	if s.Cluster.Store == "" && usesStore {
		errs = append(errs, errors.New("a template uses {{.StoreDSN}}, but the cluster: block declares no store (store: postgres)"))
	}
	return errs
}

// ForeignVars are the values a ForeignSpec's templates see.
type ForeignVars struct {
	Listen  string // 127.0.0.1:PORT, a free loopback port the proxy must listen on
	Host    string // 127.0.0.1
	Port    string // PORT
	URL     string // http://Listen
	Project string // the project the scenarios talk to
	// Server is the upstream server whose endpoint is rendered ("docmost",
	// "everything"), for a proxy with one path per server.
	Server string
	// DocmostURL is the fake docmost upstream's MCP endpoint, through its
	// toxiproxy link (http://127.0.0.1:P/mcp).
	DocmostURL string
	// EverythingURL is the everything fake's MCP endpoint, through its link;
	// empty unless the scenario's world has one.
	EverythingURL string
	// LLMURL is the primary fake LLM's base URL (OpenAI wire format, ending in
	// /v1), through its link; LLMModel its model. Empty without an LLM.
	LLMURL, LLMModel string
	// FallbackURL is the Anthropic fake's base URL; FallbackModel its model.
	FallbackURL, FallbackModel string
	// ConfigFile is the harness's config in mcplocal's YAML format.
	ConfigFile string
	AuditDSN   string            // the harness config's audit store
	Dir        string            // the target's temp dir
	Files      map[string]string // name → path of each file of ForeignSpec.Files
	Knobs      map[string]string // MCPCTL_* → milliseconds
	Users      map[string]string // user name → bearer token the clients send
	Failpoints string            // MCPLOCAL_FAILPOINTS value
	// StoreDSN is the shared store of a cluster whose spec declares one
	// (cluster: store: postgres), through this replica's own link; empty
	// when the proxy runs alone.
	StoreDSN string
}

// LoadForeign reads and checks a target spec file.
func LoadForeign(path string) (*ForeignSpec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := ParseForeign(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if s.Dir, err = filepath.Abs(filepath.Dir(path)); err != nil {
		return nil, err
	}
	return s, nil
}

// ParseForeign parses and checks a target spec; unknown fields are errors.
func ParseForeign(doc []byte) (*ForeignSpec, error) {
	var s ForeignSpec
	dec := yaml.NewDecoder(bytes.NewReader(doc))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("target spec: %w", err)
	}
	var errs []error
	switch {
	case s.Name == "":
		errs = append(errs, errors.New("name is required"))
	case (len(s.Command) == 0) == (s.Image == ""):
		errs = append(errs, errors.New("want exactly one of command and image"))
	case len(s.Args) > 0 && s.Image == "":
		errs = append(errs, errors.New("args go with image; a command carries its own"))
	}
	if s.Endpoint == "" {
		s.Endpoint = "/projects/{{.Project}}/mcp"
	}
	switch {
	case s.Health != "" && s.Ready != "":
		errs = append(errs, errors.New("want at most one of health and ready (health: /P is ready: /P)"))
	case s.Health != "":
		s.Ready = s.Health
	case s.Ready == "":
		s.Ready = ReadyInitialize
	}
	if err := checkReady(s.Ready); err != nil {
		errs = append(errs, err)
	}
	if s.ToolName == "" {
		s.ToolName = "{{.Server}}_{{.Tool}}"
	}
	if s.Protocol != "" && s.Protocol != PerRequestRevision {
		errs = append(errs, fmt.Errorf("protocol %q: want %s (the revision past the harness's own %s) or none", s.Protocol, PerRequestRevision, ClientRevision))
	}
	if err := checkForwards(s.Forwards, s.Protocol); err != nil {
		errs = append(errs, err)
	}
	if s.Has(CapEverything) && len(s.Forwards) > 0 {
		errs = append(errs, errors.New("want at most one of forwards and the capability everything (which forwards every method)"))
	}
	for k := range s.Tools {
		if srv, tool, ok := strings.Cut(k, "/"); !ok || srv == "" || tool == "" {
			errs = append(errs, fmt.Errorf("tools: key %q: want SERVER/TOOL, e.g. docmost/search", k))
		}
	}
	s.budgets = map[string]time.Duration{}
	for k, v := range s.Budgets {
		if _, ok := budgetKinds[k]; !ok {
			errs = append(errs, fmt.Errorf("budgets: unknown kind %q (want some of %s)", k, strings.Join(BudgetKinds(), ", ")))
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("budgets: %s %q: want a positive Go duration", k, v))
			continue
		}
		s.budgets[k] = d
	}
	for _, c := range s.Capabilities {
		if !slices.Contains(AllCapabilities, c) {
			errs = append(errs, fmt.Errorf("unknown capability %q (want some of %s)", c, strings.Join(AllCapabilities, ", ")))
		}
	}
	s.stopTimeout = foreignStopDefault
	if s.StopTimeout != "" {
		d, err := time.ParseDuration(s.StopTimeout)
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("stopTimeout %q: want a positive Go duration", s.StopTimeout))
		}
		s.stopTimeout = d
	}
	errs = append(errs, s.checkCluster()...)
	// Every template must parse now, not at the first scenario.
	for _, t := range s.templates() {
		if _, err := template.New("").Option("missingkey=error").Parse(t); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("target spec %q: %w", s.Name, err)
	}
	return &s, nil
}

func (s *ForeignSpec) templates() []string {
	out := append(append(append([]string{}, s.Command...), s.Args...), s.Endpoint, s.Ready, s.Image, s.ToolName, s.PromptName)
	for _, v := range s.Env {
		out = append(out, v)
	}
	for _, v := range s.Files {
		out = append(out, v)
	}
	for _, v := range s.Headers {
		out = append(out, v)
	}
	return out
}

// Has reports whether the spec claims capability c.
func (s *ForeignSpec) Has(c string) bool { return slices.Contains(s.Capabilities, c) }

// Target returns a fresh target running this spec; it is a Killer when the
// spec claims CapKill. Stderr, if set, receives the proxy's output.
func (s *ForeignSpec) Target(stderr io.Writer) Target {
	f := &Foreign{Spec: s, Stderr: stderr}
	if s.Has(CapKill) {
		return &killableForeign{f}
	}
	return f
}

// Foreign is a target running a proxy described by a ForeignSpec. Start
// renders the spec with the Env's addresses and a free loopback port, writes
// its files and starts the proxy; Restart stops it (SIGTERM, or docker stop)
// and starts it again with the same command on the same port.
type Foreign struct {
	Spec   *ForeignSpec
	Stderr io.Writer
	// StoreDSN is {{.StoreDSN}}: set by the cluster that runs this replica.
	StoreDSN string

	mu       sync.Mutex
	dir      string // temp dir; "" when stopped
	vars     ForeignVars
	argv     []string
	env      []string
	proc     *process      // command targets
	run      *containerRun // image targets
	logOnce  sync.Once
	log      *tailBuffer
	endpoint *template.Template
}

// killableForeign is a Foreign whose spec claims CapKill.
type killableForeign struct{ *Foreign }

var (
	_ Target           = (*Foreign)(nil)
	_ Capabilities     = (*Foreign)(nil)
	_ Endpointer       = (*Foreign)(nil)
	_ ServerEndpointer = (*Foreign)(nil)
	_ Forwarder        = (*Foreign)(nil)
	_ PromptNamer      = (*Foreign)(nil)
	_ Stateless        = (*Foreign)(nil)
	_ Speaker          = (*Foreign)(nil)
	_ Killer           = (*killableForeign)(nil)
)

// Name implements Target.
func (f *Foreign) Name() string { return "foreign:" + f.Spec.Name }

// Has implements Capabilities.
func (f *Foreign) Has(c string) bool { return f.Spec.Has(c) }

// Forwards implements Forwarder: the spec's forwards:, or every method for
// a spec claiming the capability everything.
func (f *Foreign) Forwards(method string) bool {
	return f.Spec.Has(CapEverything) || slices.Contains(f.Spec.Forwards, method)
}

// FrontsEverything implements EverythingFronter: the proxy is given the
// everything fake as a server of its own, by {{.EverythingURL}} or by
// mcplocal's config ({{.ConfigFile}} names every server of the world), or
// its spec claims the capability everything.
func (f *Foreign) FrontsEverything() bool {
	return f.Spec.Has(CapEverything) || slices.ContainsFunc(f.Spec.templates(), func(t string) bool {
		return strings.Contains(t, ".EverythingURL") || strings.Contains(t, ".ConfigFile")
	})
}

// Stateless implements Stateless: the spec's stateless:.
func (f *Foreign) Stateless() bool { return f.Spec.Stateless }

// Protocol implements Speaker: the spec's protocol:.
func (f *Foreign) Protocol() string { return f.Spec.Protocol }

// URL implements Target.
func (f *Foreign) URL() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return "http://" + f.vars.Listen
}

// Endpoint implements Endpointer: the spec's endpoint for project.
func (f *Foreign) Endpoint(project string) string {
	f.mu.Lock()
	vars := f.vars
	f.mu.Unlock()
	return f.endpointFor(vars, project)
}

// ServerEndpoint implements ServerEndpointer: the spec's endpoint for
// server in project (the same for every server unless it names {{.Server}}).
func (f *Foreign) ServerEndpoint(project, server string) string {
	f.mu.Lock()
	vars := f.vars
	f.mu.Unlock()
	vars.Server = server
	return f.endpointFor(vars, project)
}

func (f *Foreign) endpointFor(vars ForeignVars, project string) string {
	vars.Project = project
	if vars.Server == "" {
		vars.Server = "docmost"
	}
	p, err := render(f.Spec.Endpoint, vars)
	if err != nil {
		p = "/projects/" + project + "/mcp"
	}
	return "http://" + vars.Listen + p
}

// Logs is the proxy's output so far (command targets: every run; image
// targets: the container's).
func (f *Foreign) Logs() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.run != nil {
		return f.run.logs(context.Background())
	}
	return f.logs().String()
}

func (f *Foreign) logs() *tailBuffer {
	f.logOnce.Do(func() { f.log = newTailBuffer(foreignLogBytes) })
	return f.log
}

// Start implements Target.
func (f *Foreign) Start(ctx context.Context, spec Spec) (err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dir != "" {
		return fmt.Errorf("%s: already started", f.Name())
	}
	if spec.World == nil {
		return fmt.Errorf("%s: spec has no world", f.Name())
	}
	if f.dir, err = os.MkdirTemp("", "mcpchaos-foreign-"); err != nil {
		return fmt.Errorf("%s: %w", f.Name(), err)
	}
	defer func() {
		if err != nil {
			f.cleanupLocked(context.WithoutCancel(ctx))
			err = fmt.Errorf("%s: %w", f.Name(), err)
		}
	}()
	w := spec.World.Clone()
	binds, err := auditBind(&w.Store)
	if err != nil {
		return err
	}
	if f.Spec.Image == "" {
		return startFresh(func(addr string) error {
			if err := f.prepareLocked(w, spec, addr); err != nil {
				return err
			}
			return f.spawnLocked(ctx)
		})
	}
	addr, err := freeLoopbackAddr()
	if err != nil {
		return err
	}
	if err := f.prepareLocked(w, spec, addr); err != nil {
		return err
	}
	binds = append(binds, f.dir+":"+f.dir+":ro")
	what, probe := f.readyProbe()
	f.run = &containerRun{name: f.Name(), image: f.argv[0], addr: addr, health: what, probe: probe, grace: f.Spec.stopTimeout,
		stderr: f.Stderr, cmd: f.argv[1:], env: f.env, binds: binds}
	if err := f.run.create(ctx); err != nil {
		return err
	}
	return f.run.startHealthy(ctx)
}

// upstreamURLs are {{.DocmostURL}} and {{.EverythingURL}} for a world whose
// project's servers are at urls: each fake at its own, except that a proxy
// of one server (StandsIn) is given the everything fake as that server in
// the worlds that have it.
func (f *Foreign) upstreamURLs(urls map[string]string) (docmost, everything string) {
	docmost, everything = urls["docmost"], urls["everything"]
	if everything != "" && StandsIn(f) {
		docmost = everything
	}
	return docmost, everything
}

// prepareLocked renders the spec for one start on addr: vars, files,
// argv (image first for image targets) and environment.
func (f *Foreign) prepareLocked(w *World, spec Spec, addr string) error {
	host, port, _ := net.SplitHostPort(addr)
	v := ForeignVars{Listen: addr, Host: host, Port: port, URL: "http://" + addr, Project: Project,
		ConfigFile: filepath.Join(f.dir, "mcplocal.yaml"), AuditDSN: w.Store, Dir: f.dir,
		Files: map[string]string{}, Knobs: map[string]string{}, Users: map[string]string{},
		Failpoints: spec.Failpoints.String(), StoreDSN: f.StoreDSN}
	if urls := w.ServerURLs(Project); urls != nil {
		v.DocmostURL, v.EverythingURL = f.upstreamURLs(urls)
	}
	if len(w.LLMs) > 0 {
		v.LLMURL, v.LLMModel = w.LLMs[0].URL, w.LLMs[0].Model
		if len(w.LLMs) > 1 {
			v.FallbackURL, v.FallbackModel = w.LLMs[1].URL, w.LLMs[1].Model
		}
	}
	for name, u := range w.Users {
		v.Users[name] = u.Token
	}
	for _, kv := range spec.Bounds.Environ() {
		k, ms, _ := strings.Cut(kv, "=")
		v.Knobs[k] = ms
	}
	doc, err := mcplocal.ConfigYAML(w)
	if err != nil {
		return err
	}
	if err := os.WriteFile(v.ConfigFile, doc, 0o644); err != nil {
		return err
	}
	names := make([]string, 0, len(f.Spec.Files))
	for name := range f.Spec.Files {
		if name != filepath.Base(name) || name == "." || name == ".." {
			return fmt.Errorf("file name %q: want a plain file name", name)
		}
		names = append(names, name)
		v.Files[name] = filepath.Join(f.dir, name)
	}
	sort.Strings(names)
	for _, name := range names {
		text, err := render(f.Spec.Files[name], v)
		if err != nil {
			return fmt.Errorf("file %s: %w", name, err)
		}
		if err := os.WriteFile(v.Files[name], []byte(text), 0o644); err != nil {
			return err
		}
	}
	argv := f.Spec.Command
	if f.Spec.Image != "" {
		argv = append([]string{f.Spec.Image}, f.Spec.Args...)
	}
	f.argv = nil
	for i, a := range argv {
		r, err := render(a, v)
		if err != nil {
			return fmt.Errorf("argument %d: %w", i, err)
		}
		f.argv = append(f.argv, r)
	}
	if f.Spec.Image == "" && strings.ContainsRune(f.argv[0], filepath.Separator) && !filepath.IsAbs(f.argv[0]) {
		f.argv[0] = filepath.Join(f.Spec.Dir, f.argv[0])
	}
	f.env = nil
	if f.Spec.PassKnobs {
		f.env = append(f.env, spec.Bounds.Environ()...)
	}
	if f.Spec.Has(CapFailpoints) && v.Failpoints != "" {
		f.env = append(f.env, failpointsEnv+"="+v.Failpoints, "MCPLOCAL_ENABLE_FAILPOINTS=1")
	}
	keys := make([]string, 0, len(f.Spec.Env))
	for k := range f.Spec.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		val, err := render(f.Spec.Env[k], v)
		if err != nil {
			return fmt.Errorf("env %s: %w", k, err)
		}
		f.env = append(f.env, k+"="+val)
	}
	f.vars = v
	return nil
}

// spawnLocked starts the command and waits until its readiness probe answers.
func (f *Foreign) spawnLocked(ctx context.Context) error {
	what, probe := f.readyProbe()
	p, err := spawn(ctx, procSpec{argv: f.argv, dir: f.Spec.Dir, env: append(withoutKnobs(os.Environ()), f.env...),
		addr: f.vars.Listen, log: f.logs(), stderr: f.Stderr}, what, probe)
	if err != nil {
		return err
	}
	f.proc = p
	return nil
}

// withoutKnobs drops knob and failpoint variables of this process's
// environment: the spec decides what the proxy gets.
func withoutKnobs(environ []string) []string {
	ours := map[string]bool{failpointsEnv: true}
	for _, name := range DefaultBounds().Names() {
		ours[name] = true
	}
	var env []string
	for _, kv := range environ {
		if k, _, _ := strings.Cut(kv, "="); !ours[k] {
			env = append(env, kv)
		}
	}
	return env
}

// stopLocked ends the proxy: gracefully (SIGTERM or docker stop, SIGKILL
// after the spec's stop timeout) or not (SIGKILL). A proxy that had exited
// on its own is an error.
func (f *Foreign) stopLocked(ctx context.Context, graceful bool) error {
	if f.run != nil {
		up, state, err := f.run.running(ctx)
		switch {
		case err != nil:
			return err
		case !up:
			return fmt.Errorf("the container had exited on its own: %s\n%s", state, tail(f.run.logs(ctx), containerErrLogBytes))
		case graceful:
			return f.run.stop(ctx)
		}
		return f.run.kill(ctx)
	}
	p := f.proc
	if p == nil {
		return nil
	}
	f.proc = nil
	// A foreign proxy's exit status on SIGTERM is its own business.
	return p.stop(ctx, graceful, f.Spec.stopTimeout, false)
}

// instanceLocked is the proxy as the shared lifecycle drives it: a command
// started again, or its container started again.
func (f *Foreign) instanceLocked() instance {
	return instance{halt: f.stopLocked, resume: func(ctx context.Context) error {
		if f.run != nil {
			return f.run.startHealthy(ctx)
		}
		return f.spawnLocked(ctx)
	}}
}

// Restart implements Target.
func (f *Foreign) Restart(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return cycle(ctx, f.Name(), f.dir != "", true, f.instanceLocked())
}

// KillRestart implements Killer for specs that claim CapKill.
func (k *killableForeign) KillRestart(ctx context.Context) error {
	f := k.Foreign
	f.mu.Lock()
	defer f.mu.Unlock()
	return cycle(ctx, f.Name(), f.dir != "", false, f.instanceLocked())
}

// Kill SIGKILLs the proxy (a command spec's) and keeps its address and
// files: Restart starts it again, Stop cleans up.
func (f *Foreign) Kill(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.run != nil {
		return fmt.Errorf("%s: kill: an image spec's replica is not killed on its own", f.Name())
	}
	if err := f.stopLocked(ctx, false); err != nil {
		return fmt.Errorf("%s: kill: %w", f.Name(), err)
	}
	return nil
}

// PID is the proxy's process id (0 while it is down, or for an image spec).
func (f *Foreign) PID() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.proc == nil {
		return 0
	}
	return f.proc.cmd.Process.Pid
}

// Stop implements Target. Stop may be called more than once.
func (f *Foreign) Stop(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dir == "" {
		return nil
	}
	var errs []error
	if f.run != nil || f.proc != nil {
		errs = append(errs, f.stopLocked(ctx, true))
	}
	if f.run != nil && f.Stderr != nil {
		fmt.Fprintf(f.Stderr, "--- mcpchaos: output of %s ---\n%s--- end of output ---\n", f.Name(), f.run.logs(ctx))
	}
	errs = append(errs, f.cleanupLocked(ctx))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s: stop: %w", f.Name(), err)
	}
	return nil
}

// cleanupLocked removes the container (if any) and the temp dir; a process
// still running is killed.
func (f *Foreign) cleanupLocked(ctx context.Context) error {
	var errs []error
	if f.proc != nil {
		errs = append(errs, f.proc.kill())
		f.proc = nil
	}
	if f.run != nil {
		errs = append(errs, f.run.remove(ctx))
		f.run = nil
	}
	if f.dir != "" {
		errs = append(errs, os.RemoveAll(f.dir))
	}
	f.dir = ""
	return errors.Join(errs...)
}

// render executes one template of a spec over v.
func render(text string, v ForeignVars) (string, error) {
	t, err := newTemplate(text)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := t.Execute(&b, v); err != nil {
		return "", err
	}
	return b.String(), nil
}

func newTemplate(text string) (*template.Template, error) {
	return template.New("").Option("missingkey=error").Parse(text)
}
