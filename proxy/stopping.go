package proxy

import (
	"context"
	"net/http"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/entry"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// StoppingText is what a request that reaches a stopping proxy is told, with
// a 503 and Retry-After: it was not acted on, so sending it again (to
// another replica, which a load balancer does on a 503) is safe.
const StoppingText = "mcplocal is stopping: this request was not processed; send it again"

// refuseWhileStopping answers every request that arrives once the proxy
// began to stop (MCPCTL_STOP_DRAIN_MS): /readyz 503 "stopping", so a load
// balancer's health check takes the replica out; /healthz still 200 (the
// process is alive); everything else 503 with Retry-After, not processed.
// The connection is closed after the answer, so the client's next request
// opens a new one (to another replica, behind a balancer).
func (p *Proxy) refuseWhileStopping(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !p.stopping.Load() || r.URL.Path == "/healthz" {
			next.ServeHTTP(w, r)
			return
		}
		if r.URL.Path == "/readyz" {
			p.mu.Lock()
			serving := p.srv != nil
			p.mu.Unlock()
			if !serving { // stopped: "not serving"
				next.ServeHTTP(w, r)
				return
			}
			w.Header().Set("Connection", "close")
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "stopping"})
			return
		}
		w.Header().Set("Connection", "close")
		code := trace.New()
		p.logger.Info("request refused: stopping", "trace", code, "method", r.Method, "path", r.URL.Path)
		w.Header().Set("Retry-After", "1")
		entry.WriteError(w, http.StatusServiceUnavailable, code, StoppingText)
	})
}

// drainBeforeStop marks the proxy stopping and, for MCPCTL_STOP_DRAIN_MS,
// keeps it listening: new requests are refused (refuseWhileStopping) while
// those in flight run on, until a load balancer has taken the replica out.
// The wait ends early when ctx does.
func (p *Proxy) drainBeforeStop(ctx context.Context) {
	p.stopping.Store(true)
	p.mu.Lock()
	serving := p.srv != nil
	p.mu.Unlock()
	if !serving || p.knobs.StopDrain <= 0 {
		return
	}
	p.logger.Info("draining before the stop: new requests are refused with 503", "for", p.knobs.StopDrain)
	t := time.NewTimer(p.knobs.StopDrain)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
