package proxy

import (
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/mcpchaos/mcpchaos/proxy/entry"
	"github.com/mcpchaos/mcpchaos/proxy/pause"
)

// servePause answers POST /api/v1/projects/{project}/pause and /resume:
// pause holds the project's requests in the pause queue, resume releases
// them. Both answer the project's pause state; repeating one is harmless
// ("changed": false).
func (p *Proxy) servePause(w http.ResponseWriter, r *http.Request) {
	if user, ok := p.admin(r); !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcplocal"`)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "pausing and resuming a project requires an admin bearer token (Authorization: Bearer <token>)"})
		return
	} else if user != "" {
		p.logger.Info("admin", "user", user, "path", r.URL.Path)
	}
	name := r.PathValue("project")
	if _, known := p.projects[name]; !known {
		known := make([]string, 0, len(p.projects))
		for n := range p.projects {
			known = append(known, n)
		}
		sort.Strings(known)
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("unknown project %q (projects: %s)", name, strings.Join(known, ", "))})
		return
	}
	var changed bool
	if strings.HasSuffix(r.URL.Path, "/pause") {
		changed = p.pause.Pause(name)
	} else {
		changed = p.pause.Resume(name)
	}
	writeJSON(w, http.StatusOK, struct {
		pause.Status
		Changed bool `json:"changed"`
	}{p.pause.Status(name), changed})
}

// admin authorises an admin API call: with no users configured, anyone who
// can reach the API; otherwise a request carrying a configured user's bearer
// token. It returns that user. Kept in one place so a per-user admin flag
// (config users' admin: true) only has to change this function.
func (p *Proxy) admin(r *http.Request) (string, bool) {
	if len(p.cfg.Users) == 0 {
		return "", true
	}
	return entry.Authenticate(r, p.users)
}

// pausedProjects lists the paused projects for /readyz and /api/v1/instances.
func (p *Proxy) pausedProjects() []pause.Status {
	out := p.pause.Paused()
	if out == nil {
		out = []pause.Status{}
	}
	return out
}
