package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/proxy/bundle"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
	"github.com/mcpchaos/mcpchaos/scenarios/replay"
)

// keptSeed is the seed incident kept in the catalogue.
func keptSeed(t *testing.T) replay.Kept {
	t.Helper()
	data, err := os.ReadFile("../../scenarios/catalogue/kept/seed-hang-1800s.json")
	if err != nil {
		t.Fatal(err)
	}
	k, err := replay.UnmarshalKept(data)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// replay takes exactly one FILE, before or after its flags, and refuses
// what it cannot replay before anything starts: no file or two, an
// unknown flag (the usage, exit 2), an --expect other than same or fixed,
// a file that is missing or neither a bundle nor a kept scenario, and a
// target it does not know.
func TestReplayRefusesWhatItCannotReplay(t *testing.T) {
	dir := t.TempDir()
	k := keptSeed(t)
	raw, err := bundle.Marshal(k.Bundle)
	if err != nil {
		t.Fatal(err)
	}
	bundleFile := filepath.Join(dir, "b.bundle.json")
	junk := filepath.Join(dir, "junk.json")
	for f, data := range map[string][]byte{bundleFile: raw, junk: []byte(`{"hello":"world"}`)} {
		if err := os.WriteFile(f, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	kept := "../../scenarios/catalogue/kept/seed-hang-1800s.json"
	for _, c := range []struct {
		args   []string
		err    string // "": the usage and exit 2
		stdout string // what it said before refusing
	}{
		{args: nil},
		{args: []string{bundleFile, junk}},
		{args: []string{bundleFile, "--nosuchflag"}},
		{args: []string{bundleFile, "--expect", "maybe"}, err: `--expect "maybe": want same or fixed`},
		{args: []string{bundleFile, "--name", "x"}, err: "--name needs --as-scenario"},
		{args: []string{filepath.Join(dir, "missing.json")}, err: "no such file"},
		{args: []string{junk}, err: junk + ": "},
		{args: []string{bundleFile, "--target", "nosuchkind"}, err: `--target "nosuchkind"`},
		{args: []string{"--target", "nosuchkind", bundleFile}, err: `--target "nosuchkind"`},
		{args: []string{"--expect", "fixed", kept, "--target", "nosuchkind"}, err: `--target "nosuchkind"`, stdout: "kept scenario seed-hang-1800s: expects fixed\n"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(stopped(), append([]string{"replay"}, c.args...), &stdout, &stderr)
		if c.err == "" {
			if err != exitError(2) || !strings.Contains(stderr.String(), "usage: mcpchaos replay FILE") {
				t.Errorf("replay %v: %v, want the usage and exit 2:\n%s", c.args, err, stderr.String())
			}
		} else if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("replay %v: %v, want %q", c.args, err, c.err)
		}
		if stdout.String() != c.stdout {
			t.Errorf("replay %v said %q before refusing, want %q", c.args, stdout.String(), c.stdout)
		}
	}
}

// --as-scenario keeps the replay pinned to its verdict, named trace-CODE
// unless --name says otherwise; a changed verdict is not kept.
func TestKeepReplayNamesAndPins(t *testing.T) {
	k := keptSeed(t)
	plan, err := k.Plan()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name, want string
		v          replay.Verdict
	}{
		{"", "trace-" + strings.ToLower(k.Bundle.Trace), replay.Fixed},
		{"my-hang", "my-hang", replay.Same},
	} {
		file := filepath.Join(dir, c.want+".json")
		if err := keepReplay(file, c.name, k.Bundle, plan, c.v); err != nil {
			t.Fatalf("keep %q: %v", c.name, err)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		got, err := replay.UnmarshalKept(data)
		if err != nil || got.Name != c.want || got.Expect != c.v || got.Bundle.Trace != k.Bundle.Trace {
			t.Errorf("kept %q as %q expecting %s: %v", c.name, got.Name, got.Expect, err)
		}
	}
	file := filepath.Join(dir, "changed.json")
	if err := keepReplay(file, "", k.Bundle, plan, replay.Changed); err == nil || !strings.HasPrefix(err.Error(), "--as-scenario: ") {
		t.Errorf("a changed verdict kept: %v", err)
	}
	if _, err := os.Stat(file); err == nil {
		t.Error("a changed verdict was written")
	}
	if err := keepReplay(file, "Bad Name", k.Bundle, plan, replay.Same); err == nil || !strings.HasPrefix(err.Error(), "--as-scenario: ") {
		t.Errorf("a bad name kept: %v", err)
	}
}

// A replay the client gives up on (--client-timeout shorter than the
// recorded upstream's answer) says NO ANSWER and after how long, then
// still shows both waterfalls and the verdict; with no --expect that is
// no failure.
func TestAReplayTheClientGivesUpOn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	file, res := recordOne(t, ctx, harness.EnvOptions{}, "docmost_search", map[string]any{"query": "notes"}, func(env *harness.Env) error {
		env.Docmost.Set("search", upstream.Behavior{Kind: upstream.Slow, Delay: time.Second})
		return nil
	})
	if res.IsError {
		t.Fatalf("the recorded call: %s", firstText(res))
	}
	out, err := replayed(ctx, file, "--client-timeout", "300ms")
	if err != nil {
		t.Errorf("a replay with no --expect failed: %v\n%s", err, out)
	}
	for _, want := range []string{"client timeout 300ms\n", "NO ANSWER: the client gave up after ", "\nrecorded:\n", "\nreplayed:\n",
		"different outcome  tool_call_trace docmost docmost_search: recorded ok, replayed cancelled", "\nverdict: changed\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the replay lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "answered in ") {
		t.Errorf("a replay the client gave up on says it was answered:\n%s", out)
	}
	if !strings.Contains(out, "REPLAYED\n") || !strings.Contains(out, "\n\n  different outcome") {
		t.Errorf("the side by side and the differences are not apart:\n%s", out)
	}
}
