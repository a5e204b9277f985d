package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// FixturePackage is go-sdk's conformance server, the upstream the suite is
// written against. It is a package of the go-sdk module (no module of its
// own), so it builds from this module at the go-sdk version go.mod pins.
const FixturePackage = "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"

// Project is the mcplocal project that fronts the fixture.
const Project = "everything"

// Bounds of starting and stopping the processes.
const (
	readyCap   = 15 * time.Second       // one process, until it serves
	readyPoll  = 25 * time.Millisecond  // between readiness probes
	stopGrace  = 5 * time.Second        // SIGTERM, then SIGKILL
	logBytes   = 256 << 10              // output kept per process, for reports
	buildCap   = 5 * time.Minute        // go build of one binary (cold cache)
	probeCap   = 500 * time.Millisecond // one readiness probe
	configName = "mcplocal-conformance.yaml"
)

// Build compiles pkg (an import path or ./relative package) from the module
// at root into dir and returns the binary's path.
func Build(ctx context.Context, root, pkg, dir string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, buildCap)
	defer cancel()
	out := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return out, nil
}

// ModuleRoot walks up from the working directory to the directory holding
// go.mod.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Process is one started executable with its output kept for reports.
type Process struct {
	Name string
	cmd  *exec.Cmd
	out  *capped
	done chan struct{}
	err  error
}

// Start runs path with args and returns once ready reports nil (polled every
// readyPoll, each probe bounded by probeCap), or an error with the process's
// output if it exits or is not ready within readyCap.
func Start(ctx context.Context, name, path string, args []string, ready func(context.Context) error) (*Process, error) {
	p := &Process{Name: name, out: &capped{max: logBytes}, done: make(chan struct{})}
	p.cmd = exec.Command(path, args...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	deadline := time.Now().Add(readyCap)
	for {
		pctx, cancel := context.WithTimeout(ctx, probeCap)
		err := ready(pctx)
		cancel()
		if err == nil {
			return p, nil
		}
		select {
		case <-p.done:
			return nil, fmt.Errorf("%s exited before it was ready (%v):\n%s", name, p.err, p.Output())
		case <-ctx.Done():
			p.Stop()
			return nil, ctx.Err()
		case <-time.After(readyPoll):
		}
		if time.Now().After(deadline) {
			p.Stop()
			return nil, fmt.Errorf("%s not ready within %s (%v):\n%s", name, readyCap, err, p.Output())
		}
	}
}

// Alive reports whether the process is still running.
func (p *Process) Alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Output is the last logBytes of the process's stdout and stderr.
func (p *Process) Output() string { return p.out.String() }

// Stop ends the process: SIGTERM, then SIGKILL after stopGrace. Stop may be
// called more than once.
func (p *Process) Stop() {
	if !p.Alive() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(stopGrace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// FreeAddr returns a loopback address with a port free right now.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	return addr, ln.Close()
}

// TCPReady is a readiness probe: addr accepts a connection.
func TCPReady(addr string) func(context.Context) error {
	return func(ctx context.Context) error {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		return c.Close()
	}
}

// HTTPReady is a readiness probe: GET url answers 200.
func HTTPReady(url string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return nil
	}
}

// StartFixture starts the built everything-server on a free loopback port,
// stateful (sessions, as mcplocal needs), and returns it with its MCP URL.
func StartFixture(ctx context.Context, bin string) (p *Process, url string, err error) {
	for range portTries {
		addr, ferr := FreeAddr()
		if ferr != nil {
			return nil, "", ferr
		}
		p, err = Start(ctx, "everything-server", bin, []string{"-http", addr, "-stateless=false"}, TCPReady(addr))
		if err == nil {
			return p, "http://" + addr + "/mcp", nil
		}
		if !portTaken(err) {
			break
		}
	}
	return nil, "", err
}

// portTries bounds the fresh ports tried when another process took the free
// port between FreeAddr and the server's bind.
const portTries = 3

func portTaken(err error) bool { return strings.Contains(err.Error(), "address already in use") }

// McplocalConfig is the config of one project (Project) with one server, the
// fixture at upstream. With unprefixed, the project sets `prefix: false` so
// the fixture's tool and prompt names pass through unchanged, as the suite
// expects them.
func McplocalConfig(listen, upstream string, unprefixed bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "listen: %s\naudit: memory\nprojects:\n  %s:\n", listen, Project)
	if unprefixed {
		b.WriteString("    prefix: false\n")
	}
	fmt.Fprintf(&b, "    servers:\n      %s:\n        url: %s\n", Project, upstream)
	return b.String()
}

// Mcplocal is a running mcplocal fronting the fixture.
type Mcplocal struct {
	*Process
	// URL is the project's MCP endpoint.
	URL string
	// Prefixed is true when the binary did not accept `prefix: false` (a
	// build before that key existed): names reach the suite prefixed.
	Prefixed bool
}

// startMcplocal serves the fixture at upstream through the mcplocal binary
// bin, in a project with `prefix: false`; a binary that rejects that key is
// started without it, and the result says so (Prefixed).
func startMcplocal(ctx context.Context, bin, upstream, dir string) (*Mcplocal, error) {
	for _, unprefixed := range []bool{true, false} {
		addr, err := FreeAddr()
		if err != nil {
			return nil, err
		}
		cfg := filepath.Join(dir, configName)
		if err := os.WriteFile(cfg, []byte(McplocalConfig(addr, upstream, unprefixed)), 0o600); err != nil {
			return nil, err
		}
		p, err := Start(ctx, "mcplocal", bin, []string{"serve", "--config", cfg}, HTTPReady("http://"+addr+"/healthz"))
		if err != nil {
			if unprefixed && strings.Contains(err.Error(), "prefix") {
				continue // a build without the key: run it as it is
			}
			return nil, err
		}
		return &Mcplocal{Process: p, URL: "http://" + addr + "/projects/" + Project + "/mcp", Prefixed: !unprefixed}, nil
	}
	return nil, errors.New("unreachable")
}

// StartMcplocal serves the fixture at upstream through the mcplocal binary
// bin (see startMcplocal), on a fresh port again if another process took the
// free one first.
func StartMcplocal(ctx context.Context, bin, upstream, dir string) (m *Mcplocal, err error) {
	for range portTries {
		if m, err = startMcplocal(ctx, bin, upstream, dir); err == nil || !portTaken(err) {
			return m, err
		}
	}
	return nil, err
}

// capped keeps the last max bytes written to it.
type capped struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf.Write(p)
	if over := c.buf.Len() - c.max; over > 0 {
		c.buf.Next(over)
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}
