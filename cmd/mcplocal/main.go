// Command mcplocal serves the MCP proxy.
//
//	mcplocal serve --config FILE [--listen ADDR] [--audit DSN]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpchaos/mcpchaos/cmd/mcplocal/asynclog"
	"github.com/mcpchaos/mcpchaos/proxy"
	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/failpoint"
	"github.com/mcpchaos/mcpchaos/proxy/gctune"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/profiling"
	"github.com/mcpchaos/mcpchaos/proxy/redact"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "mcplocal:", err)
		}
		os.Exit(2)
	}
}

const usage = `mcplocal — an MCP proxy where nothing optional is unbounded.

Usage:
  mcplocal serve --config FILE [--listen ADDR] [--audit DSN] [--servers-file FILE] [--pprof ADDR] [--allow-anonymous-network]
  mcplocal knobs        print every bound with its value (env overrides applied)

Every bound is a knob read from the environment (see docs/knobs.md).
`

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, usage)
		if len(args) == 0 {
			return errors.New("missing command")
		}
		return nil
	}
	switch args[0] {
	case "serve":
		return serve(args[1:], stderr)
	case "knobs":
		kv, err := knobs.Load(os.Getenv)
		if err != nil {
			return err
		}
		for _, k := range knobs.Table {
			fmt.Fprintf(stdout, "%-36s %10d %-5s %s\n", k.Env, k.Raw(kv), unitAbbrev[k.Unit], k.Bounds)
		}
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

func serve(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "YAML config file (required)")
	listen := fs.String("listen", "", "listen address, overrides the file's listen")
	auditDSN := fs.String("audit", "", "audit store (sqlite:PATH or postgres://...), overrides the file's audit")
	serversFile := fs.String("servers-file", "", "where servers managed by mcpctl (create/apply/delete server) persist; default CONFIG.servers.yaml beside --config")
	allowAnon := fs.Bool("allow-anonymous-network", false, "start even when --listen is reachable from other hosts and no users are configured (every project then serves anyone without a token)")
	pprofAddr := fs.String("pprof", "", "serve Go profiles (/debug/pprof/) on this loopback address, e.g. 127.0.0.1:6060; off by default (see docs/performance.md)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cfgPath == "" {
		fs.Usage()
		return errors.New("serve: --config is required")
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	if *listen != "" {
		cfg.Listen = *listen
	}
	if *auditDSN != "" {
		cfg.Audit = *auditDSN
		if err := cfg.Validate(); err != nil {
			return err
		}
	}
	if err := anonymousNetwork(cfg.Listen, len(cfg.Users), *allowAnon); err != nil {
		return err
	}
	kv, err := knobs.Load(os.Getenv)
	if err != nil {
		return err
	}
	// Log lines leave through a bounded buffer, off the request path
	// (cmd/mcplocal/asynclog); what is queued is written before serve returns,
	// within the shutdown grace: a stalled stderr must not keep the process
	// alive (the error printed then says how much was left).
	logw := asynclog.New(stderr, int(kv.LogBufferBytes))
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), kv.ShutdownGrace)
		defer cancel()
		if err := logw.Close(ctx); err != nil {
			fmt.Fprintln(stderr, "mcplocal:", err)
		}
	}()
	logger := newLogger(logw)
	if pct, from := gctune.Apply(os.Getenv); from != "GOGC" {
		logger.Info("garbage collector target set (GOGC overrides it; see docs/performance.md)", "gogc", pct)
	}
	if *pprofAddr != "" {
		stopProfiles, err := profiling.Serve(*pprofAddr, logger)
		if err != nil {
			return fmt.Errorf("serve --pprof: %w", err)
		}
		defer stopProfiles()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fps, err := failpoints(logger)
	if err != nil {
		return err
	}
	if *serversFile == "" {
		*serversFile = config.ServersFile(*cfgPath)
	}
	p, err := proxy.New(ctx, cfg, proxy.Options{Logger: logger, Failpoints: fps, ServersFile: *serversFile})
	if err != nil {
		return err
	}
	if err := p.Start(cfg.Listen); err != nil {
		_ = p.Close(context.Background())
		return err
	}
	conns := []any{"conns_max", p.Knobs().ConnsMax}
	if knob, fds := p.ConnsLimit(); knob != p.Knobs().ConnsMax {
		conns = append(conns, "conns_max_clamped", fmt.Sprintf("MCPCTL_CONNS_MAX=%d lowered below the open-file limit %d (ulimit -n) so the cap makes room before accept fails", knob, fds))
	}
	logger.Info("mcplocal listening", append([]any{"addr", p.Addr(), "projects", len(cfg.Projects), "audit", cfg.Audit}, conns...)...)
	<-ctx.Done()
	logger.Info("mcplocal stopping")
	cctx, cancel := context.WithTimeout(context.Background(), p.Knobs().StopDrain+p.Knobs().ShutdownGrace+5*time.Second)
	defer cancel()
	return p.Close(cctx)
}

// newLogger is mcplocal's log: text on w, info and above, with every
// secret (a DSN's password, a URL's userinfo password or query) redacted
// from messages and values, so the startup line that names the audit store
// never prints its password.
func newLogger(w io.Writer) *slog.Logger {
	return slog.New(redact.Handler(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo})))
}

// unitAbbrev is how `mcplocal knobs` prints each unit.
var unitAbbrev = map[knobs.Unit]string{knobs.Millis: "ms", knobs.Count: "", knobs.Bytes: "B"}

// The failpoint variables: chaos failpoints make handlers misbehave on
// purpose, so the production binary ignores MCPLOCAL_FAILPOINTS unless
// MCPLOCAL_ENABLE_FAILPOINTS=1 says, explicitly, that this is a test run
// (the mcpchaos harness sets both).
const (
	failpointsEnv       = "MCPLOCAL_FAILPOINTS"
	enableFailpointsEnv = "MCPLOCAL_ENABLE_FAILPOINTS"
)

func failpoints(logger *slog.Logger) (*failpoint.Set, error) {
	spec := os.Getenv(failpointsEnv)
	if spec == "" {
		return nil, nil
	}
	if os.Getenv(enableFailpointsEnv) != "1" {
		logger.Warn("failpoints ignored: this is not a test run", failpointsEnv, spec, "enable", enableFailpointsEnv+"=1")
		return nil, nil
	}
	fps, err := failpoint.Parse(spec)
	if err != nil {
		return nil, err
	}
	logger.Warn("chaos failpoints armed: requests will misbehave on purpose", "failpoints", spec)
	return fps, nil
}
