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
	if user, refuse := p.admin(r); refuse != 0 {
		refuseAdmin(w, refuse, "pausing and resuming a project", user)
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
	pausing := strings.HasSuffix(r.URL.Path, "/pause")
	state := runningValue
	if pausing {
		state = pausedValue
	}
	// Every replica holds the project, or none does: the change is shared
	// before it is made here.
	p.pauseMu.Lock()
	defer p.pauseMu.Unlock()
	if err := p.share(r.Context(), pauseKey(name), state); err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
		return
	}
	var changed bool
	if pausing {
		changed = p.pause.Pause(name)
	} else {
		changed = p.pause.Resume(name)
	}
	writeJSON(w, http.StatusOK, struct {
		pause.Status
		Changed bool `json:"changed"`
	}{p.pause.Status(name), changed})
}

// admin authorises an admin API call. With no users configured, anyone who
// can reach the API (loopback by default, see proxy/origin) is the operator;
// otherwise only a user whose config entry says admin: true. It returns that
// user, or the status to refuse with: 401 without a known token, 403 for a
// known user who is not an admin. Every admin API (pause, servers) asks here.
func (p *Proxy) admin(r *http.Request) (user string, refuse int) {
	if len(p.cfg.Users) == 0 {
		return "", 0
	}
	user, ok := entry.Authenticate(r, p.users)
	switch {
	case !ok:
		return "", http.StatusUnauthorized
	case !p.cfg.Users[user].Admin:
		return user, http.StatusForbidden
	}
	return user, 0
}

// refuseAdmin answers an admin API call that admin refused.
func refuseAdmin(w http.ResponseWriter, status int, what, user string) {
	if status == http.StatusForbidden {
		writeJSON(w, status, map[string]string{"error": fmt.Sprintf("%s requires an admin user: %s is not one (set admin: true on the user in the config)", what, user)})
		return
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="mcplocal"`)
	writeJSON(w, status, map[string]string{"error": what + " requires an admin bearer token (Authorization: Bearer <token> of a user with admin: true)"})
}

// pausedProjects lists the paused projects for /readyz and /api/v1/instances.
func (p *Proxy) pausedProjects() []pause.Status {
	out := p.pause.Paused()
	if out == nil {
		out = []pause.Status{}
	}
	return out
}
