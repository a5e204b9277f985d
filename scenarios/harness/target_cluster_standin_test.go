package harness

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// pids are the replicas' process ids, in order.
func pids(c *Cluster) []int {
	var out []int
	for i := range c.ReplicaCount() {
		out = append(out, c.ReplicaPID(i))
	}
	return out
}

// A cluster of stand-in replicas (no store) behind the shipped HAProxy:
// each of its faults acts on the replica it names, HAProxy sees them all UP
// again before the next, and Stop leaves nothing running.
func TestAClusterOfStandInsTakesEveryFault(t *testing.T) {
	// The shipped config's variables in this process's environment are not
	// HAProxy's: a third server there would take the cluster's clients.
	t.Setenv("MCPLOCAL_REPLICA_3", "127.0.0.1:1")
	spec := standInSpec(t, "", "ready: /healthz\nheaders: {X-Replica-Port: '{{.Port}}'}")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out syncBuffer
	fc := NewForeignCluster(spec, 2, &out)
	c := fc.Cluster
	if err := c.Start(ctx, Spec{}); err == nil || !strings.Contains(err.Error(), "no world") {
		t.Errorf("a start without a world: %v", err)
	}
	if _, err := c.KeptTraces(); err == nil {
		t.Error("kept traces before Stop")
	}
	// Before the start there is no replica to render the spec as.
	if got := fc.Endpoint(Project); !strings.HasSuffix(got, "/projects/"+Project+"/mcp") {
		t.Errorf("endpoint before start %q", got)
	}
	if got, ok := fc.Headers()["X-Replica-Port"]; !ok || got != "" {
		t.Errorf("headers before start: %v", fc.Headers())
	}
	if err := c.Start(ctx, foreignWorld(t)); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Stop(context.Background()); err != nil {
			t.Errorf("stop: %v", err)
		}
		if t.Failed() {
			t.Log(c.Logs())
		}
	}()
	if got, want := c.Name(), "cluster:2:foreign:stand-in"; got != want {
		t.Errorf("name %q, want %q", got, want)
	}
	if err := c.Start(ctx, foreignWorld(t)); err == nil || !strings.Contains(err.Error(), "already started") {
		t.Errorf("a second start: %v", err)
	}
	get := func(url string) int {
		resp, err := http.Get(url)
		if err != nil {
			return 0
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(c.URL() + "/anything"); code != http.StatusOK {
		t.Errorf("through HAProxy: %d", code)
	}
	if got, want := fc.Endpoint(Project), c.URL()+"/projects/"+Project+"/mcp"; got != want {
		t.Errorf("endpoint %q, want %q", got, want)
	}
	if got := fc.Headers()["X-Replica-Port"]; !strings.HasSuffix(c.ReplicaURL(0), ":"+got) {
		t.Errorf("header %q, want the first replica's port (%s)", got, c.ReplicaURL(0))
	}
	urls := c.ReplicaURLs()
	if len(urls) != 2 || urls[0] != c.ReplicaURL(0) || urls[1] != c.ReplicaURL(1) || urls[0] == urls[1] {
		t.Errorf("replica URLs %v", urls)
	}
	states, err := c.BalancerStates(ctx)
	if err != nil || states["r1"] != "UP" || states["r2"] != "UP" || len(states) != 2 {
		t.Errorf("HAProxy's states %v, %v", states, err)
	}
	if err := c.Ready(ctx); err != nil {
		t.Errorf("ready: %v", err)
	}
	if why := OneProcess(fc); !strings.Contains(why, "several processes") {
		t.Errorf("OneProcess %q", why)
	}

	before := pids(c)
	if err := c.KillRestart(ctx); err != nil {
		t.Fatal(err)
	}
	after := pids(c)
	if after[0] == before[0] || after[1] != before[1] {
		t.Errorf("the first kill-restart: pids %v then %v, want replica r1's alone new", before, after)
	}
	requireGone(t, before[0])
	before = after
	if err := c.KillRestart(ctx); err != nil {
		t.Fatal(err)
	}
	after = pids(c)
	if after[1] == before[1] || after[0] != before[0] {
		t.Errorf("the second kill-restart: pids %v then %v, want replica r2's alone new", before, after)
	}

	if err := c.KillReplica(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if got := c.ReplicaURLs(); !slices.Equal(got, []string{c.ReplicaURL(0)}) {
		t.Errorf("with r2 down, replica URLs %v", got)
	}
	if err := c.Ready(ctx); err == nil || !strings.Contains(err.Error(), "replica r2") {
		t.Errorf("ready with r2 down: %v", err)
	}
	if err := c.StartReplica(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitBalancerUp(ctx, 1); err != nil {
		t.Fatal(err)
	}

	before = pids(c)
	if err := c.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	after = pids(c)
	if after[0] == before[0] || after[1] == before[1] {
		t.Errorf("a rolling restart: pids %v then %v, want both new", before, after)
	}
	before = after
	if err := c.KillRestartAll(ctx); err != nil {
		t.Fatal(err)
	}
	after = pids(c)
	if after[0] == before[0] || after[1] == before[1] {
		t.Errorf("kill-restart of all: pids %v then %v, want both new", before, after)
	}

	url, lb := c.URL(), c.lb.cmd.Process.Pid
	if err := c.RestartBalancer(ctx); err != nil {
		t.Fatal(err)
	}
	if c.URL() != url || c.lb.cmd.Process.Pid == lb {
		t.Errorf("HAProxy restarted on %s (pid %d), want %s and a new pid", c.URL(), c.lb.cmd.Process.Pid, url)
	}
	requireGone(t, lb)
	if code := get(c.URL() + "/anything"); code != http.StatusOK {
		t.Errorf("through the restarted HAProxy: %d", code)
	}

	if err := c.PartitionStore(0); err == nil || !strings.Contains(err.Error(), "no store link") {
		t.Errorf("a partition without a store: %v", err)
	}
	if err := c.HealStore(5); err == nil {
		t.Error("healed the store link of a replica that does not exist")
	}
	if err := c.RestartStore(ctx, 0); err == nil {
		t.Error("restarted a store the cluster did not start")
	}
	logs := c.Logs()
	if !strings.Contains(logs, "=== replica r1 ===") || !strings.Contains(logs, "=== replica r2 ===") || !strings.Contains(logs, "=== haproxy ===") {
		t.Errorf("logs:\n%s", logs)
	}
	if !strings.Contains(c.ReplicaLogs(1), "=== RUN") || !strings.Contains(out.String(), "=== RUN") {
		t.Error("a replica's output is not in its logs or Stderr")
	}

	final := append(pids(c), c.lb.cmd.Process.Pid)
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range final {
		requireGone(t, p)
	}
	if _, err := c.KeptTraces(); err == nil || !strings.Contains(err.Error(), "holds no mcplocal audit rows") {
		t.Errorf("a foreign cluster's kept traces: %v", err)
	}
	if got := c.ReplicaURLs(); len(got) != 0 {
		t.Errorf("replica URLs %v after stop", got)
	}
	if err := c.Stop(ctx); err != nil {
		t.Errorf("a second stop: %v", err)
	}
	if err := c.Ready(ctx); err == nil || !strings.Contains(err.Error(), "not running") {
		t.Errorf("ready after stop: %v", err)
	}
}

// A cluster refuses what it cannot run before starting anything.
func TestAClusterRefusesWhatItCannotRun(t *testing.T) {
	ctx := context.Background()
	if got := (&Cluster{}).Name(); got != "cluster:2" {
		t.Errorf("a cluster of default size is %q", got)
	}
	if got := (&Cluster{Replicas: 3}).Name(); got != "cluster:3" {
		t.Errorf("a cluster of 3 is %q", got)
	}
	if err := (&Cluster{Replicas: clusterMaxReplicas}).Start(ctx, Spec{}); err == nil || !strings.Contains(err.Error(), "no world") {
		t.Errorf("%d replicas are refused: %v", clusterMaxReplicas, err)
	}
	c := &Cluster{Replicas: clusterMaxReplicas + 1}
	if err := c.Start(ctx, foreignWorld(t)); err == nil || !strings.Contains(err.Error(), "at most 5 replicas") {
		t.Errorf("%d replicas: %v", clusterMaxReplicas+1, err)
	}
	img := NewForeignCluster(mustParseForeign(t, "name: img\nimage: some/image"), 2, nil)
	if err := img.Start(ctx, foreignWorld(t)); err == nil || !strings.Contains(err.Error(), "image spec") {
		t.Errorf("an image spec's cluster: %v", err)
	}
	if err := img.Stop(ctx); err != nil {
		t.Errorf("stop after a refused start: %v", err)
	}
	if _, err := (&Cluster{HAProxy: "/x/haproxy"}).haproxyPath(); err != nil {
		t.Errorf("a given haproxy: %v", err)
	}
	if p, err := (&Cluster{HAProxyConfig: "/x/h.cfg"}).haproxyConfig(); p != "/x/h.cfg" || err != nil {
		t.Errorf("a given config: %q %v", p, err)
	}
	if got := ReplicaName(0) + ReplicaName(4); got != "r1r5" {
		t.Errorf("replica names %q", got)
	}
	e := JudgedOn(NewForeignCluster(mustParseForeign(t, "name: a\ncommand: [x]"), 2, nil), CompressedBounds())
	var v struct{ Error string }
	if err := e.GetJSONFromEach(ctx, "/x", &v, &v.Error); err == nil || !strings.Contains(err.Error(), "no replica is running") {
		t.Errorf("a read from each replica of a cluster not started: %v", err)
	}
}
