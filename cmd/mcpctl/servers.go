package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mcpchaos/mcpchaos/proxy/config"
)

// stdin is what 'apply -f -' reads; tests replace it.
var stdin io.Reader = os.Stdin

const serversUsage = `mcpctl create server NAME [--project P] [--server-url U]
        [--health-check-tool T] [--health-check-arguments JSON]
        [--health-check-interval S] [--health-check-timeout S]
        [--health-check-failure-threshold N] [--header NAME=env:VAR]...
        [--force] [--wait D]
mcpctl get servers [--project P] [-o|--output table|yaml|json]
mcpctl delete server NAME [--project P]
mcpctl apply -f FILE        (FILE "-" reads standard input)

Manage a project's upstream servers while the proxy runs (/api/v1/servers).
A change applies without a restart: the project's connected clients are sent
notifications/tools/list_changed and see the new tools, a replaced or deleted
server's upstream sessions are closed, and the health prober probes the new
server. It persists in the servers file beside the proxy's config
(CONFIG.servers.yaml, or mcplocal serve --servers-file), which replaces the
config's servers of the projects it lists at the next start.

create server: --server-url and --project are needed for a new server (--project may
be left out when the proxy has one project). With --force an existing server
is replaced; flags left out keep its URL and, when no --health-check-* flag
is given, its healthCheck. --health-check-tool makes the probe a readiness
probe (tools/call on that tool, which must round-trip to the server's own
upstream), and --health-check-arguments JSON gives that call's arguments
(refused without the tool); omit the tool to keep a liveness probe
(tools/list) while still tuning the timings. A tool the server does not
expose is refused at create time.
Intervals and timeouts are in seconds.

--header NAME=env:VAR (repeatable) sends header NAME with every request to
the server, its value read from the proxy's environment variable VAR (the
proxy refuses a VAR it does not have). The servers file keeps the
reference, never the value. Credentials are bound to their URL: with --force,
a server keeping its URL keeps its headers unless --header is given; a
server given a new --server-url gets only the headers given now (none
without --header), so its old key never reaches the new URL.

create server then has the proxy run the server's probe once (initialize,
tools/list and, for a readiness probe, tools/call of its tool) and says what
it found:
  check: docmost/wiki answered initialize and tools/list: 3 tools
or, exit 1, the error (connection refused, an L7 proxy's 403, a readiness
tool answering isError, ...): the server stays configured and probed either
way. --wait D checks again every 0.5s until the probe passes, for at most D
(e.g. --wait 30s), then exits 1 with the last error.

get servers: -o yaml writes the specs in the form apply -f reads back, so
  mcpctl get servers -o yaml > servers.yaml; mcpctl apply -f servers.yaml
restores exactly the same servers and probes.

apply -f: creates or replaces every server in the file (a YAML list of specs,
or one spec); each line of output says created, replaced or unchanged.

A bad spec is refused with the field at fault named. When the proxy has
users, an admin bearer token is required.

` + connHelp + `
Example (the seed's readiness probe on the UniFi server):
  mcpctl create server unifi-network --health-check-tool list_sites \
    --health-check-interval 60 --health-check-timeout 15 --force
`

// adminClient is what every server command shares: the connection to the
// proxy (--url, --token, --timeout, as every command).
type adminClient struct {
	conn
}

// flags registers the connection flags every command takes.
func (a *adminClient) flags(fs *flag.FlagSet) { a.conn.flags(fs, defaultTimeout) }

// do sends one request to the servers API and decodes a 2xx answer into
// out; an error answer becomes an error carrying the proxy's own message.
func (a *adminClient) do(method, path string, body any, out any) (int, error) {
	return a.doCtx(context.Background(), method, path, body, out)
}

// doCtx is do under parent as well as the --timeout bound.
func (a *adminClient) doCtx(parent context.Context, method, path string, body any, out any) (int, error) {
	u, err := a.endpoint(path)
	if err != nil {
		return 0, usagef("", "%v", err)
	}
	if q := strings.IndexByte(path, '?'); q >= 0 {
		u.Path = strings.TrimSuffix(u.Path, path[q:])
		u.RawQuery = path[q+1:]
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(parent, a.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	a.authorize(req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, a.unanswered(req, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return 0, fmt.Errorf("%s %s: %v", method, u, err)
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			return resp.StatusCode, errors.New(e.Error)
		}
		return resp.StatusCode, fmt.Errorf("%s %s: proxy answered %s: %s", method, u, resp.Status, bodyExcerpt(b))
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: proxy answered %s: %s", method, u, resp.Status, bodyExcerpt(b))
		}
	}
	return resp.StatusCode, nil
}

func (a *adminClient) list(project string) ([]config.ServerSpec, error) {
	path := "/api/v1/servers"
	if project != "" {
		path += "?project=" + project
	}
	var out struct {
		Servers []config.ServerSpec `json:"servers"`
	}
	_, err := a.do(http.MethodGet, path, nil, &out)
	return out.Servers, err
}

// put creates or replaces spec; force replaces an existing one.
func (a *adminClient) put(spec config.ServerSpec, force bool) (string, error) {
	var out struct {
		Outcome string `json:"outcome"`
	}
	var err error
	if force {
		_, err = a.do(http.MethodPut, "/api/v1/servers/"+spec.Project+"/"+spec.Name, spec, &out)
	} else {
		_, err = a.do(http.MethodPost, "/api/v1/servers", spec, &out)
	}
	return out.Outcome, err
}

func parseServerFlags(cmd string, a *adminClient, fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, bool, error) {
	pos, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, serversUsage)
		return nil, true, nil
	}
	if err != nil {
		return nil, false, usagef(cmd, "%s: %v", cmd, err)
	}
	return pos, false, a.resolve(cmd)
}

func runCreate(args []string, stdout io.Writer, getenv func(string) string) error {
	if len(args) == 0 || args[0] != "server" {
		return usagef("create", "create: want 'create server NAME ...'")
	}
	fs := flag.NewFlagSet("create server", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	a := &adminClient{conn{getenv: getenv}}
	a.flags(fs)
	project := fs.String("project", "", "the server's project")
	url := fs.String("server-url", "", "the server's Streamable HTTP MCP endpoint")
	tool := fs.String("health-check-tool", "", "readiness probe tool")
	argsJSON := fs.String("health-check-arguments", "", "readiness probe arguments, a JSON object")
	interval := fs.Float64("health-check-interval", 0, "seconds between probes")
	timeout := fs.Float64("health-check-timeout", 0, "seconds one probe may take")
	threshold := fs.Int("health-check-failure-threshold", 0, "failures in a row that make the server unhealthy")
	force := fs.Bool("force", false, "replace the server if it exists")
	var headers headerFlags
	fs.Var(&headers, "header", "NAME=env:VAR: header NAME's value from the proxy's environment variable VAR (repeatable)")
	wait := fs.Duration("wait", 0, "check the server again until it answers, for at most this long")
	pos, helped, err := parseServerFlags("create", a, fs, args[1:], stdout)
	if helped || err != nil {
		return err
	}
	waitSet := false
	fs.Visit(func(f *flag.Flag) { waitSet = waitSet || f.Name == "wait" })
	if waitSet && *wait <= 0 {
		return usagef("create", "create server: --wait must be positive, got %v", *wait)
	}
	if len(pos) != 1 || strings.ContainsAny(pos[0], "/?#") {
		return usagef("create", "create server: want exactly one server NAME, got %q", strings.Join(pos, " "))
	}
	if *argsJSON != "" && *tool == "" {
		return usagef("create", "create server: --health-check-arguments applies only with --health-check-tool (the readiness probe's tools/call; a liveness probe sends none)")
	}
	healthSet := false
	fs.Visit(func(f *flag.Flag) {
		if strings.HasPrefix(f.Name, "health-check-") {
			healthSet = true
		}
	})
	spec := config.ServerSpec{Name: pos[0], Project: *project, URL: *url, Headers: headers.refs}
	if healthSet {
		spec.HealthCheck = &config.HealthCheck{Tool: *tool, IntervalSeconds: *interval, TimeoutSeconds: *timeout, FailureThreshold: *threshold}
		if *argsJSON != "" {
			if err := json.Unmarshal([]byte(*argsJSON), &spec.HealthCheck.Arguments); err != nil {
				return usagef("create", "create server: --health-check-arguments: want a JSON object: %v", err)
			}
		}
	}
	if spec.Project == "" || spec.URL == "" || (*force && !healthSet) {
		if err := a.complete(&spec, *force, healthSet); err != nil {
			return err
		}
	}
	outcome, err := a.put(spec, *force)
	if err != nil {
		return fmt.Errorf("create server %s: %w", spec.Name, err)
	}
	fmt.Fprintf(stdout, "server %s/%s %s (%s)\n", spec.Project, spec.Name, outcome, probeText(spec.HealthCheck))
	return a.checkServer(spec, *wait, stdout)
}

// waitPoll is how long create server --wait lets pass between two checks.
const waitPoll = 500 * time.Millisecond

// serverCheck is the proxy's answer to POST .../check (proxy/servercheck.go).
type serverCheck struct {
	Answered bool   `json:"answered"`
	Tools    int    `json:"tools"`
	Probe    string `json:"probe"`
	Healthy  bool   `json:"healthy"`
	Error    string `json:"error"`
}

// checkServer has the proxy run spec's server's probe once (initialize,
// tools/list, a readiness probe's tools/call) and says what it found: its
// tools and the probe passed, or an error. With wait > 0 it checks again
// every waitPoll until the probe passes or wait has passed; each check is
// bounded by --timeout and by what is left of wait.
func (a *adminClient) checkServer(spec config.ServerSpec, wait time.Duration, stdout io.Writer) error {
	ctx := context.Background()
	if wait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	id := spec.Project + "/" + spec.Name
	again := "wait for it with --wait D"
	if wait > 0 {
		again = "wait longer with a larger --wait"
	}
	stays := fmt.Sprintf("it stays configured and probed: %s, or remove it with mcpctl delete server %s --project %s", again, spec.Name, spec.Project)
	last := "was not checked in time"
	for checks := 1; ; checks++ {
		var c serverCheck
		_, err := a.doCtx(ctx, http.MethodPost, "/api/v1/servers/"+spec.Project+"/"+spec.Name+"/check", nil, &c)
		switch {
		case err != nil && ctx.Err() == nil:
			return fmt.Errorf("server %s is configured, but the proxy could not check it: %w", id, err)
		case err == nil && c.Healthy:
			fmt.Fprintf(stdout, "check: %s answered initialize and tools/list: %d %s", id, c.Tools, plural(c.Tools, "tool", "tools"))
			if strings.HasPrefix(c.Probe, "readiness") {
				fmt.Fprintf(stdout, "; %s passed", c.Probe)
			}
			fmt.Fprintln(stdout)
			return nil
		case err == nil && c.Answered:
			last = fmt.Sprintf("answered initialize and tools/list (%d %s), but its probe (%s) failed: %s", c.Tools, plural(c.Tools, "tool", "tools"), c.Probe, c.Error)
		case err == nil:
			last = "did not answer the check (initialize, tools/list): " + c.Error
		}
		if wait <= 0 {
			return fmt.Errorf("server %s %s; %s", id, last, stays)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("server %s did not pass its check within %v (%d %s); at the last it %s; %s", id, wait, checks, plural(checks, "check", "checks"), last, stays)
		case <-time.After(waitPoll):
		}
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// complete fills what create's flags left out: the project when the server
// (or the proxy's only project) says which, and with --force the existing
// server's URL and probe.
func (a *adminClient) complete(spec *config.ServerSpec, force, healthSet bool) error {
	all, err := a.list("")
	if err != nil {
		return err
	}
	var existing *config.ServerSpec
	projects := map[string]bool{}
	for i, s := range all {
		projects[s.Project] = true
		if s.Name == spec.Name && (spec.Project == "" || s.Project == spec.Project) {
			if existing != nil && spec.Project == "" {
				return usagef("create", "create server: server %s exists in projects %s and %s: say which with --project", spec.Name, existing.Project, s.Project)
			}
			existing = &all[i]
		}
	}
	if spec.Project == "" {
		switch {
		case existing != nil:
			spec.Project = existing.Project
		case len(projects) == 1:
			for p := range projects {
				spec.Project = p
			}
		default:
			return usagef("create", "create server: --project is required (the proxy has several projects)")
		}
	}
	if existing != nil && force {
		if spec.URL == "" {
			spec.URL = existing.URL
		}
		if !healthSet {
			spec.HealthCheck = existing.HealthCheck
		}
	}
	if spec.URL == "" {
		return usagef("create", "create server: --server-url is required for a new server (--url is the proxy's)")
	}
	return nil
}

func probeText(h *config.HealthCheck) string {
	s := "liveness probe: tools/list"
	if h != nil && h.Tool != "" {
		s = "readiness probe: tools/call " + h.Tool
	}
	return fmt.Sprintf("%s every %v, timeout %v, unhealthy after %d failures", s, h.Interval(), h.Timeout(), h.Threshold())
}

func runGetServers(args []string, stdout io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("get servers", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	a := &adminClient{conn{getenv: getenv}}
	a.flags(fs)
	project := fs.String("project", "", "only this project's servers")
	short := fs.String("o", "table", "output: table, yaml or json")
	long := fs.String("output", "table", "output: table, yaml or json (as -o)")
	pos, helped, err := parseServerFlags("get", a, fs, args, stdout)
	if helped || err != nil {
		return err
	}
	var setShort, setLong bool
	fs.Visit(func(f *flag.Flag) {
		setShort = setShort || f.Name == "o"
		setLong = setLong || f.Name == "output"
	})
	output := *short
	if setLong {
		output = *long
	}
	if setShort && setLong && *short != *long {
		return usagef("get", "get servers: -o %q and --output %q: give one", *short, *long)
	}
	if len(pos) > 0 {
		return usagef("get", "get servers: unexpected arguments: %s", strings.Join(pos, " "))
	}
	if output != "table" && output != "yaml" && output != "json" {
		return usagef("get", "get servers: -o %q: want table, yaml or json", output)
	}
	specs, err := a.list(*project)
	if err != nil {
		return fmt.Errorf("get servers: %w", err)
	}
	switch output {
	case "yaml":
		b, err := yaml.Marshal(specs)
		if err != nil {
			return err
		}
		_, err = stdout.Write(b)
		return err
	case "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(specs)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROJECT\tSERVER\tURL\tPROBE")
	for _, s := range specs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Project, s.Name, s.URL, probeText(s.HealthCheck))
	}
	return tw.Flush()
}

func runDelete(args []string, stdout io.Writer, getenv func(string) string) error {
	if len(args) == 0 || args[0] != "server" {
		return usagef("delete", "delete: want 'delete server NAME [--project P]'")
	}
	fs := flag.NewFlagSet("delete server", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	a := &adminClient{conn{getenv: getenv}}
	a.flags(fs)
	project := fs.String("project", "", "the server's project")
	pos, helped, err := parseServerFlags("delete", a, fs, args[1:], stdout)
	if helped || err != nil {
		return err
	}
	if len(pos) != 1 || strings.ContainsAny(pos[0], "/?#") {
		return usagef("delete", "delete server: want exactly one server NAME, got %q", strings.Join(pos, " "))
	}
	spec := config.ServerSpec{Name: pos[0], Project: *project}
	if spec.Project == "" {
		all, err := a.list("")
		if err != nil {
			return err
		}
		for _, s := range all {
			if s.Name == spec.Name {
				if spec.Project != "" {
					return usagef("delete", "delete server: server %s exists in projects %s and %s: say which with --project", spec.Name, spec.Project, s.Project)
				}
				spec.Project = s.Project
			}
		}
		if spec.Project == "" {
			return fmt.Errorf("delete server: no project has a server %q", spec.Name)
		}
	}
	if _, err := a.do(http.MethodDelete, "/api/v1/servers/"+spec.Project+"/"+spec.Name, nil, nil); err != nil {
		return fmt.Errorf("delete server %s: %w", spec.Name, err)
	}
	fmt.Fprintf(stdout, "server %s/%s deleted\n", spec.Project, spec.Name)
	return nil
}

func runApply(args []string, stdout io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("apply", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	a := &adminClient{conn{getenv: getenv}}
	a.flags(fs)
	file := fs.String("f", "", "file of server specs; - for standard input")
	pos, helped, err := parseServerFlags("apply", a, fs, args, stdout)
	if helped || err != nil {
		return err
	}
	if len(pos) > 0 || *file == "" {
		return usagef("apply", "apply: want 'apply -f FILE'")
	}
	var b []byte
	if *file == "-" {
		b, err = io.ReadAll(io.LimitReader(stdin, maxBody))
	} else {
		b, err = os.ReadFile(*file)
	}
	if err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	specs, err := config.ParseServerSpecs(b)
	if err != nil {
		return fmt.Errorf("apply -f %s: %w", *file, err)
	}
	var failed []string
	for i, s := range specs {
		if s.Project == "" || s.Name == "" {
			failed = append(failed, fmt.Sprintf("servers[%d]: name and project are required", i))
			continue
		}
		outcome, err := a.put(s, true)
		if err != nil {
			failed = append(failed, fmt.Sprintf("server %s/%s: %v", s.Project, s.Name, err))
			continue
		}
		fmt.Fprintf(stdout, "server %s/%s %s\n", s.Project, s.Name, outcome)
	}
	if len(failed) > 0 {
		return fmt.Errorf("apply: %d of %d refused:\n  %s", len(failed), len(specs), strings.Join(failed, "\n  "))
	}
	return nil
}

// headerFlags collects --header NAME=env:VAR flags.
type headerFlags struct{ refs map[string]config.HeaderRef }

func (h *headerFlags) String() string { return "" }

func (h *headerFlags) Set(v string) error {
	name, ref, ok := strings.Cut(v, "=")
	env, isEnv := strings.CutPrefix(ref, "env:")
	if !ok || name == "" || !isEnv || env == "" {
		return fmt.Errorf("want NAME=env:VAR (the value is read from the proxy's environment variable VAR), got %q", v)
	}
	if h.refs == nil {
		h.refs = map[string]config.HeaderRef{}
	}
	h.refs[name] = config.HeaderRef{ValueEnv: env}
	return nil
}
