package mutants

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Known mutants in one shared tree. Most known mutants' patches change
// only the bodies of Go functions. Such a mutant is placed at function
// level in one copy of the module, the shared tree: every function its
// patch changes keeps its original body and gains a sibling holding the
// patched body, and the original's body starts (on the line of its opening
// brace, so no line of the original moves) with a dispatch to the sibling
// when the mutant is the one switched on:
//
//	func (s *Server) handle(w http.ResponseWriter, r *http.Request) { if __mcpchaosm.Known("bare-404") { s.handle__known_bare_404(w, r); return };
//
// A function literal in the initializer of a package-level variable (the
// catalogue's operations, a table of handlers) is placed the same way: it
// is in no function, so it captures nothing but package-level names and
// its parameters, and its patched body becomes a top-level function of the
// literal's signature, named after the variable:
//
//	var X = wireOp("...", func(ctx context.Context, w *wireSession) Observation { if __mcpchaosm.Known("m") { return X__known_m(ctx, w) };
//
// The siblings are appended to the file, each behind a line directive that
// gives it the lines it has in the patched file, so a failure inside it
// names the lines the mutant's own copy would. KnownMutantEnv, read once at
// start-up by the switch package of the generic schemata (SwitchDir, so
// before any variable of the tree is initialized), switches one mutant on
// by name; unset, the shared tree is the original code. Each distinct
// check is then built once for every mutant placed, instead of once per
// mutant.
//
// A patch that changes anything else (a type, an import, a package-level
// variable outside its literals' bodies, a signature, a comment outside a
// body, a file that is not Go, a file added or removed) is not shared: its
// mutant keeps its own copy.

// KnownMutantEnv names the environment variable that switches one known
// mutant on in the shared tree: the mutant's name. Every process a check
// starts must inherit it (harness.KnownMutantEnv is the same name, and the
// container targets pass it into the container).
const KnownMutantEnv = "MCPCHAOS_KNOWN_MUTANT"

// knownInfix joins a function's name and a mutant's name in the name of
// the sibling holding that mutant's body.
const knownInfix = "__known_"

// KnownSchemata is the shared tree of a set of known mutants.
type KnownSchemata struct {
	// Files are the rewritten files, by module-relative path (slash
	// separated); the switch package is not among them (see Write).
	Files map[string][]byte
	// Placed names, for each mutant placed, the functions its patch
	// changes, as "dir/file.go:(*Recv).name" in patch order.
	Placed map[string][]string
	// NotShared says, for each mutant not placed, why: it is judged on its
	// own copy.
	NotShared map[string]string
}

// Shared reports whether the mutant named name is placed in the tree.
func (k *KnownSchemata) Shared(name string) bool { _, ok := k.Placed[name]; return ok }

// Write writes the rewritten files and the switch package into dir, a
// copy of the module.
func (k *KnownSchemata) Write(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, SwitchDir), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, SwitchDir, "switch.go"), []byte(switchSource), 0o644); err != nil {
		return err
	}
	for _, f := range slices.Sorted(maps.Keys(k.Files)) {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(f)), k.Files[f], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// modulePath reads the module path from root's go.mod.
func modulePath(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(strings.TrimSpace(l), "module "); ok {
			return strings.Trim(strings.TrimSpace(p), `"`), nil
		}
	}
	return "", fmt.Errorf("%s/go.mod names no module", root)
}

// bodyChange is one function whose body a mutant's patch changes.
type bodyChange struct {
	mutant string
	index  int    // of the function among the file's function declarations with a body
	decl   string // the patched declaration's text, from `func` to its closing brace
	line   int    // of `func` in the patched file
	name   string // "(*Recv).name" or "name"; "var.funcN" for a variable's Nth literal
	// imports the patch adds to the file, as `name "path"`: the shared
	// tree's file gains them (see importChanges).
	imports []string
}

// PlanKnownSchemata places every mutant of muts it can in one shared tree
// of the module at root (whose files are read there) and says why it
// leaves out the others.
func PlanKnownSchemata(ctx context.Context, root string, muts []Mutant) (*KnownSchemata, error) {
	modPath, err := modulePath(root)
	if err != nil {
		return nil, err
	}
	k := &KnownSchemata{Files: map[string][]byte{}, Placed: map[string][]string{}, NotShared: map[string]string{}}
	scratch, err := os.MkdirTemp("", "mcpchaos-known-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	changes := map[string][]bodyChange{} // file → its changes, in mutant order
	for i, mu := range muts {
		got, why := bodyChanges(ctx, root, filepath.Join(scratch, strconv.Itoa(i)), mu)
		if why != "" {
			k.NotShared[mu.Name] = why
			continue
		}
		for _, f := range slices.Sorted(maps.Keys(got)) {
			for _, c := range got[f] {
				k.Placed[mu.Name] = append(k.Placed[mu.Name], f+":"+c.name)
			}
			changes[f] = append(changes[f], got[f]...)
		}
	}
	// Place file by file; a file that cannot be placed leaves its
	// mutants out of every file (their other functions would be switched
	// on with only part of the patch), and the placing starts again.
	for {
		files, failed := placeAll(root, modPath, changes, k.Shared)
		if len(failed) == 0 {
			k.Files = files
			return k, nil
		}
		for name, why := range failed {
			k.NotShared[name] = why
			delete(k.Placed, name)
		}
	}
}

// placeAll rewrites every file of changes for the mutants placed (shared),
// or names the mutants whose functions could not be placed.
func placeAll(root, modPath string, changes map[string][]bodyChange, shared func(string) bool) (map[string][]byte, map[string]string) {
	files, failed := map[string][]byte{}, map[string]string{}
	used := map[string]bool{} // package dir + receiver + sibling name
	for _, f := range slices.Sorted(maps.Keys(changes)) {
		var cs []bodyChange
		for _, c := range changes[f] {
			if shared(c.mutant) {
				cs = append(cs, c)
			}
		}
		if len(cs) == 0 {
			continue
		}
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err == nil {
			files[f], err = placeBodies(modPath, f, src, cs, used)
		}
		if err != nil {
			for _, c := range cs {
				failed[c.mutant] = fmt.Sprintf("its functions in %s cannot be placed: %v", f, err)
			}
		}
	}
	return files, failed
}

// patchHeader is what a patch says of one file it changes.
type patchHeader struct {
	from, to  string // "a/..." and "b/..." paths without the prefix ("" for /dev/null)
	lifecycle bool   // the file is added, removed, renamed, copied or has its mode changed
	binary    bool
}

// patchFiles reads the file headers of a git diff.
func patchFiles(patch string) []patchHeader {
	var out []patchHeader
	for _, l := range strings.Split(patch, "\n") {
		switch {
		case strings.HasPrefix(l, "diff --git "):
			// The file's paths, which the ---/+++ lines, when there are
			// any (not for a binary file or a pure rename), say again.
			from, to, _ := strings.Cut(strings.TrimPrefix(l, "diff --git "), " b/")
			out = append(out, patchHeader{from: strings.TrimPrefix(from, "a/"), to: to})
		case len(out) == 0:
		case strings.HasPrefix(l, "--- "):
			out[len(out)-1].from = strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(l, "--- ")), "a/")
			if strings.TrimSpace(l) == "--- /dev/null" {
				out[len(out)-1].from, out[len(out)-1].lifecycle = "", true
			}
		case strings.HasPrefix(l, "+++ "):
			out[len(out)-1].to = strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(l, "+++ ")), "b/")
			if strings.TrimSpace(l) == "+++ /dev/null" {
				out[len(out)-1].to, out[len(out)-1].lifecycle = "", true
			}
		case strings.HasPrefix(l, "new file mode"), strings.HasPrefix(l, "deleted file mode"),
			strings.HasPrefix(l, "rename from"), strings.HasPrefix(l, "copy from"),
			strings.HasPrefix(l, "old mode"), strings.HasPrefix(l, "new mode"):
			out[len(out)-1].lifecycle = true
		case strings.HasPrefix(l, "Binary files"), strings.HasPrefix(l, "GIT binary patch"):
			out[len(out)-1].binary = true
		}
	}
	return out
}

// bodyChanges applies mu's patch to a scratch copy of the files it
// changes and returns, by file, the functions whose bodies changed; or why
// the mutant cannot be placed.
func bodyChanges(ctx context.Context, root, scratch string, mu Mutant) (map[string][]bodyChange, string) {
	hs := patchFiles(mu.Patch)
	if len(hs) == 0 {
		return nil, "its patch names no file"
	}
	for _, h := range hs {
		switch {
		case h.lifecycle:
			return nil, fmt.Sprintf("it adds, removes or renames a file (%s)", cmp.Or(h.to, h.from))
		case h.binary:
			return nil, fmt.Sprintf("it patches a binary file (%s)", h.to)
		case !strings.HasSuffix(h.to, ".go"):
			return nil, fmt.Sprintf("it patches a file that is not Go (%s)", h.to)
		}
	}
	for _, h := range hs {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(h.to)))
		if err != nil {
			return nil, fmt.Sprintf("reading %s: %v", h.to, err)
		}
		dst := filepath.Join(scratch, filepath.FromSlash(h.to))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, err.Error()
		}
		if err := os.WriteFile(dst, src, 0o644); err != nil {
			return nil, err.Error()
		}
	}
	if err := applyPatch(ctx, scratch, scratch, mu.Patch, false); err != nil {
		return nil, "its patch does not apply (its own copy says why): " + firstLineOf(err.Error())
	}
	out := map[string][]bodyChange{}
	for _, h := range hs {
		orig, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(h.to)))
		if err != nil {
			return nil, err.Error()
		}
		patched, err := os.ReadFile(filepath.Join(scratch, filepath.FromSlash(h.to)))
		if err != nil {
			return nil, err.Error()
		}
		cs, imp, why := changedBodies(h.to, orig, patched)
		if why != "" {
			return nil, why
		}
		var added []string
		if len(imp.added)+len(imp.removed) > 0 {
			if added, why = importsHold(ctx, root, scratch, h.to, hs, imp, cs); why != "" {
				return nil, why
			}
		}
		for i := range cs {
			cs[i].mutant, cs[i].imports = mu.Name, added
		}
		out[h.to] = append(out[h.to], cs...)
	}
	n := 0
	for _, cs := range out {
		n += len(cs)
	}
	if n == 0 {
		return nil, "its patch changes no function body"
	}
	return out, ""
}

// funcDecls are the file's function declarations that have a body, in
// source order.
func funcDecls(f *ast.File) []*ast.FuncDecl {
	var out []*ast.FuncDecl
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
			out = append(out, fd)
		}
	}
	return out
}

// bodyUnit is one body the shared tree can switch: a function declaration
// with a body, or a function literal in the initializer of a package-level
// variable (outside every other function literal). Such a literal is in no
// function, so it captures nothing but package-level names and its own
// parameters: its body moves to a top-level function of the same
// signature unchanged in meaning.
type bodyUnit struct {
	decl  *ast.FuncDecl // or nil
	lit   *ast.FuncLit  // or nil
	owner string        // for a literal: the variable its initializer sets
	nth   int           // for a literal: its number among the owner's literals, from 1
}

func (u bodyUnit) body() *ast.BlockStmt {
	if u.decl != nil {
		return u.decl.Body
	}
	return u.lit.Body
}

func (u bodyUnit) ftype() *ast.FuncType {
	if u.decl != nil {
		return u.decl.Type
	}
	return u.lit.Type
}

func (u bodyUnit) pos() token.Pos {
	if u.decl != nil {
		return u.decl.Pos()
	}
	return u.lit.Pos()
}

func (u bodyUnit) end() token.Pos {
	if u.decl != nil {
		return u.decl.End()
	}
	return u.lit.End()
}

// bodyUnits are the file's function declarations with a body and the
// function literals of its package-level variables' initializers, in
// source order.
func bodyUnits(f *ast.File) []bodyUnit {
	var out []bodyUnit
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Body != nil {
				out = append(out, bodyUnit{decl: d})
			}
		case *ast.GenDecl:
			if d.Tok != token.VAR {
				continue
			}
			for _, sp := range d.Specs {
				vs := sp.(*ast.ValueSpec)
				n := 0
				for _, v := range vs.Values {
					ast.Inspect(v, func(x ast.Node) bool {
						lit, ok := x.(*ast.FuncLit)
						if !ok {
							return true
						}
						n++
						out = append(out, bodyUnit{lit: lit, owner: vs.Names[0].Name, nth: n})
						return false // a literal inside it is part of its body
					})
				}
			}
		}
	}
	return out
}

// skeleton is src with the inside of every body unit cut out, and every
// import declaration: two versions of a file whose skeletons are equal
// differ only inside bodies and in what they import.
func skeleton(fset *token.FileSet, f *ast.File, src []byte) []byte {
	var b bytes.Buffer
	at := 0
	for _, d := range f.Decls {
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.IMPORT {
			b.Write(src[at:fset.Position(gd.Pos()).Offset])
			at = fset.Position(gd.End()).Offset
			for at < len(src) && (src[at] == '\n' || src[at] == ' ' || src[at] == '\t') {
				at++ // a file that loses its last import loses its blank line too
			}
		}
	}
	for _, u := range bodyUnits(f) {
		from, to := fset.Position(u.body().Lbrace).Offset+1, fset.Position(u.body().Rbrace).Offset
		b.Write(src[at:from])
		at = to
	}
	b.Write(src[at:])
	return b.Bytes()
}

// changedBodies compares a file before and after a patch: the functions
// whose bodies differ, or why the change is not body-only.
func changedBodies(file string, orig, patched []byte) ([]bodyChange, importChanges, string) {
	var imp importChanges
	fset := token.NewFileSet()
	of, err := parser.ParseFile(fset, file, orig, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, imp, fmt.Sprintf("%s does not parse: %v", file, err)
	}
	pf, err := parser.ParseFile(fset, file, patched, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, imp, fmt.Sprintf("%s does not parse once patched: %v", file, err)
	}
	if !bytes.Equal(skeleton(fset, of, orig), skeleton(fset, pf, patched)) {
		return nil, imp, fmt.Sprintf("it changes %s outside function bodies", file)
	}
	ous, pus := bodyUnits(of), bodyUnits(pf)
	if len(ous) != len(pus) {
		return nil, imp, fmt.Sprintf("it changes %s outside function bodies", file)
	}
	if imp, err = compareImports(of, pf); err != nil {
		return nil, imp, fmt.Sprintf("it changes the imports of %s: %v", file, err)
	}
	var out []bodyChange
	for i, ou := range ous {
		pu := pus[i]
		ob := orig[fset.Position(ou.body().Lbrace).Offset:fset.Position(ou.body().End()).Offset]
		pb := patched[fset.Position(pu.body().Lbrace).Offset:fset.Position(pu.body().End()).Offset]
		if bytes.Equal(ob, pb) {
			continue
		}
		start := fset.Position(pu.pos())
		text := string(patched[start.Offset:fset.Position(pu.end()).Offset])
		if ou.lit != nil {
			// A declaration of the literal's signature, named when placed.
			out = append(out, bodyChange{index: i, decl: "func _" + strings.TrimPrefix(text, "func"),
				line: start.Line, name: fmt.Sprintf("%s.func%d", ou.owner, ou.nth)})
			continue
		}
		od := ou.decl
		if od.Name.Name == "_" {
			return nil, imp, fmt.Sprintf("it changes a function named _ in %s", file)
		}
		if tp := od.Type.TypeParams; tp != nil {
			for _, fl := range tp.List {
				for _, n := range fl.Names {
					if n.Name == "_" {
						return nil, imp, fmt.Sprintf("it changes %s in %s, which has a blank type parameter", od.Name.Name, file)
					}
				}
			}
		}
		out = append(out, bodyChange{index: i, decl: text, line: start.Line, name: funcName(od, orig, fset)})
	}
	return out, imp, ""
}

// funcName is "(*Recv).name" for a method, "name" for a function.
func funcName(fd *ast.FuncDecl, src []byte, fset *token.FileSet) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	return "(" + string(src[fset.Position(t.Pos()).Offset:fset.Position(t.End()).Offset]) + ")." + fd.Name.Name
}

// textEdit replaces src[from:to] with text.
type textEdit struct {
	from, to int
	text     string
}

func applyEdits(src []byte, edits []textEdit) []byte {
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].from > edits[j].from })
	out := slices.Clone(src)
	for _, e := range edits {
		out = slices.Concat(out[:e.from], []byte(e.text), out[e.to:])
	}
	return out
}

// signatureEdits name every unnamed or blank receiver (recvs, nil for a
// function) and parameter of ft (offsets relative to base), so a dispatch
// can pass them on; and return the receiver's name and the arguments of a
// call passing them on.
func signatureEdits(fset *token.FileSet, recvs *ast.FieldList, ft *ast.FuncType, base int) (edits []textEdit, recv string, args []string) {
	off := func(p token.Pos) int { return fset.Position(p).Offset - base }
	name := func(fl *ast.FieldList, prefix string, into *[]string) {
		if fl == nil {
			return
		}
		n := 0
		for _, f := range fl.List {
			if len(f.Names) == 0 {
				id := fmt.Sprintf("%s%d", prefix, n)
				n++
				edits = append(edits, textEdit{off(f.Type.Pos()), off(f.Type.Pos()), id + " "})
				*into = append(*into, id)
				continue
			}
			for _, nm := range f.Names {
				id := nm.Name
				if id == "_" {
					id = fmt.Sprintf("%s%d", prefix, n)
					edits = append(edits, textEdit{off(nm.Pos()), off(nm.End()), id})
				}
				n++
				*into = append(*into, id)
			}
		}
	}
	var rs []string
	name(recvs, "__mcpchaosr", &rs)
	name(ft.Params, "__mcpchaosp", &args)
	if len(rs) > 0 {
		recv = rs[0]
	}
	if ps := ft.Params.List; len(ps) > 0 {
		if _, variadic := ps[len(ps)-1].Type.(*ast.Ellipsis); variadic {
			args[len(args)-1] += "..."
		}
	}
	return edits, recv, args
}

var notIdent = regexp.MustCompile(`[^A-Za-z0-9_]+`)

// placeBodies rewrites one file: each changed function dispatches, on the
// line of its opening brace, to a sibling per mutant holding that mutant's
// body; the siblings are appended, each behind a line directive giving it
// its lines in the patched file. used holds the sibling names taken so far
// (by package, receiver and name).
func placeBodies(modPath, file string, src []byte, changes []bodyChange, used map[string]bool) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	decls := bodyUnits(f)
	byIndex := map[int][]bodyChange{}
	for _, c := range changes {
		if c.index >= len(decls) {
			return nil, fmt.Errorf("%s has no function %d", file, c.index)
		}
		byIndex[c.index] = append(byIndex[c.index], c)
	}
	var edits []textEdit
	var siblings strings.Builder
	for _, i := range slices.Sorted(maps.Keys(byIndex)) {
		u := decls[i]
		var recvs *ast.FieldList
		stem := u.owner // a literal's sibling is named after its variable
		if fd := u.decl; fd != nil {
			recvs, stem = fd.Recv, fd.Name.Name
		}
		ft := u.ftype()
		sig, recv, args := signatureEdits(fset, recvs, ft, 0)
		edits = append(edits, sig...)
		var tparams []string
		if tp := ft.TypeParams; tp != nil {
			for _, fl := range tp.List {
				for _, n := range fl.Names {
					tparams = append(tparams, n.Name)
				}
			}
		}
		recvKey := ""
		if recvs != nil && len(recvs.List) > 0 {
			t := recvs.List[0].Type
			recvKey = strings.TrimPrefix(string(src[fset.Position(t.Pos()).Offset:fset.Position(t.End()).Offset]), "*")
		}
		var dispatch strings.Builder
		for _, c := range byIndex[i] {
			sib := stem + knownInfix + notIdent.ReplaceAllString(c.mutant, "_")
			for n := 2; used[path.Dir(file)+"\x00"+recvKey+"\x00"+sib]; n++ {
				sib = fmt.Sprintf("%s%s%s_%d", stem, knownInfix, notIdent.ReplaceAllString(c.mutant, "_"), n)
			}
			used[path.Dir(file)+"\x00"+recvKey+"\x00"+sib] = true
			call := sib
			if recv != "" {
				call = recv + "." + sib
			} else if len(tparams) > 0 {
				call += "[" + strings.Join(tparams, ", ") + "]"
			}
			call += "(" + strings.Join(args, ", ") + ")"
			if ft.Results != nil && len(ft.Results.List) > 0 {
				fmt.Fprintf(&dispatch, " if %s.Known(%q) { return %s };", switchName, c.mutant, call)
			} else {
				fmt.Fprintf(&dispatch, " if %s.Known(%q) { %s; return };", switchName, c.mutant, call)
			}
			sibling, err := renameSibling(c.decl, sib)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", file, c.name, err)
			}
			fmt.Fprintf(&siblings, "\n\n//line :%d:1\n%s", c.line, sibling)
		}
		lb := fset.Position(u.body().Lbrace).Offset + 1
		edits = append(edits, textEdit{lb, lb, dispatch.String()})
	}
	// The imports the placed patches add (importsHold), each once; a
	// name two of them, or one and the original, give two packages could
	// not be compiled.
	names := map[string]string{}
	for _, is := range f.Imports {
		p, _ := strconv.Unquote(is.Path.Value)
		name := path.Base(p)
		if is.Name != nil {
			name = is.Name.Name
		}
		names[name] = is.Path.Value
	}
	var imports []string
	for _, c := range changes {
		for _, s := range c.imports {
			name, quoted, _ := strings.Cut(s, " ")
			if q, ok := names[name]; ok && q != quoted {
				return nil, fmt.Errorf("%s: the import %s of %s takes the name of %s", file, quoted, c.mutant, q)
			}
			if _, ok := names[name]; !ok {
				names[name] = quoted
				imports = append(imports, s)
			}
		}
	}
	edits = append(edits, textEdit{fset.Position(f.Name.End()).Offset, fset.Position(f.Name.End()).Offset, importText(imports)})
	body := applyEdits(src, edits)
	if !bytes.HasSuffix(body, []byte("\n")) {
		body = append(body, '\n')
	}
	body = append(body, siblings.String()...)
	body = append(body, '\n')
	out, err := addSwitchImport(fset, f, body, modPath)
	if err != nil {
		return nil, err
	}
	if _, err := parser.ParseFile(token.NewFileSet(), file, out, parser.SkipObjectResolution); err != nil {
		return nil, fmt.Errorf("the rewritten file does not parse: %w", err)
	}
	return out, nil
}

// renameSibling is decl (a function declaration's text) renamed to name,
// with its unnamed and blank receiver and parameters named as the
// original's dispatch names them.
func renameSibling(decl, name string) (string, error) {
	src := "package p\n" + decl
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "sibling.go", src, parser.SkipObjectResolution)
	if err != nil {
		return "", err
	}
	fds := funcDecls(f)
	if len(fds) != 1 {
		return "", fmt.Errorf("%d declarations where one was expected", len(fds))
	}
	fd := fds[0]
	edits, _, _ := signatureEdits(fset, fd.Recv, fd.Type, 0)
	off := fset.Position(fd.Name.Pos()).Offset
	edits = append(edits, textEdit{off, off + len(fd.Name.Name), name})
	return strings.TrimPrefix(string(applyEdits([]byte(src), edits)), "package p\n"), nil
}
