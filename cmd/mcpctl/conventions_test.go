package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// commands is every mcpctl command, as a user types it, without the flags
// that say where the proxy is and who asks.
var commands = []struct {
	name string // as 'mcpctl help NAME' takes it
	args []string
}{
	{"trace", []string{"trace", "7K3M9QXZ"}},
	{"get", []string{"get", "instances"}},
	{"get", []string{"get", "servers"}},
	{"chat", []string{"chat", "hello"}},
	{"pause", []string{"pause", "docmost"}},
	{"resume", []string{"resume", "docmost"}},
	{"create", []string{"create", "server", "wiki", "--project", "docmost", "--server-url", "http://127.0.0.1:1/mcp"}},
	{"delete", []string{"delete", "server", "wiki", "--project", "docmost"}},
	{"apply", []string{"apply", "-f", "SPECS"}},
}

// recorder is a stand-in proxy that notes the bearer token of every request.
type recorder struct {
	mu   sync.Mutex
	auth []string
	srv  *httptest.Server
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.auth = append(r.auth, req.Header.Get("Authorization"))
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *recorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.auth...)
}

// TestEveryCommandTakesTheSameConnectionFlags: every command reaches the
// proxy named by --url, else $MCPCTL_URL, and sends the bearer token of
// --token, else --token-file, else $MCPCTL_TOKEN, else the file named by
// $MCPCTL_TOKEN_FILE; its help says so, and mcpctl help (or --help, -h)
// describes the convention once.
func TestEveryCommandTakesTheSameConnectionFlags(t *testing.T) {
	dir := t.TempDir()
	specs := filepath.Join(dir, "servers.yaml")
	if err := os.WriteFile(specs, []byte("- name: wiki\n  project: docmost\n  url: http://127.0.0.1:1/mcp\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	envFile := filepath.Join(dir, "env-token")
	if err := os.WriteFile(envFile, []byte("  from-env-file  \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		how   string
		flags []string
		env   map[string]string
		want  string // the Authorization the proxy must see
		onEnv bool   // the proxy is named by $MCPCTL_URL, not --url
	}{
		{how: "--url and --token", flags: []string{"--token", "from-flag"}, want: "Bearer from-flag"},
		{how: "$MCPCTL_URL and $MCPCTL_TOKEN", env: map[string]string{"MCPCTL_TOKEN": "from-env"}, want: "Bearer from-env", onEnv: true},
		{how: "--token-file", flags: []string{"--token-file", tokenFile}, want: "Bearer from-file"},
		{how: "$MCPCTL_TOKEN_FILE", env: map[string]string{"MCPCTL_TOKEN_FILE": envFile}, want: "Bearer from-env-file", onEnv: true},
		{how: "--token over $MCPCTL_TOKEN", flags: []string{"--token", "from-flag"}, env: map[string]string{"MCPCTL_TOKEN": "from-env"}, want: "Bearer from-flag"},
		{how: "--token-file over $MCPCTL_TOKEN", flags: []string{"--token-file", tokenFile}, env: map[string]string{"MCPCTL_TOKEN": "from-env"}, want: "Bearer from-file"},
		{how: "$MCPCTL_TOKEN over $MCPCTL_TOKEN_FILE", env: map[string]string{"MCPCTL_TOKEN": "from-env", "MCPCTL_TOKEN_FILE": envFile}, want: "Bearer from-env", onEnv: true},
		{how: "no token at all", want: ""},
	} {
		for _, cmd := range commands {
			proxy, other := newRecorder(t), newRecorder(t)
			for _, k := range []string{"MCPCTL_URL", "MCPCTL_TOKEN", "MCPCTL_TOKEN_FILE"} {
				t.Setenv(k, c.env[k])
			}
			args := append([]string(nil), cmd.args...)
			for i, a := range args {
				if a == "SPECS" {
					args[i] = specs
				}
			}
			if c.onEnv {
				t.Setenv("MCPCTL_URL", proxy.srv.URL)
			} else {
				t.Setenv("MCPCTL_URL", other.srv.URL) // --url must win over it
				args = append(args, "--url", proxy.srv.URL)
			}
			args = append(args, c.flags...)
			var out, errOut strings.Builder
			code := report(run(args, &out, &errOut), &errOut)
			seen := proxy.seen()
			if len(seen) == 0 {
				t.Errorf("%s, %s: the proxy was not asked (exit %d): %s", c.how, strings.Join(cmd.args, " "), code, errOut.String())
				continue
			}
			for _, got := range seen {
				if got != c.want {
					t.Errorf("%s, %s: Authorization %q, want %q", c.how, strings.Join(cmd.args, " "), got, c.want)
					break
				}
			}
			if n := len(other.seen()); n > 0 {
				t.Errorf("%s, %s: $MCPCTL_URL's proxy was asked %d time(s) despite --url", c.how, strings.Join(cmd.args, " "), n)
			}
		}
	}
	conventions := []string{"--url URL", "--token T", "--token-file PATH", "--timeout D", "MCPCTL_URL", "MCPCTL_TOKEN", "MCPCTL_TOKEN_FILE"}
	for _, cmd := range commands {
		for _, args := range [][]string{{"help", cmd.name}, append(append([]string(nil), cmd.args...), "--help")} {
			var out, errOut strings.Builder
			if code := report(run(args, &out, &errOut), &errOut); code != 0 {
				t.Errorf("%v: exit %d: %s", args, code, errOut.String())
			}
			for _, want := range conventions {
				if !strings.Contains(out.String(), want) {
					t.Errorf("%v: help does not say %q:\n%s", args, want, out.String())
				}
			}
		}
	}
	for _, top := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		var out strings.Builder
		if err := run(top, &out, &out); err != nil {
			t.Fatal(err)
		}
		for _, want := range conventions {
			if !strings.Contains(out.String(), want) {
				t.Errorf("mcpctl %s does not say %q", top[0], want)
			}
		}
		if n := strings.Count(out.String(), "--token-file PATH  "); n != 1 {
			t.Errorf("mcpctl %s describes the connection flags %d times, want once:\n%s", top[0], n, out.String())
		}
	}
}

// TestBothTokenFlagsAreAUsageError: --token and --token-file together, or a
// token file that is empty or unreadable, are refused before anything is
// sent, the file named.
func TestTokenFlagsThatCannotBeMetAreRefused(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	proxy := newRecorder(t)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--token", "a", "--token-file", empty}, exitUsage, "--token and --token-file: give one"},
		{[]string{"--token-file", empty}, exitFailure, "token file " + empty + " is empty"},
		{[]string{"--token-file", empty + ".missing"}, exitFailure, "token file " + empty + ".missing"},
	} {
		for _, cmd := range commands {
			args := append(append(append([]string(nil), cmd.args...), "--url", proxy.srv.URL), c.args...)
			r := cli(t, args...)
			if r.code != c.code || !strings.Contains(r.stderr, c.want) {
				t.Errorf("%v: exit %d %q, want %d and %q", args, r.code, r.stderr, c.code, c.want)
			}
		}
	}
	if n := len(proxy.seen()); n > 0 {
		t.Errorf("the proxy was asked %d time(s) with a token that could not be read", n)
	}
}
