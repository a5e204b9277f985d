package canary

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/modcopy"
	"github.com/mcpchaos/mcpchaos/scenarios/report"
)

// testModule is a module of two files in a temp dir.
func testModule(t *testing.T) *modcopy.Module {
	t.Helper()
	root := t.TempDir()
	for name, body := range map[string]string{"go.mod": "module example.com/app\n", "main.go": "package main\n"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return &modcopy.Module{Root: root, Files: []string{"go.mod", "main.go"}, GoVersion: "go1.26.8"}
}

// The key changes with anything that can change the baseline's verdicts
// (a file's content, the toolchain, the suite's selection, a knob's env
// override), and not with the seed, which an entry carries itself.
func TestBaselineKeyFollowsTheTreeAndTheSuite(t *testing.T) {
	m := testModule(t)
	o := Options{Specs: DefaultSpecs, Seed: 7}
	key := func() string {
		t.Helper()
		k, err := baselineKey(m, o)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	k0 := key()
	if key() != k0 {
		t.Fatal("the same tree gives two keys")
	}
	o.Seed = 8
	if key() != k0 {
		t.Error("the seed changed the key: an entry carries its seed, the key must not")
	}
	seen := map[string]string{k0: "the tree as it was"}
	change := func(what string, do, undo func()) {
		t.Helper()
		do()
		k := key()
		if prev, dup := seen[k]; dup {
			t.Errorf("%s gives the key of %s: a stale baseline would be read", what, prev)
		}
		seen[k] = what
		undo()
		if key() != k0 {
			t.Errorf("undoing %s does not give the first key back", what)
		}
	}
	file := filepath.Join(m.Root, "main.go")
	change("an edited file", func() { _ = os.WriteFile(file, []byte("package main // edited\n"), 0o644) },
		func() { _ = os.WriteFile(file, []byte("package main\n"), 0o644) })
	change("another toolchain", func() { m.GoVersion = "go1.27.0" }, func() { m.GoVersion = "go1.26.8" })
	change("another label", func() { o.Label = "restart" }, func() { o.Label = "" })
	change("other specs", func() { o.Specs = "" }, func() { o.Specs = DefaultSpecs })
	change("a knob's env override", func() { _ = os.Setenv("MCPCTL_CANARY_TEST_MS", "5") }, func() { _ = os.Unsetenv("MCPCTL_CANARY_TEST_MS") })
}

// An entry comes back for its key and seed only; a run without a seed gets
// the newest entry's; the directory stays bounded.
func TestBaselineCacheStoresAndFindsEntries(t *testing.T) {
	dir := t.TempDir()
	recs := []report.Record{{Name: "none × tools/list", Source: "catalogue", Verdict: "PASS", Latency: 3 * time.Millisecond}}
	if _, ok := loadBaseline(dir, "k", 1); ok {
		t.Fatal("an empty cache has an entry")
	}
	if got := cachedSeed(dir, "k"); got != 0 {
		t.Fatalf("an empty cache has seed %d", got)
	}
	if err := storeBaseline(dir, "k", 1, recs, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := storeBaseline(dir, "k", 2, recs, time.Minute); err != nil {
		t.Fatal(err)
	}
	c, ok := loadBaseline(dir, "k", 1)
	if !ok || !reflect.DeepEqual(c.Records, recs) || c.Seed != 1 || c.Took != time.Minute {
		t.Errorf("entry k/1: %+v %v", c, ok)
	}
	if _, ok := loadBaseline(dir, "k", 3); ok {
		t.Error("seed 3 was never run, but an entry came back")
	}
	if _, ok := loadBaseline(dir, "other", 1); ok {
		t.Error("another tree's key read this tree's entry")
	}
	if got := cachedSeed(dir, "k"); got != 2 {
		t.Errorf("cachedSeed = %d, want the newest entry's (2)", got)
	}
	for i := range cacheMaxEntries + 5 {
		if err := storeBaseline(dir, fmt.Sprintf("x%d", i), 1, recs, 0); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(n) > cacheMaxEntries {
		t.Errorf("%d entries kept, want at most %d", len(n), cacheMaxEntries)
	}
}

// With the baseline's verdicts cached, the baseline's suite does not run
// (a side whose binaries do not exist could only produce a failed row);
// --rerun-baseline runs it, and a run that wrote no results is not cached.
func TestBaselineRecordsComeFromTheCacheWithoutRunningTheSuite(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	missing := filepath.Join(out, "does-not-exist")
	base := &side{name: "baseline", mcplocal: missing, mcpchaos: missing, harness: out, env: os.Environ()}
	recs := []report.Record{{Name: "none × tools/list", Source: "catalogue", Verdict: "PASS"}}
	if err := storeBaseline(dir, "k", 5, recs, time.Minute); err != nil {
		t.Fatal(err)
	}
	p := &progress{}
	defer p.close()
	o := Options{BaselineCache: dir, Seed: 5, Timeout: time.Minute}
	got, cachedAt := baselineRecords(context.Background(), "k", base, out, o, p)
	if !reflect.DeepEqual(got, recs) || cachedAt.IsZero() {
		t.Fatalf("with a cached baseline got %+v (recorded %v), want the cached records and when they were recorded", got, cachedAt)
	}
	o.RerunBaseline = true
	got, cachedAt = baselineRecords(context.Background(), "k", base, out, o, p)
	if len(got) != 1 || got[0].Name != "the catalogue run" || got[0].Verdict != "FAIL" || !cachedAt.IsZero() {
		t.Fatalf("--rerun-baseline did not run the suite: %+v (cached at %v)", got, cachedAt)
	}
	if c, ok := loadBaseline(dir, "k", 5); !ok || !reflect.DeepEqual(c.Records, recs) {
		t.Error("a baseline run that wrote no results replaced the cached verdicts")
	}
}
