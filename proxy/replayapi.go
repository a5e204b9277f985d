package proxy

import (
	"net/http"

	"github.com/mcpchaos/mcpchaos/proxy/bundle"
)

// serveReplayContext answers GET /api/v1/replay/context[?private=true], an
// admin's: the proxy's part of a replay bundle (its version, the knob values
// in force, the config with every secret removed). private=true keeps the
// private texts (prompts, health-check arguments); secrets never leave.
func (p *Proxy) serveReplayContext(w http.ResponseWriter, r *http.Request) {
	if user, refuse := p.admin(r); refuse != 0 {
		refuseAdmin(w, refuse, "a replay bundle", user)
		return
	}
	p.serversMu.Lock()
	ctx, err := bundle.NewContext(p.cfg, p.knobs, bundle.Options{Private: r.URL.Query().Get("private") == "true"})
	p.serversMu.Unlock()
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, ctx)
}
