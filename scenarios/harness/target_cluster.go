package harness

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
)

// Cluster runs N replicas of mcplocal (built binaries, as Binary runs one)
// sharing one PostgreSQL store, behind HAProxy running the shipped
// docs/deploy/haproxy.cfg. Each replica reaches the store through its own
// toxiproxy link, so one replica can be cut off from it. URL is HAProxy's.
//
// Faults it offers beyond Target: KillReplica and StartReplica (SIGKILL, then
// start again on the same address), RestartReplica (graceful; one at a time
// for each replica is a rolling restart, which Restart does),
// PartitionStore/HealStore (one replica's store link blackholed),
// RestartStore (the PostgreSQL server itself restarted under every replica)
// and RestartBalancer.
type Cluster struct {
	// Path of the mcplocal executable.
	Path string
	// Replicas is N; default 2. At most clusterMaxReplicas (the servers the
	// shipped HAProxy config declares).
	Replicas int
	// StoreDSN, if set, is the shared Postgres store; otherwise the cluster
	// starts a throwaway server for its lifetime (mcplocal.StartPostgres).
	StoreDSN string
	// HAProxy is the haproxy executable; default "haproxy" on PATH, then
	// /usr/sbin/haproxy.
	HAProxy string
	// HAProxyConfig is the config HAProxy runs; default the shipped
	// docs/deploy/haproxy.cfg of this module.
	HAProxyConfig string
	// Stderr, if set, also receives every process's output.
	Stderr io.Writer

	// foreign, when set, is the proxy each replica runs in place of mcplocal
	// (ForeignCluster).
	foreign *ForeignSpec

	mu       sync.Mutex
	spec     Spec
	toxi     *Toxi
	stopPG   func() error
	pg       *mcplocal.Postgres // the store started here (nil when StoreDSN was given)
	dsn      string
	links    []*Link
	replicas []clusterReplica
	lb       *process
	lbAddr   string
	stats    string // HAProxy's stats address
	log      *tailBuffer
	nextKill int // the replica KillRestart kills next
	kept     map[string]bool
	keptErr  error
}

// AuditKeeper is a target whose audit store outlives none of its processes
// (a cluster's throwaway Postgres): at Stop, once every proxy has flushed, it
// keeps the trace codes of the tool_call_trace rows for the checks that read
// them after the run (the soak's "no row missing").
type AuditKeeper interface {
	KeptTraces() (map[string]bool, error)
}

var _ AuditKeeper = (*Cluster)(nil)

// KeptTraces implements AuditKeeper: the trace codes read at Stop.
func (c *Cluster) KeptTraces() (map[string]bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.kept == nil && c.keptErr == nil {
		return nil, errors.New("cluster: audit rows are read at Stop, which has not run")
	}
	return c.kept, c.keptErr
}

// keepTraces reads the store's tool_call_trace trace codes.
func (c *Cluster) keepTraces(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c.kept, c.keptErr = mcplocal.TraceCodes(ctx, c.dsn)
}

var (
	_ Target = (*Cluster)(nil)
	_ Killer = (*Cluster)(nil)
)

// clusterReplica is one replica as the cluster drives it: a built mcplocal
// (Binary) or a foreign proxy (Foreign). Each listens on its own free
// loopback port and keeps it: Restart stops it gracefully (or, after Kill,
// only starts it) on the same address.
type clusterReplica interface {
	Start(ctx context.Context, spec Spec) error
	Restart(ctx context.Context) error
	Kill(ctx context.Context) error
	Stop(ctx context.Context) error
	URL() string
	Logs() string
	PID() int // 0 while it is down
	Readier
}

var (
	_ clusterReplica = (*Binary)(nil)
	_ clusterReplica = (*Foreign)(nil)
)

// clusterMaxReplicas is how many servers docs/deploy/haproxy.cfg declares.
const clusterMaxReplicas = 5

// The compressed timings the cluster gives HAProxy (the shipped config's
// defaults are production's): health checks every 100 ms, 2 to drain or
// rejoin.
const (
	clusterCheckInter = "100ms"
	clusterCheckFall  = "2"
	clusterCheckRise  = "2"
	clusterStream     = "60s"
	clusterConnect    = "50ms" // loopback; also HAProxy's pause before the next replica
	// clusterStopDrain is the replicas' MCPCTL_STOP_DRAIN_MS: FALL checks
	// 100 ms apart take HAProxy 200 ms to mark a stopping replica DOWN; the
	// rest is room for a loaded machine.
	clusterStopDrain = 400 * time.Millisecond
	// balancerRiseLimit bounds the wait for a started replica to be UP in
	// HAProxy: RISE checks 100 ms apart take 200 ms; the rest is room for a
	// loaded machine.
	balancerRiseLimit = 10 * time.Second
)

// Name implements Target.
func (c *Cluster) Name() string {
	if c.foreign != nil {
		return fmt.Sprintf("cluster:%d:foreign:%s", c.n(), c.foreign.Name)
	}
	return fmt.Sprintf("cluster:%d", c.n())
}

func (c *Cluster) n() int {
	if c.Replicas <= 0 {
		return 2
	}
	return c.Replicas
}

// URL implements Target: HAProxy's address.
func (c *Cluster) URL() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return "http://" + c.lbAddr
}

// ReplicaURL is replica i's own base URL (bypassing HAProxy).
func (c *Cluster) ReplicaURL(i int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.replicas[i].URL()
}

// ReplicaCount is N.
func (c *Cluster) ReplicaCount() int { return c.n() }

// ReplicaName is replica i's server name in HAProxy (r1, r2, ...), as the
// X-Mcplocal-Replica answer header names it.
func ReplicaName(i int) string { return "r" + strconv.Itoa(i+1) }

// ReplicaLogs is replica i's output (every run of it), most recent kept.
func (c *Cluster) ReplicaLogs(i int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.replicas[i].Logs()
}

// Logs is the output of every replica and of HAProxy, most recent kept.
func (c *Cluster) Logs() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for i, r := range c.replicas {
		fmt.Fprintf(&b, "=== replica %s ===\n%s", ReplicaName(i), r.Logs())
	}
	fmt.Fprintf(&b, "=== haproxy ===\n%s", c.logs())
	return b.String()
}

func (c *Cluster) logs() *tailBuffer {
	if c.log == nil {
		c.log = newTailBuffer(binaryLogBytes)
	}
	return c.log
}

// Start implements Target: the store, one link per replica, N replicas, then
// HAProxy; it returns once HAProxy sees every replica ready.
func (c *Cluster) Start(ctx context.Context, spec Spec) (err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.toxi != nil {
		return fmt.Errorf("%s: already started", c.Name())
	}
	if c.n() > clusterMaxReplicas {
		return fmt.Errorf("%s: at most %d replicas (the servers docs/deploy/haproxy.cfg declares)", c.Name(), clusterMaxReplicas)
	}
	if spec.World == nil {
		return fmt.Errorf("%s: spec has no world", c.Name())
	}
	c.spec, c.toxi = spec, NewToxi()
	defer func() {
		if err != nil {
			_ = c.stopLocked(context.Background())
			err = fmt.Errorf("%s: %w", c.Name(), err)
		}
	}()
	if c.foreign != nil && c.foreign.Image != "" {
		return errors.New("a cluster runs a command spec's replicas; an image spec's is not supported")
	}
	var store *url.URL
	if c.sharesStore() {
		c.dsn = c.StoreDSN
		if c.dsn == "" {
			if c.pg, err = mcplocal.StartPostgres(ctx); err != nil {
				return err
			}
			c.dsn, c.stopPG = c.pg.DSN, c.pg.Stop
		}
		if store, err = url.Parse(c.dsn); err != nil {
			return fmt.Errorf("store DSN: %w", err)
		}
	}
	for i := range c.n() {
		via := ""
		if store != nil {
			link, err := c.toxi.Link("store-"+ReplicaName(i), store.Host)
			if err != nil {
				return err
			}
			c.links = append(c.links, link)
			u := *store
			u.Host = link.Addr()
			via = u.String()
		}
		r, rs := c.replica(spec, via)
		if err := r.Start(ctx, rs); err != nil {
			return fmt.Errorf("replica %s: %w", ReplicaName(i), err)
		}
		c.replicas = append(c.replicas, r)
	}
	return c.startBalancerLocked(ctx, "")
}

// sharesStore says whether the replicas share a store: mcplocal's always
// do; a foreign proxy's when its spec declares one.
func (c *Cluster) sharesStore() bool {
	return c.foreign == nil || c.foreign.SharedStore() != ""
}

// replica is one replica to start, and the spec it starts with; store is
// the shared store's DSN through the replica's own link ("" for none).
func (c *Cluster) replica(spec Spec, store string) (clusterReplica, Spec) {
	if c.foreign != nil {
		return &Foreign{Spec: c.foreign, Stderr: c.Stderr, StoreDSN: store}, spec
	}
	w := spec.World.Clone()
	w.Store = store
	rs := spec
	rs.World, rs.Bounds = w, spec.bounds()
	if rs.Bounds.D(BoundStopDrain) == 0 {
		// A replica behind the balancer drains before it stops, as
		// docs/deploy.md tells operators to run one.
		rs.Bounds = rs.Bounds.WithD(BoundStopDrain, clusterStopDrain)
	}
	return &Binary{Path: c.Path, Stderr: c.Stderr}, rs
}

// startBalancerLocked starts HAProxy on addr ("" for a fresh port) and waits
// until every replica that runs is up in it.
func (c *Cluster) startBalancerLocked(ctx context.Context, addr string) error {
	cfg, err := c.haproxyConfig()
	if err != nil {
		return err
	}
	bin, err := c.haproxyPath()
	if err != nil {
		return err
	}
	start := func(addr string) error {
		stats, err := freeLoopbackAddr()
		if err != nil {
			return err
		}
		var env []string
		for _, kv := range os.Environ() { // the config's variables are the cluster's alone
			if !strings.HasPrefix(kv, "MCPLOCAL_LB_") && !strings.HasPrefix(kv, "MCPLOCAL_REPLICA_") {
				env = append(env, kv)
			}
		}
		env = append(env, c.balancerEnv(addr, stats)...)
		p, err := spawn(ctx, procSpec{argv: []string{bin, "-f", cfg, "-db"}, env: env, addr: addr, log: c.logs(), stderr: c.Stderr},
			"haproxy", c.allUpProbe(stats))
		if err != nil {
			if strings.Contains(err.Error(), "cannot bind socket") {
				return fmt.Errorf("%w: %w", errAddrInUse, err)
			}
			return err
		}
		c.lb, c.lbAddr, c.stats = p, addr, stats
		return nil
	}
	if addr == "" {
		return startFresh(start)
	}
	return rebind(ctx, func(context.Context) error { return start(addr) })
}

// balancerEnv is the variables the cluster gives the shipped config for
// HAProxy on addr, with its stats on stats: the compressed timings, each
// replica's address, and for a foreign proxy its spec's health check (a
// path, or a TCP check); mcplocal's replicas keep the config's /readyz.
func (c *Cluster) balancerEnv(addr, stats string) []string {
	env := []string{
		"MCPLOCAL_LB_BIND=" + addr, "MCPLOCAL_LB_STATS=" + stats,
		"MCPLOCAL_LB_CHECK_INTER=" + clusterCheckInter, "MCPLOCAL_LB_CHECK_FALL=" + clusterCheckFall,
		"MCPLOCAL_LB_CHECK_RISE=" + clusterCheckRise, "MCPLOCAL_LB_STREAM=" + clusterStream,
		"MCPLOCAL_LB_CONNECT=" + clusterConnect}
	if c.foreign != nil {
		if check := c.foreign.clusterCheck(); check == CheckTCP {
			env = append(env, "MCPLOCAL_LB_CHECK_TCP=1")
		} else {
			env = append(env, "MCPLOCAL_LB_CHECK_PATH="+check)
		}
	}
	for i, r := range c.replicas {
		env = append(env, fmt.Sprintf("MCPLOCAL_REPLICA_%d=%s", i+1, strings.TrimPrefix(r.URL(), "http://")))
	}
	return env
}

// allUpProbe answers true once HAProxy's stats show every running replica UP.
func (c *Cluster) allUpProbe(stats string) func(context.Context, *http.Client) bool {
	return func(ctx context.Context, hc *http.Client) bool {
		states, err := balancerStates(ctx, hc, stats)
		if err != nil {
			return false
		}
		for i, r := range c.replicas {
			if r.PID() != 0 && states[ReplicaName(i)] != "UP" {
				return false
			}
		}
		return true
	}
}

// BalancerStates is HAProxy's view of each replica, by server name (r1, ...):
// "UP", "DOWN", or a transition such as "UP 1/2".
func (c *Cluster) BalancerStates(ctx context.Context) (map[string]string, error) {
	c.mu.Lock()
	stats := c.stats
	c.mu.Unlock()
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Second}
	return balancerStates(ctx, hc, stats)
}

func balancerStates(ctx context.Context, hc *http.Client, stats string) (map[string]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+stats+"/stats;csv", nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("haproxy stats: HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	rows, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(string(body), "# "))).ReadAll()
	if err != nil || len(rows) == 0 {
		return nil, fmt.Errorf("haproxy stats: %v", err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	out := map[string]string{}
	for _, r := range rows[1:] {
		if len(r) > col["status"] && r[col["pxname"]] == "mcplocal" && strings.HasPrefix(r[col["svname"]], "r") {
			out[r[col["svname"]]] = r[col["status"]]
		}
	}
	return out, nil
}

// haproxyConfig is the config file HAProxy runs: the shipped one unless set.
func (c *Cluster) haproxyConfig() (string, error) {
	if c.HAProxyConfig != "" {
		return c.HAProxyConfig, nil
	}
	return ShippedHAProxyConfig()
}

// ShippedHAProxyConfig is the path of docs/deploy/haproxy.cfg in this
// module's source tree: the module found from the working directory (go env
// GOMOD), else the tree this file was compiled from when its path is kept
// (a -trimpath build keeps only the import path, so it cannot be used).
func ShippedHAProxyConfig() (string, error) {
	var roots []string
	if root, err := moduleRoot(context.Background()); err == nil {
		roots = append(roots, root)
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		roots = append(roots, filepath.Join(filepath.Dir(file), "..", ".."))
	}
	if len(roots) == 0 {
		return "", errors.New("cluster: cannot locate the module's source tree: run from inside it")
	}
	var err error
	for _, root := range roots {
		p := filepath.Join(root, "docs", "deploy", "haproxy.cfg")
		if _, err = os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("cluster: the shipped HAProxy config: %w", err)
}

func (c *Cluster) haproxyPath() (string, error) {
	if c.HAProxy != "" {
		return c.HAProxy, nil
	}
	if p, err := exec.LookPath("haproxy"); err == nil {
		return p, nil
	}
	if isExec("/usr/sbin/haproxy") {
		return "/usr/sbin/haproxy", nil
	}
	return "", errors.New("cluster: haproxy not found on PATH nor in /usr/sbin: run `make deps` (apt-get install -y haproxy)")
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// Restart implements Target: a rolling restart as docs/deploy.md tells an
// operator to run one. Each replica is stopped gracefully and started again,
// and the next one goes only once HAProxy reports this one UP: a replica
// that is up but not yet UP in the balancer takes no traffic, so stopping
// the next one sooner leaves no server to send a request to (HAProxy's 503).
func (c *Cluster) Restart(ctx context.Context) error {
	for i := range c.n() {
		if err := c.RestartReplica(ctx, i); err != nil {
			return err
		}
		if err := c.WaitBalancerUp(ctx, i); err != nil {
			return err
		}
	}
	return nil
}

// WaitBalancerUp waits until HAProxy reports replica i UP: its health check
// passed MCPLOCAL_LB_CHECK_RISE times. It gives up after balancerRiseLimit.
func (c *Cluster) WaitBalancerUp(ctx context.Context, i int) error {
	ctx, cancel := context.WithTimeout(ctx, balancerRiseLimit)
	defer cancel()
	last := "no answer from the stats page"
	for {
		states, err := c.BalancerStates(ctx)
		if err != nil {
			last = err.Error()
		} else if st := states[ReplicaName(i)]; st == "UP" {
			return nil
		} else {
			last = st
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: replica %s not UP in HAProxy within %v (last seen: %s)", c.Name(), ReplicaName(i), balancerRiseLimit, last)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// KillRestart implements Killer as a cluster meets a SIGKILL: one replica
// (the next in turn) is SIGKILLed and started again; the others keep serving.
func (c *Cluster) KillRestart(ctx context.Context) error {
	c.mu.Lock()
	i := c.nextKill % c.n()
	c.nextKill++
	c.mu.Unlock()
	if err := c.KillReplica(ctx, i); err != nil {
		return err
	}
	if err := c.StartReplica(ctx, i); err != nil {
		return err
	}
	return c.WaitBalancerUp(ctx, i)
}

// KillRestartAll SIGKILLs every replica, then starts each again: every
// session in memory is gone at once.
func (c *Cluster) KillRestartAll(ctx context.Context) error {
	for i := range c.n() {
		if err := c.KillReplica(ctx, i); err != nil {
			return err
		}
	}
	for i := range c.n() {
		if err := c.StartReplica(ctx, i); err != nil {
			return err
		}
	}
	return nil
}

// KillReplica SIGKILLs replica i; it stays down until StartReplica.
func (c *Cluster) KillReplica(ctx context.Context, i int) error {
	c.mu.Lock()
	r := c.replicas[i]
	c.mu.Unlock()
	return r.Kill(ctx)
}

// StartReplica starts replica i again on its address after KillReplica.
func (c *Cluster) StartReplica(ctx context.Context, i int) error {
	c.mu.Lock()
	r := c.replicas[i]
	c.mu.Unlock()
	return r.Restart(ctx) // after Kill, Restart only starts
}

// RestartReplica stops replica i gracefully and starts it again.
func (c *Cluster) RestartReplica(ctx context.Context, i int) error {
	c.mu.Lock()
	r := c.replicas[i]
	c.mu.Unlock()
	return r.Restart(ctx)
}

// ReplicaPID is replica i's process id (0 while it is down).
func (c *Cluster) ReplicaPID(i int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.replicas[i].PID()
}

// PartitionStore cuts replica i off from the store: every byte on its store
// link is dropped, connections stay open (a blackhole, as a network
// partition looks).
func (c *Cluster) PartitionStore(i int) error {
	l, err := c.link(i)
	if err != nil {
		return err
	}
	for _, dir := range []string{"upstream", "downstream"} {
		if err := l.Toxic("partition-"+dir, "timeout", dir, map[string]any{"timeout": 0}); err != nil {
			return err
		}
	}
	return nil
}

// HealStore ends replica i's partition: the blackholed connections are cut
// (as a partition's TCP connections end) and new ones flow.
func (c *Cluster) HealStore(i int) error {
	l, err := c.link(i)
	if err != nil {
		return err
	}
	l.Heal()
	l.Down()
	return l.Up()
}

// link is replica i's store link.
func (c *Cluster) link(i int) (*Link, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if i < 0 || i >= len(c.links) {
		return nil, fmt.Errorf("%s: replica %d has no store link (no shared store, or not started)", c.Name(), i)
	}
	return c.links[i], nil
}

// RestartStore restarts the PostgreSQL server the replicas share: a fast
// shutdown that closes every replica's connections, down for the while
// given, then up again over the same data on the same address. It needs the
// store the cluster started itself (not one named by StoreDSN).
func (c *Cluster) RestartStore(ctx context.Context, down time.Duration) error {
	c.mu.Lock()
	pg := c.pg
	c.mu.Unlock()
	if pg == nil {
		return fmt.Errorf("%s: the store was given (StoreDSN), not started here: it cannot be restarted", c.Name())
	}
	return pg.Restart(ctx, down)
}

// RestartBalancer stops HAProxy (SIGTERM) and starts it again on the same
// address, with an empty stick table.
func (c *Cluster) RestartBalancer(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lb != nil {
		if err := c.lb.stop(ctx, true, binaryStopSlack, false); err != nil {
			return fmt.Errorf("%s: haproxy stop: %w", c.Name(), err)
		}
		c.lb = nil
	}
	return c.startBalancerLocked(ctx, c.lbAddr)
}

// Stop implements Target: HAProxy, the replicas, the links, the store.
func (c *Cluster) Stop(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopLocked(ctx)
}

func (c *Cluster) stopLocked(ctx context.Context) error {
	var errs []error
	if c.lb != nil {
		errs = append(errs, c.lb.stop(ctx, true, binaryStopSlack, false))
		c.lb = nil
	}
	for _, r := range c.replicas {
		errs = append(errs, r.Stop(ctx))
	}
	if c.dsn != "" && len(c.replicas) > 0 && c.foreign == nil {
		c.keepTraces(ctx)
	} else if c.foreign != nil {
		c.keptErr = fmt.Errorf("%s: a foreign proxy's store holds no mcplocal audit rows", c.Name())
	}
	c.replicas, c.links = nil, nil
	if c.toxi != nil {
		c.toxi.Close()
		c.toxi = nil
	}
	if c.stopPG != nil {
		errs = append(errs, c.stopPG())
		c.stopPG, c.pg = nil, nil
	}
	return errors.Join(errs...)
}
