package mutants

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Resumable results: every verdict is appended to a JSON-lines file as soon
// as it is known, keyed by the mutant (place and change) and a hash of its
// package's Go files (tests included). A rerun skips the mutants whose key
// and hash are there; a change to the package (a new test in it, too)
// judges its mutants again. A change elsewhere (the scenarios, another
// package's tests) does not: start a new file for that.

// resultRecord is one line of the results file.
type resultRecord struct {
	Key      string         `json:"key"` // FILE:LINE:COL OP
	Hash     string         `json:"hash"`
	Verdict  GenericVerdict `json:"verdict"`
	KilledBy string         `json:"killed_by,omitempty"`
	Detail   string         `json:"detail,omitempty"`
	TookMS   int64          `json:"took_ms"`
	// Judges says what judged: "tests" or "tests+scenarios". A survivor
	// of the tests alone is judged again when the scenarios join.
	Judges string `json:"judges"`
}

func resultKey(m GenericMutant) string { return m.ID() + " " + m.Op }

// resultsFile is the open results file; nil-safe.
type resultsFile struct {
	mu   sync.Mutex
	f    *os.File
	prev map[string]resultRecord
}

// openResults reads path's records (the last one of a key wins) and opens
// it for appending. An empty path keeps nothing.
func openResults(path string) (*resultsFile, error) {
	r := &resultsFile{prev: map[string]resultRecord{}}
	if path == "" {
		return r, nil
	}
	if f, err := os.Open(path); err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var rec resultRecord
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Key != "" {
				r.prev[rec.Key] = rec
			}
		}
		_ = f.Close()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	r.f = f
	return r, nil
}

// lookup returns the earlier outcome of m if its package is unchanged and
// the verdict still holds for judges: a kill does (the same tests are
// run), a survival only if the same judges judged it, an error never.
func (r *resultsFile) lookup(m GenericMutant, hash, judges string) (GenericOutcome, bool) {
	rec, ok := r.prev[resultKey(m)]
	if !ok || rec.Hash != hash {
		return GenericOutcome{}, false
	}
	if rec.Verdict == GError || ((rec.Verdict == GSurvived || rec.Verdict == GNotCovered) && rec.Judges != judges) {
		return GenericOutcome{}, false // an error is no verdict: judge again
	}
	return GenericOutcome{Mutant: m, Verdict: rec.Verdict, KilledBy: rec.KilledBy, Detail: rec.Detail,
		Took: time.Duration(rec.TookMS) * time.Millisecond, Resumed: true}, true
}

func (r *resultsFile) add(o GenericOutcome, hash, judges string) error {
	if r.f == nil {
		return nil
	}
	b, err := json.Marshal(resultRecord{Key: resultKey(o.Mutant), Hash: hash, Verdict: o.Verdict,
		KilledBy: o.KilledBy, Detail: o.Detail, TookMS: o.Took.Milliseconds(), Judges: judges})
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, err = r.f.Write(append(b, '\n'))
	return err
}

func (r *resultsFile) close() {
	if r.f != nil {
		_ = r.f.Close()
	}
}

// packageHash hashes the Go files (tests included) of the module-relative
// package directory dir.
func packageHash(root, dir string) (string, error) {
	ents, err := os.ReadDir(filepath.Join(root, dir))
	if err != nil {
		return "", err
	}
	var names []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".go") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(root, dir, n))
		if err != nil {
			return "", err
		}
		h.Write([]byte(n + "\x00"))
		h.Write(b)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}
