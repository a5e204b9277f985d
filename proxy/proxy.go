// Package proxy assembles mcplocal, the MCP proxy: configuration and knobs
// in, an http.Handler out.
//
// Where things live:
//   - entry/     where a request enters (HTTP, auth, session recreation)
//   - deadline/  where every request is bounded and guaranteed an answer
//   - project/   tool aggregation and routing to upstreams
//   - upstream/  client sessions to upstream MCP servers
//   - audit/     where audit rows are written and read back
//   - session/   the table of live and deleted sessions
//   - trace/     trace codes
//   - knobs/     every bound, in one table
//   - config/    the YAML file
package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/bound"
	"github.com/mcpchaos/mcpchaos/proxy/chat"
	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/entry"
	"github.com/mcpchaos/mcpchaos/proxy/failpoint"
	"github.com/mcpchaos/mcpchaos/proxy/gate"
	"github.com/mcpchaos/mcpchaos/proxy/health"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/lazyaccept"
	"github.com/mcpchaos/mcpchaos/proxy/llm"
	"github.com/mcpchaos/mcpchaos/proxy/origin"
	"github.com/mcpchaos/mcpchaos/proxy/pause"
	"github.com/mcpchaos/mcpchaos/proxy/project"
	"github.com/mcpchaos/mcpchaos/proxy/rawrefusal"
	"github.com/mcpchaos/mcpchaos/proxy/redact"
	"github.com/mcpchaos/mcpchaos/proxy/session"
	"github.com/mcpchaos/mcpchaos/proxy/shared"
	"github.com/mcpchaos/mcpchaos/proxy/stage"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
	"github.com/mcpchaos/mcpchaos/proxy/upstream"
)

// Options configures a Proxy beyond its config file.
type Options struct {
	// Knobs bounds everything; default knobs.Load(os.Getenv).
	Knobs *knobs.Values
	// Logger; default discards.
	Logger *slog.Logger
	// Getenv resolves tokenEnv and apiKeyEnv; default os.Getenv.
	Getenv func(string) string
	// Failpoints arms chaos failpoints inside handlers; nil in production.
	Failpoints *failpoint.Set
	// ServersFile persists the servers an operator creates, replaces and
	// deletes through /api/v1/servers (config.ServersFile names it beside
	// the config); read at start. "": changes last until the proxy stops.
	ServersFile string
	// AuditStore, when set, is the audit store instead of the one the
	// config's audit DSN names: for specs that must stall or watch the store
	// (the audit knobs). The proxy closes it.
	AuditStore audit.Store
}

// Proxy is a configured mcplocal. Start serves it; Close stops it.
type Proxy struct {
	cfg      *config.Config
	knobs    knobs.Values
	logger   *slog.Logger
	readyLog everySecond // /readyz's lines about a failing store
	stopping atomic.Bool // Close began: new requests are refused (stopping.go)
	store    audit.Store
	rec      *audit.Recorder
	sessions *session.Registry
	entry    *entry.Handler
	projects map[string]*project.Project
	handler  http.Handler
	llm      *llm.Adapter // nil: no LLM configured
	pause    *pause.Queue // projects an operator paused (mcpctl pause)
	// users maps a bearer token to its user; admins are the users who read
	// every audit row. With no users configured the API is open (one local user).
	users  map[string]string
	admins map[string]bool
	// upHeaders are the resolved upstream headers: project -> server -> headers.
	upHeaders map[string]map[string]http.Header
	getenv    func(string) string // resolves the servers API's header references

	serversMu   sync.Mutex // guards cfg.Projects[*].Servers, changed by /api/v1/servers
	pauseMu     sync.Mutex // orders pause changes: this proxy's own (pauseapi.go) and other replicas' (replicas.go)
	serversFile string

	mu     sync.Mutex
	srv    *http.Server
	ln     net.Listener
	served chan struct{}
	prober *health.Prober // probes upstreams while serving
	// connsKnob is MCPCTL_CONNS_MAX as set; knobs.ConnsMax is the cap in
	// force, clamped below fdLimit (ClampConns).
	connsKnob int64
	fdLimit   uint64
	// stopJanitor ends the idle-session janitor; janitorDone closes when it has.
	stopJanitor context.CancelFunc
	janitorDone chan struct{}
	// shared keeps this proxy in step with the other replicas of its
	// PostgreSQL store (replicas.go); nil without such a store.
	shared *shared.Sync
}

// New builds a proxy from cfg. It opens the audit store but connects to no
// upstream until a client needs it.
func New(ctx context.Context, cfg *config.Config, o Options) (*Proxy, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.Logger = slog.New(redact.Handler(o.Logger.Handler())) // no DSN password or URL key reaches a log
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	var kv knobs.Values
	if o.Knobs != nil {
		kv = *o.Knobs
	} else {
		v, err := knobs.Load(o.Getenv)
		if err != nil {
			return nil, err
		}
		kv = v
	}
	// No log line keeps a string a request or an upstream made longer than
	// MCPCTL_MAX_STORED_STRING_BYTES.
	o.Logger = slog.New(bound.Handler(o.Logger.Handler(), int(kv.MaxStoredStringBytes)))
	connsKnob, fds := kv.ConnsMax, fdLimit()
	kv.ConnsMax, _ = ClampConns(kv.ConnsMax, fds)
	if o.ServersFile != "" {
		replaced, ignored, err := cfg.OverlayServers(o.ServersFile)
		if err != nil {
			return nil, err
		}
		if len(replaced) > 0 {
			o.Logger.Info("servers managed by mcpctl replace the config's", "file", o.ServersFile, "projects", replaced)
		}
		if len(ignored) > 0 {
			o.Logger.Warn("servers file names projects the config does not have; ignored", "file", o.ServersFile, "projects", ignored)
		}
	}
	holdSecrets(cfg, o.Getenv)
	var store audit.Store
	switch {
	case o.AuditStore != nil:
		store = o.AuditStore
	case cfg.Audit == "memory":
		store = audit.NewMemory()
	default:
		s, err := audit.Open(ctx, cfg.Audit)
		if err != nil {
			return nil, err
		}
		store = s
	}
	p := &Proxy{
		cfg: cfg, knobs: kv, logger: o.Logger, store: store, connsKnob: connsKnob, fdLimit: fds,
		rec: audit.NewRecorder(store, audit.WithWriteTimeout(kv.AuditWriteTimeout), audit.WithLogger(o.Logger),
			audit.WithBatchSize(int(kv.AuditBatchMax)), audit.WithBatchWait(kv.AuditBatchWait), audit.WithMaxString(int(kv.MaxStoredStringBytes))),
		sessions:    session.NewRegistry(session.Limits{MaxTotal: kv.SessionsMax, MaxPerUser: kv.SessionsPerUserMax, Idle: kv.SessionIdle}),
		projects:    map[string]*project.Project{},
		serversFile: o.ServersFile,
		pause:       pause.New(kv.PauseMaxWait, kv.PauseQueueMax),
		admins:      map[string]bool{},
		upHeaders:   map[string]map[string]http.Header{},
		getenv:      o.Getenv,
	}
	users := map[string]string{}
	names := make([]string, 0, len(cfg.Users))
	for name := range cfg.Users {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		u := cfg.Users[name]
		if tok := u.Resolve(o.Getenv); tok != "" {
			if other, dup := users[tok]; dup {
				_ = p.Close(ctx)
				return nil, fmt.Errorf("users %s and %s have the same token: each user needs a token of their own, or one would act as the other", other, name)
			}
			users[tok] = name
			if u.Admin {
				p.admins[name] = true
			}
		} else {
			o.Logger.Warn("user has no token; it cannot authenticate", "user", name, "tokenEnv", u.TokenEnv)
		}
	}
	p.users = users
	if cfg.LLM != nil {
		a, err := llm.New(*cfg.LLM, kv, llm.WithGetenv(o.Getenv))
		if err != nil {
			_ = p.Close(ctx)
			return nil, err
		}
		p.llm = a
	}
	cache := stage.NewCache(stage.CacheEntries)
	limit := upstream.NewLimit(kv.UpstreamSessionsMax) // shared by every project
	routes := map[string]entry.Project{}
	for name, pc := range cfg.Projects {
		servers := map[string]string{}
		headers := map[string]http.Header{}
		for sn, s := range pc.Servers {
			servers[sn] = s.URL
			for hn, h := range s.Headers {
				v := h.Resolve(o.Getenv)
				if v == "" {
					_ = p.Close(ctx)
					return nil, fmt.Errorf("projects.%s.servers.%s.headers.%s: $%s is not set", name, sn, hn, h.ValueEnv)
				}
				if headers[sn] == nil {
					headers[sn] = http.Header{}
				}
				headers[sn].Set(hn, v)
				redact.Hold(v) // a servers file's headers too, known only now
			}
		}
		p.upHeaders[name] = headers
		pages := stage.NewPages()
		pipe, err := stage.NewPipeline(pc.Pipeline, &stage.Shared{LLM: p.llm, Knobs: kv, Cache: cache, Pages: pages, Audit: p.rec})
		if err != nil {
			_ = p.Close(ctx)
			return nil, fmt.Errorf("projects.%s.%w", name, err)
		}
		var g *gate.Gate
		if pc.Gate.Enabled {
			g = gate.New(pc.Prompts, p.llm, kv.GateLLMTimeout, p.rec)
		}
		tbl := p.sessions.Table(name)
		pr := project.New(name, project.Options{
			Servers: servers, Headers: headers, NoPrefix: pc.Prefix != nil && !*pc.Prefix, UpstreamSessions: limit,
			Sessions: tbl, Audit: p.rec, Knobs: kv, Logger: o.Logger,
			Failpoints: o.Failpoints, Pipeline: pipe, Pages: pages, Gate: g, Pause: p.pause,
			Relay: cfg.RelayOn(),
		})
		p.projects[name] = pr
		routes[name] = entry.Project{P: pr, RequireAuth: cfg.AuthRequired(pc), Sessions: tbl}
	}
	mux := http.NewServeMux()
	p.entry = entry.New(entry.Options{
		Projects: routes, Users: users, Registry: p.sessions, Records: store, RecordTimeout: kv.AuditWriteTimeout,
		Audit: p.rec, Strict: cfg.Sessions.Strict, Logger: o.Logger, MaxBodyBytes: kv.MaxBodyBytes,
		BatchMax: kv.BatchMax, MaxNameBytes: kv.MaxNameBytes,
	})
	p.startShared(ctx) // a replica starts with the others' pause state and servers
	mux.Handle("/projects/{project}/mcp", p.entry)
	mux.HandleFunc("GET /api/v1/audit", p.api(p.serveAudit))
	ch := &chat.Handler{LLM: p.llm, Budget: kv.ChatBudget, Audit: p.rec, Logger: o.Logger}
	if len(cfg.Users) > 0 {
		ch.Authenticate = func(r *http.Request) (string, bool) { return entry.Authenticate(r, users) }
	}
	mux.Handle("POST /api/v1/chat", requireJSON(ch))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "live"})
	})
	mux.HandleFunc("GET /readyz", p.serveReady)
	mux.HandleFunc("GET /api/v1/instances", p.api(p.serveInstances))
	mux.HandleFunc("POST /api/v1/projects/{project}/pause", p.servePause)
	mux.HandleFunc("POST /api/v1/projects/{project}/resume", p.servePause)
	mux.HandleFunc("GET /api/v1/servers", p.serveServers)
	mux.HandleFunc("POST /api/v1/servers", p.serveServers)
	mux.HandleFunc("PUT /api/v1/servers/{project}/{server}", p.serveServers)
	mux.HandleFunc("DELETE /api/v1/servers/{project}/{server}", p.serveServers)
	mux.HandleFunc("POST /api/v1/servers/{project}/{server}/check", p.serveServerCheck)
	mux.HandleFunc("GET /api/v1/replay/context", p.serveReplayContext)
	hosts := slices.Clone(cfg.AllowedHosts)
	if h, _, err := net.SplitHostPort(cfg.Listen); err == nil && h != "" && !net.ParseIP(h).IsUnspecified() {
		hosts = append(hosts, h)
	}
	p.handler = origin.Guard(p.refuseWhileStopping(mux), origin.Options{Origins: cfg.AllowedOrigins, Hosts: hosts, OnRefuse: refuseOrigin})
	return p, nil
}

// Handler is the proxy's whole HTTP surface.
func (p *Proxy) Handler() http.Handler { return p.handler }

// RelayedCalls is how many tools/calls the raw relay answered, over every
// project (on unless the config says `relay: false`).
func (p *Proxy) RelayedCalls() int64 {
	var n int64
	for _, pr := range p.projects {
		n += pr.Relayed()
	}
	return n
}

// Knobs are the bounds this proxy runs with.
func (p *Proxy) Knobs() knobs.Values { return p.knobs }

// Sessions is the proxy's session registry (read it; do not change it).
func (p *Proxy) Sessions() *session.Registry { return p.sessions }

// AuditStats are the audit writer's counters: rows written, dropped (queue
// full) and failed since the proxy started.
func (p *Proxy) AuditStats() audit.RecorderStats { return p.rec.Stats() }

// ConnsLimit says how the connection cap in force (Knobs().ConnsMax) was
// found: MCPCTL_CONNS_MAX as set and the process's limit of open files (0:
// unknown); the cap is below the knob when the fd limit clamped it.
func (p *Proxy) ConnsLimit() (knob int64, fdLimit uint64) { return p.connsKnob, p.fdLimit }

// FlushAudit waits until every audit row recorded so far is written.
func (p *Proxy) FlushAudit(ctx context.Context) error { return p.rec.Flush(ctx) }

// Start listens on addr ("" means the config's listen) and serves in the
// background. Use Addr for the bound address.
func (p *Proxy) Start(addr string) error {
	if addr == "" {
		addr = p.cfg.Listen
	}
	inner, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	// A connection reaches the server with its first byte: until then it is
	// idle, not slow (proxy/lazyaccept; found by the 100,000-request soak).
	readHeader := readHeaderTimeout(p.knobs)
	ln := lazyaccept.New(inner, lazyaccept.Options{Idle: p.knobs.IdleConnTimeout, Max: int(p.knobs.ConnsMax),
		Evict: readHeader, Refusal: refuseConn(p.knobs.ConnsMax, p.logger)})
	srv := &http.Server{
		Handler:           p.handler,
		ReadHeaderTimeout: readHeader,
		ReadTimeout:       readTimeout(p.knobs),
		IdleTimeout:       p.knobs.IdleConnTimeout,
		MaxHeaderBytes:    int(p.knobs.MaxHeaderBytes),
		ErrorLog:          slog.NewLogLogger(p.logger.Handler(), slog.LevelDebug),
	}
	served := make(chan struct{})
	prober := health.StartCutting(p.healthTargets(), p.knobs.UpstreamConnect, p.knobs.ShutdownGrace, int(p.knobs.MaxStoredStringBytes))
	p.prune(context.Background()) // expired tombstones are gone before the first request
	jctx, stop := context.WithCancel(context.Background())
	jdone := make(chan struct{})
	go p.janitor(jctx, jdone)
	if p.shared != nil {
		p.shared.Start()
	}
	p.mu.Lock()
	p.srv, p.ln, p.served, p.prober = srv, ln, served, prober
	p.stopJanitor, p.janitorDone = stop, jdone
	p.mu.Unlock()
	go func() {
		defer close(served)
		// net/http's own refusals (431, 400) are JSON-RPC errors too.
		if err := srv.Serve(rawrefusal.Listener{Listener: ln}); err != nil && !errors.Is(err, http.ErrServerClosed) {
			p.logger.Error("serve", "err", err)
		}
	}()
	return nil
}

// Addr is the address Start bound, or "" before Start.
func (p *Proxy) Addr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		return ""
	}
	return p.ln.Addr().String()
}

// Close stops serving (in-flight requests get the shutdown grace knob),
// closes every session and upstream, flushes the audit trail and closes the
// store. Close may be called more than once.
func (p *Proxy) Close(ctx context.Context) error {
	var errs []error
	p.drainBeforeStop(ctx)
	p.mu.Lock()
	srv, served, prober := p.srv, p.served, p.prober
	stopJanitor, janitorDone := p.stopJanitor, p.janitorDone
	p.srv, p.prober, p.stopJanitor = nil, nil, nil
	p.mu.Unlock()
	if prober != nil {
		prober.Stop()
	}
	if p.shared != nil {
		p.shared.Stop()
	}
	p.pause.Close() // held requests are answered now, not at MCPCTL_PAUSE_MAX_WAIT_MS
	if stopJanitor != nil {
		stopJanitor()
		<-janitorDone
	}
	if srv != nil {
		// In-flight requests get the grace; those still running when it is
		// nearly spent are answered ("shutting down") before the connections
		// close, so no client meets an EOF and their rows say so.
		grace := p.knobs.ShutdownGrace
		margin := shutdownMargin(grace)
		sctx, cancel := context.WithTimeout(ctx, grace-margin)
		err := srv.Shutdown(sctx)
		cancel()
		if err != nil {
			p.entry.AnswerInFlight()
			sctx, cancel = context.WithTimeout(ctx, margin)
			if err := srv.Shutdown(sctx); err != nil {
				_ = srv.Close() // long-lived SSE streams do not end by themselves
			}
			cancel()
		}
		<-served
	}
	for _, pr := range p.projects {
		pr.Close()
	}
	if p.llm != nil {
		p.llm.Close()
	}
	if p.rec != nil {
		if err := p.rec.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("audit recorder: %w", err))
		}
		if err := p.store.Close(); err != nil {
			errs = append(errs, fmt.Errorf("audit store: %w", err))
		}
		p.rec = nil
	}
	return errors.Join(errs...)
}

// healthTargets lists every configured upstream server with its probe.
func (p *Proxy) healthTargets() []health.Target {
	p.serversMu.Lock()
	defer p.serversMu.Unlock()
	var out []health.Target
	for pn, pc := range p.cfg.Projects {
		for sn, s := range pc.Servers {
			out = append(out, health.Target{Project: pn, Server: sn, URL: s.URL, Check: s.HealthCheck, Headers: p.upHeaders[pn][sn]})
		}
	}
	return out
}

func (p *Proxy) instances() []health.Instance {
	p.mu.Lock()
	prober := p.prober
	p.mu.Unlock()
	if prober == nil {
		return []health.Instance{}
	}
	return prober.Instances()
}

// serveInstances answers GET /api/v1/instances: every upstream's health.
// An upstream's lastError is an operator's: it carries a service's own words
// (an internal body's excerpt, say), so only an admin (or the one local
// user of a proxy without users) sees it; any other token holder sees the
// status.
func (p *Proxy) serveInstances(w http.ResponseWriter, r *http.Request) {
	ins := p.instances()
	admin := callerOf(r.Context()).admin
	for i := range ins {
		ins[i].Paused = p.pause.Status(ins[i].Project).Paused
		ins[i].LastError, ins[i].Note = redact.Text(ins[i].LastError), redact.Text(ins[i].Note)
		if !admin {
			ins[i].LastError = ""
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"instances": ins, "paused": p.pausedProjects()})
}

// serveReady answers GET /readyz: ready when the audit store answers (for
// replicas, the store they share) and no configured server is unhealthy (or
// misconfigured); the body says which is not.
func (p *Proxy) serveReady(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	prober := p.prober
	p.mu.Unlock()
	if prober == nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "not serving"})
		return
	}
	sctx, cancel := context.WithTimeout(r.Context(), p.knobs.ReadyTimeout) // a query: not the write timeout
	_, err := p.store.Query(sctx, audit.Filter{Trace: "READYZ00", Limit: 1})
	cancel()
	if err != nil {
		// /readyz is open to anyone who reaches the proxy: it says the store
		// fails, never the store's own words (a database's error names its
		// host and user); the log has them, one line a second at most.
		what := "failing (the proxy's log says why)"
		if errors.Is(err, context.DeadlineExceeded) {
			what = fmt.Sprintf("not answering within %v (MCPCTL_READY_TIMEOUT_MS)", p.knobs.ReadyTimeout)
		}
		if p.readyLog.allow() {
			p.logger.Warn("not ready: the audit store fails", "err", redact.Text(err.Error()))
		}
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "not ready", "auditStore": what})
		return
	}
	if bad := prober.NotReady(); len(bad) > 0 {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "not ready", "servers": bad, "paused": p.pausedProjects()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ready", "paused": p.pausedProjects()})
}

// serveAudit answers GET /api/v1/audit?trace=CODE or ?session=ID.
func (p *Proxy) serveAudit(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := audit.Filter{Trace: q.Get("trace"), Session: q.Get("session")}
	if f.Trace == "" && f.Session == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "give ?trace=CODE or ?session=ID"})
		return
	}
	if f.Trace != "" && !trace.Valid(f.Trace) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("%q is not a trace code (8 Crockford base32 characters)", f.Trace)})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), p.knobs.AuditQueryTimeout)
	defer cancel()
	_ = p.rec.Flush(ctx) // rows of a request that just answered should be visible
	rows, err := p.store.Query(ctx, f)
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
		return
	}
	rows = p.visible(r.Context(), rows)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Start.Before(rows[j].Start) })
	if rows == nil {
		rows = []audit.Row{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"rows": rows})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// holdSecrets tells proxy/redact every secret value cfg gives the proxy, so
// that none leaves it in any text, whoever echoes it: the users' tokens, the
// LLM providers' keys (API keys and OAuth tokens), the upstream servers'
// header values and URL keys, the audit store's password.
func holdSecrets(cfg *config.Config, getenv func(string) string) {
	var vals []string
	for _, u := range cfg.Users {
		vals = append(vals, u.Resolve(getenv))
	}
	if cfg.LLM != nil {
		for _, pc := range cfg.LLM.Providers {
			vals = append(vals, pc.APIKey)
			if pc.APIKeyEnv != "" {
				vals = append(vals, getenv(pc.APIKeyEnv))
			}
		}
	}
	for _, pc := range cfg.Projects {
		for _, sv := range pc.Servers {
			vals = append(vals, redact.SecretsOf(sv.URL)...)
			for _, h := range sv.Headers {
				vals = append(vals, h.Resolve(getenv))
			}
		}
	}
	vals = append(vals, redact.SecretsOf(cfg.Audit)...)
	redact.Hold(vals...)
}
