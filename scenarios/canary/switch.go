// Package canary runs the suite against a proxy (and clients) built with a
// candidate MCP SDK and says what changed against the baseline, the versions
// go.mod pins.
//
// A candidate is the module copied to a temp dir with its dependencies
// switched (Switch: `go get MODULE@VERSION` or `go mod edit -replace
// MODULE=DIR`). Both sides are built, the same suite runs on each, binary
// target, one side after the other, and Compare lines their outcomes up:
// newly failing, newly passing, slower by more than the tolerance. A
// candidate that does not build is a result, not a crash.
package canary

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Switch replaces one dependency of the module: with a released version
// (Version) or with a local checkout (Dir).
type Switch struct {
	Module  string
	Version string // "v1.7.0", "latest", a pseudo-version, a branch for go get
	Dir     string // absolute path of a checkout holding the module's go.mod
}

// ParseSwitch reads MODULE@VERSION or MODULE=/path/to/checkout.
func ParseSwitch(s string) (Switch, error) {
	s = strings.TrimSpace(s)
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

// apply makes every switch in the module at dir, in order.
func apply(ctx context.Context, dir string, env []string, sw []Switch) error {
	for _, s := range sw {
		for _, args := range s.commands() {
			if r := runCmd(ctx, dir, env, 0, nil, args...); r.Failed() {
				return &BuildError{Step: strings.Join(args, " "), Output: r.Out}
			}
		}
	}
	return nil
}
