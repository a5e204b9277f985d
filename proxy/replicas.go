package proxy

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/health"
	"github.com/mcpchaos/mcpchaos/proxy/shared"
)

// Replicas: proxies whose audit store is one PostgreSQL database form one
// service. Session owners and tombstones are the store's session records
// already (a replica that does not hold a session reads its owner there
// and recreates it for that owner only); what each replica also holds in
// memory, the pause state, the servers managed by mcpctl and its live
// sessions, is kept in step by proxy/shared: a change is written to the
// store first, then applied, and every replica polls the others' changes
// every MCPCTL_SHARED_POLL_MS.

// Keys of the shared state.
const (
	pauseKeyPrefix  = "pause/"
	serverKeyPrefix = "server/"
	pausedValue     = "paused"
	runningValue    = "running"
)

func pauseKey(project string) string { return pauseKeyPrefix + project }

func serverKey(project, name string) string { return serverKeyPrefix + project + "/" + name }

// sharedServer is the value of a server's key: the server, or none once
// deleted.
type sharedServer struct {
	Project string         `yaml:"project"`
	Name    string         `yaml:"name"`
	Server  *config.Server `yaml:"server"`
}

// replicaApplier applies on this proxy what another replica changed.
type replicaApplier struct{ p *Proxy }

func (a replicaApplier) Apply(key, value string, claim func() bool) {
	p := a.p
	switch {
	case strings.HasPrefix(key, pauseKeyPrefix):
		name := strings.TrimPrefix(key, pauseKeyPrefix)
		if p.projects[name] == nil {
			return
		}
		p.pauseMu.Lock()
		defer p.pauseMu.Unlock()
		if !claim() {
			return
		}
		if value == pausedValue {
			p.pause.Pause(name)
		} else {
			p.pause.Resume(name)
		}
	case strings.HasPrefix(key, serverKeyPrefix):
		var s sharedServer
		if err := yaml.Unmarshal([]byte(value), &s); err != nil {
			p.logger.Error("a server in the shared state cannot be read; ignored", "key", key, "err", err)
			return
		}
		if p.projects[s.Project] == nil {
			return
		}
		p.serversMu.Lock()
		defer p.serversMu.Unlock()
		if claim() {
			p.applyServer(s.Project, s.Name, s.Server)
		}
	}
}

func (a replicaApplier) Closed(project, id string) {
	a.p.entry.CloseLive(context.Background(), project, id)
}

// startShared makes p a replica when its audit store is one replicas share,
// and applies the shared state as it is now.
func (p *Proxy) startShared(ctx context.Context) {
	st, ok := shared.Of(p.store)
	if !ok {
		return
	}
	p.shared = shared.New(st, replicaApplier{p}, p.knobs.SharedPoll, p.knobs.AuditWriteTimeout, p.logger)
	p.logger.Info("pause, servers and closed sessions are shared with every replica of this PostgreSQL store", "poll", p.knobs.SharedPoll)
	if err := p.shared.Poll(ctx); err != nil {
		p.logger.Warn("the shared state could not be read at start; the poll will retry", "err", err)
	}
}

// share writes one change for every replica before this proxy applies it.
// Without a shared store it does nothing.
func (p *Proxy) share(ctx context.Context, key, value string) error {
	if p.shared == nil {
		return nil
	}
	if err := p.shared.Put(ctx, key, value); err != nil {
		return fmt.Errorf("the change was not applied: the store the replicas share is unavailable, so the other replicas would not see it (%v); retry later", err)
	}
	return nil
}

// shareServer shares a server's new state (nil: deleted).
func (p *Proxy) shareServer(ctx context.Context, project, name string, srv *config.Server) error {
	if p.shared == nil {
		return nil
	}
	b, err := yaml.Marshal(sharedServer{Project: project, Name: name, Server: srv})
	if err != nil {
		return err
	}
	return p.share(ctx, serverKey(project, name), string(b))
}

// applyServer makes project's server name srv (nil: none) on this proxy, as
// another replica made it: persisted to the servers file if there is one,
// its clients told (list_changed) and the prober updated. A server equal to
// the one in force changes nothing. Called with serversMu held.
func (p *Proxy) applyServer(project, name string, srv *config.Server) {
	old := p.cfg.Projects[project].Servers[name]
	if (old == nil && srv == nil) || (old != nil && srv != nil && reflect.DeepEqual(old, srv)) {
		return
	}
	cand := p.candidate(project, func(m map[string]*config.Server) {
		if srv == nil {
			delete(m, name)
		} else {
			m[name] = srv
		}
	})
	if err := cand.Validate(); err != nil {
		p.logger.Error("a server another replica changed is not valid here; ignored", "project", project, "server", name, "err", err)
		return
	}
	var hdr http.Header
	if srv != nil {
		h, err := p.resolveHeaders(srv.Headers)
		if err != nil {
			p.logger.Error("a server another replica changed cannot be served here; ignored", "project", project, "server", name, "err", err)
			return
		}
		hdr = h
	}
	if err := p.commitServers(cand); err != nil {
		p.logger.Error("a server another replica changed was not saved here", "project", project, "server", name, "err", err)
		return
	}
	if srv == nil {
		p.removeServerLocal(project, name)
		return
	}
	p.putServerLocal(project, name, srv, hdr)
}

// putServerLocal serves server name of project from now on.
func (p *Proxy) putServerLocal(project, name string, srv *config.Server, hdr http.Header) {
	p.mu.Lock()
	if p.upHeaders[project] == nil {
		p.upHeaders[project] = map[string]http.Header{}
	}
	p.upHeaders[project][name] = hdr
	p.mu.Unlock()
	p.projects[project].PutServer(name, srv.URL, hdr)
	p.probeServer(health.Target{Project: project, Server: name, URL: srv.URL, Check: srv.HealthCheck, Headers: hdr})
}

// removeServerLocal stops serving server name of project.
func (p *Proxy) removeServerLocal(project, name string) {
	p.projects[project].RemoveServer(name)
	p.mu.Lock()
	prober := p.prober
	p.mu.Unlock()
	if prober != nil {
		prober.Remove(project, name)
	}
}
