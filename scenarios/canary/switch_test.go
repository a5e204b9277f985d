package canary

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/testtree"
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
	if err := apply(context.Background(), mod, append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod"), []Switch{sw}, 0, nil); err != nil {
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

// npm:PACKAGE@VERSION switches a Node client's SDK; it takes one version
// (exact, or a dist-tag npm resolves to one), never a range.
func TestParseSwitchReadsNPMPackages(t *testing.T) {
	sw, err := ParseSwitch("npm:@modelcontextprotocol/sdk@1.24.3")
	if err != nil || !sw.NPM || sw.Module != "@modelcontextprotocol/sdk" || sw.Version != "1.24.3" || sw.Dir != "" {
		t.Fatalf("scoped package: %+v %v", sw, err)
	}
	if got := sw.String(); got != "npm:@modelcontextprotocol/sdk@1.24.3" {
		t.Errorf("String() = %q, want it as given", got)
	}
	for _, ok := range []string{"npm:left-pad@latest", "npm:@scope/pkg@2.0.0-beta.1", "npm:pkg@1.0.0+build.5"} {
		if _, err := ParseSwitch(ok); err != nil {
			t.Errorf("ParseSwitch(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"npm:", "npm:@scope/pkg", "npm:@scope/pkg@", "npm:pkg@^1.2.0", "npm:pkg@1.x", "npm:pkg@~1.2.3", "npm:pkg@>=1", "npm:pkg@*"} {
		if _, err := ParseSwitch(bad); err == nil {
			t.Errorf("ParseSwitch(%q) accepted", bad)
		}
	}
	// A Go switch is never mistaken for npm, and apply leaves npm ones to the plan.
	if sw, _ := ParseSwitch("github.com/mark3labs/mcp-go@v1.2.0"); sw.NPM {
		t.Error("a Go module parsed as npm")
	}
}

// The install plan: npm install --save-exact in each tools/* package that
// depends on the package directly (the TypeScript client), none elsewhere
// (the conformance suite only pulls the SDK in transitively); a package no
// client depends on is an error, not a switch that silently changes nothing.
func TestInstallPlanInstallsTheVersionWhereTheClientDependsOnIt(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, body string) { testtree.Write(t, dir, map[string]string{rel: body}) }
	write("tools/tsclient/package.json", `{"dependencies": {"@modelcontextprotocol/sdk": "1.32.2"}}`)
	write("tools/conformance/package.json", `{"dependencies": {"@modelcontextprotocol/conformance": "0.1.13"}}`)
	sdk, err := ParseSwitch("npm:@modelcontextprotocol/sdk@1.24.3")
	if err != nil {
		t.Fatal(err)
	}
	gosw, err := ParseSwitch("github.com/mark3labs/mcp-go@v1.2.0")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := installPlan(dir, []Switch{gosw, sdk})
	if err != nil {
		t.Fatal(err)
	}
	want := []npmStep{{Dir: filepath.Join(dir, "tools", "tsclient"), Switch: sdk,
		Args: []string{"npm", "install", "--no-audit", "--no-fund", "--save-exact", "@modelcontextprotocol/sdk@1.24.3"}}}
	if !reflect.DeepEqual(plan, want) {
		t.Errorf("plan %+v, want %+v", plan, want)
	}
	other, _ := ParseSwitch("npm:left-pad@1.3.0")
	if _, err := installPlan(dir, []Switch{other}); err == nil || !strings.Contains(err.Error(), "no tools/*/package.json depends on left-pad") {
		t.Errorf("a package no client depends on: %v", err)
	}
	// Go switches alone need no npm at all.
	if plan, err := installPlan(dir, []Switch{gosw}); err != nil || len(plan) != 0 {
		t.Errorf("Go switches planned npm steps: %+v %v", plan, err)
	}
}

// An npm package is a client's SDK: the canary refuses it as the proxy's
// (--sdk) before building anything.
func TestNPMSwitchIsRefusedForTheProxy(t *testing.T) {
	sw, err := ParseSwitch("npm:@modelcontextprotocol/sdk@1.24.3")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), Options{SDK: []Switch{sw}, Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "give it to --client-sdk") {
		t.Errorf("Run with an npm --sdk: %v", err)
	}
}

// installNPM runs the plan in the copy and says which version landed; a
// node_modules the copy links to the work tree is unlinked first, so the
// install never writes into the work tree's. (npm is a stand-in script
// here: the real install needs the registry.)
func TestInstallNPMInstallsInTheCopyOnly(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Fatal("sh is needed: ", err)
	}
	dir, work, bin := t.TempDir(), t.TempDir(), t.TempDir()
	client := filepath.Join(dir, "tools", "tsclient")
	if err := os.MkdirAll(client, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(client, "package.json"), []byte(`{"dependencies": {"@modelcontextprotocol/sdk": "1.32.2"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	workModules := filepath.Join(work, "node_modules")
	if err := os.MkdirAll(workModules, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(workModules, filepath.Join(client, "node_modules")); err != nil {
		t.Fatal(err)
	}
	// The stand-in installs what it is asked for: PACKAGE@VERSION, last argument.
	fake := "#!/bin/sh\nfor a; do last=$a; done\npkg=${last%@*}; ver=${last##*@}\nmkdir -p node_modules/$pkg && printf '{\"version\": \"%s\"}' $ver > node_modules/$pkg/package.json\n"
	if err := os.WriteFile(filepath.Join(bin, "npm"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	// The command is looked up on this process's PATH (exec.Command), not
	// the child's environment.
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	env := os.Environ()
	sw, _ := ParseSwitch("npm:@modelcontextprotocol/sdk@1.24.3")
	lines, err := installNPM(context.Background(), dir, env, []Switch{sw}, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"@modelcontextprotocol/sdk 1.24.3 installed in tools/tsclient"}; !reflect.DeepEqual(lines, want) {
		t.Errorf("installNPM said %q, want %q", lines, want)
	}
	if fi, err := os.Lstat(filepath.Join(client, "node_modules")); err != nil || fi.Mode()&os.ModeSymlink != 0 {
		t.Errorf("the copy's node_modules is still a link (or gone): %v %v", fi, err)
	}
	if entries, _ := os.ReadDir(workModules); len(entries) != 0 {
		t.Errorf("the install wrote into the work tree's node_modules: %v", entries)
	}
}

// ParseSwitch at the edges of each form: an npm package with no name or no
// @ at all, a replacement with no module, a version with no module.
func TestParseSwitchRefusesEveryHalfForm(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/sdk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"npm:@1.2.3", "npm:nover", "=" + dir, "@v1.0.0"} {
		if sw, err := ParseSwitch(bad); err == nil {
			t.Errorf("ParseSwitch(%q) accepted: %+v", bad, sw)
		}
	}
}

// installedVersion reads node_modules/PKG/package.json's version, and says
// "?" for a package that is not there, a file that is not JSON, or one
// without a version.
func TestInstalledVersionSaysWhatIsInstalled(t *testing.T) {
	dir := t.TempDir()
	pkg := filepath.Join(dir, "node_modules", "@scope", "pkg")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := installedVersion(dir, "@scope/pkg"); got != "?" {
		t.Errorf("no package.json: %q", got)
	}
	for body, want := range map[string]string{`{"version":"1.24.3"}`: "1.24.3", `{"name":"pkg"}`: "?", `not json`: "?"} {
		if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := installedVersion(dir, "@scope/pkg"); got != want {
			t.Errorf("package.json %s: %q, want %q", body, got, want)
		}
	}
}
