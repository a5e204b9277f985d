package canary

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/modcopy"
	"github.com/mcpchaos/mcpchaos/scenarios/report"
)

// Bounds of the baseline cache.
const (
	cacheFormat     = "mcpchaos-canary-baseline/1" // bump when what a run records changes meaning
	cacheMaxEntries = 32                           // entries kept; the oldest go first
)

// DefaultBaselineCache is where baseline verdicts are kept between runs
// ($XDG_CACHE_HOME/mcpchaos/canary-baseline or the OS's equivalent); ""
// when the OS names no cache dir.
func DefaultBaselineCache() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "mcpchaos", "canary-baseline")
}

// cachedBaseline is one cache entry: the baseline side's records for one
// tree and one way of running the suite.
type cachedBaseline struct {
	Format   string          `json:"format"`
	Key      string          `json:"key"`
	Recorded time.Time       `json:"recorded"`
	Seed     uint64          `json:"seed"`
	Took     time.Duration   `json:"tookNs"`
	Records  []report.Record `json:"records"`
}

// baselineKey names what decides the baseline's verdicts, but the seed:
// the content of every file of the tree (the files a copy holds,
// uncommitted work included), the toolchain and its flags, the platform,
// node's version (the TypeScript client and the conformance suite run on
// it), the suite's selection, and the knobs' environment overrides
// (MCPCTL_*, MCPCHAOS_*). Any change gives another key, so a stale entry is
// never read; what it cannot see (a busier machine) is what --rerun-baseline
// is for. An entry is the key and the seed (entryPath).
func baselineKey(m *modcopy.Module, o Options) (string, error) {
	h := sha256.New()
	line := func(k, v string) { fmt.Fprintf(h, "%s=%q\n", k, v) }
	line("format", cacheFormat)
	line("go", m.GoVersion)
	line("goflags", m.GoFlags)
	line("platform", runtime.GOOS+"/"+runtime.GOARCH)
	line("node", nodeVersion())
	line("label", o.Label)
	line("specs", o.Specs)
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "MCPCTL_") || strings.HasPrefix(kv, "MCPCHAOS_") {
			env = append(env, kv)
		}
	}
	sort.Strings(env)
	for _, kv := range env {
		line("env", kv)
	}
	files := append([]string{}, m.Files...)
	sort.Strings(files)
	for _, f := range files {
		p := filepath.Join(m.Root, f)
		st, err := os.Lstat(p)
		if os.IsNotExist(err) {
			continue // listed by git, deleted in the work tree: not copied either
		}
		if err != nil {
			return "", err
		}
		switch {
		case st.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return "", err
			}
			line("link "+f, target)
		case st.Mode().IsRegular():
			fh, err := os.Open(p)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(h, "file %q %o %d\n", f, st.Mode().Perm(), st.Size())
			_, err = io.Copy(h, fh)
			_ = fh.Close()
			if err != nil {
				return "", err
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// nodeVersion is `node --version`, or "none".
func nodeVersion() string {
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		return "none"
	}
	return strings.TrimSpace(string(out))
}

// entryPath is the cache entry of one tree (key) run with one seed.
func entryPath(dir, key string, seed uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%s-%d.json", key, seed))
}

// cachedSeed is the seed of the newest entry for key, 0 if there is none: a
// run that names no seed takes it, so its baseline comes from the cache.
func cachedSeed(dir, key string) uint64 {
	entries, _ := filepath.Glob(filepath.Join(dir, key+"-*.json"))
	var newest time.Time
	var seed uint64
	for _, e := range entries {
		c, ok := readEntry(e, key)
		if ok && c.Recorded.After(newest) {
			newest, seed = c.Recorded, c.Seed
		}
	}
	return seed
}

// loadBaseline reads the entry for key and seed from dir; ok is false when
// there is none (or it cannot be read: the baseline then simply runs).
func loadBaseline(dir, key string, seed uint64) (cachedBaseline, bool) {
	c, ok := readEntry(entryPath(dir, key, seed), key)
	return c, ok && c.Seed == seed
}

func readEntry(path, key string) (c cachedBaseline, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return c, false
	}
	if json.Unmarshal(b, &c) != nil || c.Format != cacheFormat || c.Key != key || len(c.Records) == 0 {
		return cachedBaseline{}, false
	}
	return c, true
}

// storeBaseline writes the entry for key and seed into dir (atomically: a
// reader never sees half an entry) and drops the oldest entries past
// cacheMaxEntries.
func storeBaseline(dir, key string, seed uint64, recs []report.Record, took time.Duration) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.Marshal(cachedBaseline{Format: cacheFormat, Key: key, Seed: seed, Recorded: time.Now().UTC(), Took: took, Records: recs})
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".entry-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), entryPath(dir, key, seed)); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	pruneCache(dir, cacheMaxEntries)
	return nil
}

// pruneCache keeps the newest keep entries of dir.
func pruneCache(dir string, keep int) {
	entries, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(entries) <= keep {
		return
	}
	mod := map[string]time.Time{}
	for _, e := range entries {
		if st, err := os.Stat(e); err == nil {
			mod[e] = st.ModTime()
		}
	}
	sort.Slice(entries, func(i, j int) bool { return mod[entries[i]].After(mod[entries[j]]) })
	for _, e := range entries[keep:] {
		_ = os.Remove(e)
	}
}
