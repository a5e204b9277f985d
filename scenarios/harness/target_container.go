package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
)

// Timing bounds of the container targets.
const (
	containerErrLogBytes = 16 << 10               // container log excerpt in errors
	containerConfigFile  = "mcplocal-target.yaml" // in the target's temp dir, bind-mounted (writable: servers changed live are kept beside the config)
	targetLabel          = "org.mcpchaos.target"
)

// Container runs the proxy under test in a Docker container of Image (built
// by an ImageSet; never pulled), through testcontainers-go:
// `IMAGE serve --config FILE --listen 127.0.0.1:PORT` with host networking,
// so the container listens on this host's loopback and reaches the fakes and
// toxiproxy links, which stay in the test process.
//
// The spec's config is written as YAML to a temp dir bind-mounted read-only
// at the same path; the directory of a sqlite audit database is bind-mounted
// read-write at its own path, so the audit trail outlives a restart and the
// harness's paths mean the same inside and out. Knobs (in ms) and
// MCPLOCAL_FAILPOINTS are passed as environment variables, as Binary passes
// them; unlike Binary, the container's environment is fixed when it is
// created at Start, so failpoints armed after Start never reach it.
//
// Restart is `docker stop` (SIGTERM, SIGKILL after the shutdown grace knob +
// 5 s) and `docker start` of the same container: same port, in-memory
// sessions lost. KillRestart is `docker kill` (SIGKILL) and `docker start`.
// Start waits until GET /healthz on the known loopback port answers 200.
type Container struct {
	// Image to run, e.g. an ImageSet's Mcplocal().
	Image string
	// Stderr, if set, receives the container's output when it stops, and
	// testcontainers' messages. Write errors are ignored.
	Stderr io.Writer
	// Env is added to the container's environment ("KEY=VALUE"), for
	// tokenEnv and apiKeyEnv variables the config names. The test process's
	// own environment is not passed.
	Env []string

	mu  sync.Mutex
	run *containerRun
	dir string // temp dir holding the config file; "" when stopped
}

var (
	_ Target = (*Container)(nil)
	_ Killer = (*Container)(nil)
)

// Name implements Target.
func (c *Container) Name() string { return "container:" + c.Image }

// URL implements Target.
func (c *Container) URL() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.run == nil {
		return "http://"
	}
	return "http://" + c.run.addr
}

// Logs is the output of the running container so far (every run of it:
// restarts keep the container), or "" when none runs.
func (c *Container) Logs(ctx context.Context) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.run == nil {
		return ""
	}
	return c.run.logs(ctx)
}

// Start implements Target: it creates and starts the container on a free
// loopback port and returns once GET /healthz answers 200.
func (c *Container) Start(ctx context.Context, spec Spec) (err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.run != nil {
		return fmt.Errorf("%s: already started", c.Name())
	}
	if spec.World == nil {
		return fmt.Errorf("%s: spec has no world", c.Name())
	}
	w := spec.World.Clone() // the Env's world is shared: change a copy
	binds, err := auditBind(&w.Store)
	if err != nil {
		return fmt.Errorf("%s: %w", c.Name(), err)
	}
	doc, err := mcplocal.ConfigYAML(w)
	if err != nil {
		return fmt.Errorf("%s: %w", c.Name(), err)
	}
	if c.dir, err = os.MkdirTemp("", "mcpchaos-container-"); err != nil {
		return fmt.Errorf("%s: %w", c.Name(), err)
	}
	defer func() {
		if err != nil {
			c.cleanupLocked()
		}
	}()
	cfgPath := filepath.Join(c.dir, containerConfigFile)
	if err := os.WriteFile(cfgPath, doc, 0o644); err != nil {
		return fmt.Errorf("%s: %w", c.Name(), err)
	}
	binds = append(binds, c.dir+":"+c.dir) // the servers API writes its file beside the config, as in production
	env := append(specEnv(spec), c.Env...)
	grace := shutdownGrace(spec.bounds())
	err = startFresh(func(addr string) error {
		r := &containerRun{name: c.Name(), image: c.Image, addr: addr, health: "/healthz", grace: grace, stderr: c.Stderr,
			cmd: []string{"serve", "--config", cfgPath, "--listen", addr}, env: env, binds: binds}
		err := r.create(ctx)
		if err == nil {
			err = r.startHealthy(ctx)
		}
		if err == nil {
			c.run = r
			return nil
		}
		return errors.Join(err, r.remove(context.WithoutCancel(ctx)))
	})
	if err != nil {
		return fmt.Errorf("%s: %w", c.Name(), err)
	}
	return nil
}

// Restart implements Target: docker stop, then docker start of the same
// container on the same address.
func (c *Container) Restart(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return cycle(ctx, c.Name(), c.run != nil, true, c.run.instance())
}

// KillRestart implements Killer: docker kill (SIGKILL: no drain, no audit
// flush), then docker start of the same container on the same address.
func (c *Container) KillRestart(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return cycle(ctx, c.Name(), c.run != nil, false, c.run.instance())
}

// Stop implements Target: docker stop, the container's output to Stderr,
// then the container and the temp dir are removed. It reports a container
// that had exited on its own. Stop may be called more than once.
func (c *Container) Stop(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.cleanupLocked()
	r := c.run
	if r == nil {
		return nil
	}
	c.run = nil
	var errs []error
	if up, state, err := r.running(ctx); err != nil {
		errs = append(errs, err)
	} else if !up {
		errs = append(errs, fmt.Errorf("the container had exited on its own: %s\n%s", state, tail(r.logs(ctx), containerErrLogBytes)))
	} else {
		errs = append(errs, r.stop(ctx))
	}
	if c.Stderr != nil {
		fmt.Fprintf(c.Stderr, "--- mcpchaos: output of %s (%s) ---\n%s--- end of output ---\n", c.Name(), r.id(), r.logs(ctx))
	}
	errs = append(errs, r.remove(ctx))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s: stop: %w", c.Name(), err)
	}
	return nil
}

func (c *Container) cleanupLocked() {
	if c.dir != "" {
		_ = os.RemoveAll(c.dir)
	}
	c.dir = ""
}

// containerRun is one container of a target: created with a command, an
// environment and bind mounts, on the host's network; started, stopped,
// killed and started again; its output fetched for reports.
type containerRun struct {
	name, image string
	cmd         []string
	env         []string                                 // KEY=VALUE
	binds       []string                                 // HOST:CONTAINER[:ro]
	addr        string                                   // the loopback address it listens on
	health      string                                   // path answering 200 when ready (or, with probe, what probe waits for)
	probe       func(context.Context, *http.Client) bool // readiness, if not GET health
	grace       time.Duration
	stderr      io.Writer

	p   *testcontainers.DockerProvider
	ctr *testcontainers.DockerContainer
}

func (r *containerRun) id() string {
	if r.ctr == nil {
		return "not created"
	}
	return r.ctr.GetContainerID()[:12]
}

// create creates the container (not started). The image must be local.
func (r *containerRun) create(ctx context.Context) error {
	p, err := dockerProvider(ctx, r.stderr)
	if err != nil {
		return err
	}
	r.p = p
	if err := localImage(ctx, p, r.image); err != nil {
		return err
	}
	env := containerEnv(r.env)
	binds := r.binds
	ctr, err := p.CreateContainer(ctx, testcontainers.ContainerRequest{
		Image:  r.image,
		Cmd:    r.cmd,
		Env:    env,
		Labels: map[string]string{targetLabel: r.name},
		HostConfigModifier: func(hc *container.HostConfig) {
			hc.NetworkMode = "host" // loopback only: the fakes and links are on 127.0.0.1
			hc.Binds = append(hc.Binds, binds...)
		},
	})
	if dc, ok := ctr.(*testcontainers.DockerContainer); ok && dc != nil {
		r.ctr = dc
	}
	if err != nil {
		return fmt.Errorf("create container: %w", err)
	}
	if r.ctr == nil {
		return fmt.Errorf("create container: unexpected container type %T", ctr)
	}
	return nil
}

// startHealthy starts the created container and waits until it is healthy.
// A start that failed because the address was taken wraps errAddrInUse.
func (r *containerRun) startHealthy(ctx context.Context) error {
	if err := r.ctr.Start(ctx); err != nil {
		return fmt.Errorf("start container %s: %w", r.id(), err)
	}
	return r.waitHealthy(ctx)
}

// instance is the container as the shared lifecycle drives it: halted by
// docker stop or docker kill, resumed by docker start (nil-safe: r is nil
// before Start, when cycle refuses before calling either).
func (r *containerRun) instance() instance {
	return instance{
		halt: func(ctx context.Context, graceful bool) error {
			if graceful {
				return r.stop(ctx)
			}
			return r.kill(ctx)
		},
		resume: func(ctx context.Context) error {
			if err := r.startHealthy(ctx); err != nil {
				return fmt.Errorf("start on %s: %w", r.addr, err)
			}
			return nil
		},
	}
}

// waitHealthy polls the health path on the known loopback port (mapped ports
// do not apply in host mode, and testcontainers' internal port check needs a
// shell the scratch image lacks) until it answers 200 while the container
// runs, bounded by ctx and readyCap.
func (r *containerRun) waitHealthy(ctx context.Context) error {
	what, probe := "http://"+r.addr+r.health, r.probe
	if probe == nil {
		probe = healthProbe(what)
	} else {
		what = r.health
	}
	return pollReady(ctx, what, probe, func(ctx context.Context) error {
		up, state, err := r.running(ctx)
		switch {
		case err != nil:
			return err
		case up:
			return nil
		}
		out := tail(r.logs(ctx), containerErrLogBytes)
		err = fmt.Errorf("container %s exited before %s answered: %s\n%s", r.id(), r.health, state, out)
		if strings.Contains(out, "address already in use") {
			err = fmt.Errorf("%w: %w", errAddrInUse, err)
		}
		return err
	}, func() string { return tail(r.logs(context.Background()), containerErrLogBytes) })
}

// pollHealthy is pollReady on an HTTP health url.
func pollHealthy(ctx context.Context, url string, alive func(context.Context) error, logs func() string) error {
	return pollReady(ctx, url, healthProbe(url), alive, logs)
}

// running reports whether the container runs, with its state for errors.
func (r *containerRun) running(ctx context.Context) (bool, string, error) {
	st, err := r.ctr.State(ctx)
	if err != nil {
		return false, "", fmt.Errorf("inspect container %s: %w", r.id(), err)
	}
	return st.Running, fmt.Sprintf("status %s, exit code %d %s", st.Status, st.ExitCode, st.Error), nil
}

// up is nil while the container runs, else why it does not.
func (r *containerRun) up(ctx context.Context) error {
	running, state, err := r.running(ctx)
	if err != nil {
		return err
	}
	if !running {
		return fmt.Errorf("the container exited: %s", state)
	}
	return nil
}

// stop is docker stop: SIGTERM, SIGKILL after the grace (whole seconds).
func (r *containerRun) stop(ctx context.Context) error {
	timeout := (r.grace + containerStopSlack + time.Second - 1).Truncate(time.Second)
	if err := r.ctr.Stop(ctx, &timeout); err != nil {
		return fmt.Errorf("docker stop %s: %w", r.id(), err)
	}
	st, err := r.ctr.State(ctx)
	switch {
	case err != nil:
		return fmt.Errorf("inspect container %s: %w", r.id(), err)
	case st.ExitCode == 128+int(syscall.SIGKILL):
		return fmt.Errorf("container %s did not stop within %v of SIGTERM; killed\n%s", r.id(), timeout, tail(r.logs(ctx), containerErrLogBytes))
	}
	return nil
}

// kill is docker kill (SIGKILL), then a bounded wait until it has exited.
func (r *containerRun) kill(ctx context.Context) error {
	if _, err := r.p.Client().ContainerKill(ctx, r.ctr.GetContainerID(), client.ContainerKillOptions{Signal: "SIGKILL"}); err != nil {
		return fmt.Errorf("docker kill %s: %w", r.id(), err)
	}
	ctx, cancel := context.WithTimeout(ctx, containerKillCap)
	defer cancel()
	for {
		up, _, err := r.running(ctx)
		if err != nil || !up {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("container %s still running after SIGKILL: %w", r.id(), ctx.Err())
		case <-time.After(readyPoll):
		}
	}
}

// logs is the container's whole output (stdout and stderr), or a note why not.
func (r *containerRun) logs(ctx context.Context) string {
	if r.ctr == nil {
		return ""
	}
	rc, err := r.ctr.Logs(ctx)
	if err != nil {
		return fmt.Sprintf("[logs of %s unavailable: %v]\n", r.id(), err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, binaryLogBytes))
	if err != nil {
		return string(b) + fmt.Sprintf("\n[reading logs of %s: %v]\n", r.id(), err)
	}
	return string(b)
}

// remove removes the container (stopping it first if needed) and closes the
// provider's connections. remove may be called more than once.
func (r *containerRun) remove(ctx context.Context) error {
	var errs []error
	if r.ctr != nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), containerRemoveCap)
		defer cancel()
		zero := time.Duration(0)
		if err := r.ctr.Terminate(ctx, testcontainers.StopTimeout(zero)); err != nil {
			errs = append(errs, fmt.Errorf("remove container %s: %w", r.id(), err))
		}
		r.ctr = nil
	}
	if r.p != nil {
		errs = append(errs, r.p.Close())
		r.p = nil
	}
	return errors.Join(errs...)
}

// auditBind makes a sqlite store's path absolute (as the host sees it)
// and returns the bind mount of its directory at the same path.
func auditBind(store *string) ([]string, error) {
	path, ok := strings.CutPrefix(*store, "sqlite:")
	if !ok {
		return nil, nil // postgres: reached over the host network; memory: nothing to keep
	}
	path = strings.TrimPrefix(path, "//")
	if path == "" || strings.HasPrefix(path, ":memory:") {
		return nil, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("audit path %s: %w", path, err)
	}
	dir := filepath.Dir(abs)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("audit dir: %w", err)
	}
	*store = "sqlite:" + abs
	return []string{dir + ":" + dir}, nil
}

// KnownMutantEnv switches one known mutant on in the shared tree that
// judges them (scenarios/mutants; that package spells it out too, and its
// test keeps the two equal). A process inherits it from the test process;
// a container does not, so containerEnv passes it in.
const KnownMutantEnv = "MCPCHAOS_KNOWN_MUTANT"

// containerEnv is a container's environment: kvs ("KEY=VALUE", later wins)
// and, when this process has one switched on, KnownMutantEnv, so a proxy
// built from the shared tree of known mutants runs the mutant under
// judgement in a container as it does in a process.
func containerEnv(kvs []string) map[string]string {
	env := map[string]string{}
	if v, ok := os.LookupEnv(KnownMutantEnv); ok {
		env[KnownMutantEnv] = v
	}
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return env
}

// specEnv is the environment a proxy process or container gets from spec:
// every bound of the spec in its unit (a zero bound leaves the proxy's
// default) and the spec's failpoints, as Binary passes them.
func specEnv(spec Spec) []string {
	env := spec.Bounds.Environ()
	if fp := spec.Failpoints.String(); fp != "" { // nil-safe
		env = append(env, failpointsEnv+"="+fp, "MCPLOCAL_ENABLE_FAILPOINTS=1") // mcplocal ignores failpoints without it
	}
	// The variables the spec's config names (tokenEnv, apiKeyEnv, a server
	// header's valueEnv), as the binary target passes them.
	for _, k := range slices.Sorted(maps.Keys(spec.Env)) {
		env = append(env, k+"="+spec.Env[k])
	}
	return env
}

// shutdownGrace is how long a proxy under the bounds b may take to stop:
// its stop drain and its shutdown grace (the grace's default when unset).
func shutdownGrace(b Bounds) time.Duration {
	grace := b.D(BoundShutdownGrace)
	if grace <= 0 {
		grace = DefaultBounds().D(BoundShutdownGrace)
	}
	return b.D(BoundStopDrain) + grace
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "[...]\n" + s[len(s)-n:]
}

// Service is a container of one of the suite's images that is not the proxy
// under test (a fake, toxiproxy), on the host network.
type Service struct {
	r *containerRun
}

// StartService runs image with cmd on the host network and returns once GET
// health on addr (which cmd must make it listen on) answers 200. The image
// must be local. Stop it with Stop.
func StartService(ctx context.Context, image string, cmd []string, addr, health string, stderr io.Writer) (*Service, error) {
	r := &containerRun{name: "service:" + image, image: image, cmd: cmd, addr: addr, health: health, stderr: stderr}
	err := r.create(ctx)
	if err == nil {
		err = r.startHealthy(ctx)
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("%s: %w", r.name, err), r.remove(context.WithoutCancel(ctx)))
	}
	return &Service{r: r}, nil
}

// Addr is the loopback address the service listens on.
func (s *Service) Addr() string { return s.r.addr }

// Logs is the service's output so far.
func (s *Service) Logs(ctx context.Context) string { return s.r.logs(ctx) }

// Stop stops and removes the container. Stop may be called more than once.
func (s *Service) Stop(ctx context.Context) error {
	if s.r.ctr == nil {
		return nil
	}
	return errors.Join(s.r.stop(ctx), s.r.remove(ctx))
}

// FreeLoopbackAddr is a free 127.0.0.1 address for a service to listen on
// (released: the service binds it, which may race with another binder).
func FreeLoopbackAddr() (string, error) { return freeLoopbackAddr() }
