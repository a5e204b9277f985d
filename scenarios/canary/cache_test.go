package canary

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
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
	change("other Go flags", func() { m.GoFlags = "-tags=x" }, func() { m.GoFlags = "" })
	change("a file made executable", func() { _ = os.Chmod(file, 0o755) }, func() { _ = os.Chmod(file, 0o644) })
	link := filepath.Join(m.Root, "link")
	if err := os.Symlink("main.go", link); err != nil {
		t.Fatal(err)
	}
	m.Files = append(m.Files, "link")
	k0 = key()
	seen[k0] = "the tree with its link"
	change("a link pointing elsewhere", func() { _ = os.Remove(link); _ = os.Symlink("go.mod", link) },
		func() { _ = os.Remove(link); _ = os.Symlink("main.go", link) })
	// The same files listed in another order are the same tree; a file
	// listed but gone from the work tree is not copied, nor keyed.
	m.Files = []string{"link", "main.go", "go.mod", "deleted.go"}
	if key() != k0 {
		t.Error("the same files listed in another order give another key")
	}
}

// An entry another format, another key or no records wrote is not read; a
// newer entry of the same key wins; pruning keeps the newest entries and
// keeps them all when they fit.
func TestBaselineCacheReadsOnlyWhatItWrote(t *testing.T) {
	dir := t.TempDir()
	recs := []report.Record{{Name: "none × tools/list", Source: "catalogue", Verdict: "PASS"}}
	write := func(seed uint64, c cachedBaseline) {
		t.Helper()
		b, _ := json.Marshal(c)
		if err := os.WriteFile(entryPath(dir, "k", seed), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(1, cachedBaseline{Format: "old", Key: "k", Seed: 1, Records: recs})
	write(2, cachedBaseline{Format: cacheFormat, Key: "other", Seed: 2, Records: recs})
	write(3, cachedBaseline{Format: cacheFormat, Key: "k", Seed: 3})
	for seed := uint64(1); seed <= 3; seed++ {
		if _, ok := loadBaseline(dir, "k", seed); ok {
			t.Errorf("entry %d read, though not this format's, key's, or with records", seed)
		}
	}
	if got := cachedSeed(dir, "k"); got != 0 {
		t.Errorf("cachedSeed took an unreadable entry's seed %d", got)
	}
	write(4, cachedBaseline{Format: cacheFormat, Key: "k", Seed: 4, Records: recs, Recorded: t0.Add(time.Hour)})
	write(5, cachedBaseline{Format: cacheFormat, Key: "k", Seed: 5, Records: recs, Recorded: t0})
	// An entry is read for the seed it was recorded with, never another.
	write(6, cachedBaseline{Format: cacheFormat, Key: "k", Seed: 7, Records: recs, Recorded: t0})
	if _, ok := loadBaseline(dir, "k", 6); ok {
		t.Error("an entry holding seed 7 was read for seed 6")
	}
	if got := cachedSeed(dir, "k"); got != 4 {
		t.Errorf("cachedSeed = %d, want the entry recorded last (4), whatever the file order", got)
	}

	prune := t.TempDir()
	for i := range 4 {
		p := filepath.Join(prune, fmt.Sprintf("e%d.json", i))
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		// e3 is the newest, e0 the oldest: the names' order is not the age's.
		if err := os.Chtimes(p, t0, t0.Add(time.Duration(i)*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	pruneCache(prune, 4)
	if n, _ := filepath.Glob(filepath.Join(prune, "*.json")); len(n) != 4 {
		t.Errorf("pruning to 4 of 4 entries left %d", len(n))
	}
	pruneCache(prune, 2)
	left, _ := filepath.Glob(filepath.Join(prune, "*.json"))
	if len(left) != 2 || filepath.Base(left[0]) != "e2.json" || filepath.Base(left[1]) != "e3.json" {
		t.Errorf("pruning to 2 left %v, want the newest two, e2 and e3", left)
	}
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

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

// The default cache is the OS's cache dir's mcpchaos/canary-baseline.
func TestDefaultBaselineCacheIsUnderTheUserCache(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/cache")
	t.Setenv("HOME", "/home/u")
	if got, want := DefaultBaselineCache(), filepath.Join("/cache", "mcpchaos", "canary-baseline"); runtime.GOOS == "linux" && got != want {
		t.Errorf("DefaultBaselineCache() = %q, want %q", got, want)
	}
	if got := DefaultBaselineCache(); !strings.HasSuffix(got, filepath.Join("mcpchaos", "canary-baseline")) {
		t.Errorf("DefaultBaselineCache() = %q", got)
	}
}
