package main

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
)

// wikiWithProbe is a proxy whose server docmost/wiki has a readiness probe
// and a header; project ops has another server.
const wikiWithProbe = `{"servers":[
 {"name":"wiki","project":"docmost","url":"http://127.0.0.1:1/old","headers":{"X-Old":{"valueEnv":"OLD_KEY"}},
  "healthCheck":{"tool":"search","arguments":{"query":"health"},"intervalSeconds":60,"timeoutSeconds":15,"failureThreshold":3}},
 {"name":"blog","project":"ops","url":"http://127.0.0.1:1/blog"}]}`

const keptProbe = `{"arguments":{"query":"health"},"failureThreshold":3,"intervalSeconds":60,"timeoutSeconds":15,"tool":"search"}`

// TestCreateServerFlagCombinations: each combination of create server's
// flags a user can type sends the spec its help promises. With --force,
// flags left out keep the server's URL and, when no --health-check-* flag
// is given, its whole probe, whether or not --project and --server-url are
// given; any --health-check-* flag makes the probe exactly what the flags
// say. Without --force the spec is what was typed. Headers go only when
// --header is given.
func TestCreateServerFlagCombinations(t *testing.T) {
	for _, c := range []struct {
		args        []string
		write       string // METHOD path of the write
		url         string
		healthCheck string // the JSON sent, "" for none
		headers     string
		out         string // create's first line of output
	}{
		{[]string{"--force"}, "PUT /api/v1/servers/docmost/wiki", "http://127.0.0.1:1/old", keptProbe, "",
			"server docmost/wiki replaced (readiness probe: tools/call search every 1m0s, timeout 15s, unhealthy after 3 failures)"},
		{[]string{"--force", "--server-url", "http://127.0.0.1:1/new"}, "PUT /api/v1/servers/docmost/wiki", "http://127.0.0.1:1/new", keptProbe, "", ""},
		{[]string{"--force", "--project", "docmost"}, "PUT /api/v1/servers/docmost/wiki", "http://127.0.0.1:1/old", keptProbe, "", ""},
		{[]string{"--force", "--project", "docmost", "--server-url", "http://127.0.0.1:1/new"}, "PUT /api/v1/servers/docmost/wiki", "http://127.0.0.1:1/new", keptProbe, "", ""},
		{[]string{"--force", "--project", "docmost", "--server-url", "http://127.0.0.1:1/new", "--header", "X-Key=env:NEW_KEY"}, "PUT /api/v1/servers/docmost/wiki", "http://127.0.0.1:1/new", keptProbe, `{"X-Key":{"valueEnv":"NEW_KEY"}}`, ""},
		{[]string{"--force", "--project", "docmost", "--server-url", "http://127.0.0.1:1/new", "--health-check-interval", "30"}, "PUT /api/v1/servers/docmost/wiki", "http://127.0.0.1:1/new", `{"intervalSeconds":30}`, "",
			"server docmost/wiki replaced (liveness probe: tools/list every 30s"},
		{[]string{"--force", "--health-check-tool", "lookup"}, "PUT /api/v1/servers/docmost/wiki", "http://127.0.0.1:1/old", `{"tool":"lookup"}`, "", ""},
		{[]string{"--force", "--health-check-timeout", "5", "--health-check-failure-threshold", "2"}, "PUT /api/v1/servers/docmost/wiki", "http://127.0.0.1:1/old", `{"failureThreshold":2,"timeoutSeconds":5}`, "", ""},
		{[]string{"--force", "--project", "docmost", "--server-url", "http://127.0.0.1:1/new", "--health-check-tool", "lookup", "--health-check-arguments", `{"q":"v"}`},
			"PUT /api/v1/servers/docmost/wiki", "http://127.0.0.1:1/new", `{"arguments":{"q":"v"},"tool":"lookup"}`, "", ""},
		{[]string{"--project", "ops", "--server-url", "http://127.0.0.1:1/new"}, "POST /api/v1/servers", "http://127.0.0.1:1/new", "", "",
			"server ops/wiki created (liveness probe: tools/list every"},
		{[]string{"--project", "ops", "--server-url", "http://127.0.0.1:1/new", "--health-check-failure-threshold", "4"}, "POST /api/v1/servers", "http://127.0.0.1:1/new", `{"failureThreshold":4}`, "", ""},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			s := newScripted(t, map[string]scriptedAnswer{
				"GET /api/v1/servers":                     ok200(wikiWithProbe),
				"POST /api/v1/servers":                    ok200(`{"outcome":"created"}`),
				"PUT /api/v1/servers/docmost/wiki":        ok200(`{"outcome":"replaced"}`),
				"POST /api/v1/servers/docmost/wiki/check": ok200(healthy),
				"POST /api/v1/servers/ops/wiki/check":     ok200(healthy),
			})
			r := cli(t, append([]string{"create", "server", "wiki", "--url", s.srv.URL}, c.args...)...)
			r.wantCode(t, exitOK)
			w := s.writes()
			if len(w) != 1 || w[0].method+" "+w[0].path != c.write {
				t.Fatalf("writes %+v, want one %s", w, c.write)
			}
			if w[0].body["url"] != c.url {
				t.Errorf("url %v, want %s", w[0].body["url"], c.url)
			}
			if got := compact(t, w[0].body["healthCheck"]); got != c.healthCheck {
				t.Errorf("healthCheck %s, want %s", got, c.healthCheck)
			}
			if got := compact(t, w[0].body["headers"]); got != c.headers {
				t.Errorf("headers %s, want %s", got, c.headers)
			}
			if !strings.HasPrefix(r.stdout, c.out) {
				t.Errorf("stdout %q, want it to begin %q", r.stdout, c.out)
			}
		})
	}
}

func compact(t *testing.T, v any) string {
	t.Helper()
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCreateServerRefusesWhatItCannotSend: create server refuses, exit 2
// and nothing written, a missing or bad NAME, --wait not positive,
// --health-check-arguments without the tool or not a JSON object, and a
// new server without --server-url.
func TestCreateServerRefusesWhatItCannotSend(t *testing.T) {
	for _, c := range []struct {
		args   []string
		stderr string
	}{
		{[]string{}, "want exactly one server NAME"},
		{[]string{"wiki", "blog", "--project", "docmost", "--server-url", "http://127.0.0.1:1/n"}, `want exactly one server NAME, got "wiki blog"`},
		{[]string{"a/b", "--project", "docmost", "--server-url", "http://127.0.0.1:1/n"}, `got "a/b"`},
		{[]string{"wiki", "--force", "--wait", "0s"}, "--wait must be positive"},
		{[]string{"wiki", "--force", "--wait", "-1s"}, "--wait must be positive"},
		{[]string{"wiki", "--force", "--health-check-arguments", `{"q":"v"}`}, "--health-check-arguments applies only with --health-check-tool"},
		{[]string{"wiki", "--force", "--health-check-tool", "search", "--health-check-arguments", `["q"]`}, "--health-check-arguments: want a JSON object"},
		{[]string{"new", "--project", "docmost"}, "--server-url is required for a new server"},
		{[]string{"wiki", "--project", "docmost"}, "--server-url is required for a new server"},
		{[]string{"wiki", "--header", "X-Key=literal"}, "want NAME=env:VAR"},
		{[]string{"wiki", "--header", "=env:KEY"}, "want NAME=env:VAR"},
		{[]string{"wiki", "--header", "X-Key=env:"}, "want NAME=env:VAR"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			s := newScripted(t, map[string]scriptedAnswer{"GET /api/v1/servers": ok200(wikiWithProbe)})
			r := cli(t, append([]string{"create", "server", "--url", s.srv.URL}, c.args...)...)
			r.wantCode(t, exitUsage)
			r.wantStderr(t, c.stderr)
			if w := s.writes(); len(w) != 0 {
				t.Errorf("refused, yet sent %s %s", w[0].method, w[0].path)
			}
		})
	}
}

// TestCreateServerReportsItsCheck: after writing the server, create says
// what the proxy's check found: tools counted in words and a readiness
// probe's pass, exit 0; a failed probe or no answer, exit 1 with the way to
// wait for it (--wait D) or remove it; a check the proxy cannot run, exit 1
// saying the server is configured nonetheless.
func TestCreateServerReportsItsCheck(t *testing.T) {
	for _, c := range []struct {
		name   string
		check  scriptedAnswer
		code   int
		stdout string
		stderr []string
	}{
		{"liveness passes", ok200(`{"answered":true,"tools":1,"probe":"liveness: tools/list","healthy":true}`), exitOK,
			"check: ops/wiki answered initialize and tools/list: 1 tool\n", nil},
		{"readiness passes", ok200(`{"answered":true,"tools":3,"probe":"readiness: tools/call search","healthy":true}`), exitOK,
			"check: ops/wiki answered initialize and tools/list: 3 tools; readiness: tools/call search passed\n", nil},
		{"probe fails", ok200(`{"answered":true,"tools":2,"probe":"readiness: tools/call search","error":"isError: down"}`), exitFailure, "",
			[]string{"server ops/wiki answered initialize and tools/list (2 tools), but its probe (readiness: tools/call search) failed: isError: down",
				"it stays configured and probed: wait for it with --wait D, or remove it with mcpctl delete server wiki --project ops"}},
		{"no answer", ok200(`{"error":"connection refused"}`), exitFailure, "",
			[]string{"server ops/wiki did not answer the check (initialize, tools/list): connection refused"}},
		{"check refused", scriptedAnswer{http.StatusInternalServerError, `{"error":"prober stopped"}`}, exitFailure, "",
			[]string{"server ops/wiki is configured, but the proxy could not check it: prober stopped"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newScripted(t, map[string]scriptedAnswer{
				"POST /api/v1/servers":                ok200(`{"outcome":"created"}`),
				"POST /api/v1/servers/ops/wiki/check": c.check,
			})
			r := cli(t, "create", "server", "wiki", "--project", "ops", "--server-url", "http://127.0.0.1:1/new", "--url", s.srv.URL)
			r.wantCode(t, c.code)
			first, rest, _ := strings.Cut(r.stdout, "\n")
			if !strings.HasPrefix(first, "server ops/wiki created (") || rest != c.stdout {
				t.Errorf("stdout %q, want the created line then %q", r.stdout, c.stdout)
			}
			r.wantStderr(t, c.stderr...)
		})
	}
}

// TestCreateServerWaitGivesUpWithTheLastError: --wait D that runs out says
// how long and how many checks, the last error, and to wait longer.
func TestCreateServerWaitGivesUpWithTheLastError(t *testing.T) {
	s := newScripted(t, map[string]scriptedAnswer{
		"POST /api/v1/servers":                ok200(`{"outcome":"created"}`),
		"POST /api/v1/servers/ops/wiki/check": ok200(`{"answered":false,"error":"connection refused"}`),
	})
	r := cli(t, "create", "server", "wiki", "--project", "ops", "--server-url", "http://127.0.0.1:1/new", "--wait", "300ms", "--url", s.srv.URL)
	r.wantCode(t, exitFailure)
	r.wantStderr(t, "server ops/wiki did not pass its check within 300ms (1 check); at the last it did not answer the check (initialize, tools/list): connection refused",
		"wait longer with a larger --wait")
}

// TestFlagErrorsAreMcpctlsOwnWords: a flag a command does not take and a
// --help print mcpctl's own words on the streams main gives it; the flag
// package's default dump never reaches the process's stderr on the side.
func TestFlagErrorsAreMcpctlsOwnWords(t *testing.T) {
	side, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = side
	t.Cleanup(func() { os.Stderr = old })
	for _, args := range [][]string{
		{"trace", "7K3M9QXZ"}, {"get", "instances"}, {"get", "servers"}, {"chat", "hi"}, {"pause", "docmost"},
		{"resume", "docmost"}, {"create", "server", "wiki"}, {"delete", "server", "wiki"}, {"apply"},
	} {
		r := cli(t, append(append([]string(nil), args...), "--no-such-flag")...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "no-such-flag") {
			t.Errorf("%v --no-such-flag: exit %d %q, want 2 naming the flag", args, r.code, r.stderr)
		}
		if r := cli(t, append(append([]string(nil), args...), "--help")...); r.code != exitOK || r.stdout == "" {
			t.Errorf("%v --help: exit %d, stdout %q", args, r.code, r.stdout)
		}
	}
	os.Stderr = old
	b, err := os.ReadFile(side.Name())
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 0 {
		t.Errorf("written to the process's stderr beside mcpctl's own words:\n%s", b)
	}
}

// TestCommandsWantTheirObject: create and delete take "server", get takes
// "instances" or "servers"; anything else, or nothing, is a usage error
// saying what is wanted, and nothing is sent.
func TestCommandsWantTheirObject(t *testing.T) {
	s := newScripted(t, map[string]scriptedAnswer{"GET /api/v1/servers": ok200(wikiWithProbe)})
	for _, c := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"create"}, "want 'create server NAME ...'"},
		{[]string{"create", "servers", "wiki", "--project", "ops", "--server-url", "http://127.0.0.1:1/n"}, "want 'create server NAME ...'"},
		{[]string{"delete"}, "want 'delete server NAME [--project P]'"},
		{[]string{"delete", "servers", "wiki", "--project", "ops"}, "want 'delete server NAME [--project P]'"},
		{[]string{"get"}, "want 'get instances' or 'get servers'"},
		{[]string{"get", "instance"}, "want 'get instances' or 'get servers'"},
	} {
		r := cli(t, append(c.args, "--url", s.srv.URL)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.stderr) {
			t.Errorf("%v: exit %d %q, want 2 saying %q", c.args, r.code, r.stderr, c.stderr)
		}
	}
	if q := s.requests(); len(q) != 0 {
		t.Errorf("usage errors sent %+v", q)
	}
}

// TestDeleteServerWantsOneName: delete server takes exactly one NAME, with
// no '/', '?' or '#' (it is a path segment); anything else is a usage error
// and nothing is deleted.
func TestDeleteServerWantsOneName(t *testing.T) {
	s := newScripted(t, map[string]scriptedAnswer{"GET /api/v1/servers": ok200(wikiWithProbe)})
	for _, names := range [][]string{{}, {"wiki", "blog"}, {"ops/wiki"}, {"wiki?x"}} {
		r := cli(t, append(append([]string{"delete", "server"}, names...), "--project", "ops", "--url", s.srv.URL)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "want exactly one server NAME") {
			t.Errorf("delete server %v: exit %d %q, want 2 asking for one NAME", names, r.code, r.stderr)
		}
	}
	if w := s.writes(); len(w) != 0 {
		t.Errorf("refused, yet sent %+v", w)
	}
}

// TestTraceRefusalsAndCodes: an error answer with an empty message is
// quoted by its body; a mistyped code is suggested only when the fix is a
// trace code.
func TestTraceRefusalsAndCodes(t *testing.T) {
	s := newScripted(t, map[string]scriptedAnswer{"GET /api/v1/audit": {http.StatusInternalServerError, `{"error":""}`}})
	r := cli(t, "trace", "7K3M9QXZ", "--url", s.srv.URL)
	r.wantCode(t, exitFailure)
	r.wantStderr(t, `proxy answered 500 Internal Server Error: {"error":""}`)

	r = cli(t, "trace", "OOO", "--url", s.srv.URL)
	r.wantCode(t, exitUsage)
	if strings.Contains(r.stderr, "did you mean") {
		t.Errorf("suggested a code that is none: %s", r.stderr)
	}
}
