package mutants

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Mutant schemata: every generic mutant of a package is compiled into one
// build, each guarded by a runtime switch, so the package's mutants need one
// build of each test binary instead of one per mutant. The switch package
// is written into the module copy only (SwitchDir), never into the shipped
// tree; it reads MutantEnv once, at start-up, and the mutant whose number it
// names is the one that is on. With MutantEnv unset every guarded site
// behaves as the original code.

// MutantEnv names the environment variable that switches one schemata
// mutant on: its number, as SchemataSite.IDs gives it.
const MutantEnv = "MCPCHAOS_MUTANT"

// SwitchDir is the module-relative directory of the switch package that
// the schemata import; it exists only in the copy.
const SwitchDir = "mcpchaosmutant"

// switchName is the import name the rewritten files give the switch
// package: unlikely to collide with any identifier of ours.
const switchName = "__mcpchaosm"

// switchSource is the switch package. Each helper takes the number of its
// site's first mutant first, so the rewritten text can be scanned for
// where each site ended up (see siteAt).
const switchSource = `// Package mcpchaosmutant is the runtime switch of generic mutation
// testing's schemata and of the shared tree of known mutants (written into
// a module copy by mcpchaos, never shipped): ` + MutantEnv + `=N turns
// generic mutant N on, ` + KnownMutantEnv + `=NAME known mutant NAME;
// unset, every site is the original code.
package mcpchaosmutant

import (
	"cmp"
	"os"
	"strconv"
)

var active = func() int {
	n, _ := strconv.Atoi(os.Getenv("` + MutantEnv + `"))
	return n
}()

// On reports whether mutant id is the one switched on.
func On(id int) bool { return id == active }

// known is the known mutant switched on in the shared tree of known
// mutants (` + KnownMutantEnv + `=NAME); "" for none.
var known = os.Getenv("` + KnownMutantEnv + `")

// Known reports whether the known mutant named name is the one switched on.
func Known(name string) bool { return name == known }

// Not is !b, or b when mutant id ("drop !") is on.
func Not(id int, b bool) bool {
	if On(id) {
		return b
	}
	return !b
}

// Flip is b negated when mutant id is on (== and != swapped).
func Flip(id int, b bool) bool { return b != On(id) }

// And is x && y, or x || y when mutant id is on; y is evaluated only when
// the operator in force needs it.
func And(id int, x bool, y func() bool) bool {
	if On(id) {
		return x || y()
	}
	return x && y()
}

// Or is x || y, or x && y when mutant id is on.
func Or(id int, x bool, y func() bool) bool {
	if On(id) {
		return x && y()
	}
	return x || y()
}

// Cmp is x op y, or x alt[i] y when mutant id+i is on.
func Cmp[T cmp.Ordered](id int, op string, x, y T) bool {
	alts := map[string][2]string{"<": {"<=", ">="}, "<=": {"<", ">"}, ">": {">=", "<="}, ">=": {">", "<"}}[op]
	switch active {
	case id:
		op = alts[0]
	case id + 1:
		op = alts[1]
	}
	switch op {
	case "<":
		return x < y
	case "<=":
		return x <= y
	case ">":
		return x > y
	}
	return x >= y
}

type number interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr | ~float32 | ~float64
}

// Arith is x op y, or with the swapped operator (+ and -, * and /) when
// mutant id is on.
func Arith[T number](id int, op string, x, y T) T {
	if On(id) {
		op = map[string]string{"+": "-", "-": "+", "*": "/", "/": "*"}[op]
	}
	switch op {
	case "+":
		return x + y
	case "-":
		return x - y
	case "*":
		return x * y
	}
	return x / y
}
`

// SchemataSite is one place of a file where the schemata guard mutants:
// the mutants (by number) it holds and where the guard sits in the
// rewritten file (for coverage: a mutant runs when its guard does).
type SchemataSite struct {
	IDs       []int
	Line, Col int // of the guard in the rewritten file
	// Func is the body of the innermost function around the guard (line,
	// col of its braces), for guards coverage puts in no block.
	Func [4]int
}

// site is one rewritable node and the mutants it carries.
type site struct {
	from, to int // byte range of the node in the original file
	ids      []int
	guard    int // the number its guard is called with: ids[0] but for half a comparison
	render   func(sub func(from, to int) string) string
}

// Schemata rewrites one file so that every mutant in muts (with its number
// in ids, same order) is guarded by the switch. Mutants the rewrite cannot
// express (a call statement outside a statement list) are returned in
// skipped. modPath is the module path, for the switch's import. Disabled,
// if set, lists mutant numbers whose sites must stay as they are (their
// guarded form did not type-check).
func Schemata(modPath, path string, src []byte, muts []GenericMutant, ids []int, disabled map[int]bool) (out []byte, sites []SchemataSite, skipped []int, err error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, nil, nil, err
	}
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	// The mutants by the offset of what they change and their change.
	type key struct {
		from int
		op   string
	}
	byKey := map[key]int{}
	for i, m := range muts {
		byKey[key{m.from, m.Op}] = ids[i]
	}
	var found []site
	claimed := map[int]bool{}
	idOf := func(from int, op string) (int, bool) {
		id, ok := byKey[key{from, op}]
		if ok && disabled[id] {
			return 0, false
		}
		if ok {
			claimed[id] = true
		}
		return id, ok
	}
	inList := map[ast.Stmt]bool{}
	q := strconv.Quote
	data := dataDecls(f)
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GenDecl:
			return !data(n)
		case *ast.BlockStmt:
			for _, s := range n.List {
				inList[s] = true
			}
		case *ast.CaseClause:
			for _, s := range n.Body {
				inList[s] = true
			}
		case *ast.CommClause:
			for _, s := range n.Body {
				inList[s] = true
			}
		case *ast.BinaryExpr:
			opOff := off(n.OpPos)
			x, y := [2]int{off(n.X.Pos()), off(n.X.End())}, [2]int{off(n.Y.Pos()), off(n.Y.End())}
			op := n.Op.String()
			s := site{from: off(n.Pos()), to: off(n.End())}
			var got []int
			first := -1 // the index in swaps of the first mutant here
			for i, to := range swaps[n.Op] {
				if id, ok := idOf(opOff, op+" → "+to.String()); ok {
					if first < 0 {
						first = i
					}
					got = append(got, id)
				}
			}
			if len(got) == 0 {
				return true
			}
			s.ids = got
			// A comparison's two mutants have consecutive numbers; when
			// only the second is here (the first's verdict was resumed),
			// the helper is still given the pair's first number.
			id := got[0] - first
			s.guard = id
			switch n.Op {
			case token.EQL, token.NEQ:
				s.render = func(sub func(int, int) string) string {
					return fmt.Sprintf("%s.Flip(%d, %s)", switchName, id, sub(s.from, s.to))
				}
			case token.LAND, token.LOR:
				fn := map[token.Token]string{token.LAND: "And", token.LOR: "Or"}[n.Op]
				s.render = func(sub func(int, int) string) string {
					return fmt.Sprintf("%s.%s(%d, %s, func() bool { return %s })", switchName, fn, id, sub(x[0], x[1]), sub(y[0], y[1]))
				}
			case token.LSS, token.LEQ, token.GTR, token.GEQ:
				if len(got) == 2 && got[1] != id+1 {
					return true // the helper needs consecutive numbers
				}
				s.render = func(sub func(int, int) string) string {
					return fmt.Sprintf("%s.Cmp(%d, %s, %s, %s)", switchName, id, q(op), sub(x[0], x[1]), sub(y[0], y[1]))
				}
			default:
				s.render = func(sub func(int, int) string) string {
					return fmt.Sprintf("%s.Arith(%d, %s, %s, %s)", switchName, id, q(op), sub(x[0], x[1]), sub(y[0], y[1]))
				}
			}
			found = append(found, s)
		case *ast.UnaryExpr:
			if n.Op != token.NOT {
				return true
			}
			id, ok := idOf(off(n.OpPos), "drop !")
			if !ok {
				return true
			}
			x := [2]int{off(n.X.Pos()), off(n.X.End())}
			found = append(found, site{from: off(n.Pos()), to: off(n.End()), ids: []int{id}, guard: id,
				render: func(sub func(int, int) string) string {
					return fmt.Sprintf("%s.Not(%d, %s)", switchName, id, sub(x[0], x[1]))
				}})
		case *ast.ExprStmt:
			call, ok := n.X.(*ast.CallExpr)
			if !ok || isPanicOrPrint(call) || !inList[n] {
				return true
			}
			from, to := off(n.Pos()), off(n.End())
			id, ok := idOf(from, "remove call "+clipOp(string(src[from:to])))
			if !ok {
				return true
			}
			found = append(found, site{from: from, to: to, ids: []int{id}, guard: id,
				render: func(sub func(int, int) string) string {
					return fmt.Sprintf("if !%s.On(%d) { %s }", switchName, id, sub(from, to))
				}})
		}
		return true
	})
	for i := range muts {
		if !claimed[ids[i]] && !disabled[ids[i]] {
			skipped = append(skipped, ids[i])
		}
	}
	if len(found) == 0 {
		return src, nil, skipped, nil
	}
	// Outer sites first; a site's inner sites are rendered inside it.
	sort.SliceStable(found, func(i, j int) bool {
		if found[i].from != found[j].from {
			return found[i].from < found[j].from
		}
		return found[i].to > found[j].to
	})
	var render func(from, to int, inner []site) string
	render = func(from, to int, inner []site) string {
		var b strings.Builder
		at := from
		for i := 0; i < len(inner); {
			s := inner[i]
			if s.from < at || s.from >= to {
				i++
				continue
			}
			j := i + 1
			for j < len(inner) && inner[j].from < s.to {
				j++
			}
			b.Write(src[at:s.from])
			nested := inner[i+1 : j]
			b.WriteString(s.render(func(a, z int) string { return render(a, z, nested) }))
			at = s.to
			i = j
		}
		b.Write(src[at:to])
		return b.String()
	}
	body := render(0, len(src), found)
	out, err = addSwitchImport(fset, f, []byte(body), modPath)
	if err != nil {
		return nil, nil, nil, err
	}
	sites = siteAt(out, found)
	if err := enclosingFuncs(path, out, sites); err != nil {
		return nil, nil, nil, err
	}
	return out, sites, skipped, nil
}

// addSwitchImport adds the switch's import after the package clause (the
// clause is the same in the rewritten text, which changes nothing before
// the first declaration).
func addSwitchImport(fset *token.FileSet, f *ast.File, body []byte, modPath string) ([]byte, error) {
	end := fset.Position(f.Name.End()).Offset
	imp := fmt.Sprintf("; import %s %q", switchName, modPath+"/"+SwitchDir)
	out := make([]byte, 0, len(body)+len(imp))
	out = append(out, body[:end]...)
	out = append(out, imp...)
	return append(out, body[end:]...), nil
}

var guardRe = regexp.MustCompile(regexp.QuoteMeta(switchName) + `\.[A-Za-z]+\((\d+)`)

// siteAt finds each site's guard in the rewritten text. A site copied
// twice is found twice; each copy counts as the site's guard.
func siteAt(out []byte, found []site) []SchemataSite {
	byGuard := map[int][]int{}
	for _, s := range found {
		byGuard[s.guard] = s.ids
	}
	lineStarts := []int{0}
	for i, c := range out {
		if c == '\n' {
			lineStarts = append(lineStarts, i+1)
		}
	}
	var sites []SchemataSite
	for _, m := range guardRe.FindAllSubmatchIndex(out, -1) {
		id, _ := strconv.Atoi(string(out[m[2]:m[3]]))
		ids, ok := byGuard[id]
		if !ok {
			continue
		}
		line := sort.Search(len(lineStarts), func(i int) bool { return lineStarts[i] > m[0] })
		sites = append(sites, SchemataSite{IDs: ids, Line: line, Col: m[0] - lineStarts[line-1] + 1})
	}
	return sites
}

// enclosingFuncs sets each site's Func: the innermost function body (a
// declaration or a literal) of the rewritten file holding its guard.
func enclosingFuncs(path string, out []byte, sites []SchemataSite) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, out, parser.SkipObjectResolution)
	if err != nil {
		return fmt.Errorf("the rewritten file does not parse: %w", err)
	}
	var bodies [][4]int
	ast.Inspect(f, func(n ast.Node) bool {
		var body *ast.BlockStmt
		switch n := n.(type) {
		case *ast.FuncDecl:
			body = n.Body
		case *ast.FuncLit:
			body = n.Body
		}
		if body != nil {
			a, z := fset.Position(body.Lbrace), fset.Position(body.Rbrace)
			bodies = append(bodies, [4]int{a.Line, a.Column, z.Line, z.Column + 1})
		}
		return true
	})
	before := func(l0, c0, l1, c1 int) bool { return l0 < l1 || (l0 == l1 && c0 <= c1) }
	for i, s := range sites {
		for _, b := range bodies { // outer bodies come first: the last that holds it is the innermost
			if before(b[0], b[1], s.Line, s.Col) && before(s.Line, s.Col, b[2], b[3]) {
				sites[i].Func = b
			}
		}
	}
	return nil
}
