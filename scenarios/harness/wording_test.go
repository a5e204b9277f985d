package harness

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// workWords are what the repository's docs and comments must not say: they
// name the promise, the spec or the measurement, never a tracker's number, a
// numbered stretch of work, a branch or who else was using the machine. A
// reader of a clone has none of those, nor any file outside the
// repository. Each pattern is written so that it
// does not match its own source text.
var workWords = []struct {
	why string
	re  *regexp.Regexp
}{
	{"a tracker's issue number", regexp.MustCompile(`(?i)\bissues? #?\d`)},
	{"a numbered work period", regexp.MustCompile(`(?i)(?:^|[^\w-])session \d+\b`)},
	{"a numbered work period", regexp.MustCompile(`(?i)\b(?:fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth) session\b`)},
	{"a numbered work period", regexp.MustCompile(`(?i)\bwork periods?\b`)},
	{"the machine's other occupants", regexp.MustCompile(`(?i)\bother (?:agents?|engineers?|helpers|jobs)\b`)},
	{"a work period", regexp.MustCompile(`(?i)\b(?:during|since) this session\b`)},
	{"a work period", regexp.MustCompile("(?i)\\bthis session's (?:`?make\\b|merges\\b)")},
	{"the machine's other occupants", regexp.MustCompile(`(?i)\bshared with (?:~?\d|(?:two|three|four|five|six|seven|eight|several) other)`)},
	{"a file outside the repository", regexp.MustCompile(`\.\./shared\b|/work/shared\b|\bDESIGN\.md\b`)},
	{"a branch", regexp.MustCompile(`(?i)\b(?:this|that|our|the surface|the conformance) branch\b`)},
	{"a branch", regexp.MustCompile(`(?i)\bbranch (?:[a-z]+\d+[a-z]*|main)\b`)},
	{"a branch", regexp.MustCompile(`\b(?:mut17b?|tri17[a-z]|flakes17|idle14|relaydefault|h\d\d(?:a|b|ci|docs)?)\b`)},
}

// wordingFile says whether a file is text the wording rule covers: code,
// docs, scripts, config and the mutants' patches.
func wordingFile(rel string) bool {
	switch filepath.Ext(rel) {
	case ".go", ".md", ".sh", ".yaml", ".yml", ".json", ".mjs", ".patch", ".txt":
		return true
	}
	base := filepath.Base(rel)
	return base == "Makefile" || rel == ".ci/run"
}

// TestNoWorkProcessWordsInTheRepository reads every text file of the module
// and fails on a line that speaks of the team's own work rather than the
// product: docs state what is true now, dated events go to docs/history.md.
func TestNoWorkProcessWordsInTheRepository(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	self := filepath.Join(root, "scenarios", "harness", "wording_test.go")
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "testdata":
				return filepath.SkipDir
			}
			if rel == "bin" || rel == "reports" {
				return filepath.SkipDir
			}
			return nil
		}
		if path == self || !wordingFile(rel) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.IndexByte(b, 0) >= 0 {
			return nil
		}
		checked++
		for i, line := range strings.Split(string(b), "\n") {
			for _, w := range workWords {
				if m := w.re.FindString(line); m != "" {
					t.Errorf("%s:%d names %s (%q): %s", rel, i+1, w.why, strings.TrimSpace(m), strings.TrimSpace(line))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d text files read under %s: the walk is not seeing the module", checked, root)
	}
}

// TestWorkWordsAreCaught keeps the patterns honest: each phrase below is one
// the rule exists for and must be caught; each allowed phrase is ordinary
// product wording that must pass.
func TestWorkWordsAreCaught(t *testing.T) {
	caught := []string{
		"fixed in issue " + "12", "(issues " + "11 and 14)",
		"measured in session " + "9", "the eighth " + "session's flake check",
		"shared with ~7 other " + "agents' builds", "while other " + "jobs ran", "the machine shared with four " + "other engineers",
		"on branch " + "idle14", "every other " + "engineer had stopped", "load never fell during this " + "session",
		"passed in this session's " + "`make test`", "see ../" + "sha" + "red/DES" + "IGN.md", "DES" + "IGN.md's layout", "merged with this " + "branch", "the surface " + "branch",
	}
	allowed := []string{
		"the unknown-session 404", "the fourth session is refused", "a second session connects",
		"this session's own upstream sessions", "an if branch that returns early", "h2c",
	}
	hit := func(s string) bool {
		for _, w := range workWords {
			if w.re.MatchString(s) {
				return true
			}
		}
		return false
	}
	for _, s := range caught {
		if !hit(s) {
			t.Errorf("%q is not caught", s)
		}
	}
	for _, s := range allowed {
		if hit(s) {
			t.Errorf("%q is caught, but it is product wording", s)
		}
	}
}
