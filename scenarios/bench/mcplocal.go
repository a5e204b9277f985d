package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/config"
)

// Server is the name of the one upstream server in the config Mcplocal
// writes: mcplocal exposes the upstream's tool T as Server_T.
const Server = "up"

// startTimeout bounds how long a started mcplocal may take to answer /healthz.
const startTimeout = 20 * time.Second

// Mcplocal is an mcplocal process started for a benchmark, in front of one
// upstream, with its default SQLite audit and --pprof on a loopback port.
type Mcplocal struct {
	cmd  *exec.Cmd
	dir  string
	done chan struct{}
	// URL is the project's MCP endpoint; Pprof the base of its profiles.
	URL, Pprof string
}

// StartMcplocal runs `path serve` on free loopback ports with a config of
// one project "bench" whose one server is upstreamURL. stderr gets the
// process's log (nil discards).
func StartMcplocal(ctx context.Context, path, upstreamURL string, stderr io.Writer) (*Mcplocal, error) {
	return StartMcplocalWith(ctx, path, upstreamURL, stderr, nil)
}

// StartMcplocalWith is StartMcplocal with the config's `relay` set: nil
// leaves the key out (the default: the raw tools/call relay on), false
// keeps every call on the go-sdk path.
func StartMcplocalWith(ctx context.Context, path, upstreamURL string, stderr io.Writer, relay *bool) (*Mcplocal, error) {
	return StartMcplocalOpts(ctx, path, upstreamURL, McplocalOptions{Stderr: stderr, Relay: relay})
}

// McplocalOptions shape a started mcplocal.
type McplocalOptions struct {
	// Stderr gets the process's log (nil discards).
	Stderr io.Writer
	// Relay sets the config's relay (nil: the default, on).
	Relay *bool
	// Env is added to the process's environment (this process's own), e.g.
	// knobs: "MCPCTL_SESSIONS_MAX=20000".
	Env []string
}

// StartMcplocalOpts is StartMcplocal shaped by o.
func StartMcplocalOpts(ctx context.Context, path, upstreamURL string, o McplocalOptions) (*Mcplocal, error) {
	stderr, relay := o.Stderr, o.Relay
	dir, err := os.MkdirTemp("", "mcpchaos-bench-")
	if err != nil {
		return nil, err
	}
	cfg := &config.Config{
		Audit:    "sqlite:" + filepath.Join(dir, "audit.db"),
		Projects: map[string]*config.Project{"bench": {Servers: map[string]*config.Server{Server: {URL: upstreamURL}}}},
		Relay:    relay,
	}
	if err := cfg.Validate(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	doc, err := config.Marshal(cfg)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cfgPath := filepath.Join(dir, "mcplocal.yaml")
	if err := os.WriteFile(cfgPath, doc, 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	listen, err := freeAddr()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	pprofAddr, err := freeAddr()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	m := &Mcplocal{dir: dir, done: make(chan struct{}),
		URL: "http://" + listen + "/projects/bench/mcp", Pprof: "http://" + pprofAddr + "/debug/pprof"}
	if stderr == nil {
		stderr = io.Discard
	}
	m.cmd = exec.Command(path, "serve", "--config", cfgPath, "--listen", listen, "--pprof", pprofAddr)
	m.cmd.Env = append(os.Environ(), o.Env...)
	m.cmd.Stdout, m.cmd.Stderr = stderr, stderr
	m.cmd.WaitDelay = 2 * time.Second
	if err := m.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	go func() { _ = m.cmd.Wait(); close(m.done) }()
	sctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(sctx, http.MethodGet, "http://"+listen+"/healthz", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return m, nil
			}
		}
		select {
		case <-m.done:
			m.Stop()
			return nil, fmt.Errorf("%s exited before answering /healthz", path)
		case <-sctx.Done():
			m.Stop()
			return nil, fmt.Errorf("%s: no /healthz answer within %v", path, startTimeout)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// PID is the process id.
func (m *Mcplocal) PID() int { return m.cmd.Process.Pid }

// Stop ends the process (SIGTERM, then SIGKILL after 10 s) and removes its
// files. Stop may be called more than once.
func (m *Mcplocal) Stop() {
	select {
	case <-m.done:
	default:
		_ = m.cmd.Process.Signal(os.Interrupt)
		select {
		case <-m.done:
		case <-time.After(10 * time.Second):
			_ = m.cmd.Process.Kill()
			<-m.done
		}
	}
	if m.dir != "" {
		_ = os.RemoveAll(m.dir)
		m.dir = ""
	}
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	return ln.Addr().String(), errors.Join(ln.Close())
}
