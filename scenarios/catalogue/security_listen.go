package catalogue

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// The attacks on how mcplocal starts: its listen address and its open-file
// limit, which only a started process has.

// listenScenarios are the security scenarios about mcplocal serve's start.
func listenScenarios() []Scenario {
	return []Scenario{
		{Fault: harness.None{}, Operation: ConnsClampedBelowFDs, Promise: "8 the connection cap stays below the open-file limit",
			Labels: []string{"security", "bounded-io", "config"}, Env: twoUsers, Budget: func(harness.Bounds) time.Duration { return fdFloodBudget },
			Expect: sessionAnswered, Needs: mcplocalServe},
		{Fault: harness.None{}, Operation: AnonymousNetworkRefused, Promise: "8 a listen other hosts reach needs users",
			Labels: []string{"security", "config", "auth"}, Env: twoUsers, Budget: func(harness.Bounds) time.Duration { return anonymousStartBudget },
			Expect: sessionAnswered, Needs: mcplocalServe},
	}
}

// mcplocalServe says why a target is not `mcplocal serve`, the command
// whose start these scenarios attack.
func mcplocalServe(t harness.Target) string {
	switch t.(type) {
	case *harness.Binary:
		return ""
	case *harness.InProcess:
		return "the listen address and the open-file limit are mcplocal serve's, read as the process starts: in process there is no command line, and the test process's limit is not the proxy's to set"
	}
	return "a check of how mcplocal serve starts (its listen address, its open-file limit): target " + t.Name() + " is not mcplocal's binary"
}

const (
	// fdFloodLimit is the open-file limit the flooded mcplocal starts
	// under; fdFloodConns the silent connections sent to it, more than it
	// has files for.
	fdFloodLimit = 256
	fdFloodConns = 320
	// fdFloodAnswer bounds the wait for /healthz's answer during the
	// flood: the cap answers at once (a 503 naming the knob, or 200).
	fdFloodAnswer = 2 * time.Second
	fdFloodBudget = 20 * time.Second
	// anonymousStartBudget bounds each refused start.
	anonymousStartBudget = 20 * time.Second
)

// ConnsClampedBelowFDs: mcplocal started under `ulimit -n 256` with
// MCPCTL_CONNS_MAX at 20,000 says in its start-up line that it lowered the
// cap below the limit; then 320 silent connections (more than it has
// files for) are opened, and a /healthz on a new connection is still
// answered within 2 s (200, or the cap's 503 naming MCPCTL_CONNS_MAX): a
// cap at the fd limit is no cap, accept fails first and nothing answers.
var ConnsClampedBelowFDs = Operation{Name: "MCPCTL_CONNS_MAX above the open-file limit, and more silent connections than files", Do: func(ctx context.Context, env *harness.Env) Observation {
	clk := startClock()
	twin, why := harness.Twin(env.Target)
	bin, ok := twin.(*harness.Binary)
	if !ok {
		return clk.stop(Observation{Err: fmt.Errorf("not a binary target: %s", why)})
	}
	bin.FDLimit = fdFloodLimit
	b := env.Bounds().With(harness.BoundConns, 20000)
	if err := bin.Start(ctx, harness.Spec{World: twinWorld(env, "fd-clamp"), Bounds: b}); err != nil {
		return clk.stop(Observation{Err: err})
	}
	defer bin.Stop(context.Background())
	var o Observation
	if !strings.Contains(bin.Logs(), "conns_max_clamped") {
		o.Broken = append(o.Broken, fmt.Sprintf("8 mcplocal under ulimit -n %d with MCPCTL_CONNS_MAX=20000 did not say in its start-up line that it lowered the cap (conns_max_clamped)", fdFloodLimit))
	}
	addr := strings.TrimPrefix(bin.URL(), "http://")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	d := net.Dialer{Timeout: time.Second}
	for i := 0; i < fdFloodConns && ctx.Err() == nil; i++ {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			break // the backlog is full: the flood is as big as it gets
		}
		conns = append(conns, c)
	}
	if len(conns) <= fdFloodLimit {
		o.Broken = append(o.Broken, fmt.Sprintf("only %d silent connections could be opened, not more than the %d files: the attack did not strike", len(conns), fdFloodLimit))
	}
	status, line, err := healthzWithin(ctx, addr, fdFloodAnswer)
	switch {
	case err != nil:
		o.Broken = append(o.Broken, fmt.Sprintf("8 /healthz on a new connection, with %d silent connections open and %d files, was not answered within %v: %v", len(conns), fdFloodLimit, fdFloodAnswer, err))
	case status != 200 && !(status == 503 && strings.Contains(line, "MCPCTL_CONNS_MAX")):
		o.Broken = append(o.Broken, fmt.Sprintf("/healthz during the flood answered %d without naming MCPCTL_CONNS_MAX: %s", status, excerpt(line)))
	}
	clk.into(&o)
	return o
}}

// healthzWithin sends GET /healthz on a new connection to addr and reads
// the answer's status and its whole text, within d.
func healthzWithin(ctx context.Context, addr string, d time.Duration) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, "", err
	}
	defer c.Close()
	dl, _ := ctx.Deadline()
	_ = c.SetDeadline(dl)
	if _, err := fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", addr); err != nil {
		return 0, "", err
	}
	var b strings.Builder
	sc := bufio.NewScanner(c)
	for sc.Scan() && b.Len() < 64<<10 {
		b.WriteString(sc.Text() + "\n")
	}
	var status int
	if _, err := fmt.Sscanf(b.String(), "HTTP/1.1 %d", &status); err != nil {
		if sc.Err() != nil {
			return 0, b.String(), sc.Err()
		}
		return 0, b.String(), fmt.Errorf("no HTTP status line: %q", excerpt(b.String()))
	}
	return status, b.String(), nil
}

// unroutable is a listen address other hosts would reach (not loopback)
// that no interface here holds (TEST-NET-1, RFC 5737): a start that gets
// as far as listening fails to bind, so nothing ever listens beyond
// loopback.
const unroutable = "192.0.2.1:0"

// AnonymousNetworkRefused: `mcplocal serve --listen 192.0.2.1:0` with no
// users configured refuses to start, exiting non-zero with a line naming
// --allow-anonymous-network; with that flag, or with users, the same start
// is not refused for that reason (it goes on, and fails to bind the
// address no interface holds).
var AnonymousNetworkRefused = Operation{Name: "mcplocal serve on a non-loopback address with no users", Do: func(ctx context.Context, env *harness.Env) Observation {
	clk := startClock()
	twin, why := harness.Twin(env.Target)
	bin, ok := twin.(*harness.Binary)
	if !ok {
		return clk.stop(Observation{Err: fmt.Errorf("not a binary target: %s", why)})
	}
	write := func(name string, users map[string]harness.User) (string, error) {
		w := twinWorld(env, name)
		w.Users = users
		doc, err := mcplocal.ConfigYAML(w)
		if err != nil {
			return "", err
		}
		path := filepath.Join(env.Dir, name+".yaml")
		return path, os.WriteFile(path, doc, 0o600)
	}
	serve := func(cfgPath string, extra ...string) (string, error) {
		sctx, cancel := context.WithTimeout(ctx, anonymousStartBudget/3)
		defer cancel()
		cmd := exec.CommandContext(sctx, bin.Path, append([]string{"serve", "--config", cfgPath, "--listen", unroutable}, extra...)...)
		cmd.Env = append(os.Environ(), bin.Env...)
		out, err := cmd.CombinedOutput()
		if sctx.Err() != nil {
			return string(out), fmt.Errorf("still running after %v", anonymousStartBudget/3)
		}
		return string(out), err
	}
	anon, err := write("anonymous-network", nil)
	if err != nil {
		return clk.stop(Observation{Err: err})
	}
	withUsers, err := write("users-network", env.World.Users)
	if err != nil {
		return clk.stop(Observation{Err: err})
	}
	var o Observation
	out, err := serve(anon)
	switch {
	case err == nil:
		o.Broken = append(o.Broken, "8 mcplocal serve --listen "+unroutable+" with no users exited 0")
	case !strings.Contains(out, "--allow-anonymous-network"):
		o.Broken = append(o.Broken, "8 mcplocal serve --listen "+unroutable+" with no users was not refused for it (no word of --allow-anonymous-network): "+excerpt(lastLine(out)))
	}
	if out, _ := serve(anon, "--allow-anonymous-network"); strings.Contains(out, "no users are configured") {
		o.Broken = append(o.Broken, "--allow-anonymous-network did not lift the refusal: "+excerpt(lastLine(out)))
	}
	if len(env.World.Users) == 0 {
		o.Broken = append(o.Broken, "the world has no users: the start with users cannot be shown")
	} else if out, _ := serve(withUsers); strings.Contains(out, "no users are configured") {
		o.Broken = append(o.Broken, "a config with users was refused as anonymous: "+excerpt(lastLine(out)))
	}
	clk.into(&o)
	return o
}}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
