// Command mcpctl is the operator CLI for the mcplocal proxy.
//
//	mcpctl trace CODE [--json]
//	mcpctl get instances | chat MESSAGE | pause PROJECT | resume PROJECT
//	mcpctl create server NAME ... | get servers | delete server NAME | apply -f FILE
//	mcpctl help [COMMAND]
//
// Every command takes --url, --token (or --token-file) and --timeout, with
// defaults from $MCPCTL_URL, $MCPCTL_TOKEN and $MCPCTL_TOKEN_FILE (connHelp).
//
// Exit status: 0 on success, 1 when the command failed (proxy unreachable, an
// error answer, no rows), 2 on a usage error.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
)

func main() {
	os.Exit(report(run(os.Args[1:], os.Stdout, os.Stderr), os.Stderr))
}

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// usageError is a mistake in the command line: exit 2, with a pointer to help.
type usageError struct {
	cmd string // the command whose help to point at; "" for the top level
	msg string
}

func (e *usageError) Error() string { return e.msg }

func usagef(cmd, format string, args ...any) error {
	return &usageError{cmd: cmd, msg: fmt.Sprintf(format, args...)}
}

// report prints err (if any) to stderr and returns the process exit status.
func report(err error, stderr io.Writer) int {
	var ue *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "mcpctl: %v\n", err)
		help := "mcpctl help"
		if ue.cmd != "" {
			help += " " + ue.cmd
		}
		fmt.Fprintf(stderr, "Run '%s' for usage.\n", help)
		return exitUsage
	default:
		fmt.Fprintf(stderr, "mcpctl: %v\n", err)
		return exitFailure
	}
}

const usage = `mcpctl — operator CLI for the mcplocal MCP proxy.

Usage (every command also takes the connection flags below):
  mcpctl trace CODE [--json | --bundle FILE [--private]]
        Show the waterfall of one request from the proxy's audit rows:
        every span (tool call, pipeline, stages, gate, LLM attempts,
        upstream call) nested under its parent, with status, duration and a
        bar to scale; the slowest span marked; degradations (⚠) with their
        reasons and failures (✗) with their detail.
        CODE is the 8-character trace code quoted in errors, ⚠ notices,
        result _meta and the proxy's log. --bundle writes what
        'mcpchaos replay' needs instead (an admin's, secrets removed).

  mcpctl get instances [--json]
        The upstream servers with their health: healthy (readiness probe
        passed), live (only tools/list answered), degraded, unhealthy,
        misconfigured; last latency and error; local-only probes noted.

  mcpctl chat MESSAGE... [--stream]
        One turn through the proxy's LLM failover chain; prints the answer
        and "model: <llm> (<model>)", with "⚠ failed over → answered by ..."
        when a fallback answered.

  mcpctl pause PROJECT | mcpctl resume PROJECT
        Hold a project's new requests in the pause queue (their deadline
        clocks suspended), or let them run; waits are bounded by
        MCPCTL_PAUSE_MAX_WAIT_MS.

  mcpctl create server NAME [--project P] [--server-url U]
        [--health-check-tool T
        --health-check-interval S --health-check-timeout S
        --health-check-failure-threshold N] [--force] [--wait D]
  mcpctl get servers [-o table|yaml|json]
  mcpctl delete server NAME | mcpctl apply -f FILE
        Manage a project's upstream servers and their probes while the
        proxy runs; changes persist beside its config and reach connected
        clients as tools/list_changed. 'get servers -o yaml | apply -f -'
        round-trips. create server then runs the server's probe once
        (initialize, tools/list, a readiness tool) and says what it found;
        --wait D waits (at most D) until it passes. See 'mcpctl help create'.

  mcpctl help [COMMAND]
        Show this help, or one command's help.

` + connHelp + `
When the proxy has users, every command needs a bearer token: trace shows
your own audit rows (an admin's, all of them); pause, resume and the server
commands need an admin's.

Exit status: 0 ok, 1 failure (proxy unreachable, error answer, no rows),
2 usage error.
`

const traceUsage = `mcpctl trace CODE [--json] [--url URL] [--token T | --token-file PATH] [--timeout D]

Render the waterfall of one request: GET URL/api/v1/audit?trace=CODE and draw
its audit rows as a tree of spans.

CODE    8 characters of Crockford base32 (0-9, A-Z without I, L, O, U), as
        quoted by the proxy: "[trace 7K3M9QXZ]". Lower case is accepted.

  --json         print the rows as a JSON array instead of the waterfall

` + connHelp + `
Each line is one span: kind (indented under its parent), the most specific of
stage/tool/server, status, duration, and a bar placed on the trace's time
axis (0 at the earliest start, the full width at the latest end). A span whose
parent is not among the rows is shown as a root with "(parent X not in
trace)". "← slowest" marks the longest span below the root; the last line
names it. "⚠ reason" under a span: it fell back to its deterministic path.
"✗ detail" under a span: it did not end ok.

Exit status: 0 ok, 1 when the proxy cannot be reached, answers an error, or
has no rows for CODE; 2 on a usage error.

Example:
  mcpctl trace 7K3M9QXZ --url http://127.0.0.1:8080
`

// run is the whole CLI: main only maps its error to an exit status.
func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usagef("", "missing command")
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "-h", "-help", "--help", "help":
		return help(rest, stdout)
	case "trace":
		return runTrace(rest, stdout, os.Getenv)
	case "get":
		return runGet(rest, stdout, os.Getenv)
	case "chat":
		return runChat(rest, stdout, os.Getenv)
	case "pause", "resume":
		return runPause(cmd, rest, stdout, os.Getenv)
	case "create":
		return runCreate(rest, stdout, os.Getenv)
	case "delete":
		return runDelete(rest, stdout, os.Getenv)
	case "apply":
		return runApply(rest, stdout, os.Getenv)
	default:
		return usagef("", "unknown command %q (commands: trace, get, chat, pause, resume, create, delete, apply, help)", cmd)
	}
}

func help(args []string, stdout io.Writer) error {
	switch {
	case len(args) == 0:
		fmt.Fprint(stdout, usage)
	case len(args) > 1:
		return usagef("", "help takes at most one command, got %d", len(args))
	case args[0] == "trace":
		fmt.Fprint(stdout, traceUsage)
	case args[0] == "get":
		fmt.Fprint(stdout, getUsage)
	case args[0] == "chat":
		fmt.Fprint(stdout, chatUsage)
	case args[0] == "pause" || args[0] == "resume":
		fmt.Fprint(stdout, pauseUsage)
	case args[0] == "create" || args[0] == "delete" || args[0] == "apply" || args[0] == "servers":
		fmt.Fprint(stdout, serversUsage)
	case args[0] == "help":
		fmt.Fprint(stdout, usage)
	default:
		return usagef("", "no help for unknown command %q (commands: trace, get, chat, pause, resume, create, delete, apply, help)", args[0])
	}
	return nil
}

// flagSetParsed sees every command's flag set as it is parsed: what flags
// a command takes is read from it, so a new flag cannot escape the tests
// that hold every combination of a command's flags.
var flagSetParsed = func(*flag.FlagSet) {}

// parseInterleaved parses fs over args allowing flags before and after the
// positional arguments (flag stops at the first positional), and returns the
// positionals. Everything after "--" is positional.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	flagSetParsed(fs)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// endpoint resolves the proxy's base URL (flag, else $MCPCTL_URL, else the
// default) and returns it with path appended to its own path prefix.
func endpoint(flagURL string, getenv func(string) string, path string) (*url.URL, error) {
	base := flagURL
	if base == "" {
		base = getenv(envURL)
	}
	if base == "" {
		base = defaultURL
	}
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("bad --url %q: want http://HOST:PORT or https://HOST:PORT", base)
	}
	u.Path = strings.TrimRight(u.Path, "/") + path
	u.RawPath, u.RawQuery, u.Fragment = "", "", ""
	return u, nil
}
