package conformance

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Baseline lists the scenarios known to fail, each with its reason: the
// ratchet that lets mcplocal's conformance grow in steps without hiding a
// regression. It can only shrink: Compare fails on a failure it does not list
// and on an entry that now passes.
type Baseline struct {
	// Direct lists scenarios the fixture server itself fails (go-sdk's
	// everything-server): the comparison is blind there, so it is said aloud.
	Direct []Entry `yaml:"direct"`
	// Proxied lists scenarios that pass directly but fail through mcplocal.
	Proxied []Entry `yaml:"proxied"`
}

// Entry is one known failure.
type Entry struct {
	Scenario string `yaml:"scenario"`
	// Reason says why it fails and what would fix it (an issue, a branch).
	Reason string `yaml:"reason"`
}

// LoadBaseline reads a baseline file. Unknown keys, an entry without a
// reason and a scenario listed twice are errors.
func LoadBaseline(path string) (Baseline, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Baseline{}, fmt.Errorf("conformance baseline: %w", err)
	}
	var bl Baseline
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&bl); err != nil && !errors.Is(err, io.EOF) {
		return Baseline{}, fmt.Errorf("conformance baseline %s: %w", path, err)
	}
	for _, list := range []struct {
		name    string
		entries []Entry
	}{{"direct", bl.Direct}, {"proxied", bl.Proxied}} {
		seen := map[string]bool{}
		for i, e := range list.entries {
			if e.Scenario == "" {
				return Baseline{}, fmt.Errorf("conformance baseline %s: %s[%d] has no scenario", path, list.name, i)
			}
			if strings.TrimSpace(e.Reason) == "" {
				return Baseline{}, fmt.Errorf("conformance baseline %s: %s entry %q has no reason: say why it fails", path, list.name, e.Scenario)
			}
			if seen[e.Scenario] {
				return Baseline{}, fmt.Errorf("conformance baseline %s: %s lists %q twice", path, list.name, e.Scenario)
			}
			seen[e.Scenario] = true
		}
	}
	return bl, nil
}

func (b Baseline) index(entries []Entry) map[string]Entry {
	m := make(map[string]Entry, len(entries))
	for _, e := range entries {
		m[e.Scenario] = e
	}
	return m
}

// Finding is one scenario the comparison has something to say about.
type Finding struct {
	Scenario string
	// Direct and Proxied are its verdicts in the two runs ("" when absent).
	Direct, Proxied Status
	// Reason is the suite's reason for the failure, or the baseline's.
	Reason string
}

func (f Finding) String() string {
	s := fmt.Sprintf("%s (directly: %s, through the proxy: %s)", f.Scenario, orNone(f.Direct), orNone(f.Proxied))
	if f.Reason != "" {
		s += ": " + f.Reason
	}
	return s
}

func orNone(s Status) string {
	if s == "" {
		return "absent"
	}
	return string(s)
}

// Verdict is the comparison of a direct run with a run through a proxy.
type Verdict struct {
	// Regressions pass directly but fail (or did not run) through the proxy
	// and are not in the baseline: the proxy broke them.
	Regressions []Finding
	// Known fail through the proxy as the baseline says.
	Known []Finding
	// Stale are baseline entries that no longer fail: remove them.
	Stale []Finding
	// DirectFailures fail against the fixture itself and are not in the
	// baseline's direct list.
	DirectFailures []Finding
	// Unknown are baseline entries naming a scenario neither run reported.
	Unknown []string
}

// OK reports whether nothing needs a person: no regression, no stale or
// unknown baseline entry, no unlisted failure of the fixture.
func (v Verdict) OK() bool {
	return len(v.Regressions) == 0 && len(v.Stale) == 0 && len(v.DirectFailures) == 0 && len(v.Unknown) == 0
}

// Problems lists, one per line, what makes the verdict not OK.
func (v Verdict) Problems() []string {
	var out []string
	for _, f := range v.Regressions {
		out = append(out, "passes directly but fails through the proxy (not in the baseline): "+f.String())
	}
	for _, f := range v.Stale {
		out = append(out, "baseline entry now passes, remove it from the baseline: "+f.String())
	}
	for _, f := range v.DirectFailures {
		out = append(out, "the fixture itself fails it (not in the baseline's direct list): "+f.String())
	}
	for _, s := range v.Unknown {
		out = append(out, "baseline names a scenario the suite did not run: "+s)
	}
	return out
}

// Compare holds a run through a proxy to a run against the same server
// directly, under the baseline. A scenario the proxied run did not report is
// a failure through the proxy.
func Compare(direct, proxied Result, b Baseline) Verdict {
	var v Verdict
	knownDirect, knownProxied := b.index(b.Direct), b.index(b.Proxied)
	names := map[string]bool{}
	for _, s := range direct.Scenarios {
		names[s.Name] = true
	}
	for _, s := range proxied.Scenarios {
		names[s.Name] = true
	}
	order := make([]string, 0, len(names))
	for _, s := range direct.Scenarios {
		order = append(order, s.Name)
	}
	for _, s := range proxied.Scenarios {
		if _, ok := direct.Scenario(s.Name); !ok {
			order = append(order, s.Name)
		}
	}
	for _, name := range order {
		d, dok := direct.Scenario(name)
		p, pok := proxied.Scenario(name)
		f := Finding{Scenario: name}
		if dok {
			f.Direct = d.Status
		}
		if pok {
			f.Proxied = p.Status
		}
		directOK := dok && d.Status == Pass
		if _, listed := knownDirect[name]; listed {
			if directOK {
				f.Reason = knownDirect[name].Reason
				v.Stale = append(v.Stale, f)
			}
		} else if !directOK {
			f.Reason = d.Reason()
			if !dok {
				f.Reason = "the direct run did not report it"
			}
			v.DirectFailures = append(v.DirectFailures, f)
		}
		proxiedOK := pok && p.Status == Pass
		entry, listed := knownProxied[name]
		switch {
		case !directOK:
			// Nothing to hold the proxy to; a proxied entry for it is stale.
			if listed {
				f.Reason = entry.Reason
				v.Stale = append(v.Stale, f)
			}
		case proxiedOK && listed:
			f.Reason = entry.Reason
			v.Stale = append(v.Stale, f)
		case !proxiedOK && listed:
			f.Reason = entry.Reason
			if r := p.Reason(); r != "" {
				f.Reason += " [suite: " + r + "]"
			}
			v.Known = append(v.Known, f)
		case !proxiedOK:
			f.Reason = p.Reason()
			if !pok {
				f.Reason = "the run through the proxy did not report it"
			}
			v.Regressions = append(v.Regressions, f)
		}
	}
	for _, list := range [][]Entry{b.Direct, b.Proxied} {
		for _, e := range list {
			if !names[e.Scenario] {
				v.Unknown = append(v.Unknown, e.Scenario)
			}
		}
	}
	sort.Strings(v.Unknown)
	return v
}
