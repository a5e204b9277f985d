package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// `mcpchaos` alone prints the usage on stderr and exits 2; help prints it
// on stdout and succeeds; an unknown command is named, with the usage.
func TestCommandDispatch(t *testing.T) {
	for _, c := range []struct {
		args             []string
		err              string // "": none
		exit2            bool
		onStdout, onErrs bool // where the usage goes
	}{
		{args: nil, exit2: true, onErrs: true},
		{args: []string{"help"}, onStdout: true},
		{args: []string{"-h"}, onStdout: true},
		{args: []string{"--help"}, onStdout: true},
		{args: []string{"runn"}, err: `unknown command "runn"`, onErrs: true},
	} {
		var stdout, stderr bytes.Buffer
		err := run(stopped(), c.args, &stdout, &stderr)
		switch {
		case c.exit2:
			if err != exitError(2) {
				t.Errorf("mcpchaos %v: %v, want exit 2", c.args, err)
			}
		case c.err != "":
			if err == nil || err.Error() != c.err {
				t.Errorf("mcpchaos %v: %v, want %q", c.args, err, c.err)
			}
		case err != nil:
			t.Errorf("mcpchaos %v: %v", c.args, err)
		}
		if got := stdout.String() == usage; got != c.onStdout {
			t.Errorf("mcpchaos %v: usage on stdout %v, want %v:\n%s", c.args, got, c.onStdout, stdout.String())
		}
		if got := stderr.String() == usage; got != c.onErrs {
			t.Errorf("mcpchaos %v: usage on stderr %v, want %v:\n%s", c.args, got, c.onErrs, stderr.String())
		}
	}
	if exitError(3).Error() != "exit 3" {
		t.Errorf("exitError(3) says %q", exitError(3).Error())
	}
}

// Every command's --help prints its own usage on stderr and is no failure
// (flag.ErrHelp: exit 0), naming the command.
func TestEveryCommandHasHelp(t *testing.T) {
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"run", "--help"}, "-target"},
		{[]string{"faults", "--help"}, "usage: mcpchaos faults"},
		{[]string{"bench", "--help"}, "Usage: mcpchaos bench"},
		{[]string{"soak", "--help"}, "Usage: mcpchaos soak"},
		{[]string{"canary", "--help"}, "usage: mcpchaos canary"},
		{[]string{"mutants", "--help"}, "usage: mcpchaos mutants"},
		{[]string{"mutants", "--generic", "x", "--help"}, "usage: mcpchaos mutants --generic"},
		{[]string{"repro", "hang-1800s", "--help"}, "usage: mcpchaos repro hang-1800s"},
		{[]string{"fake", "upstream", "docmost", "--help"}, "mcpchaos fake upstream docmost"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(stopped(), c.args, &stdout, &stderr)
		if !errors.Is(err, flag.ErrHelp) {
			t.Errorf("mcpchaos %v: %v, want the help exit", c.args, err)
		}
		if !strings.Contains(stderr.String(), c.says) || !strings.Contains(stderr.String(), "-") {
			t.Errorf("mcpchaos %v: the help does not say %q:\n%s", c.args, c.says, stderr.String())
		}
		if stdout.Len() != 0 {
			t.Errorf("mcpchaos %v: help on stdout:\n%s", c.args, stdout.String())
		}
	}
	// Each help also lists the command's flags with their defaults.
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"bench", "--help"}, "-curve-timeout duration"},
		{[]string{"bench", "--help"}, "one target's turn in one round (default 2s)"},
		{[]string{"bench", "--help"}, "bound on the whole curve (default 15m0s)"},
		{[]string{"canary", "--help"}, "bound on each build step and each suite run (default 15m0s)"},
		{[]string{"mutants", "--generic", "x", "--help"}, "(a run past it kills the mutant: timed out) (default 3m0s)"},
		{[]string{"soak", "--help"}, "-calls-per-session int"},
		{[]string{"canary", "--help"}, "-baseline-cache string"},
		{[]string{"mutants", "--help"}, "also write each mutant's outcome and times to FILE"},
		{[]string{"mutants", "--generic", "x", "--help"}, "-package-tests-only"},
		{[]string{"repro", "hang-1800s", "--help"}, "-compress int"},
		{[]string{"replay", "--help"}, "-as-scenario string"},
		{[]string{"fake", "upstream", "docmost", "--help"}, "-listen string"},
	} {
		var stderr bytes.Buffer
		_ = run(stopped(), c.args, io.Discard, &stderr)
		if !strings.Contains(stderr.String(), c.flag) {
			t.Errorf("mcpchaos %v: the help does not list %q:\n%s", c.args, c.flag, stderr.String())
		}
	}
}

// `mcpchaos fake` serves one fake of those its usage names; anything else
// prints that usage and exits 2, and each fake refuses what it cannot serve.
func TestFakeChoosesAFake(t *testing.T) {
	for _, c := range []struct {
		args []string
		err  string // "": the usage and exit 2
	}{
		{args: []string{"fake"}},
		{args: []string{"fake", "upstream"}},
		{args: []string{"fake", "upstream", "gitlab"}},
		{args: []string{"fake", "docmost"}},
		{args: []string{"fake", "llm"}, err: `--provider "": want anthropic or openai`},
		{args: []string{"fake", "llm", "--provider", "gemini"}, err: `--provider "gemini": want anthropic or openai`},
		{args: []string{"fake", "llm", "--provider", "openai", "--default", "nosuchstep"}, err: "--default: "},
		{args: []string{"fake", "proxy"}, err: "want exactly one of --upstream and --server"},
		{args: []string{"fake", "floor"}, err: "fake floor: --upstream"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(stopped(), c.args, &stdout, &stderr)
		if c.err == "" {
			if err != exitError(2) || !strings.Contains(stderr.String(), fakeUsage) {
				t.Errorf("mcpchaos %v: %v, want the fake usage and exit 2:\n%s", c.args, err, stderr.String())
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("mcpchaos %v: %v, want %q", c.args, err, c.err)
		}
	}
	// An unknown provider is answered with the usage, which names both.
	var stderr bytes.Buffer
	_ = run(stopped(), []string{"fake", "llm", "--provider", "gemini"}, io.Discard, &stderr)
	if !strings.Contains(stderr.String(), "--provider anthropic|openai") {
		t.Errorf("fake llm with an unknown provider does not show the usage:\n%s", stderr.String())
	}
}

// lineWriter collects output and hands over the first line that contains
// its mark.
type lineWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	mark string
	line chan string
	once sync.Once
}

func newLineWriter(mark string) *lineWriter {
	return &lineWriter{mark: mark, line: make(chan string, 1)}
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	for _, l := range strings.Split(w.buf.String(), "\n") {
		if strings.Contains(l, w.mark) {
			w.once.Do(func() { w.line <- l })
		}
	}
	return n, err
}

// serveFake runs `mcpchaos ARGS` until it prints the line with mark, and
// returns that line and a stop that ends the command and returns its error.
func serveFake(t *testing.T, mark string, args ...string) (string, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := newLineWriter(mark)
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, out, io.Discard) }()
	select {
	case l := <-out.line:
		return l, func() error { cancel(); return <-done }
	case err := <-done:
		cancel()
		t.Fatalf("mcpchaos %v ended before serving: %v", args, err)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatalf("mcpchaos %v printed no %q", args, mark)
	}
	return "", nil
}

// `fake upstream KIND` serves that fake at the address it prints, until
// the command is stopped: docmost's tools, or everything's.
func TestFakeUpstreamServesTheKindAsked(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for kind, tool := range map[string]string{"docmost": "search", "everything": "echo"} {
		args := []string{"fake", "upstream", kind}
		if kind == "docmost" {
			args = append(args, "--listen", "127.0.0.1:0")
		}
		line, stop := serveFake(t, "serving MCP at", args...)
		prefix := "fake upstream " + kind + " serving MCP at "
		url, ok := strings.CutPrefix(line, prefix)
		if !ok {
			t.Errorf("fake upstream %s printed %q, want %q URL", kind, line, prefix)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatalf("fake upstream %s at %s: %v", kind, url, err)
		}
		names := map[string]bool{}
		for tl, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			names[tl.Name] = true
		}
		_ = cs.Close()
		if !names[tool] {
			t.Errorf("fake upstream %s serves %v, want %s among them", kind, names, tool)
		}
		if err := stop(); err != nil {
			t.Errorf("fake upstream %s stopped with %v", kind, err)
		}
	}
}

// `fake llm --provider P` serves the provider's own paths at the base URL
// it prints, until the command is stopped.
func TestFakeLLMServesTheProviderAsked(t *testing.T) {
	for provider, models := range map[string]string{"openai": "/models", "anthropic": "/v1/models"} {
		line, stop := serveFake(t, "serving at", "fake", "llm", "--provider", provider)
		prefix := "fake llm (" + provider + ") serving at "
		base, ok := strings.CutPrefix(line, prefix)
		if !ok {
			t.Errorf("fake llm printed %q, want %q URL", line, prefix)
		}
		resp, err := http.Get(base + models)
		if err != nil {
			t.Errorf("fake llm %s: GET %s: %v", provider, base+models, err)
		} else {
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("fake llm %s: GET %s: %s", provider, base+models, resp.Status)
			}
		}
		if err := stop(); err != nil {
			t.Errorf("fake llm %s stopped with %v", provider, err)
		}
	}
}

// `mcpchaos faults` prints the registry, then how network faults take their
// link and how to inject one; --help says what the columns mean.
func TestFaultsSaysHowToInject(t *testing.T) {
	var stdout bytes.Buffer
	if err := run(context.Background(), []string{"faults"}, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	out := stdout.String()
	if !strings.HasPrefix(out, "FAULT ") {
		t.Errorf("faults does not start with its header:\n%s", out)
	}
	for _, want := range []string{"\nNetwork faults take link=docmost|", "(docmost, proxy to upstream, is the default).\n",
		"\nInject one: mcpchaos run --fault latency:link=llm,latencyMs=300 --label paginate\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("faults lacks %q:\n%s", want, out)
		}
	}
	// A fault of no parameters and no requirements shows a dash in each.
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "none" && strings.Count(l, " - ") < 2 {
			t.Errorf("the fault none shows no dashes for no parameters and no requirements: %q", l)
		}
	}
	var stderr bytes.Buffer
	if err := run(context.Background(), []string{"faults", "--help"}, io.Discard, &stderr); !errors.Is(err, flag.ErrHelp) ||
		!strings.Contains(stderr.String(), "mcpchaos run --fault NAME[:k=v,k=v]") {
		t.Errorf("faults --help: %v\n%s", err, stderr.String())
	}
}

// The process's exit status: 0 on success and for --help; a command's own
// status (1: a promise broken, 130: interrupted) with nothing more said;
// any other error is printed, prefixed mcpchaos, with status 2.
func TestExitStatus(t *testing.T) {
	for _, c := range []struct {
		err    error
		status int
		says   string
	}{
		{nil, 0, ""},
		{flag.ErrHelp, 0, ""},
		{fmt.Errorf("bench: %w", flag.ErrHelp), 0, ""},
		{exitError(1), 1, ""},
		{exitError(exitInterrupted), 130, ""},
		{fmt.Errorf("wrapped: %w", exitError(1)), 1, ""},
		{errors.New(`unknown command "runn"`), 2, "mcpchaos: unknown command \"runn\"\n"},
	} {
		var stderr bytes.Buffer
		if got := exitStatus(c.err, &stderr); got != c.status || stderr.String() != c.says {
			t.Errorf("exitStatus(%v) = %d saying %q, want %d saying %q", c.err, got, stderr.String(), c.status, c.says)
		}
	}
}
