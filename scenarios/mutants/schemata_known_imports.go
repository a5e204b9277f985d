package mutants

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A patch that changes a body often changes what its file imports with
// it: the import the old body needed goes, or the one the new body needs
// comes. The shared tree's file imports both (the original's bodies use
// the one, the patched sibling the other), which is the mutant's own copy
// exactly when importing changes no package the program links: then no
// package's initialization is added, dropped or reordered (Go initializes
// packages by their import paths, subject to what each imports, and the
// patched package still depends, through its other imports, on every
// package it did). So an import change is placed only when the patched
// package's dependencies (go list -deps, its non-test files) are the same
// set before and after the patch, neither import is blank, dot or cgo's,
// and each added import's name is used by a body the patch changes.

// importChanges are the imports a patch adds to and removes from one file,
// as `name "path"` (name "" when the import has none of its own).
type importChanges struct{ added, removed []string }

// importsOf is the file's imports, as `name "path"`.
func importsOf(f *ast.File) []string {
	var out []string
	for _, is := range f.Imports {
		name := ""
		if is.Name != nil {
			name = is.Name.Name
		}
		out = append(out, name+" "+is.Path.Value)
	}
	return out
}

// compareImports is what the patched file imports that the original does
// not, and the other way round; or why that change is not one the shared
// tree takes.
func compareImports(of, pf *ast.File) (importChanges, error) {
	o, p := importsOf(of), importsOf(pf)
	var c importChanges
	for _, s := range p {
		if !slices.Contains(o, s) {
			c.added = append(c.added, s)
		}
	}
	for _, s := range o {
		if !slices.Contains(p, s) {
			c.removed = append(c.removed, s)
		}
	}
	paths := map[string]int{}
	for _, s := range slices.Concat(c.added, c.removed) {
		name, quoted, _ := strings.Cut(s, " ")
		switch {
		case name == "_" || name == ".":
			return c, fmt.Errorf("a %s import (%s) changes", name, quoted)
		case quoted == `"C"`:
			return c, fmt.Errorf("its cgo import changes")
		}
		if paths[quoted]++; paths[quoted] > 1 {
			return c, fmt.Errorf("%s is imported under another name", quoted)
		}
	}
	return c, nil
}

// importsHold says whether file's import changes (imp; changes are the
// bodies the patch changes in it) may be placed, judged on the package
// at root and its patched files in scratch (hs: the patch's files); it
// returns the added imports, each as `name "path"` with its package's name.
func importsHold(ctx context.Context, root, scratch, file string, hs []patchHeader, imp importChanges, changes []bodyChange) ([]string, string) {
	dir := path.Dir(file)
	before, err := listDeps(ctx, root, dir, "")
	if err != nil {
		return nil, fmt.Sprintf("it changes the imports of %s, and go list says: %v", file, err)
	}
	replace := map[string]string{}
	for _, h := range hs {
		if path.Dir(h.to) == dir {
			replace[filepath.Join(root, filepath.FromSlash(h.to))] = filepath.Join(scratch, filepath.FromSlash(h.to))
		}
	}
	overlay := filepath.Join(scratch, "overlay-"+strings.NewReplacer("/", "_").Replace(dir)+".json")
	b, _ := json.Marshal(map[string]map[string]string{"Replace": replace})
	if err := os.WriteFile(overlay, b, 0o644); err != nil {
		return nil, err.Error()
	}
	after, err := listDeps(ctx, root, dir, overlay)
	if err != nil {
		return nil, fmt.Sprintf("it changes the imports of %s, and go list of the patched package says: %v", file, err)
	}
	for _, p := range slices.Sorted(maps.Keys(before)) {
		if _, ok := after[p]; !ok {
			return nil, fmt.Sprintf("it changes the imports of %s, and its package no longer links %s", file, p)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(after)) {
		if _, ok := before[p]; !ok {
			return nil, fmt.Sprintf("it changes the imports of %s, and its package now links %s", file, p)
		}
	}
	var added []string
	for _, s := range imp.added {
		name, quoted, _ := strings.Cut(s, " ")
		p, err := strconv.Unquote(quoted)
		if err != nil {
			return nil, err.Error()
		}
		if name == "" {
			name = before[p]
		}
		used := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\s*\.`)
		if !slices.ContainsFunc(changes, func(c bodyChange) bool { return used.MatchString(c.decl) }) {
			return nil, fmt.Sprintf("it adds the import %s to %s, used by no body it changes", quoted, file)
		}
		added = append(added, name+" "+quoted)
	}
	return added, ""
}

// listDeps is the import path → package name of every package the
// package in dir (module-relative) depends on, itself included, with
// overlay (a go list -overlay file) if not "".
func listDeps(ctx context.Context, root, dir, overlay string) (map[string]string, error) {
	args := []string{"list", "-deps", "-f", "{{.ImportPath}} {{.Name}}"}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "./"+dir)...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%v: %s", err, firstLineOf(stderr.String()))
	}
	deps := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		p, name, _ := strings.Cut(l, " ")
		deps[p] = name
	}
	return deps, nil
}

// importText is imports (each `name "path"`) as declarations to follow a
// package clause on its line, so no line of the file moves.
func importText(imports []string) string {
	var b strings.Builder
	for _, s := range imports {
		fmt.Fprintf(&b, "; import %s", s)
	}
	return b.String()
}
