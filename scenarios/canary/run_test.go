package canary

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/mcpchaos/mcpchaos/scenarios/modcopy"
	"github.com/mcpchaos/mcpchaos/scenarios/report"
)

// fakeCall is one command the canary ran through execute.
type fakeCall struct {
	// links are where the copy's tools/*/node_modules point when the
	// command runs.
	links   map[string]string
	dir     string
	env     []string
	timeout time.Duration
	args    []string
	logged  bool // the command's output has a writer
}

// fakeWorld stands in for the go toolchain, npm, mcpchaos run and Ginkgo:
// a switch is a line in the copy's go.mod, a build writes binaries that
// name the SDK they were built with, and a suite run writes the records
// the test's functions give for the proxy's and the harness's SDKs.
type fakeWorld struct {
	mu    sync.Mutex
	calls []fakeCall
	// catalogue gives the records of `mcpchaos run` (nil: it writes none).
	catalogue func(proxy, harness, focus string) []report.Record
	// specs gives the spec reports of a Ginkgo run.
	specs func(proxy, harness, focus string) types.SpecReports
}

const sdkMark = "// sdk "

// sdkOf names the switches made in the module at dir ("go.mod": none).
func sdkOf(dir string) string {
	b, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	var sw []string
	for _, l := range strings.Split(string(b), "\n") {
		if s, ok := strings.CutPrefix(l, sdkMark); ok {
			sw = append(sw, s)
		}
	}
	if len(sw) == 0 {
		return "go.mod"
	}
	return strings.Join(sw, " ")
}

func argAfter(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v
		}
	}
	return ""
}

// envOf is k's value in env: the last one, as a command sees it.
func envOf(env []string, k string) string {
	v := ""
	for _, kv := range env {
		if val, ok := strings.CutPrefix(kv, k+"="); ok {
			v = val
		}
	}
	return v
}

func (f *fakeWorld) execute(ctx context.Context, dir string, env []string, timeout time.Duration, log io.Writer, args ...string) modcopy.Result {
	f.mu.Lock()
	links := map[string]string{}
	nms, _ := filepath.Glob(filepath.Join(dir, "tools", "*", "node_modules"))
	for _, nm := range nms {
		links[filepath.Base(filepath.Dir(nm))], _ = os.Readlink(nm)
	}
	f.calls = append(f.calls, fakeCall{dir: dir, env: env, timeout: timeout, args: args, links: links, logged: log != nil})
	f.mu.Unlock()
	fail := func(out string) modcopy.Result { return modcopy.Result{Exit: 1, Out: out} }
	appendMod := func(line string) {
		mod := filepath.Join(dir, "go.mod")
		if args[0] == "npm" { // in tools/NAME of the copy
			mod = filepath.Join(dir, "..", "..", "go.mod")
		}
		fh, err := os.OpenFile(mod, os.O_APPEND|os.O_WRONLY, 0)
		if err == nil {
			fmt.Fprintln(fh, sdkMark+line)
			_ = fh.Close()
		}
	}
	if ctx.Err() != nil {
		return modcopy.Result{Exit: -1, Err: ctx.Err(), Out: ctx.Err().Error()}
	}
	switch {
	case slices.Equal(args[:3], []string{"go", "mod", "edit"}) && args[3] == "-replace":
		appendMod(args[4])
	case slices.Equal(args[:3], []string{"go", "mod", "edit"}) && args[3] == "-dropreplace":
	case args[0] == "go" && args[1] == "get":
		if strings.Contains(args[2], "unreleased") {
			return fail("go: " + args[2] + ": unknown revision")
		}
		appendMod(args[2])
	case args[0] == "go" && args[1] == "build":
		sdk := sdkOf(dir)
		if strings.Contains(sdk, "broken") {
			return fail("go: downloading example.com/sdk v9\n\n./cmd/mcplocal/main.go:3:2: undefined: sdk.Server\n")
		}
		out := args[3]
		for _, pkg := range args[4:] {
			if err := os.WriteFile(filepath.Join(out, filepath.Base(pkg)), []byte(sdk), 0o755); err != nil {
				return fail(err.Error())
			}
		}
	case args[0] == "npm":
		pkg, ver, _ := strings.Cut(args[len(args)-1][1:], "@")
		pkg = args[len(args)-1][:1] + pkg
		nm := filepath.Join(dir, "node_modules", filepath.FromSlash(pkg))
		_ = os.MkdirAll(nm, 0o755)
		_ = os.WriteFile(filepath.Join(nm, "package.json"), []byte(`{"version":"`+ver+`"}`), 0o644)
		appendMod("npm " + pkg + "@" + ver)
	case filepath.Base(args[0]) == "mcpchaos" && args[1] == "run":
		harness, _ := os.ReadFile(args[0])
		proxy, _ := os.ReadFile(strings.TrimPrefix(argAfter(args, "--target"), "binary:"))
		recs := f.catalogue(string(proxy), string(harness), argAfter(args, "--focus"))
		if recs == nil {
			return fail("panic: the harness broke\ngoroutine 1 [running]")
		}
		b, _ := json.Marshal(recs)
		if err := os.WriteFile(argAfter(args, "--json"), b, 0o644); err != nil {
			return fail(err.Error())
		}
		fmt.Fprintf(log, "[ 1/%d] %s PASS 1ms\n", len(recs), recs[0].Name)
	case args[0] == "go" && args[1] == "run":
		proxy, _ := os.ReadFile(envOf(env, "MCPCHAOS_MCPLOCAL"))
		specs := f.specs(string(proxy), sdkOf(dir), argAfter(args, "--focus"))
		if specs == nil {
			return fail("# example.com/m/scenarios/sess\nsuite_test.go:1: syntax error")
		}
		rep := types.Report{SuiteDescription: "Scenarios", SuiteSucceeded: true, SpecReports: specs}
		b, _ := json.Marshal([]types.Report{rep})
		if err := os.WriteFile(filepath.Join(argAfter(args, "--output-dir"), "ginkgo.json"), b, 0o644); err != nil {
			return fail(err.Error())
		}
	default:
		return fail("fake: unknown command " + strings.Join(args, " "))
	}
	return modcopy.Result{Took: time.Millisecond}
}

// callsOf are the calls whose args begin with prefix.
func (f *fakeWorld) callsOf(prefix ...string) []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeCall
	for _, c := range f.calls {
		if len(c.args) >= len(prefix) && slices.Equal(c.args[:len(prefix)], prefix) {
			out = append(out, c)
		}
	}
	return out
}

// catalogueRuns are the `mcpchaos run` calls, by the side's output dir.
func (f *fakeWorld) catalogueRuns() []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeCall
	for _, c := range f.calls {
		if filepath.Base(c.args[0]) == "mcpchaos" {
			out = append(out, c)
		}
	}
	return out
}

// fakeModule is a tiny module under git (nothing committed: a copy holds
// what git lists) with one Ginkgo suite under scenarios/, run against the
// fake world. The slots of module copies are the test's own.
func fakeModule(t *testing.T, f *fakeWorld) string {
	t.Helper()
	t.Setenv("TMPDIR", t.TempDir())
	root := t.TempDir()
	files := map[string]string{
		"go.mod":                              "module example.com/m\n\ngo 1.21\n",
		"cmd/mcplocal/main.go":                "package main\n\nfunc main() {}\n",
		"cmd/mcpchaos/main.go":                "package main\n\nfunc main() {}\n",
		"scenarios/sess/suite_test.go":        "package sess\n\nimport \"github.com/onsi/ginkgo/v2\"\n\nvar _ = ginkgo.RunSpecs(nil, \"sessions\")\n",
		"tools/tsclient/package.json":         `{"dependencies":{"@modelcontextprotocol/sdk":"1.0.0"}}`,
		"tools/tsclient/node_modules/x.js":    "installed\n",
		"tools/conformance/package.json":      "{}",
		"tools/conformance/node_modules/y.js": "installed\n",
		".gitignore":                          "node_modules/\n",
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("git", "-C", root, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	old := execute
	execute = f.execute
	t.Cleanup(func() { execute = old })
	return root
}

func catRec(name, verdict string, latency time.Duration) report.Record {
	return report.Record{Name: name, Source: "catalogue", Verdict: verdict, Latency: latency}
}

var goSDK = Switch{Module: "example.com/sdk", Version: "v2.0.0"}

// The same catalogue on every SDK: the candidate changes nothing.
func sameCatalogue(proxy, harness, focus string) []report.Record {
	return []report.Record{catRec("none × ping", "PASS", time.Millisecond), catRec("crash × reconnect", "PASS", time.Millisecond)}
}

// A candidate SDK that makes a row fail is a regression: the run fails and
// names it, the candidate is built and run in a copy with the switch made
// there (go get, -mod=mod), and the work tree is left as it was.
func TestRunFlagsARowTheCandidateBreaks(t *testing.T) {
	f := &fakeWorld{catalogue: func(proxy, harness, focus string) []report.Record {
		v := "PASS"
		if proxy != "go.mod" {
			v = "FAIL"
		}
		return []report.Record{catRec("none × ping", "PASS", time.Millisecond), catRec("crash × reconnect", v, time.Millisecond)}
	}}
	root := fakeModule(t, f)
	var progress bytes.Buffer
	res, err := Run(context.Background(), Options{SDK: []Switch{goSDK}, Dir: root, Seed: 7, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Comparison
	if !c.Failed || res.Build != nil || len(res.Regressions) != 1 || res.Regressions[0].Name != "crash × reconnect" || res.Regressions[0].Change != NewlyFailing {
		t.Fatalf("result %+v, want the one regression crash × reconnect", res)
	}
	if c.Baseline != "go.mod" || c.Candidate != "example.com/sdk@v2.0.0" || c.Seed != 7 || len(c.Rows) != 2 {
		t.Errorf("comparison %+v", c)
	}
	if want := "FAIL: 1 of 2 rows passed on the baseline and do not on the candidate (1 changed, 0 allowed)"; c.Verdict != want {
		t.Errorf("verdict %q, want %q", c.Verdict, want)
	}
	gets := f.callsOf("go", "get", "example.com/sdk@v2.0.0")
	if len(gets) != 1 || gets[0].dir == root || !strings.Contains(envOf(gets[0].env, "GOFLAGS"), "-mod=mod") {
		t.Fatalf("go get calls %+v: want one, in a copy, with -mod=mod", gets)
	}
	if len(f.callsOf("go", "mod", "edit", "-dropreplace", "example.com/sdk")) != 1 {
		t.Error("a replace in go.mod must be dropped before go get")
	}
	builds := f.callsOf("go", "build")
	if len(builds) != 2 || builds[0].dir != root || builds[1].dir != gets[0].dir {
		t.Fatalf("builds %+v: want the baseline's in the work tree, the candidate's in its copy", builds)
	}
	if envOf(builds[0].env, "GOWORK") != "off" || strings.Contains(envOf(builds[0].env, "GOFLAGS"), "-mod=mod") || !strings.Contains(envOf(builds[1].env, "GOFLAGS"), "-mod=mod") {
		t.Errorf("build envs: want the module's for the baseline, with -mod=mod for the candidate's copy")
	}
	for _, tool := range []string{"tsclient", "conformance"} {
		if want := filepath.Join(root, "tools", tool, "node_modules"); builds[1].links[tool] != want {
			t.Errorf("the copy's tools/%s/node_modules links to %q, want the work tree's %s", tool, builds[1].links[tool], want)
		}
	}
	for _, b := range builds {
		if !slices.Contains(b.args, "./cmd/mcplocal") || !slices.Contains(b.args, "./cmd/mcpchaos") || b.timeout != defaultCommand {
			t.Errorf("build %+v: want both commands, bounded by the default timeout", b)
		}
	}
	runs := f.catalogueRuns()
	if len(runs) != 2 || argAfter(runs[0].args, "--seed") != "7" || argAfter(runs[1].args, "--seed") != "7" {
		t.Errorf("catalogue runs %+v: want one per side with the same seed", runs)
	}
	if got := sdkOf(root); got != "go.mod" {
		t.Errorf("the work tree's go.mod was switched: %s", got)
	}
	if _, err := os.Stat(gets[0].dir); !os.IsNotExist(err) {
		t.Errorf("the candidate's copy %s is left behind (%v)", gets[0].dir, err)
	}
	for _, want := range []string{"canary: seed 7", "building the baseline", "building the candidate: example.com/sdk@v2.0.0", "[candidate] [ 1/2] none × ping PASS",
		"canary: baseline built (0s)", "canary: candidate built (0s)", "canary: " + gets[0].dir + ": example.com/sdk@v2.0.0\n",
		"canary: baseline: the catalogue\n", "canary: candidate: the catalogue\n"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, progress.String())
		}
	}
}

// A candidate that changes nothing passes; the outputs and logs of each
// side stay in WorkDir, and every command is bounded by Options.Timeout.
func TestRunPassesAnUnchangedCandidate(t *testing.T) {
	f := &fakeWorld{catalogue: sameCatalogue}
	root := fakeModule(t, f)
	work := t.TempDir()
	var progress bytes.Buffer
	res, err := Run(context.Background(), Options{SDK: []Switch{{Module: "example.com/sdk", Dir: "/src/sdk"}}, Dir: root, WorkDir: work, Timeout: 7 * time.Second, Label: "smoke", Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Comparison
	if c.Failed || len(res.Regressions) != 0 || c.Verdict != "no change: 2 rows, same verdicts, none slower beyond the tolerance" {
		t.Errorf("result %+v", c)
	}
	if c.Seed == 0 {
		t.Error("a run without a seed must pick one")
	}
	if len(f.callsOf("go", "mod", "edit", "-replace", "example.com/sdk=/src/sdk")) != 1 {
		t.Error("a checkout is switched in with go mod edit -replace")
	}
	for _, c := range f.calls {
		if c.timeout != 7*time.Second {
			t.Errorf("%v: timeout %v, want Options.Timeout", c.args, c.timeout)
		}
		if !c.logged {
			t.Errorf("%v: its output reaches no canary.log", c.args)
		}
	}
	if !strings.Contains(progress.String(), "canary: candidate: the catalogue (label smoke)") {
		t.Errorf("progress does not name the label:\n%s", progress.String())
	}
	if strings.Contains(progress.String(), "Ginkgo specs run in") {
		t.Errorf("without --specs no copy is made for the baseline's specs:\n%s", progress.String())
	}
	for _, r := range f.catalogueRuns() {
		if argAfter(r.args, "--label") != "smoke" {
			t.Errorf("%v: the label is not passed on", r.args)
		}
	}
	for _, p := range []string{"baseline/catalogue.json", "candidate/catalogue.json", "baseline/canary.log", "candidate/canary.log", "baseline/mcplocal", "candidate/mcpchaos"} {
		if _, err := os.Stat(filepath.Join(work, p)); err != nil {
			t.Errorf("WorkDir keeps %s: %v", p, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(work, "candidate", "mcplocal")); string(b) != "example.com/sdk=/src/sdk" {
		t.Errorf("the candidate's proxy was built with %q", b)
	}
}

// A candidate that does not build is a result, not an error: the baseline
// still runs, every row it passed reads NOT BUILT, and the run fails
// showing the compiler's first lines.
func TestACandidateThatDoesNotBuildIsAResult(t *testing.T) {
	f := &fakeWorld{catalogue: sameCatalogue}
	root := fakeModule(t, f)
	var progress bytes.Buffer
	res, err := Run(context.Background(), Options{SDK: []Switch{{Module: "example.com/sdk", Version: "v9-broken"}}, Dir: root,
		Allow: map[string]string{"none × ping": "known"}, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if res.Build == nil || !strings.HasPrefix(res.Build.Step, "go build") {
		t.Fatalf("Build %+v, want the failed go build", res.Build)
	}
	c := res.Comparison
	if !c.Failed || len(c.Rows) != 2 || c.Rows[1].Change != NotBuilt || !c.Rows[1].Regression || c.Rows[0].Allowed != "known" || c.Rows[0].Regression {
		t.Errorf("rows %+v", c.Rows)
	}
	if !strings.HasPrefix(c.CandidateBuild, "go build") || !strings.Contains(c.CandidateBuild, "undefined: sdk.Server") || strings.Contains(c.CandidateBuild, "go: downloading") {
		t.Errorf("CandidateBuild %q", c.CandidateBuild)
	}
	if !strings.HasPrefix(c.Verdict, "FAIL: the candidate does not build (go build") || !strings.HasSuffix(c.Verdict, "the baseline passed 2 of its 2 rows") {
		t.Errorf("verdict %q", c.Verdict)
	}
	if !strings.Contains(progress.String(), "canary: the candidate does not build:\n./cmd/mcplocal/main.go:3:2: undefined: sdk.Server") {
		t.Errorf("progress does not show why the candidate does not build:\n%s", progress.String())
	}
	if runs := f.catalogueRuns(); len(runs) != 1 {
		t.Errorf("catalogue runs %d, want the baseline's alone", len(runs))
	}

	// A go get that fails is the candidate's build failing too.
	res, err = Run(context.Background(), Options{SDK: []Switch{{Module: "example.com/sdk", Version: "unreleased"}}, Dir: root})
	if err != nil || res.Build == nil || res.Build.Step != "go get example.com/sdk@unreleased" || !res.Comparison.Failed {
		t.Errorf("a failed go get: %+v, %v", res, err)
	}
}

// The canary itself cannot run without a candidate, with an npm package as
// the proxy's SDK, or when the baseline does not build.
func TestRunRefusesWhatItCannotCompare(t *testing.T) {
	f := &fakeWorld{catalogue: sameCatalogue}
	root := fakeModule(t, f)
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Dir: root}, "no candidate"},
		{Options{Dir: root, SDK: []Switch{{Module: "@modelcontextprotocol/sdk", Version: "1.2.3", NPM: true}}}, "give it to --client-sdk"},
		{Options{Dir: t.TempDir(), SDK: []Switch{goSDK}}, "not inside a Go module"},
	} {
		if res, err := Run(context.Background(), tc.o); err == nil || !strings.Contains(err.Error(), tc.want) || res != nil {
			t.Errorf("Run(%+v) = %v, %v; want an error saying %q", tc.o, res, err, tc.want)
		}
	}
	if len(f.calls) != 0 {
		t.Errorf("a refused run ran %v", f.calls)
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/m\n\ngo 1.21\n"+sdkMark+"broken\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Options{Dir: root, SDK: []Switch{goSDK}})
	if err == nil || res != nil || !strings.Contains(err.Error(), "the baseline does not build") || !strings.Contains(err.Error(), "undefined: sdk.Server") {
		t.Errorf("a baseline that does not build: %v, %v", res, err)
	}
}

// --client-sdk switches the harness's clients alone: the proxy stays the
// baseline's, or the --sdk one's; the clients are built with both.
func TestClientSDKSwitchesTheHarnessOnly(t *testing.T) {
	npm := Switch{Module: "@modelcontextprotocol/sdk", Version: "1.24.3", NPM: true}
	var seen [][2]string
	var mu sync.Mutex
	f := &fakeWorld{catalogue: func(proxy, harness, focus string) []report.Record {
		mu.Lock()
		seen = append(seen, [2]string{proxy, harness})
		mu.Unlock()
		return sameCatalogue(proxy, harness, focus)
	}}
	root := fakeModule(t, f)
	var progress bytes.Buffer
	res, err := Run(context.Background(), Options{ClientSDK: []Switch{npm}, Dir: root, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if want := "proxy: go.mod; clients: npm:@modelcontextprotocol/sdk@1.24.3"; res.Comparison.Candidate != want {
		t.Errorf("candidate %q, want %q", res.Comparison.Candidate, want)
	}
	if want := [][2]string{{"go.mod", "go.mod"}, {"go.mod", "npm @modelcontextprotocol/sdk@1.24.3"}}; !slices.Equal(seen, want) {
		t.Errorf("catalogue sides (proxy, harness) %v, want %v", seen, want)
	}
	builds := f.callsOf("go", "build")
	if len(builds) != 2 || slices.Contains(builds[1].args, "./cmd/mcplocal") || !slices.Contains(builds[1].args, "./cmd/mcpchaos") {
		t.Errorf("builds %v: the candidate builds its clients alone", builds)
	}
	installs := f.callsOf("npm", "install")
	if len(installs) != 1 || filepath.Base(installs[0].dir) != "tsclient" {
		t.Errorf("npm installs %+v", installs)
	}
	if !strings.Contains(progress.String(), "@modelcontextprotocol/sdk 1.24.3 installed in tools/tsclient") {
		t.Errorf("progress does not name the installed version:\n%s", progress.String())
	}

	seen = nil
	res, err = Run(context.Background(), Options{SDK: []Switch{goSDK}, ClientSDK: []Switch{npm}, Dir: root})
	if err != nil {
		t.Fatal(err)
	}
	if want := "proxy: example.com/sdk@v2.0.0; clients: example.com/sdk@v2.0.0 npm:@modelcontextprotocol/sdk@1.24.3"; res.Comparison.Candidate != want {
		t.Errorf("candidate %q, want %q", res.Comparison.Candidate, want)
	}
	if want := [][2]string{{"go.mod", "go.mod"}, {"example.com/sdk@v2.0.0", "npm @modelcontextprotocol/sdk@1.24.3 example.com/sdk@v2.0.0"}}; !slices.Equal(seen, want) {
		t.Errorf("catalogue sides (proxy, harness) %v, want %v", seen, want)
	}

	// A client package no tools/* depends on changes nothing: the
	// candidate does not build.
	res, err = Run(context.Background(), Options{ClientSDK: []Switch{{Module: "left-pad", Version: "1.0.0", NPM: true}}, Dir: root})
	if err != nil || res.Build == nil || res.Build.Step != "npm switch" {
		t.Errorf("an npm package no client uses: %+v, %v", res, err)
	}
}

// With a baseline cache, the second run of the same tree and suite takes
// the baseline's verdicts (and seed) from the cache instead of running it;
// --rerun-baseline runs it again.
func TestBaselineCacheRunsTheBaselineOnce(t *testing.T) {
	f := &fakeWorld{catalogue: sameCatalogue}
	root := fakeModule(t, f)
	cache := t.TempDir()
	var progress bytes.Buffer
	o := Options{SDK: []Switch{goSDK}, Dir: root, BaselineCache: cache, Progress: &progress}
	first, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !first.BaselineCached.IsZero() || len(f.catalogueRuns()) != 2 || !strings.Contains(progress.String(), "verdicts cached in "+cache) {
		t.Fatalf("first run: cached %v, %d catalogue runs\n%s", first.BaselineCached, len(f.catalogueRuns()), progress.String())
	}
	second, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if second.Comparison.Seed != first.Comparison.Seed || second.BaselineCached.IsZero() || len(f.catalogueRuns()) != 3 || second.Comparison.Failed {
		t.Errorf("second run: seed %d (first %d), cached %v, %d catalogue runs", second.Comparison.Seed, first.Comparison.Seed, second.BaselineCached, len(f.catalogueRuns()))
	}
	if !strings.Contains(progress.String(), "canary: baseline: 2 verdicts from the cache") {
		t.Errorf("progress does not say the baseline came from the cache:\n%s", progress.String())
	}
	o.RerunBaseline = true
	third, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !third.BaselineCached.IsZero() || len(f.catalogueRuns()) != 5 {
		t.Errorf("--rerun-baseline: cached %v, %d catalogue runs", third.BaselineCached, len(f.catalogueRuns()))
	}
	// A seed given is the run's, cached or not.
	o.RerunBaseline, o.Seed = false, first.Comparison.Seed+1
	fourth, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if fourth.Comparison.Seed != o.Seed || !fourth.BaselineCached.IsZero() || len(f.catalogueRuns()) != 7 {
		t.Errorf("another seed: seed %d, want %d; cached %v", fourth.Comparison.Seed, o.Seed, fourth.BaselineCached)
	}
}

// With --specs and a cached baseline, the baseline's specs do not run, so
// no copy is made for them; without the cache they run in a copy.
func TestCachedBaselineSpecsNeedNoCopy(t *testing.T) {
	f := &fakeWorld{catalogue: sameCatalogue, specs: func(proxy, harness, focus string) types.SpecReports {
		return types.SpecReports{{LeafNodeType: types.NodeTypeIt, LeafNodeText: "recreates", State: types.SpecStatePassed}}
	}}
	root := fakeModule(t, f)
	var progress bytes.Buffer
	o := Options{SDK: []Switch{goSDK}, Dir: root, Specs: "sessions", BaselineCache: t.TempDir(), Progress: &progress}
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(progress.String(), "canary: baseline: its Ginkgo specs run in ") {
		t.Errorf("the baseline's specs must run in a copy:\n%s", progress.String())
	}
	progress.Reset()
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.BaselineCached.IsZero() || strings.Contains(progress.String(), "Ginkgo specs run in") || len(f.callsOf("go", "run")) != 3 || len(res.Comparison.Rows) != 3 {
		t.Errorf("cached baseline: %d ginkgo runs, %d rows\n%s", len(f.callsOf("go", "run")), len(res.Comparison.Rows), progress.String())
	}

	// --rerun-baseline runs the baseline's specs again (the cached seed
	// named), in a copy too.
	o.RerunBaseline, o.Seed = true, res.Comparison.Seed
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	for _, g := range f.callsOf("go", "run") {
		if g.dir == root {
			t.Errorf("the baseline's specs ran in the work tree")
		}
	}
	if len(f.callsOf("go", "run")) != 5 {
		t.Errorf("%d ginkgo runs, want both sides run again", len(f.callsOf("go", "run")))
	}
}

// A baseline cache that cannot be written is said, and the run goes on.
func TestAnUnwritableCacheIsSaid(t *testing.T) {
	f := &fakeWorld{catalogue: sameCatalogue}
	root := fakeModule(t, f)
	cache := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(cache, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	res, err := Run(context.Background(), Options{SDK: []Switch{goSDK}, Dir: root, BaselineCache: cache, Progress: &progress})
	if err != nil || res.Comparison.Failed {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if !strings.Contains(progress.String(), "canary: baseline cache: ") || !strings.Contains(progress.String(), "(not cached)") {
		t.Errorf("progress does not say the baseline was not cached:\n%s", progress.String())
	}
}

// A suite run that writes no results is a failed row saying so, and such a
// baseline is not cached.
func TestASuiteWithoutResultsIsAFailedRow(t *testing.T) {
	f := &fakeWorld{catalogue: func(proxy, harness, focus string) []report.Record {
		if proxy != "go.mod" {
			return nil
		}
		return sameCatalogue(proxy, harness, focus)
	}}
	root := fakeModule(t, f)
	res, err := Run(context.Background(), Options{SDK: []Switch{goSDK}, Dir: root})
	if err != nil {
		t.Fatal(err)
	}
	var row *report.ComparedRow
	for i, r := range res.Comparison.Rows {
		if r.Name == "the catalogue run" {
			row = &res.Comparison.Rows[i]
		}
	}
	if row == nil || row.Cand == nil || row.Cand.Verdict != "FAIL" || !strings.Contains(row.Cand.Reason, "wrote no results (exit 1)") || !strings.Contains(row.Cand.Reason, "panic: the harness broke") {
		t.Fatalf("rows %+v: want a failed row for the run that wrote nothing", res.Comparison.Rows)
	}
	if len(res.Regressions) != 2 || !res.Comparison.Failed {
		t.Errorf("regressions %+v: both rows the baseline passed vanished", res.Regressions)
	}

	// The baseline wrote nothing: not cached, so the next run runs it again.
	f.catalogue = func(string, string, string) []report.Record { return nil }
	cache := t.TempDir()
	if _, err := Run(context.Background(), Options{SDK: []Switch{goSDK}, Dir: root, BaselineCache: cache}); err != nil {
		t.Fatal(err)
	}
	if entries, _ := filepath.Glob(filepath.Join(cache, "*.json")); len(entries) != 0 {
		t.Errorf("an incomplete baseline was cached: %v", entries)
	}

	// The catalogue wrote its results but Ginkgo wrote no report: a failed
	// row, and not cached either.
	f.catalogue = sameCatalogue
	f.specs = func(string, string, string) types.SpecReports { return nil }
	res, err = Run(context.Background(), Options{SDK: []Switch{goSDK}, Dir: root, BaselineCache: cache, Specs: "sessions"})
	if err != nil {
		t.Fatal(err)
	}
	if entries, _ := filepath.Glob(filepath.Join(cache, "*.json")); len(entries) != 0 {
		t.Errorf("a baseline whose specs wrote no report was cached: %v", entries)
	}
	last := res.Comparison.Rows[len(res.Comparison.Rows)-1]
	if last.Name != "the Ginkgo specs sessions" || last.Base == nil || !strings.Contains(last.Base.Reason, "ginkgo wrote no report (exit 1)") || !strings.Contains(last.Base.Reason, "syntax error") {
		t.Errorf("last row %+v: want the Ginkgo run that wrote nothing", last)
	}

	// No suite in the tree: a failed row saying so, and Ginkgo never runs.
	if err := os.WriteFile(filepath.Join(root, "scenarios", "sess", "suite_test.go"), []byte("package sess\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := len(f.callsOf("go", "run"))
	res, err = Run(context.Background(), Options{SDK: []Switch{goSDK}, Dir: root, Specs: "sessions"})
	if err != nil {
		t.Fatal(err)
	}
	last = res.Comparison.Rows[len(res.Comparison.Rows)-1]
	if last.Name != "the Ginkgo suites" || last.Cand == nil || !strings.Contains(last.Cand.Reason, "no Ginkgo suite found under scenarios/") || len(f.callsOf("go", "run")) != before {
		t.Errorf("last row %+v: want the missing suites said", last)
	}
}

// A run canceled while the baseline builds is the cancellation, not a
// baseline that does not build.
func TestACanceledBuildIsTheCancellation(t *testing.T) {
	f := &fakeWorld{catalogue: sameCatalogue}
	root := fakeModule(t, f)
	ctx, cancel := context.WithCancel(context.Background())
	execute = func(c context.Context, dir string, env []string, timeout time.Duration, log io.Writer, args ...string) modcopy.Result {
		if args[0] == "go" && args[1] == "build" {
			cancel()
		}
		return f.execute(c, dir, env, timeout, log, args...)
	}
	res, err := Run(ctx, Options{SDK: []Switch{goSDK}, Dir: root})
	if !errors.Is(err, context.Canceled) || res != nil {
		t.Errorf("Run = %+v, %v; want context.Canceled", res, err)
	}
}

// A canceled run is an error, not a comparison.
func TestACanceledRunIsAnError(t *testing.T) {
	f := &fakeWorld{catalogue: sameCatalogue}
	root := fakeModule(t, f)
	ctx, cancel := context.WithCancel(context.Background())
	f.catalogue = func(proxy, harness, focus string) []report.Record {
		cancel()
		return sameCatalogue(proxy, harness, focus)
	}
	res, err := Run(ctx, Options{SDK: []Switch{goSDK}, Dir: root})
	if err != context.Canceled || res != nil {
		t.Errorf("Run = %+v, %v; want context.Canceled", res, err)
	}
}

// Rows flagged slower are measured again on both sides, catalogue rows and
// Ginkgo specs: a flag the second measurement does not confirm is cleared,
// one it confirms stays.
func TestSlowerRowsAreMeasuredAgain(t *testing.T) {
	slow := func(proxy, focus string, first, again time.Duration) time.Duration {
		switch {
		case proxy == "go.mod":
			return 10 * time.Millisecond
		case focus == "":
			return first
		}
		return again
	}
	f := &fakeWorld{
		catalogue: func(proxy, harness, focus string) []report.Record {
			recs := []report.Record{catRec("blip", "PASS", slow(proxy, focus, 5*time.Second, 10*time.Millisecond)),
				catRec("real", "PASS", slow(proxy, focus, 5*time.Second, 5*time.Second))}
			if focus != "" {
				var out []report.Record
				for _, r := range recs {
					if strings.Contains(focus, r.Name) {
						out = append(out, r)
					}
				}
				return out
			}
			return append(recs, catRec("steady", "PASS", 10*time.Millisecond))
		},
		specs: func(proxy, harness, focus string) types.SpecReports {
			return types.SpecReports{{LeafNodeType: types.NodeTypeIt, ContainerHierarchyTexts: []string{"Stale sessions"}, LeafNodeText: "recreates (it)",
				State: types.SpecStatePassed, RunTime: slow(proxy, focus, 9*time.Second, 10*time.Millisecond)}}
		},
	}
	root := fakeModule(t, f)
	var progress bytes.Buffer
	res, err := Run(context.Background(), Options{SDK: []Switch{goSDK}, Dir: root, Specs: "sessions", Tolerance: 100 * time.Millisecond, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	changes := map[string]string{}
	for _, r := range res.Comparison.Rows {
		changes[r.Name] = r.Change
	}
	if changes["blip"] != "" || !strings.HasPrefix(changes["real"], Slower) || changes["steady"] != "" || changes["Stale sessions recreates (it)"] != "" || len(changes) != 4 {
		t.Errorf("changes %q: want only the confirmed slower row flagged", changes)
	}
	if res.Comparison.Failed || !strings.HasPrefix(res.Comparison.Verdict, "ok: 4 rows, 1 changed") {
		t.Errorf("verdict %q (failed %v): slower is a change, not a regression", res.Comparison.Verdict, res.Comparison.Failed)
	}
	var focused []string
	for _, r := range f.catalogueRuns() {
		if fo := argAfter(r.args, "--focus"); fo != "" {
			focused = append(focused, fo)
		}
	}
	if want := []string{"^(blip|real)$", "^(blip|real)$"}; !slices.Equal(focused, want) {
		t.Errorf("catalogue rechecks focus %q, want %q", focused, want)
	}
	ginkgo := f.callsOf("go", "run", "github.com/onsi/ginkgo/v2/ginkgo")
	if len(ginkgo) != 4 {
		t.Fatalf("ginkgo runs %d, want a run and a recheck per side", len(ginkgo))
	}
	for i, g := range ginkgo {
		if g.dir == root {
			t.Errorf("ginkgo ran in the work tree: its binaries would collide with a make test there")
		}
		if argAfter(g.args, "--label-filter") != "(sessions) && !container && !foreign" || g.args[len(g.args)-1] != "./scenarios/sess" {
			t.Errorf("ginkgo args %v", g.args)
		}
		wantFocus := ""
		if i >= 2 {
			wantFocus = `(Stale sessions recreates \(it\))$`
		}
		if argAfter(g.args, "--focus") != wantFocus {
			t.Errorf("ginkgo run %d focus %q, want %q", i, argAfter(g.args, "--focus"), wantFocus)
		}
	}
	if b, c := envOf(ginkgo[0].env, "MCPCHAOS_MCPLOCAL"), envOf(ginkgo[1].env, "MCPCHAOS_CONFORMANCE_MCPLOCAL"); b == c || filepath.Base(b) != "mcplocal" || filepath.Base(c) != "mcplocal" {
		t.Errorf("the specs' proxies %q and %q: want each side's own", b, c)
	}
	if !strings.Contains(progress.String(), "real: slower") || !strings.Contains(progress.String(), "still slower, flagged") || !strings.Contains(progress.String(), "not slower, not flagged") {
		t.Errorf("progress does not say what the rechecks found:\n%s", progress.String())
	}
}

// Only what was flagged slower is measured again: catalogue rows alone
// recheck no Ginkgo spec, a spec alone reruns no catalogue row, and one of
// each rechecks both.
func TestOnlyTheFlaggedKindIsMeasuredAgain(t *testing.T) {
	for _, tc := range []struct {
		name               string
		catSlow, specSlow  bool
		catAgain, specRuns int
	}{
		{"a catalogue row", true, false, 2, 2},
		{"a spec", false, true, 0, 4},
		{"one of each", true, true, 2, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			latency := func(proxy, focus string, slow bool) time.Duration {
				if slow && proxy != "go.mod" && focus == "" {
					return 5 * time.Second
				}
				return 10 * time.Millisecond
			}
			f := &fakeWorld{
				catalogue: func(proxy, harness, focus string) []report.Record {
					return []report.Record{catRec("row", "PASS", latency(proxy, focus, tc.catSlow))}
				},
				specs: func(proxy, harness, focus string) types.SpecReports {
					return types.SpecReports{{LeafNodeType: types.NodeTypeIt, LeafNodeText: "spec", State: types.SpecStatePassed, RunTime: latency(proxy, focus, tc.specSlow)}}
				},
			}
			root := fakeModule(t, f)
			var progress bytes.Buffer
			res, err := Run(context.Background(), Options{SDK: []Switch{goSDK}, Dir: root, Specs: "sessions", Tolerance: 100 * time.Millisecond, Progress: &progress})
			if err != nil {
				t.Fatal(err)
			}
			again := 0
			for _, r := range f.catalogueRuns() {
				if argAfter(r.args, "--focus") != "" {
					again++
				}
			}
			if again != tc.catAgain || len(f.callsOf("go", "run")) != tc.specRuns {
				t.Errorf("%d catalogue reruns (want %d), %d ginkgo runs (want %d)", again, tc.catAgain, len(f.callsOf("go", "run")), tc.specRuns)
			}
			if res.Comparison.Verdict != "no change: 2 rows, same verdicts, none slower beyond the tolerance" {
				t.Errorf("verdict %q: the second measurement clears the flags", res.Comparison.Verdict)
			}
			for want, on := range map[string]bool{"canary: 1 catalogue row(s) flagged slower": tc.catSlow, "canary: 1 Ginkgo spec(s) flagged slower": tc.specSlow} {
				if strings.Contains(progress.String(), want) != on {
					t.Errorf("progress says %q: %v, want %v", want, !on, on)
				}
			}
		})
	}
}
