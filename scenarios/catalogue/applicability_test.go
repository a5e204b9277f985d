package catalogue

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

var update = flag.Bool("update", false, "rewrite testdata/applicability.golden from the catalogue as it is")

// goldenTargets are the targets whose applicability is frozen: one of each
// kind mcplocal runs as, a live endpoint, a cluster, and the example proxy
// shapes of scenarios/testdata/shapes (specs a user could have written), the
// aggregating one also as a cluster of two replicas, and the two public
// proxies of scenarios/testdata/thirdparty (proxies of one server). None
// is started: what applies is decided from the target's kind and claims.
func goldenTargets(t *testing.T) []harness.Target {
	t.Helper()
	live, err := harness.ParseLive("https://proxy.example/mcp")
	if err != nil {
		t.Fatal(err)
	}
	targets := []harness.Target{
		&harness.InProcess{},
		&harness.Binary{Path: "bin/mcplocal"},
		&harness.Container{Image: "mcplocal:test"},
		&harness.Cluster{Path: "bin/mcplocal", Replicas: 2},
		live,
	}
	for _, name := range []string{"mcplocal", "aggregate", "stateless-paths"} {
		spec, err := harness.LoadForeign(filepath.Join("..", "testdata", "shapes", name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, spec.Target(nil))
		if name == "aggregate" {
			targets = append(targets, harness.NewForeignCluster(spec, 2, nil))
		}
	}
	for _, name := range []string{"mcp-proxy", "supergateway"} {
		spec, err := harness.LoadForeign(filepath.Join("..", "testdata", "thirdparty", name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, spec.Target(nil))
	}
	return targets
}

// applicability is the golden text: per target, every row and whether it
// runs there, or is not applicable and why.
func applicability(targets []harness.Target) string {
	var b strings.Builder
	for _, target := range targets {
		runs := 0
		var rows strings.Builder
		for _, s := range All() {
			if why := s.NotApplicable(target); why != "" {
				fmt.Fprintf(&rows, "  N/A   %s: %s\n", s.Name(), why)
				continue
			}
			runs++
			fmt.Fprintf(&rows, "  runs  %s\n", s.Name())
		}
		fmt.Fprintf(&b, "# %s: %d of %d rows run\n%s\n", target.Name(), runs, len(All()), rows.String())
	}
	return b.String()
}

// TestWhatAppliesIsFrozen: which catalogue rows run on each kind of target,
// and why each other row does not, is kept in testdata/applicability.golden.
// A change to it (a new row, a row newly N/A somewhere, another reason) must
// be made on purpose: run `go test ./scenarios/catalogue -run
// TestWhatAppliesIsFrozen -update` and read the diff before committing it.
func TestWhatAppliesIsFrozen(t *testing.T) {
	got := applicability(goldenTargets(t))
	const golden = "testdata/applicability.golden"
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v: make it with -update", err)
	}
	if want := string(b); got != want {
		t.Errorf("what applies changed; if on purpose, rerun with -update and commit the golden file:\n%s", lineDiff(want, got))
	}
}

// lineDiff lists the lines only in want (-) and only in got (+), each
// under the target section it belongs to, at most 60.
func lineDiff(want, got string) string {
	w, g := sectioned(want), sectioned(got)
	var out []string
	for _, d := range []struct {
		sign        string
		lines       []string
		from, other map[string]int
	}{{"-", w.lines, w.count, g.count}, {"+", g.lines, g.count, w.count}} {
		for _, l := range d.lines {
			if d.from[l] > d.other[l] {
				out = append(out, d.sign+" "+l)
				d.from[l] = d.other[l] // listed once
			}
		}
	}
	if len(out) > 60 {
		out = append(out[:60], fmt.Sprintf("... and %d more", len(out)-60))
	}
	return strings.Join(out, "\n")
}

// sectioned is text's lines, each prefixed with the target section it is
// in ("# inprocess | ..."), in order and counted.
func sectioned(text string) (s struct {
	lines []string
	count map[string]int
}) {
	s.count = map[string]int{}
	section := ""
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "# ") {
			section = strings.SplitN(l, ":", 2)[0]
		}
		k := section + " | " + l
		s.lines = append(s.lines, k)
		s.count[k]++
	}
	return s
}
