package mutants

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestResultsFileKeepsTheLastWordOfEachMutant: a rerun reads every earlier
// line (the last one of a mutant wins), skips lines that are no record,
// and appends after what is there; each verdict is one JSON line.
func TestResultsFileKeepsTheLastWordOfEachMutant(t *testing.T) {
	muts, err := FindMutants("p/p.go", []byte(genericSrc))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r.jsonl")
	long := strings.Repeat("x", 100_000) // longer than a scanner's default line
	lines := []string{
		`{"key":"` + resultKey(muts[0]) + `","hash":"h","verdict":"survived","judges":"tests","detail":"` + long + `"}`,
		`not json`,
		`{"hash":"h","verdict":"killed","judges":"tests"}`,
		`{"key":"` + resultKey(muts[3]) + `","hash":"h","verdict":"killed","took_ms":"soon","judges":"tests"}`,
		`{"key":"` + resultKey(muts[0]) + `","hash":"h","verdict":"killed","killed_by":"p TestY","took_ms":20,"judges":"tests"}`,
		`{"key":"` + resultKey(muts[1]) + `","hash":"h","verdict":"survived","judges":"tests","detail":"` + long + `"}`,
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := openResults(path)
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := r.lookup(muts[0], "h", "tests"); !ok || o.Verdict != GKilled || o.KilledBy != "p TestY" || o.Took != 20*time.Millisecond {
		t.Errorf("the later line of a mutant: %+v, %v; want killed by p TestY", o, ok)
	}
	if o, ok := r.lookup(muts[1], "h", "tests"); !ok || o.Detail != long {
		t.Errorf("a long line: resumed %v, detail of %d bytes", ok, len(o.Detail))
	}
	if o, ok := r.lookup(muts[3], "h", "tests"); ok {
		t.Errorf("a line that does not decode as a record was resumed: %+v", o)
	}
	if err := r.add(GenericOutcome{Mutant: muts[2], Verdict: GNotCovered, Detail: "d", Took: 3 * time.Second}, "h2", "tests/v2"); err != nil {
		t.Fatal(err)
	}
	r.close()
	if err := r.add(GenericOutcome{Mutant: muts[2], Verdict: GKilled}, "h2", "tests/v2"); err == nil {
		t.Error("a verdict was written after the file was closed")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(all) != len(lines)+1 || strings.Join(all[:len(lines)], "\n") != strings.Join(lines, "\n") {
		t.Fatalf("the file after one add holds %d lines, want the %d it had and one more", len(all), len(lines))
	}
	var rec resultRecord
	if err := json.Unmarshal([]byte(all[len(lines)]), &rec); err != nil {
		t.Fatal(err)
	}
	want := resultRecord{Key: resultKey(muts[2]), Hash: "h2", Verdict: GNotCovered, Detail: "d", TookMS: 3000, Judges: "tests/v2"}
	if rec != want {
		t.Errorf("record %+v, want %+v", rec, want)
	}
	if k := resultKey(muts[2]); k != muts[2].ID()+" "+muts[2].Op {
		t.Errorf("key %q: want the place and the change", k)
	}
}

// TestWhichVerdictsHoldForOtherJudges: a kill (timed out too) holds
// whatever judges, since the same tests run again; a survival, or a
// mutant no test covered, holds only for the same judges; an error never.
func TestWhichVerdictsHoldForOtherJudges(t *testing.T) {
	muts, err := FindMutants("p/p.go", []byte(genericSrc))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r.jsonl")
	r, err := openResults(path)
	if err != nil {
		t.Fatal(err)
	}
	verdicts := []GenericVerdict{GKilled, GTimedOut, GSurvived, GNotCovered, GError, GNotViable}
	for i, v := range verdicts {
		if err := r.add(GenericOutcome{Mutant: muts[i], Verdict: v}, "h", "tests"); err != nil {
			t.Fatal(err)
		}
	}
	r.close()
	if r, err = openResults(path); err != nil {
		t.Fatal(err)
	}
	defer r.close()
	for i, v := range verdicts {
		same := v != GError
		other := v == GKilled || v == GTimedOut || v == GNotViable
		if _, ok := r.lookup(muts[i], "h", "tests"); ok != same {
			t.Errorf("%s, same judges: resumed %v, want %v", v, ok, same)
		}
		if _, ok := r.lookup(muts[i], "h", "tests+scenarios"); ok != other {
			t.Errorf("%s, other judges: resumed %v, want %v", v, ok, other)
		}
	}
}

// TestNoResultsFileKeepsNothing: an empty path reads and writes nothing;
// a path that cannot be written is an error.
func TestNoResultsFileKeepsNothing(t *testing.T) {
	muts, err := FindMutants("p/p.go", []byte(genericSrc))
	if err != nil {
		t.Fatal(err)
	}
	r, err := openResults("")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.add(GenericOutcome{Mutant: muts[0], Verdict: GKilled}, "h", "tests"); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.lookup(muts[0], "h", "tests"); ok {
		t.Error("a verdict was kept without a results file")
	}
	r.close()
	dir := t.TempDir()
	if _, err := openResults(dir); err == nil {
		t.Error("a directory was opened as the results file")
	}
	if _, err := openResults(filepath.Join(dir, "missing", "r.jsonl")); err == nil {
		t.Error("a results file in a directory that does not exist was opened")
	}
}

// TestPackageHashIsOfItsGoFiles: the hash changes with a Go file's content
// or name, not with other files or subdirectories; it is short hex.
func TestPackageHashIsOfItsGoFiles(t *testing.T) {
	root := t.TempDir()
	write := func(rel, s string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hash := func() string {
		t.Helper()
		h, err := packageHash(root, "p")
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	write("p/a.go", "package p\n")
	write("p/b.go", "package p // b\n")
	h0 := hash()
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(h0) {
		t.Errorf("hash %q, want 16 hex digits", h0)
	}
	write("p/README.md", "not Go\n")
	write("p/sub/c.go", "package sub\n")
	write("p/dir.go/x", "a directory named like a Go file\n")
	write("q/d.go", "package q\n")
	if h := hash(); h != h0 {
		t.Errorf("other files changed the hash: %s, was %s", h, h0)
	}
	write("p/b.go", "package p // b, changed\n")
	h1 := hash()
	if h1 == h0 {
		t.Error("a changed file left the hash as it was")
	}
	// The same bytes split otherwise between files, or under other names.
	write("p/b.go", "")
	write("p/a.go", "package p\npackage p // b, changed\n")
	h2 := hash()
	if h2 == h1 {
		t.Error("moving content between files left the hash as it was")
	}
	if err := os.Rename(filepath.Join(root, "p/b.go"), filepath.Join(root, "p/c.go")); err != nil {
		t.Fatal(err)
	}
	h3 := hash()
	if h3 == h2 {
		t.Error("renaming a file left the hash as it was")
	}
	write("p/c.go", "")
	if h := hash(); h != h3 {
		t.Errorf("rewriting the same content changed the hash")
	}
	if _, err := packageHash(root, "missing"); err == nil {
		t.Error("no error for a package directory that does not exist")
	}
}
