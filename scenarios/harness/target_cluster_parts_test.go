package harness

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeReplica is a replica known by its pid and URL alone.
type fakeReplica struct {
	clusterReplica
	pid int
	url string
}

func (r fakeReplica) PID() int                   { return r.pid }
func (r fakeReplica) URL() string                { return r.url }
func (r fakeReplica) Logs() string               { return "" }
func (r fakeReplica) Stop(context.Context) error { return nil }

// stats serves HAProxy's stats CSV with body.
func stats(t *testing.T, status int, body string) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/stats;csv" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(ts.Close)
	return strings.TrimPrefix(ts.URL, "http://")
}

const statsCSV = "# pxname,svname,qcur,status,weight\n" +
	"mcplocal,FRONTEND,,OPEN,\n" +
	"mcplocal,r1,0,UP,1\n" +
	"mcplocal,r2,0,DOWN,1\n" +
	"other,r3,0,UP,1\n" +
	"mcplocal,BACKEND,0,UP,2\n"

// HAProxy's view is read from its stats: the mcplocal backend's servers
// alone, by name; a replica DOWN there is waited for, and given up on.
func TestBalancerStatesAreTheBackendsServers(t *testing.T) {
	ctx := context.Background()
	hc := &http.Client{Timeout: time.Second}
	got, err := balancerStates(ctx, hc, stats(t, http.StatusOK, statsCSV))
	if err != nil || len(got) != 2 || got["r1"] != "UP" || got["r2"] != "DOWN" {
		t.Errorf("states %v, %v", got, err)
	}
	if _, err := balancerStates(ctx, hc, stats(t, http.StatusServiceUnavailable, statsCSV)); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("a stats page answering 503: %v", err)
	}
	if _, err := balancerStates(ctx, hc, stats(t, http.StatusOK, "")); err == nil {
		t.Error("an empty stats page read")
	}
	if _, err := balancerStates(ctx, hc, "127.0.0.1:1"); err == nil {
		t.Error("a stats page nobody serves read")
	}

	addr := stats(t, http.StatusOK, statsCSV)
	c := &Cluster{stats: addr}
	c.replicas = []clusterReplica{fakeReplica{pid: 10, url: "http://127.0.0.1:11"}, fakeReplica{pid: 0, url: "http://127.0.0.1:12"}}
	if !c.allUpProbe(addr)(ctx, hc) {
		t.Error("r2 is down, not running: every running replica is UP")
	}
	c.replicas[1] = fakeReplica{pid: 20, url: "http://127.0.0.1:12"}
	if c.allUpProbe(addr)(ctx, hc) {
		t.Error("r2 runs and is DOWN: not all up")
	}
	if got := c.ReplicaURLs(); !slices.Equal(got, []string{"http://127.0.0.1:11", "http://127.0.0.1:12"}) {
		t.Errorf("replica URLs %v", got)
	}
	env := c.balancerEnv("127.0.0.1:80", "127.0.0.1:81")
	for _, kv := range []string{"MCPLOCAL_LB_BIND=127.0.0.1:80", "MCPLOCAL_LB_STATS=127.0.0.1:81", "MCPLOCAL_REPLICA_1=127.0.0.1:11", "MCPLOCAL_REPLICA_2=127.0.0.1:12"} {
		if !slices.Contains(env, kv) {
			t.Errorf("HAProxy's environment lacks %s: %v", kv, env)
		}
	}
	if err := c.WaitBalancerUp(ctx, 0); err != nil {
		t.Errorf("r1 is UP: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := c.WaitBalancerUp(short, 1); err == nil || !strings.Contains(err.Error(), "replica r2 not UP") {
		t.Errorf("r2 is DOWN: %v", err)
	}
}

// mcplocal's replicas share the cluster's store, each through its own
// link, and drain before they stop unless the bounds say how long.
func TestAMcplocalReplicaSharesTheStoreAndDrains(t *testing.T) {
	c := &Cluster{Path: "/x/mcplocal"}
	if !c.sharesStore() {
		t.Error("mcplocal's replicas do not share a store")
	}
	spec := foreignWorld(t)
	spec.Bounds = CompressedBounds().With(BoundStopDrain, 0)
	r, rs := c.replica(spec, "postgres://u@127.0.0.1:9/db")
	b, ok := r.(*Binary)
	if !ok || b.Path != "/x/mcplocal" {
		t.Fatalf("replica %#v", r)
	}
	if rs.World.Store != "postgres://u@127.0.0.1:9/db" || spec.World.Store == rs.World.Store {
		t.Errorf("the replica's store %q (the world's %q): want its link's, on a copy", rs.World.Store, spec.World.Store)
	}
	if got := rs.Bounds.D(BoundStopDrain); got != clusterStopDrain {
		t.Errorf("stop drain %v, want %v", got, clusterStopDrain)
	}
	spec.Bounds = spec.Bounds.With(BoundStopDrain, 50)
	if _, rs := c.replica(spec, ""); rs.Bounds.D(BoundStopDrain) != 50*time.Millisecond {
		t.Errorf("a drain the bounds give: %v", rs.Bounds.D(BoundStopDrain))
	}
	spec.Bounds = Bounds{}
	if _, rs := c.replica(spec, ""); rs.Bounds.IsZero() || rs.Bounds.D(BoundStopDrain) == 0 {
		t.Error("a spec without bounds: the replica has no defaults or no drain")
	}
	f := NewForeignCluster(mustParseForeign(t, "name: a\ncommand: [x]"), 0, nil)
	if f.sharesStore() || f.ReplicaCount() != 2 {
		t.Errorf("a foreign cluster without a store shares one %v, or has %d replicas", f.sharesStore(), f.ReplicaCount())
	}
	if r, _ := f.replica(spec, ""); r.(*Foreign).Spec != f.Spec() {
		t.Error("a foreign replica runs another spec")
	}
}

// HAProxy is found on PATH, else as /usr/sbin/haproxy if it is an
// executable file there.
func TestHAProxyIsFoundOnPathOrInSbin(t *testing.T) {
	dir := t.TempDir()
	exe, plain := filepath.Join(dir, "exe"), filepath.Join(dir, "plain")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if !isExec(exe) || isExec(plain) || isExec(dir) || isExec(filepath.Join(dir, "none")) {
		t.Errorf("isExec: exe %v plain %v dir %v missing %v", isExec(exe), isExec(plain), isExec(dir), isExec(filepath.Join(dir, "none")))
	}
	if err := os.WriteFile(filepath.Join(dir, "haproxy"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	if p, err := (&Cluster{}).haproxyPath(); err != nil || p != filepath.Join(dir, "haproxy") {
		t.Errorf("haproxy on PATH: %q, %v", p, err)
	}
	t.Setenv("PATH", t.TempDir())
	p, err := (&Cluster{}).haproxyPath()
	if isExec("/usr/sbin/haproxy") {
		if err != nil || p != "/usr/sbin/haproxy" {
			t.Errorf("haproxy in /usr/sbin: %q, %v", p, err)
		}
	} else if err == nil || !strings.Contains(err.Error(), "haproxy not found") {
		t.Errorf("no haproxy: %q, %v", p, err)
	}
	if why := OneProcess(&InProcess{}); why != "" {
		t.Errorf("one process: %q", why)
	}
}
