package proxy

import (
	"context"
	"net/http"

	"github.com/mcpchaos/mcpchaos/proxy/health"
	"github.com/mcpchaos/mcpchaos/proxy/redact"
	"github.com/mcpchaos/mcpchaos/proxy/upstream"
)

// serverCheck is what one check of a configured server found: whether it
// answered initialize and tools/list, with how many tools, or the error.
type serverCheck struct {
	Project  string `json:"project"`
	Name     string `json:"name"`
	URL      string `json:"url"`
	Answered bool   `json:"answered"` // initialize and tools/list
	Tools    int    `json:"tools"`
	Probe    string `json:"probe"`   // health.ProbeName: liveness or readiness
	Healthy  bool   `json:"healthy"` // the probe passed
	Error    string `json:"error,omitempty"`
}

// serveServerCheck answers POST /api/v1/servers/{project}/{server}/check:
// the server's probe is run once as the prober runs it (initialize, then
// tools/list, then a readiness probe's tools/call, with the config's
// headers), on a session of its own closed at once, bounded by the connect
// knob plus the server's probe timeout. What it found is the answer (200
// whether or not the server answered); an unknown server is a 404. mcpctl create server runs it after
// a change, and again and again with --wait. Not a change: no admin line.
func (p *Proxy) serveServerCheck(w http.ResponseWriter, r *http.Request) {
	if user, refuse := p.admin(r); refuse != 0 {
		refuseAdmin(w, refuse, "checking servers", user)
		return
	}
	project, name := r.PathValue("project"), r.PathValue("server")
	if p.projects[project] == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": p.unknownProject(project)})
		return
	}
	p.serversMu.Lock()
	srv := p.cfg.Projects[project].Servers[name]
	var url string
	if srv != nil {
		url = srv.URL
	}
	p.serversMu.Unlock()
	if srv == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "project " + project + " has no server \"" + name + "\""})
		return
	}
	bound := serverCheckBound(p.knobs.UpstreamConnect, srv.HealthCheck.Timeout())
	ctx, cancel := context.WithTimeout(r.Context(), bound)
	defer cancel()
	conn := upstream.New(name, url, upstream.Options{Headers: p.upHeaders[project][name],
		ConnectTimeout: p.knobs.UpstreamConnect, CallTimeout: srv.HealthCheck.Timeout(), CloseGrace: p.knobs.ShutdownGrace})
	defer func() { _ = conn.Close() }()
	t := health.Target{Project: project, Server: name, URL: url, Check: srv.HealthCheck, Headers: p.upHeaders[project][name]}
	out := serverCheck{Project: project, Name: name, URL: redact.Text(url), Probe: health.ProbeName(t)}
	tools, err := health.Once(ctx, t, conn)
	out.Answered, out.Healthy = tools >= 0, err == nil
	out.Tools = max(tools, 0)
	if err != nil {
		out.Error = redact.Error(err).Error()
	}
	writeJSON(w, http.StatusOK, out)
}
