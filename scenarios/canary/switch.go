// Package canary runs the suite against a proxy (and clients) built with a
// candidate MCP SDK and says what changed against the baseline, the versions
// go.mod pins.
//
// A candidate is the module copied to a temp dir with its dependencies
// switched (Switch: `go get MODULE@VERSION` or `go mod edit -replace
// MODULE=DIR`; for the Node clients, `npm install PACKAGE@VERSION`). Both sides are built, the same suite runs on each, binary
// target, one side after the other, and Compare lines their outcomes up:
// newly failing, newly passing, slower by more than the tolerance. A
// candidate that does not build is a result, not a crash.
package canary

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Switch replaces one dependency of the module: with a released version
// (Version) or with a local checkout (Dir); or, with NPM, one npm package
// of the harness's Node clients (tools/*/package.json) with a version.
type Switch struct {
	Module  string
	Version string // "v1.7.0", "latest", a pseudo-version, a branch for go get; npm: "1.24.3" or a dist-tag
	Dir     string // absolute path of a checkout holding the module's go.mod
	// NPM: Module is an npm package (such as @modelcontextprotocol/sdk, the
	// TypeScript client's SDK), installed at Version in the copy's tools/*
	// that depend on it directly.
	NPM bool
}

// npmPrefix marks an npm package among the switches.
const npmPrefix = "npm:"

// npmVersion is what an npm switch may name: one exact version, or a
// dist-tag (latest, next) that npm resolves to one. Ranges (^1.2, 1.x) are
// refused: the candidate is then not one version.
var npmVersion = regexp.MustCompile(`^(\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?|[A-Za-z][A-Za-z0-9._-]*)$`)

// ParseSwitch reads MODULE@VERSION, MODULE=/path/to/checkout, or
// npm:PACKAGE@VERSION (PACKAGE may be scoped: npm:@scope/name@1.2.3).
func ParseSwitch(s string) (Switch, error) {
	s = strings.TrimSpace(s)
	if pkg, ok := strings.CutPrefix(s, npmPrefix); ok {
		i := strings.LastIndex(pkg, "@")
		if i <= 0 || i == len(pkg)-1 {
			return Switch{}, fmt.Errorf("%q: want npm:PACKAGE@VERSION (e.g. npm:@modelcontextprotocol/sdk@1.24.3)", s)
		}
		name, ver := pkg[:i], pkg[i+1:]
		if !npmVersion.MatchString(ver) {
			return Switch{}, fmt.Errorf("%q: %q is not one version: name an exact version (1.24.3) or a dist-tag (latest), not a range", s, ver)
		}
		return Switch{Module: name, Version: ver, NPM: true}, nil
	}
	if mod, dir, ok := strings.Cut(s, "="); ok {
		if mod == "" || dir == "" {
			return Switch{}, fmt.Errorf("%q: want MODULE=/path/to/checkout", s)
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return Switch{}, fmt.Errorf("%q: %w", s, err)
		}
		if _, err := os.Stat(filepath.Join(abs, "go.mod")); err != nil {
			return Switch{}, fmt.Errorf("%q: %s holds no go.mod: a replacement must be a module checkout", s, abs)
		}
		return Switch{Module: mod, Dir: abs}, nil
	}
	if mod, ver, ok := strings.Cut(s, "@"); ok && mod != "" && ver != "" {
		return Switch{Module: mod, Version: ver}, nil
	}
	return Switch{}, fmt.Errorf("%q: want MODULE@VERSION (e.g. github.com/modelcontextprotocol/go-sdk@v1.7.0) or MODULE=/path/to/checkout", s)
}

// String is the switch as it was given.
func (s Switch) String() string {
	if s.NPM {
		return npmPrefix + s.Module + "@" + s.Version
	}
	if s.Dir != "" {
		return s.Module + "=" + s.Dir
	}
	return s.Module + "@" + s.Version
}

// commands are the go commands that make the switch in a module copy.
func (s Switch) commands() [][]string {
	if s.Dir != "" {
		return [][]string{{"go", "mod", "edit", "-replace", s.Module + "=" + s.Dir}}
	}
	// A replace in go.mod would win over go get: drop it first.
	return [][]string{
		{"go", "mod", "edit", "-dropreplace", s.Module},
		{"go", "get", s.Module + "@" + s.Version},
	}
}

// Describe names a set of switches for reports ("go.mod" when empty: the
// versions the module pins).
func Describe(sw []Switch) string {
	if len(sw) == 0 {
		return "go.mod"
	}
	parts := make([]string, len(sw))
	for i, s := range sw {
		parts[i] = s.String()
	}
	return strings.Join(parts, " ")
}

// apply makes every Go module switch in the module at dir, in order (npm
// switches are installPlan's), each command bounded by timeout (0: the
// default) and writing to log.
func apply(ctx context.Context, dir string, env []string, sw []Switch, timeout time.Duration, log io.Writer) error {
	for _, s := range sw {
		if s.NPM {
			continue
		}
		for _, args := range s.commands() {
			if r := runCmd(ctx, dir, env, timeout, log, args...); r.Failed() {
				return &BuildError{Step: strings.Join(args, " "), Output: r.Out}
			}
		}
	}
	return nil
}

// npmStep is one npm install of the plan: in Dir (a tools/* package of the
// copy), Args.
type npmStep struct {
	Dir    string
	Switch Switch
	Args   []string
}

// installPlan is what the npm switches do in the copy at dir: in every
// tools/*/package.json that depends on the package directly, `npm install
// --save-exact PACKAGE@VERSION` (the copy's package.json and lockfile then
// pin the version npm resolved; the work tree's are not touched). A package
// no tools/* depends on is an error: the switch would change nothing.
func installPlan(dir string, sw []Switch) ([]npmStep, error) {
	manifests, err := filepath.Glob(filepath.Join(dir, "tools", "*", "package.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(manifests)
	var plan []npmStep
	for _, s := range sw {
		if !s.NPM {
			continue
		}
		found := false
		for _, mf := range manifests {
			b, err := os.ReadFile(mf)
			if err != nil {
				return nil, err
			}
			var pkg struct {
				Dependencies    map[string]string `json:"dependencies"`
				DevDependencies map[string]string `json:"devDependencies"`
			}
			if err := json.Unmarshal(b, &pkg); err != nil {
				return nil, fmt.Errorf("%s: %w", mf, err)
			}
			_, dep := pkg.Dependencies[s.Module]
			_, dev := pkg.DevDependencies[s.Module]
			if !dep && !dev {
				continue
			}
			found = true
			plan = append(plan, npmStep{Dir: filepath.Dir(mf), Switch: s,
				Args: []string{"npm", "install", "--no-audit", "--no-fund", "--save-exact", s.Module + "@" + s.Version}})
		}
		if !found {
			return nil, fmt.Errorf("%s: no tools/*/package.json depends on %s, so no client would change", s, s.Module)
		}
	}
	return plan, nil
}

// installNPM carries out the npm switches in the copy at dir and returns
// one line per install naming the version npm put there. A copied
// node_modules link (a work tree may link its installs) is removed first,
// so the install never writes through it into the work tree.
func installNPM(ctx context.Context, dir string, env []string, sw []Switch, timeout time.Duration, log io.Writer) ([]string, error) {
	plan, err := installPlan(dir, sw)
	if err != nil {
		return nil, &BuildError{Step: "npm switch", Output: err.Error()}
	}
	var done []string
	for _, st := range plan {
		nm := filepath.Join(st.Dir, "node_modules")
		if fi, err := os.Lstat(nm); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			if err := os.Remove(nm); err != nil {
				return nil, err
			}
		}
		if r := runCmd(ctx, st.Dir, env, timeout, log, st.Args...); r.Failed() {
			return nil, &BuildError{Step: "(cd " + st.Dir + " && " + strings.Join(st.Args, " ") + ")", Output: r.Out}
		}
		rel, _ := filepath.Rel(dir, st.Dir)
		done = append(done, fmt.Sprintf("%s %s installed in %s", st.Switch.Module, installedVersion(st.Dir, st.Switch.Module), rel))
	}
	return done, nil
}

// installedVersion is the version of pkg under dir/node_modules, "?" if it
// cannot be read.
func installedVersion(dir, pkg string) string {
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", filepath.FromSlash(pkg), "package.json"))
	if err != nil {
		return "?"
	}
	var m struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(b, &m) != nil || m.Version == "" {
		return "?"
	}
	return m.Version
}
