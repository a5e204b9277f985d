package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/health"
	"github.com/mcpchaos/mcpchaos/proxy/redact"
	"github.com/mcpchaos/mcpchaos/proxy/upstream"
)

// serveServers answers /api/v1/servers, the servers of every project as
// resources an operator manages while the proxy runs:
//
//	GET    /api/v1/servers[?project=P]      list them (config.ServerSpec)
//	POST   /api/v1/servers[?force=true]     create one; force replaces it
//	PUT    /api/v1/servers/{project}/{name} create or replace one
//	DELETE /api/v1/servers/{project}/{name} delete one
//
// A change is validated (the field at fault named), its readiness probe's
// tool checked against the server's tools/list, persisted to the servers
// file, and then applied without a restart: the project's clients get
// list_changed and the health prober probes the new server.
func (p *Proxy) serveServers(w http.ResponseWriter, r *http.Request) {
	if user, refuse := p.admin(r); refuse != 0 {
		refuseAdmin(w, refuse, "managing servers", user)
		return
	} else if user != "" && r.Method != http.MethodGet {
		p.logger.Info("admin", "user", user, "method", r.Method, "path", r.URL.Path)
	}
	switch r.Method {
	case http.MethodGet:
		proj := r.URL.Query().Get("project")
		if proj != "" && p.projects[proj] == nil {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": p.unknownProject(proj)})
			return
		}
		p.serversMu.Lock()
		specs := p.cfg.Specs(proj)
		p.serversMu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"servers": specs})
	case http.MethodDelete:
		status, err := p.deleteServer(r.Context(), r.PathValue("project"), r.PathValue("server"))
		if err != nil {
			writeJSON(w, status, map[string]string{"error": err.Error()})
			return
		}
		writeJSON(w, status, map[string]any{"deleted": true, "project": r.PathValue("project"), "name": r.PathValue("server"), "persisted": p.serversFile != ""})
	default:
		var spec config.ServerSpec
		dec := json.NewDecoder(io.LimitReader(r.Body, p.knobs.MaxBodyBytes))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&spec); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("the body is not a server spec (name, project, url, healthCheck): %v", err)})
			return
		}
		force := r.Method == http.MethodPut || r.URL.Query().Get("force") == "true"
		if r.Method == http.MethodPut {
			if spec.Project == "" {
				spec.Project = r.PathValue("project")
			}
			if spec.Name == "" {
				spec.Name = r.PathValue("server")
			}
			if spec.Project != r.PathValue("project") || spec.Name != r.PathValue("server") {
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("the body names server %s/%s but the path %s/%s", spec.Project, spec.Name, r.PathValue("project"), r.PathValue("server"))})
				return
			}
		}
		status, outcome, err := p.putServer(r.Context(), spec, force)
		if err != nil {
			writeJSON(w, status, map[string]string{"error": err.Error()})
			return
		}
		writeJSON(w, status, map[string]any{"server": spec, "outcome": outcome, "persisted": p.serversFile != ""})
	}
}

func (p *Proxy) unknownProject(name string) string {
	known := make([]string, 0, len(p.projects))
	for n := range p.projects {
		known = append(known, n)
	}
	sort.Strings(known)
	return fmt.Sprintf("unknown project %q (projects: %s)", name, strings.Join(known, ", "))
}

// Outcomes of putServer.
const (
	outcomeCreated   = "created"
	outcomeReplaced  = "replaced"
	outcomeUnchanged = "unchanged"
)

// putServer creates or (with force) replaces one server. It returns the
// HTTP status to answer and what happened (outcomeCreated, ...).
func (p *Proxy) putServer(ctx context.Context, spec config.ServerSpec, force bool) (int, string, error) {
	switch {
	case spec.Project == "":
		return http.StatusUnprocessableEntity, "", errors.New("project: required")
	case spec.Name == "":
		return http.StatusUnprocessableEntity, "", errors.New("name: required")
	case p.projects[spec.Project] == nil:
		return http.StatusNotFound, "", fmt.Errorf("project: %s", p.unknownProject(spec.Project))
	}
	p.serversMu.Lock()
	defer p.serversMu.Unlock()
	old := p.cfg.Projects[spec.Project].Servers[spec.Name]
	if old != nil && !force {
		return http.StatusConflict, "", fmt.Errorf("server %s already exists in project %s; replace it with --force (or mcpctl apply)", spec.Name, spec.Project)
	}
	srv := &config.Server{URL: spec.URL, HealthCheck: spec.HealthCheck}
	// Credentials are bound to their server's URL: a spec keeps the old
	// headers only when it keeps the URL and names none; a new URL gets
	// exactly the headers the spec names (none: none).
	switch {
	case spec.Headers != nil:
		srv.Headers = map[string]config.Header{}
		for n, h := range spec.Headers {
			srv.Headers[n] = config.Header{ValueEnv: h.ValueEnv}
		}
	case old != nil && old.URL == spec.URL:
		srv.Headers = old.Headers
	}
	hdr, err := p.resolveHeaders(srv.Headers)
	if err != nil {
		return http.StatusUnprocessableEntity, "", err
	}
	cand := p.candidate(spec.Project, func(m map[string]*config.Server) { m[spec.Name] = srv })
	if err := cand.Validate(); err != nil {
		return http.StatusUnprocessableEntity, "", err
	}
	if err := p.verifyProbe(ctx, spec); err != nil {
		return http.StatusUnprocessableEntity, "", err
	}
	if old != nil && reflect.DeepEqual(old, srv) {
		return http.StatusOK, outcomeUnchanged, nil // nothing to persist or apply
	}
	if err := p.shareServer(ctx, spec.Project, spec.Name, srv); err != nil {
		return http.StatusServiceUnavailable, "", err
	}
	if err := p.commitServers(cand); err != nil {
		return http.StatusInternalServerError, "", err
	}
	p.putServerLocal(spec.Project, spec.Name, srv, hdr)
	if old == nil {
		return http.StatusCreated, outcomeCreated, nil
	}
	return http.StatusOK, outcomeReplaced, nil
}

// deleteServer deletes one server of a project.
func (p *Proxy) deleteServer(ctx context.Context, project, name string) (int, error) {
	if p.projects[project] == nil {
		return http.StatusNotFound, errors.New(p.unknownProject(project))
	}
	p.serversMu.Lock()
	defer p.serversMu.Unlock()
	if p.cfg.Projects[project].Servers[name] == nil {
		return http.StatusNotFound, fmt.Errorf("project %s has no server %q", project, name)
	}
	cand := p.candidate(project, func(m map[string]*config.Server) { delete(m, name) })
	if err := cand.Validate(); err != nil {
		return http.StatusUnprocessableEntity, err
	}
	if err := p.shareServer(ctx, project, name, nil); err != nil {
		return http.StatusServiceUnavailable, err
	}
	if err := p.commitServers(cand); err != nil {
		return http.StatusInternalServerError, err
	}
	p.removeServerLocal(project, name)
	return http.StatusOK, nil
}

// candidate is the config as it would be with project's servers changed by
// edit; the live config is not touched. Called with serversMu held.
func (p *Proxy) candidate(project string, edit func(map[string]*config.Server)) *config.Config {
	cand := *p.cfg
	cand.Projects = make(map[string]*config.Project, len(p.cfg.Projects))
	for pn, pc := range p.cfg.Projects {
		cand.Projects[pn] = pc
	}
	pc := *p.cfg.Projects[project]
	pc.Servers = make(map[string]*config.Server, len(pc.Servers)+1)
	for sn, s := range p.cfg.Projects[project].Servers {
		pc.Servers[sn] = s
	}
	edit(pc.Servers)
	cand.Projects[project] = &pc
	return &cand
}

// commitServers persists cand's servers (when the proxy has a servers file)
// and makes them the live config's. Persisting comes first: a change that
// cannot be saved is refused rather than lost at the next restart.
func (p *Proxy) commitServers(cand *config.Config) error {
	if p.serversFile != "" {
		if err := cand.SaveServers(p.serversFile); err != nil {
			return fmt.Errorf("the change was not applied: %w", err)
		}
	}
	for pn, pc := range cand.Projects {
		p.cfg.Projects[pn].Servers = pc.Servers
	}
	return nil
}

// probeServer has the running health prober probe t from now on.
func (p *Proxy) probeServer(t health.Target) {
	p.mu.Lock()
	prober := p.prober
	p.mu.Unlock()
	if prober != nil {
		prober.Put(t)
	}
}

// verifyProbe refuses a readiness probe naming a tool the server does not
// expose: such a probe can never pass, and the seed's lesson is that it
// must be caught when configured, not found misconfigured later. The check
// is one tools/list, bounded by the connect knob plus the probe's timeout.
func (p *Proxy) verifyProbe(ctx context.Context, spec config.ServerSpec) error {
	h := spec.HealthCheck
	if h == nil || h.Tool == "" {
		return nil // liveness: nothing to verify
	}
	ctx, cancel := context.WithTimeout(ctx, p.knobs.UpstreamConnect+h.Timeout())
	defer cancel()
	conn := upstream.New(spec.Name, spec.URL, upstream.Options{ConnectTimeout: p.knobs.UpstreamConnect, CallTimeout: h.Timeout(), CloseGrace: p.knobs.ShutdownGrace})
	defer func() { _ = conn.Close() }()
	tools, err := conn.ListTools(ctx)
	if err != nil {
		return fmt.Errorf("healthCheck.tool: cannot verify %q: tools/list on %s failed: %v (omit tool to keep a liveness probe)", h.Tool, spec.URL, err)
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	if !slices.Contains(names, h.Tool) {
		sort.Strings(names)
		return fmt.Errorf("healthCheck.tool: %q is not a tool of server %s (it has: %s); a probe on it could never pass", h.Tool, spec.Name, strings.Join(names, ", "))
	}
	return nil
}

// resolveHeaders reads the values of a server's headers from the proxy's
// environment; a header whose variable is unset, or given inline, is an
// error naming it (the servers file keeps references, never values).
func (p *Proxy) resolveHeaders(hs map[string]config.Header) (http.Header, error) {
	if len(hs) == 0 {
		return nil, nil
	}
	out := http.Header{}
	for n, h := range hs {
		if h.ValueEnv == "" {
			return nil, fmt.Errorf("headers.%s: valueEnv is required (the servers file keeps the variable's name, never a value)", n)
		}
		v := p.getenv(h.ValueEnv)
		if v == "" {
			return nil, fmt.Errorf("headers.%s: $%s is not set in the proxy's environment", n, h.ValueEnv)
		}
		redact.Hold(v)
		out.Set(n, v)
	}
	return out, nil
}
