package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseServerSpecsReadsOneOrMany: a sequence of specs or one spec
// alone; an empty document, bad YAML and an unknown field are errors, the
// last naming its spec.
func TestParseServerSpecsReadsOneOrMany(t *testing.T) {
	many, err := ParseServerSpecs([]byte("- {name: a, project: p, url: 'http://a/mcp'}\n- {name: b, project: p, url: 'http://b/mcp'}\n"))
	if err != nil || len(many) != 2 || many[0].Name != "a" || many[1].URL != "http://b/mcp" {
		t.Fatalf("a sequence: %+v, %v", many, err)
	}
	one, err := ParseServerSpecs([]byte("{name: c, project: q, url: 'http://c/mcp'}\n"))
	if err != nil || len(one) != 1 || one[0].Project != "q" {
		t.Fatalf("one spec: %+v, %v", one, err)
	}
	for doc, want := range map[string]string{
		"":                                     "no server specs",
		"[unclosed":                            "yaml",
		"- {name: a}\n- {name: b, bogus: 1}\n": "servers[1]",
	} {
		if _, err := ParseServerSpecs([]byte(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error containing %q", doc, err, want)
		}
	}
}

// TestOverlayServersRefusesUnknownFields: a servers file with a field it
// does not know is an error, not silently ignored.
func TestOverlayServersRefusesUnknownFields(t *testing.T) {
	c, err := Parse([]byte(oneServer))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "x.servers.yaml")
	if err := os.WriteFile(path, []byte("bogus: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.OverlayServers(path); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Fatalf("an unknown field: %v", err)
	}
}

// TestSpecsOfOneProject: Specs(project) lists that project's servers only.
func TestSpecsOfOneProject(t *testing.T) {
	c, err := Parse([]byte("projects: {p: {servers: {s: {url: 'http://a/mcp'}}}, q: {servers: {t: {url: 'http://b/mcp'}}}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Specs("q"); len(got) != 1 || got[0].Name != "t" {
		t.Fatalf("Specs(q) = %+v", got)
	}
	if got := c.Specs(""); len(got) != 2 {
		t.Fatalf("Specs(\"\") = %+v, want both", got)
	}
}
