package harness

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// The in-process target starts, restarts on its address and stops as every
// target does; a stalled audit store lasts until the next start.
func TestTheInProcessTargetsLifecycle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	in := &InProcess{}
	if err := in.Restart(ctx); err == nil || !strings.Contains(err.Error(), "restart before start") {
		t.Errorf("restart before start: %v", err)
	}
	if err := in.Stop(ctx); err != nil {
		t.Errorf("stop before start: %v", err)
	}
	if err := in.Ready(ctx); err == nil {
		t.Error("ready before start")
	}
	e := newWorld(t, EnvOptions{Target: in})
	url := in.URL()
	if !strings.HasPrefix(url, "http://127.0.0.1:") || in.Proxy() == nil {
		t.Fatalf("URL %q proxy %v", url, in.Proxy())
	}
	if err := in.Ready(ctx); err != nil {
		t.Errorf("ready: %v", err)
	}
	in.StallAudit()
	if !in.stalled.Load() {
		t.Error("StallAudit did not stall the store")
	}
	if err := in.Ready(ctx); err == nil || !strings.Contains(err.Error(), "/readyz did not answer 200") {
		t.Errorf("ready with its audit store stalled: %v", err)
	}
	p := in.Proxy()
	if err := in.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if in.URL() != url || in.Proxy() == p || in.Proxy() == nil {
		t.Errorf("after a restart: %s, proxy changed %v", in.URL(), in.Proxy() != p)
	}
	if in.stalled.Load() {
		t.Error("the stall outlived the restart")
	}
	if err := in.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if in.Proxy() != nil {
		t.Error("a proxy is left after stop")
	}
	if _, ok := e.LiveSessions(); ok {
		t.Error("a stopped target counts sessions")
	}
	if err := in.Stop(ctx); err != nil {
		t.Errorf("a second stop: %v", err)
	}
	bad := &InProcess{}
	w := e.World.Clone()
	w.Store = "nosuchstore:x"
	if err := bad.Start(ctx, Spec{World: w}); err == nil {
		t.Error("a start with a store that cannot open succeeded")
	}
}

// A twin is a new target of the same kind with the same settings, for
// mcplocal's own targets only.
func TestATwinIsOfTheSameKind(t *testing.T) {
	logger := slog.Default()
	tw, why := Twin(&InProcess{Logger: logger})
	if in, ok := tw.(*InProcess); !ok || why != "" || in.Logger != logger {
		t.Errorf("in-process twin %#v, %q", tw, why)
	}
	var out syncBuffer
	b := &Binary{Path: "/x/mcplocal", Stderr: &out, Env: []string{"A=1"}, MaxLog: 7}
	tw, why = Twin(b)
	if got, ok := tw.(*Binary); !ok || why != "" || got == b || got.Path != b.Path || got.Stderr != b.Stderr || got.MaxLog != 7 || got.Env[0] != "A=1" {
		t.Errorf("binary twin %#v, %q", tw, why)
	}
	live, _ := ParseLive("http://127.0.0.1:1/mcp")
	if tw, why := Twin(live); tw != nil || !strings.Contains(why, "target url:http://127.0.0.1:1/mcp cannot") {
		t.Errorf("live twin %v, %q", tw, why)
	}
}
