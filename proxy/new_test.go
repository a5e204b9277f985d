package proxy

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/internal/syncbuf"
	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/llm"
)

func textLogger() (*slog.Logger, *syncbuf.Buffer) {
	buf := &syncbuf.Buffer{}
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}})), buf
}

func oneProject(url string) map[string]*config.Project {
	return map[string]*config.Project{"p": {Servers: map[string]*config.Server{"s": {URL: url}}}}
}

// New's refusals, word for word, and that a refused New leaves nothing open.
func TestNewRefusalsWholeText(t *testing.T) {
	env := map[string]string{"MCPCTL_MAX_BODY_BYTES": "nope"}
	getenv := func(k string) string { return env[k] }
	for _, c := range []struct {
		what string
		cfg  *config.Config
		env  map[string]string
		want string
	}{
		{"a bad knob", &config.Config{Audit: "memory", Projects: oneProject("http://127.0.0.1:1/mcp")}, env,
			`knob MCPCTL_MAX_BODY_BYTES="nope": want a positive whole number of bytes`},
		{"an unset header env", &config.Config{Audit: "memory", Projects: map[string]*config.Project{"p": {Servers: map[string]*config.Server{"s": {
			URL: "http://127.0.0.1:1/mcp", Headers: map[string]config.Header{"X-Key": {ValueEnv: "UPSTREAM_KEY"}}}}}}}, nil,
			"projects.p.servers.s.headers.X-Key: $UPSTREAM_KEY is not set"},
		{"two users, one token", &config.Config{Audit: "memory", Users: map[string]config.User{"bob": {Token: "t"}, "alice": {Token: "t"}},
			Projects: oneProject("http://127.0.0.1:1/mcp")}, nil,
			"users alice and bob have the same token: each user needs a token of their own, or one would act as the other"},
		{"an unknown stage", &config.Config{Audit: "memory", Projects: map[string]*config.Project{"p": {
			Servers: map[string]*config.Server{"s": {URL: "http://127.0.0.1:1/mcp"}}, Pipeline: []config.Stage{{Name: "nosuch"}}}}}, nil,
			`projects.p.pipeline[0] nosuch: unknown stage "nosuch"`},
		{"an LLM config without providers", &config.Config{Audit: "memory", LLM: &llm.Config{}, Projects: oneProject("http://127.0.0.1:1/mcp")}, nil, "llm: no LLM configured"},
		{"an unsupported store", &config.Config{Audit: "mysql://x", Projects: oneProject("http://127.0.0.1:1/mcp")}, nil,
			`audit: unsupported store DSN "mysql://x"; want "sqlite:PATH" or "postgres://..." (or postgresql://)`},
	} {
		env = c.env
		p, err := New(context.Background(), c.cfg, Options{Getenv: getenv})
		if err == nil {
			_ = p.Close(context.Background())
			t.Errorf("%s: accepted", c.what)
			continue
		}
		if got := err.Error(); got != c.want {
			t.Errorf("%s: %q\nwant %q", c.what, got, c.want)
		}
	}
}

// The knobs come from the environment unless given; the log says what New
// could not use.
func TestNewReadsItsEnvironmentAndSaysWhatItIgnores(t *testing.T) {
	lg, buf := textLogger()
	env := map[string]string{"MCPCTL_MAX_BODY_BYTES": "12345", "ALICE_TOKEN": "a-tok"}
	cfg := &config.Config{Audit: "memory", Listen: "127.0.0.1:0",
		Users:    map[string]config.User{"alice": {TokenEnv: "ALICE_TOKEN", Admin: true}, "carol": {TokenEnv: "CAROL_TOKEN"}},
		Projects: oneProject("http://127.0.0.1:1/mcp")}
	p, err := New(context.Background(), cfg, Options{Getenv: func(k string) string { return env[k] }, Logger: lg})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	if got := p.Knobs().MaxBodyBytes; got != 12345 {
		t.Errorf("MaxBodyBytes %d, want the environment's 12345", got)
	}
	if want := "level=WARN msg=\"user has no token; it cannot authenticate\" user=carol tokenEnv=CAROL_TOKEN\n"; buf.String() != want {
		t.Errorf("log %q\nwant %q", buf.String(), want)
	}
	if len(p.users) != 1 || p.users["a-tok"] != "alice" || !p.admins["alice"] || len(p.admins) != 1 {
		t.Errorf("users %v admins %v", p.users, p.admins)
	}
	if p.Sessions() == nil || p.Handler() == nil {
		t.Error("no sessions or handler")
	}
}

// The servers file replaces the servers of the projects it lists and says
// so; projects it lists that the config lacks are ignored with a warning; a
// file that changes nothing says nothing.
func TestServersFileOverlayIsLogged(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		file, want string
		servers    []string
	}{
		{"projects:\n  p:\n    s2:\n      url: http://127.0.0.1:2/mcp\n  ghost:\n    x:\n      url: http://127.0.0.1:3/mcp\n",
			"level=INFO msg=\"servers managed by mcpctl replace the config's\" file=FILE projects=[p]\n" +
				"level=WARN msg=\"servers file names projects the config does not have; ignored\" file=FILE projects=[ghost]\n", []string{"s2"}},
		{"projects:\n  p:\n    s3:\n      url: http://127.0.0.1:2/mcp\n",
			"level=INFO msg=\"servers managed by mcpctl replace the config's\" file=FILE projects=[p]\n", []string{"s3"}},
		{"projects:\n  ghost:\n    x:\n      url: http://127.0.0.1:3/mcp\n",
			"level=WARN msg=\"servers file names projects the config does not have; ignored\" file=FILE projects=[ghost]\n", []string{"s"}},
		{"projects: {}\n", "", []string{"s"}},
	} {
		path := filepath.Join(dir, "servers.yaml")
		if err := os.WriteFile(path, []byte(c.file), 0o600); err != nil {
			t.Fatal(err)
		}
		lg, buf := textLogger()
		p, err := New(context.Background(), &config.Config{Audit: "memory", Projects: oneProject("http://127.0.0.1:1/mcp")},
			Options{Getenv: func(string) string { return "" }, Logger: lg, ServersFile: path})
		if err != nil {
			t.Fatalf("%q: %v", c.file, err)
		}
		if got, want := buf.String(), strings.ReplaceAll(c.want, "FILE", path); got != want {
			t.Errorf("%q: log %q\nwant %q", c.file, got, want)
		}
		var names []string
		for n := range p.cfg.Projects["p"].Servers {
			names = append(names, n)
		}
		if !slices.Equal(names, c.servers) {
			t.Errorf("%q: servers %v, want %v", c.file, names, c.servers)
		}
		_ = p.Close(context.Background())
	}
}

// Serving then closing cleanly logs nothing: the server's own "closed" is
// no error.
func TestACleanCloseLogsNothing(t *testing.T) {
	lg, buf := textLogger()
	p, err := New(context.Background(), &config.Config{Audit: "memory", Listen: "127.0.0.1:0", Projects: oneProject("http://127.0.0.1:1/mcp")},
		Options{Getenv: func(string) string { return "" }, Logger: lg})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != "" {
		t.Errorf("a clean start and close logged %q", got)
	}
}
