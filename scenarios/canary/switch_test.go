package canary

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseSwitch(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/sdk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sw, err := ParseSwitch("github.com/modelcontextprotocol/go-sdk@v1.7.0")
	if err != nil || sw.Module != "github.com/modelcontextprotocol/go-sdk" || sw.Version != "v1.7.0" || sw.Dir != "" {
		t.Errorf("MODULE@VERSION: %+v %v", sw, err)
	}
	want := [][]string{{"go", "mod", "edit", "-dropreplace", sw.Module}, {"go", "get", sw.Module + "@v1.7.0"}}
	if got := sw.commands(); !reflect.DeepEqual(got, want) {
		t.Errorf("commands %v, want %v", got, want)
	}
	sw, err = ParseSwitch("example.com/sdk=" + dir)
	if err != nil || sw.Dir != dir || sw.Version != "" {
		t.Errorf("MODULE=DIR: %+v %v", sw, err)
	}
	for _, bad := range []string{"", "no-version", "mod@", "=dir", "example.com/sdk=" + filepath.Join(dir, "missing")} {
		if _, err := ParseSwitch(bad); err == nil {
			t.Errorf("ParseSwitch(%q) accepted", bad)
		}
	}
}

// The candidate really is switched: the copy's go.mod replaces the module
// with the checkout (a canary that compared the baseline with itself would
// always say "no change").
func TestApplyReplacesTheModuleInTheCopy(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("go is needed: ", err)
	}
	sdk, mod := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(sdk, "go.mod"), []byte("module example.com/sdk\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/app\n\ngo 1.22\n\nrequire example.com/sdk v1.0.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sw, err := ParseSwitch("example.com/sdk=" + sdk)
	if err != nil {
		t.Fatal(err)
	}
	if err := apply(context.Background(), mod, append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod"), []Switch{sw}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(mod, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "replace example.com/sdk => "+sdk) {
		t.Errorf("go.mod of the copy has no replace for the switch:\n%s", b)
	}
}

// A failed step is a BuildError showing the first lines, without go's
// download chatter.
func TestBuildErrorShowsTheFirstLines(t *testing.T) {
	out := "go: downloading example.com/x v1\n\n# example.com/app\n./main.go:3:2: undefined: mcp.ServerSessionState\n"
	for i := 0; i < 40; i++ {
		out += "./more.go:1:1: another\n"
	}
	e := &BuildError{Step: "go build ./cmd/mcplocal", Output: out}
	lines := strings.Split(e.FirstLines(), "\n")
	if len(lines) != compilerLines || lines[0] != "# example.com/app" || !strings.Contains(lines[1], "undefined: mcp.ServerSessionState") {
		t.Errorf("first lines:\n%s", e.FirstLines())
	}
}
