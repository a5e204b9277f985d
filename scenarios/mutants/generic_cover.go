package mutants

import (
	"bufio"
	"io"
	"os"
	"strconv"
	"strings"
)

// Coverage-guided selection: each test (a Test function of a package, a
// spec of the Ginkgo scenarios) is run once, with coverage, on the schemata
// build with no mutant on; a mutant is then judged only by the tests whose
// coverage ran its guard. A mutant no test runs cannot be killed by any of
// them and survives ("not covered") without a run.

// coverBlock is one block of a text coverage profile.
type coverBlock struct {
	file                     string // import path + "/" + file name, as profiles name files
	line0, col0, line1, col1 int
	ran                      bool
}

// parseProfile reads a text coverage profile (`go test -coverprofile`,
// `go tool covdata textfmt`) and returns its blocks, each saying whether it
// ran at least once.
func parseProfile(r io.Reader) ([]coverBlock, error) {
	var out []coverBlock
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "mode:") || l == "" {
			continue
		}
		// file.go:L0.C0,L1.C1 statements count
		colon := strings.LastIndex(l, ":")
		if colon < 0 {
			continue
		}
		f := strings.Fields(l[colon+1:])
		if len(f) != 3 {
			continue
		}
		b := coverBlock{ran: f[2] != "0"}
		b.file = l[:colon]
		ends := strings.Split(f[0], ",")
		if len(ends) != 2 {
			continue
		}
		var ok0, ok1 bool
		b.line0, b.col0, ok0 = lineCol(ends[0])
		b.line1, b.col1, ok1 = lineCol(ends[1])
		if ok0 && ok1 {
			out = append(out, b)
		}
	}
	return out, sc.Err()
}

func lineCol(s string) (int, int, bool) {
	l, c, ok := strings.Cut(s, ".")
	if !ok {
		return 0, 0, false
	}
	line, err1 := strconv.Atoi(l)
	col, err2 := strconv.Atoi(c)
	return line, col, err1 == nil && err2 == nil
}

// contains reports whether the block covers the position.
func (b coverBlock) contains(line, col int) bool {
	if line < b.line0 || line > b.line1 {
		return false
	}
	if line == b.line0 && col < b.col0 {
		return false
	}
	return line != b.line1 || col < b.col1
}

// guard is one site guard's place, keyed the way profiles name files,
// and the body of the function it is in.
type guard struct {
	file      string // import path + "/" + base name
	line, col int
	ids       []int
	fn        [4]int // the enclosing function body: line0, col0, line1, col1
}

// coveredIDs returns the mutant numbers whose guard lies in a block that
// ran. A guard in no block at all (the coverage tool leaves the
// expressions of a switch's case clauses outside every block) counts as
// run when any block of its enclosing function ran: more tests judge it
// than need to, none that could kill it is left out.
func coveredIDs(blocks []coverBlock, guards []guard) map[int]bool {
	byFile := map[string][]coverBlock{}
	for _, b := range blocks {
		byFile[b.file] = append(byFile[b.file], b)
	}
	out := map[int]bool{}
	for _, g := range guards {
		in, ran := false, false
		for _, b := range byFile[g.file] {
			if b.contains(g.line, g.col) {
				in = true
				ran = ran || b.ran
			}
		}
		if !in && g.fn != [4]int{} {
			f := coverBlock{line0: g.fn[0], col0: g.fn[1], line1: g.fn[2], col1: g.fn[3]}
			for _, b := range byFile[g.file] {
				if b.ran && f.contains(b.line0, b.col0) {
					ran = true
					break
				}
			}
		}
		if ran {
			for _, id := range g.ids {
				out[id] = true
			}
		}
	}
	return out
}

func readProfile(path string) ([]coverBlock, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseProfile(f)
}

// specHook is the file written into the copy's scenarios package in a
// coverage build: after each spec it writes the coverage counters to a
// directory of that spec's own (its place, file:line, what --focus-file
// takes, and a hash of its full text, since one It in a loop makes many
// specs; the text is kept in "text" for --focus) and clears them, so each
// spec's coverage is its own. A spec that failed with no mutant on leaves
// a "failed" file there: it cannot judge.
//
// A test binary computes its coverage meta-data hash only at exit, and
// runtime/coverage refuses to write counters before it: the hook has the
// runtime compute it first, through internal/coverage/cfile.emitMetaData
// (a linkname, so the binary is linked with -checklinkname=0; it also
// writes the meta-data to GOCOVERDIR, which the run sets).
const specHook = `package scenarios_test

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"runtime/coverage"
	"sync"
	_ "unsafe"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
)

//go:linkname mcpchaosEmitMetaData internal/coverage/cfile.emitMetaData
func mcpchaosEmitMetaData()

var mcpchaosMeta sync.Once

var _ = ReportAfterEach(func(r SpecReport) {
	root := os.Getenv("` + specCoverEnv + `")
	if root == "" || r.State.Is(types.SpecStateSkipped|types.SpecStatePending) {
		return
	}
	mcpchaosMeta.Do(mcpchaosEmitMetaData)
	loc := r.LeafNodeLocation
	h := fnv.New64a()
	_, _ = h.Write([]byte(r.FullText()))
	dir := filepath.Join(root, fmt.Sprintf("%s:%d#%x", filepath.Base(loc.FileName), loc.LineNumber, h.Sum64()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		panic(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "text"), []byte(r.FullText()), 0o644); err != nil {
		panic(err)
	}
	if r.Failed() {
		_ = os.WriteFile(filepath.Join(dir, "failed"), []byte(r.FullText()+"\n"+r.FailureMessage()), 0o644)
	}
	if err := coverage.WriteMetaDir(dir); err != nil {
		panic(err)
	}
	if err := coverage.WriteCountersDir(dir); err != nil {
		panic(err)
	}
	if err := coverage.ClearCounters(); err != nil {
		panic(err)
	}
})
`

// specCoverEnv names the directory the spec hook writes into.
const specCoverEnv = "MCPCHAOS_SPEC_COVERDIR"
