package harness

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Live is a proxy already running somewhere, named by its MCP endpoint's
// URL (`--target url:https://…/mcp`). The harness starts, restarts and
// injects nothing into it, and its upstreams are not the harness's fakes:
// only scenarios with no fault whose operations only read run against it
// (see catalogue.Scenario.NotApplicable); the rest are not applicable.
type Live struct {
	// MCP is the MCP endpoint's full URL.
	MCP string
}

var (
	_ Target     = (*Live)(nil)
	_ Endpointer = (*Live)(nil)
	_ ReadOnly   = (*Live)(nil)
)

// ReadOnly is implemented by targets the harness may only read from: no
// fault can be injected and no tool that writes may be called.
type ReadOnly interface {
	ReadOnly() string // why, for not-applicable verdicts
}

// ParseLive checks a live endpoint URL (http or https, with a host).
func ParseLive(endpoint string) (*Live, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("url:%s: want the proxy's MCP endpoint, http(s)://HOST/PATH", endpoint)
	}
	return &Live{MCP: endpoint}, nil
}

// Name implements Target.
func (l *Live) Name() string { return "url:" + l.MCP }

// Start implements Target: the proxy already runs; nothing is started.
func (l *Live) Start(context.Context, Spec) error { return nil }

// URL implements Target: the endpoint's scheme and host.
func (l *Live) URL() string {
	u, err := url.Parse(l.MCP)
	if err != nil {
		return strings.TrimSuffix(l.MCP, "/")
	}
	return u.Scheme + "://" + u.Host
}

// Endpoint implements Endpointer: the given endpoint, whatever the project.
func (l *Live) Endpoint(string) string { return l.MCP }

// Restart implements Target: a live proxy is not the harness's to restart.
func (l *Live) Restart(context.Context) error {
	return errors.New(l.Name() + ": a live target cannot be restarted")
}

// Stop implements Target: nothing to stop.
func (l *Live) Stop(context.Context) error { return nil }

// ReadOnly implements ReadOnly.
func (l *Live) ReadOnly() string {
	return "target " + l.Name() + " is live: read-only, no fault injection"
}

// Has implements Capabilities: a live proxy claims none.
func (l *Live) Has(string) bool { return false }
