package mutants

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// typeChecker type-checks the packages of generic mutation in process, with
// their dependencies read from the compiler's export data (`go list
// -export`): a mutant that does not compile alone is found in milliseconds,
// without a build.
type typeChecker struct {
	modPath string
	root    string
	fset    *token.FileSet
	imp     types.Importer
	files   map[string][]string // package dir → its Go files in this build
	sw      *types.Package
}

// newTypeChecker lists pkgs (module-relative dirs) and the export data of
// everything they and the extra import paths import.
func newTypeChecker(ctx context.Context, m *module, pkgs []string, extra ...string) (*typeChecker, error) {
	args := []string{"list", "-deps", "-export", "-f", "{{.ImportPath}}\t{{.Export}}\t{{.Dir}}\t{{join .GoFiles \",\"}}\t{{with .Module}}{{.Path}}{{end}}"}
	for _, p := range pkgs {
		args = append(args, "./"+p)
	}
	args = append(args, "cmp", "os", "strconv") // the switch package's imports
	args = append(args, extra...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir, cmd.Env = m.root, m.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	tc := &typeChecker{root: m.root, fset: token.NewFileSet(), files: map[string][]string{}}
	exports := map[string]string{}
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") { // not TrimSpace: the last field may be empty
		f := strings.Split(l, "\t")
		if len(f) != 5 {
			continue
		}
		exports[f[0]] = f[1]
		if rel, err := filepath.Rel(m.root, f[2]); err == nil && !strings.HasPrefix(rel, "..") {
			tc.files[filepath.ToSlash(rel)] = strings.Split(f[3], ",")
			tc.modPath = f[4]
		}
	}
	gc := importer.ForCompiler(tc.fset, "gc", func(path string) (io.ReadCloser, error) {
		e, ok := exports[path]
		if !ok || e == "" {
			return nil, fmt.Errorf("no export data for %q", path)
		}
		return os.Open(e)
	})
	tc.imp = importerFunc(func(path string) (*types.Package, error) {
		if path == tc.modPath+"/"+SwitchDir {
			return tc.switchPkg()
		}
		return gc.Import(path)
	})
	return tc, nil
}

type importerFunc func(string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

func (tc *typeChecker) switchPkg() (*types.Package, error) {
	if tc.sw != nil {
		return tc.sw, nil
	}
	f, err := parser.ParseFile(tc.fset, SwitchDir+"/switch.go", switchSource, 0)
	if err != nil {
		return nil, err
	}
	conf := types.Config{Importer: tc.imp}
	pkg, err := conf.Check(tc.modPath+"/"+SwitchDir, tc.fset, []*ast.File{f}, nil)
	if err != nil {
		return nil, err
	}
	tc.sw = pkg
	return pkg, nil
}

// builds reports whether file (module-relative) is compiled in this build.
func (tc *typeChecker) builds(file string) bool {
	for _, f := range tc.files[filepath.ToSlash(filepath.Dir(file))] {
		if f == filepath.Base(file) {
			return true
		}
	}
	return false
}

// checkSource type-checks one file as a package of its own.
func (tc *typeChecker) checkSource(pkgPath, name, src string) []types.Error {
	f, err := parser.ParseFile(tc.fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return []types.Error{{Msg: err.Error()}}
	}
	var errs []types.Error
	conf := types.Config{Importer: tc.imp, Error: func(err error) {
		var te types.Error
		if errors.As(err, &te) {
			errs = append(errs, te)
		}
	}}
	_, _ = conf.Check(pkgPath, tc.fset, []*ast.File{f}, nil)
	return errs
}

// check type-checks the package in dir with the files of replace (by
// module-relative path) in place of their content on disk, and returns its
// errors (nil: it compiles).
func (tc *typeChecker) check(dir string, replace map[string][]byte) []types.Error {
	var files []*ast.File
	var errs []types.Error
	for _, name := range tc.files[dir] {
		rel := dir + "/" + name
		src, ok := replace[rel]
		if !ok {
			var err error
			if src, err = os.ReadFile(filepath.Join(tc.root, rel)); err != nil {
				return []types.Error{{Msg: err.Error()}}
			}
		}
		f, err := parser.ParseFile(tc.fset, rel, src, parser.SkipObjectResolution)
		if err != nil {
			return []types.Error{{Msg: err.Error()}}
		}
		files = append(files, f)
	}
	conf := types.Config{Importer: tc.imp, Error: func(err error) {
		var te types.Error
		if errors.As(err, &te) {
			errs = append(errs, te)
		}
	}}
	_, _ = conf.Check(tc.modPath+"/"+dir, tc.fset, files, nil)
	return errs
}
