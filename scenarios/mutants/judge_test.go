package mutants

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/testtree"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// tinyModule writes a module of one package, p, whose test passes only
// while Two returns 2 and only when run in p's own directory (it reads
// testdata/two), as `go test` runs it. It returns the module as judge
// copies it.
func tinyModule(t *testing.T) *module {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":         "module example.com/tiny\n\ngo 1.22\n",
		"p/p.go":         "package p\n\n// Two returns two.\nfunc Two() int { return 2 }\n",
		"p/testdata/two": "2\n",
		"p/p_test.go": `package p

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestTwo(t *testing.T) {
	b, err := os.ReadFile("testdata/two")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if got := Two(); got != want {
		t.Fatalf("Two() = %d, want %d", got, want)
	}
}

func TestOther(t *testing.T) {}

func TestRelayOn(t *testing.T) {
	if os.Getenv("MCPCHAOS_RELAY") == "0" {
		t.Fatal("MCPCHAOS_RELAY=0: the relay is off")
	}
}
`,
	}
	testtree.Write(t, dir, files)
	git := exec.Command("git", "init", "-q", dir)
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := findModule(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// patchTwo is a patch of p/p.go whose Two body is body.
func patchTwo(body string) string {
	return `--- a/p/p.go
+++ b/p/p.go
@@ -1,4 +1,4 @@
 package p
 
 // Two returns two.
-func Two() int { return 2 }
+func Two() int { ` + body + ` }
`
}

// judge builds a go test check once and runs the built test binary in the
// package's directory: the verdicts are what `go test -count=1 PKG -run RUN`
// would give.
func TestJudgeRunsAGoTestCheckAsGoTestWould(t *testing.T) {
	m := tinyModule(t)
	opts := Options{Timeout: time.Minute}.withDefaults()
	kill := goTest("./p", "^TestTwo$")
	for _, c := range []struct {
		name, body string
		kill       Check
		want       Verdict
		errHas     string
	}{
		{"a mutant the test sees", "return 3", kill, Killed, ""},
		{"a mutant the test cannot see", "return 1 + 1", kill, Survived, ""},
		{"a mutant its check does not run", "return 3", goTest("./p", "^TestOther$"), Survived, ""},
		{"a mutant that does not compile", "return \"two\"", kill, Errored, "does not build"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := judge(context.Background(), m, Mutant{Name: "tiny", Patch: patchTwo(c.body), Kill: c.kill}, opts)
			if o.Verdict != c.want {
				t.Fatalf("verdict %s (err %v, exit %d), want %s; excerpt:\n%s", o.Verdict, o.Err, o.ExitCode, c.want, o.Excerpt)
			}
			if c.errHas != "" && (o.Err == nil || !strings.Contains(o.Err.Error(), c.errHas)) {
				t.Errorf("err = %v, want it to say %q", o.Err, c.errHas)
			}
			if c.want == Killed && !strings.Contains(o.Excerpt, "Two() = 3, want 2") {
				t.Errorf("the excerpt should say why the check failed, got:\n%s", o.Excerpt)
			}
		})
	}
}

// The check judge runs is the one the report names: the same package, -run
// regexp, label and focus, as the built binary's flags. Its test binaries
// are built without vet: make test vets the unpatched tree once, and a
// mutant is judged by its check, not by vet.
func TestPreparedRunsWhatArgsSays(t *testing.T) {
	for _, c := range []struct {
		check         Check
		build, run    string
		dir           string
		argsStartWith string
		env           string
	}{
		{goTest("./proxy/llm", "^TestX$"), "go test -ldflags=-w -vet=off -c -o T/bin/check.test ./proxy/llm",
			"T/bin/check.test -test.count=1 -test.failfast -test.run ^TestX$", "./proxy/llm", "go test -count=1 -failfast ./proxy/llm -run ^TestX$", ""},
		// mcplocal and mcpctl are linked once, before the suite, and handed
		// to it (its BeforeSuite would link them again otherwise): a mutant
		// that breaks them is an error, never a kill by that build.
		{Check{Kind: Ginkgo, Label: "health", Focus: "probe"}, "go build -ldflags=-w -o T/bin/ ./cmd/mcplocal ./cmd/mcpctl | go test -ldflags=-w -vet=off -c -o T/bin/scenarios.test ./scenarios",
			"T/bin/scenarios.test --ginkgo.no-color --ginkgo.fail-fast --ginkgo.label-filter=health --ginkgo.focus=probe", "./scenarios",
			"go run github.com/onsi/ginkgo/v2/ginkgo --no-color --fail-fast --label-filter=health --focus=probe ./scenarios",
			"MCPCHAOS_MCPLOCAL=T/bin/mcplocal MCPCHAOS_MCPCTL=T/bin/mcpctl"},
		{inCatalogue("paginate"), "go build -ldflags=-w -o T/bin/mcpchaos ./cmd/mcpchaos", "T/bin/mcpchaos run --label paginate", ".",
			"go run ./cmd/mcpchaos run --label paginate", ""},
	} {
		build, run, dir, env := c.check.prepared("T")
		if got := strings.Join(env, " "); got != c.env {
			t.Errorf("%s: env %q, want %q", c.check, got, c.env)
		}
		var steps []string
		for _, b := range build {
			steps = append(steps, strings.Join(b, " "))
		}
		if got := strings.Join(steps, " | "); got != c.build {
			t.Errorf("%s: build %q, want %q", c.check, got, c.build)
		}
		if got := strings.Join(run, " "); got != c.run {
			t.Errorf("%s: run %q, want %q", c.check, got, c.run)
		}
		if dir != c.dir {
			t.Errorf("%s: runs in %q, want %q", c.check, dir, c.dir)
		}
		if got := strings.Join(c.check.Args(), " "); got != c.argsStartWith {
			t.Errorf("%s: Args %q, want %q", c.check, got, c.argsStartWith)
		}
	}
}

// A check with SDKPath runs its command with MCPCHAOS_RELAY=0 (the relay
// off in every harness world that does not choose), and says so in the
// command line it reports; a check without it leaves the variable alone.
func TestAnSDKPathCheckRunsWithTheRelayOff(t *testing.T) {
	t.Setenv(relayEnv, "1") // the module's environment says on
	m := tinyModule(t)
	opts := Options{Timeout: time.Minute}.withDefaults()
	relayOn := goTest("./p", "^TestRelayOn$")
	sdk := relayOn
	sdk.SDKPath = true
	if got, want := sdk.String(), "MCPCHAOS_RELAY=0 go test -count=1 -failfast ./p -run '^TestRelayOn$'"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := relayOn.String(); strings.Contains(got, relayEnv) {
		t.Errorf("String() of a check without SDKPath = %q, want no %s", got, relayEnv)
	}
	if env := relayOn.Env(); env != nil {
		t.Errorf("Env() without SDKPath = %q, want none", env)
	}
	for _, c := range []struct {
		kill Check
		want Verdict
	}{
		{relayOn, Survived}, // MCPCHAOS_RELAY=1 from the module's environment
		{sdk, Killed},       // MCPCHAOS_RELAY=0 from the check's
	} {
		o := judge(context.Background(), m, Mutant{Name: "tiny", Patch: patchTwo("return 1 + 1"), Kill: c.kill}, opts)
		if o.Verdict != c.want {
			t.Errorf("%s: verdict %s (err %v, exit %d), want %s; excerpt:\n%s", c.kill, o.Verdict, o.Err, o.ExitCode, c.want, o.Excerpt)
		}
		if c.want == Killed && !strings.Contains(o.Excerpt, "MCPCHAOS_RELAY=0: the relay is off") {
			t.Errorf("%s: the check failed for another reason:\n%s", c.kill, o.Excerpt)
		}
		if c.want == Killed && o.KilledBy != sdk.String() {
			t.Errorf("KilledBy = %q, want %q", o.KilledBy, sdk.String())
		}
	}
}

func TestRelayEnvIsTheHarnesss(t *testing.T) {
	if relayEnv != harness.RelayEnv {
		t.Errorf("relayEnv = %q, harness.RelayEnv = %q", relayEnv, harness.RelayEnv)
	}
}
