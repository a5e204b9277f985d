package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/scenarios/bench"
)

// The relay is on by default: bench's plain mcplocal target runs
// the default config, --sdk-path adds the go-sdk path beside it, and the
// old --relay (which added the relay beside an SDK-path mcplocal) is gone.
func TestBenchOffersTheSDKPathBesideTheDefault(t *testing.T) {
	var help bytes.Buffer
	if err := runBench(context.Background(), []string{"--help"}, io.Discard, &help); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
	for _, want := range []string{"-sdk-path", "relay: false", "mcplocal-sdk"} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("--help does not say %q:\n%s", want, help.String())
		}
	}
	if strings.Contains(help.String(), "mcplocal-relay") {
		t.Errorf("--help still names the old mcplocal-relay target:\n%s", help.String())
	}
	if err := runBench(context.Background(), []string{"--relay"}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "relay") {
		t.Errorf("--relay: err %v, want it refused as an unknown flag", err)
	}
}

// bench --curve writes the picture and its data where --curve-out says,
// both saying where they were measured; idle steps out of order are refused.
func TestBenchCurveWritesThePictureAndItsData(t *testing.T) {
	fake, err := upstream.NewDocmost(upstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	prefix := filepath.Join(t.TempDir(), "curve")
	args := []string{"--no-mcplocal", "--no-floor", "--upstream", fake.URL(), "--tool", "update_page",
		"--args", `{"page_id":"p1"}`, "--target", "a=" + fake.URL(), "--curve", "--curve-active", "1,2",
		"--curve-idle", "0,3", "--curve-idle-active", "1", "--duration", "50ms", "--curve-out", prefix}
	var stdout bytes.Buffer
	if err := runBench(context.Background(), args, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout.String(), "curve: wrote "+prefix+".svg and "+prefix+".json (machine: ") {
		t.Errorf("bench --curve does not say what it wrote:\n%s", stdout.String())
	}
	var c bench.Curve
	doc, err := os.ReadFile(prefix + ".json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(doc, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Series) != 2 || c.Series[0].Target != "a" || len(c.Series[0].Points) != 2 || len(c.Series[1].Points) != 2 || c.LoadAtEnd == "" {
		t.Errorf("curve data: %+v", c)
	}
	svg, err := os.ReadFile(prefix + ".svg")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(svg), "<svg ") || !strings.Contains(string(svg), "load at the end") {
		t.Errorf("curve picture:\n%s", svg)
	}
	bad := append(slices.Clone(args), "--curve-idle", "5,0")
	if err := runBench(context.Background(), bad, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "ascending") {
		t.Errorf("idle steps 5,0: err %v, want them refused as out of order", err)
	}
}

// bench refuses, before it starts anything, a --target that is not
// NAME=URL[#TOOL], a concurrency or curve step that is not a whole number
// of at least its least, an empty --curve-out, and --args that are no JSON
// object.
func TestBenchRefusesBadValues(t *testing.T) {
	up := []string{"--no-mcplocal", "--no-floor", "--upstream", "http://127.0.0.1:1/mcp", "--tool", "t"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--target", "a"}, `want NAME=URL[#TOOL], got "a"`},
		{[]string{"--target", "=http://x/mcp"}, `want NAME=URL[#TOOL], got "=http://x/mcp"`},
		{[]string{"--target", "a="}, `want NAME=URL[#TOOL], got "a="`},
		{[]string{"--sessions", "0"}, `bench: --sessions "0": want whole numbers of at least 1`},
		{[]string{"--sessions", "1,x"}, `bench: --sessions "1,x"`},
		{[]string{"--sessions", ""}, `bench: --sessions ""`},
		{[]string{"--curve", "--curve-active", "0"}, `bench: --curve-active "0": want whole numbers of at least 1`},
		{[]string{"--curve", "--curve-idle", "-1"}, `bench: --curve-idle "-1": want whole numbers of at least 0`},
		{[]string{"--curve", "--curve-out", ""}, "bench: --curve-out is empty"},
		{append(slices.Clone(up), "--args", "{"), "bench: --args: "},
		{append(slices.Clone(up), "--args", "[1]"), "bench: --args: "},
		{[]string{"mcplocal"}, `bench: unexpected argument "mcplocal"`},
	} {
		var stderr bytes.Buffer
		err := runBench(stopped(), c.args, io.Discard, &stderr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("bench %v: %v, want %q", c.args, err, c.want)
		}
		if strings.Contains(stderr.String(), "bench: building") {
			t.Errorf("bench %v built mcplocal before refusing", c.args)
		}
	}
	var stderr bytes.Buffer
	_ = runBench(stopped(), []string{"mcplocal"}, io.Discard, &stderr)
	if !strings.Contains(stderr.String(), "Usage: mcpchaos bench") || !strings.Contains(stderr.String(), "-curve-timeout") {
		t.Errorf("an unexpected argument is answered without the usage and flags:\n%s", stderr.String())
	}
	// Whole numbers, spaces allowed around them, at least the least.
	if got, err := counts("--x", " 1, 64 ,0", 0); err != nil || !slices.Equal(got, []int{1, 64, 0}) {
		t.Errorf("counts: %v %v", got, err)
	}
	if _, err := counts("--x", "0", 1); err == nil {
		t.Error("counts took 0 where the least is 1")
	}
	if _, err := counts("--x", "1,x", 0); err == nil {
		t.Error("counts took a word for a number")
	}
}

// Without --curve, bench measures every target side by side: the upstream
// directly and each --target, whose tool defaults to --tool; --json prints
// the report as JSON, otherwise a table.
func TestBenchMeasuresTargetsSideBySide(t *testing.T) {
	fake, err := upstream.NewDocmost(upstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := []string{"--no-mcplocal", "--no-floor", "--upstream", fake.URL(), "--tool", "update_page", "--args", `{"page_id":"p1","content":"x"}`,
		"--target", "same=" + fake.URL(), "--target", "other=" + fake.URL() + "#search", "--sessions", "1,2", "--rounds", "1", "--duration", "50ms", "--idle", "0"}
	var stdout bytes.Buffer
	if err := runBench(ctx, append(slices.Clone(args), "--json"), &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	var rep bench.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout.String())
	}
	got := map[string]string{}
	for _, tr := range rep.Targets {
		got[tr.Target.Name] = tr.Target.Tool
		if tr.Target.URL != fake.URL() {
			t.Errorf("target %s measured %s, want the --upstream %s", tr.Target.Name, tr.Target.URL, fake.URL())
		}
		if tr.Target.Tool == "update_page" && tr.Latency[0].Errors != 0 {
			t.Errorf("target %s: update_page with --args failed: %+v", tr.Target.Name, tr.Latency[0])
		}
		if len(tr.Latency) != 2 || tr.Latency[0].Sessions != 1 || tr.Latency[1].Sessions != 2 || tr.Latency[0].Calls == 0 {
			t.Errorf("target %s: latency %+v, want calls at 1 and 2 sessions", tr.Target.Name, tr.Latency)
		}
	}
	if want := map[string]string{bench.Direct: "update_page", "same": "update_page", "other": "search"}; !maps.Equal(got, want) {
		t.Errorf("targets and tools %v, want %v", got, want)
	}
	if !strings.Contains(stdout.String(), "\n  \"") {
		t.Errorf("--json is not indented:\n%s", stdout.String())
	}
	stdout.Reset()
	if err := runBench(ctx, args, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(strings.TrimSpace(stdout.String()), "{") || !strings.Contains(stdout.String(), "other") {
		t.Errorf("without --json, not a table:\n%s", stdout.String())
	}
}

// With no --upstream, bench starts the fake docmost in process and calls
// its update_page, saying so.
func TestBenchStartsItsOwnUpstream(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := runBench(ctx, []string{"--no-mcplocal", "--no-floor", "--quiet-upstream", "--sessions", "1", "--rounds", "1", "--duration", "50ms", "--idle", "0", "--json"}, &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "bench: upstream: the fake docmost in process at http://") {
		t.Errorf("bench does not say it started the fake:\n%s", stderr.String())
	}
	var rep bench.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || len(rep.Targets) != 1 {
		t.Fatalf("--json: %v\n%s", err, stdout.String())
	}
	if tr := rep.Targets[0]; tr.Target.Tool != "update_page" || tr.Latency[0].Calls == 0 || tr.Latency[0].Errors != 0 {
		t.Errorf("the fake's target: %+v", tr)
	}
}

// Unless --no-floor, bench measures the floor too: a plain reverse proxy
// in front of the upstream, started as its own process of this binary
// (`mcpchaos fake floor`), so its RSS is its own; every proxy is then
// judged against it.
func TestBenchMeasuresTheFloor(t *testing.T) {
	fake, err := upstream.NewDocmost(upstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err = runBench(ctx, []string{"--no-mcplocal", "--upstream", fake.URL(), "--tool", "update_page", "--args", `{"page_id":"p1","content":"x"}`,
		"--target", "again=" + fake.URL(), "--sessions", "1", "--rounds", "1", "--duration", "50ms", "--idle", "0", "--json"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var rep bench.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout.String())
	}
	var names []string
	for _, tr := range rep.Targets {
		names = append(names, tr.Target.Name)
		if tr.Target.Name != bench.Floor {
			continue
		}
		if tr.Target.PID <= 0 || tr.Target.PID == os.Getpid() || tr.Target.URL == fake.URL() || tr.Target.Tool != "update_page" {
			t.Errorf("the floor: %+v, want a process of its own in front of the upstream, calling update_page", tr.Target)
		}
		if tr.Latency[0].Calls == 0 || tr.Latency[0].Errors != 0 {
			t.Errorf("the floor's calls: %+v", tr.Latency[0])
		}
	}
	if want := []string{bench.Direct, bench.Floor, "again"}; !slices.Equal(names, want) {
		t.Errorf("targets %v, want %v", names, want)
	}
	if len(rep.AgainstFloor) == 0 {
		t.Errorf("no target is judged against the floor: %+v", rep)
	}
}
