package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSpecsAreSortedByProjectThenName: every server, projects in name order
// and, within one, servers in name order.
func TestSpecsAreSortedByProjectThenName(t *testing.T) {
	c, err := Parse([]byte("projects: {q: {servers: {b: {url: 'http://q/b'}, a: {url: 'http://q/a'}}}, p: {servers: {d: {url: 'http://p/d'}, c: {url: 'http://p/c'}}}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range c.Specs("") {
		got = append(got, s.Project+"/"+s.Name+"="+s.URL)
	}
	if want := "p/c=http://p/c p/d=http://p/d q/a=http://q/a q/b=http://q/b"; strings.Join(got, " ") != want {
		t.Fatalf("Specs = %s, want %s", strings.Join(got, " "), want)
	}
}

// TestSaveThenOverlayServersRoundTrips: the servers file written by
// SaveServers, with its header, replaces the servers of the projects it
// names when overlaid; a project the config lacks is reported as ignored;
// an unwritable place and a file that breaks the config are named.
func TestSaveThenOverlayServersRoundTrips(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "servers.yaml")
	src, err := Parse([]byte("projects: {p: {servers: {s: {url: 'http://new/mcp'}}}, gone: {servers: {g: {url: 'http://g/mcp'}}}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := src.SaveServers(path); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(b), "# Servers managed by mcpctl (create/apply/delete server). Written by mcplocal;\n# it replaces the servers of the projects below at start.\n") {
		t.Fatalf("file %q", b)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
	dst, err := Parse([]byte("projects: {p: {servers: {old: {url: 'http://old/mcp'}}}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	replaced, ignored, err := dst.OverlayServers(path)
	if err != nil || strings.Join(replaced, ",") != "p" || strings.Join(ignored, ",") != "gone" {
		t.Fatalf("overlay: %v %v %v", replaced, ignored, err)
	}
	if got := dst.Specs(""); len(got) != 1 || got[0].Name != "s" || got[0].URL != "http://new/mcp" {
		t.Fatalf("after the overlay: %+v", got)
	}
	if err := src.SaveServers(filepath.Join(dir, "no-such-dir", "servers.yaml")); err == nil || !strings.HasPrefix(err.Error(), "servers file: ") {
		t.Fatalf("save into a missing directory: %v", err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("projects: {p: {servers: {s: {url: 'not a url'}}}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := dst.OverlayServers(bad); err == nil || !strings.HasPrefix(err.Error(), "servers file "+bad+": ") {
		t.Fatalf("a file that breaks the config: %v", err)
	}
}
