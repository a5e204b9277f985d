package canary

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/report"
)

// The changes a row can show.
const (
	NewlyFailing = "NEWLY FAILING" // passed on the baseline, fails on the candidate
	Vanished     = "NO RESULT"     // passed on the baseline, no result on the candidate
	NewlyPassing = "newly passing" // failed on the baseline, passes on the candidate
	Slower       = "slower"        // same verdict, slower by more than the tolerance
	OnlyBaseline = "baseline only" // did not pass on the baseline, absent on the candidate
	OnlyCand     = "candidate only"
	NotBuilt     = "NOT BUILT" // the candidate does not build
)

// Compare lines up the records of the two sides by source and name, in the
// baseline's order (candidate-only rows last), and marks what changed. A
// row that passed on the baseline and does not pass on the candidate (a
// failure, not applicable, or no result at all) is a regression unless
// allow names it; allow maps a row name to the reason the change is
// accepted. tolerance bounds how much slower a row may get unflagged.
func Compare(base, cand []report.Record, tolerance time.Duration, allow map[string]string) []report.ComparedRow {
	key := func(r report.Record) string { return r.Source + "\x00" + r.Name }
	candBy := map[string]*report.Record{}
	for i := range cand {
		candBy[key(cand[i])] = &cand[i]
	}
	seen := map[string]bool{}
	var rows []report.ComparedRow
	for i := range base {
		b := &base[i]
		k := key(*b)
		if seen[k] {
			continue
		}
		seen[k] = true
		rows = append(rows, compareOne(b.Name, b.Source, b, candBy[k], tolerance, allow))
	}
	for i := range cand {
		c := &cand[i]
		if k := key(*c); !seen[k] {
			seen[k] = true
			rows = append(rows, compareOne(c.Name, c.Source, nil, c, tolerance, allow))
		}
	}
	return rows
}

func compareOne(name, source string, b, c *report.Record, tolerance time.Duration, allow map[string]string) report.ComparedRow {
	row := report.ComparedRow{Name: name, Source: source, Base: b, Cand: c}
	switch {
	case b == nil:
		row.Change = OnlyCand
	case b.Passed() && c == nil:
		row.Change, row.Regression = Vanished, true
	case c == nil:
		row.Change = OnlyBaseline
	case b.Passed() && !c.Passed():
		row.Change, row.Regression = NewlyFailing, true
	case !b.Passed() && c.Passed() && b.Verdict != "N/A":
		row.Change = NewlyPassing
	case b.Verdict == c.Verdict && c.Latency-b.Latency > slack(*b, tolerance):
		row.Change = fmt.Sprintf("%s by %v", Slower, (c.Latency - b.Latency).Round(time.Millisecond))
	}
	if reason, ok := allow[name]; ok && row.Change != "" {
		row.Allowed, row.Regression = reason, false
	}
	return row
}

// slack is how much slower than b a row may get unflagged. A catalogue
// row's latency is its timed request: the tolerance applies as it is. A
// spec's run time includes setting up its world (processes, node, proxy
// restarts), which varies by its own size between runs: a spec is slower
// only when it took longer by more than the tolerance and more than its
// whole baseline run time (it more than doubled).
func slack(b report.Record, tolerance time.Duration) time.Duration {
	if b.Source == "ginkgo" {
		return max(tolerance, b.Latency)
	}
	return tolerance
}

// Regressions are the rows that make the canary fail.
func Regressions(rows []report.ComparedRow) []report.ComparedRow {
	var out []report.ComparedRow
	for _, r := range rows {
		if r.Regression {
			out = append(out, r)
		}
	}
	return out
}

// UnusedAllows lists the --allow names that matched no changed row: a typo,
// or a change that went away.
func UnusedAllows(rows []report.ComparedRow, allow map[string]string) []string {
	used := map[string]bool{}
	for _, r := range rows {
		if r.Allowed != "" {
			used[r.Name] = true
		}
	}
	var out []string
	for n := range allow {
		if !used[n] {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// ParseAllow reads NAME=reason. The reason is required: an accepted change
// is recorded with why.
func ParseAllow(s string) (name, reason string, err error) {
	name, reason, ok := strings.Cut(s, "=")
	name, reason = strings.TrimSpace(name), strings.TrimSpace(reason)
	if !ok || name == "" || reason == "" {
		return "", "", fmt.Errorf("--allow %q: want NAME=reason (the row's scenario name as the table prints it, and why the change is accepted)", s)
	}
	return name, reason, nil
}

// SlowerCatalogueRows names the catalogue rows flagged slower, in order.
func SlowerCatalogueRows(rows []report.ComparedRow) []string { return slowerOf(rows, "catalogue") }

// SlowerSpecRows names the Ginkgo specs flagged slower, in order.
func SlowerSpecRows(rows []report.ComparedRow) []string { return slowerOf(rows, "ginkgo") }

func slowerOf(rows []report.ComparedRow, source string) []string {
	var out []string
	for _, r := range rows {
		if r.Source == source && strings.HasPrefix(r.Change, Slower) {
			out = append(out, r.Name)
		}
	}
	return out
}

// Recheck takes a second measurement of the rows flagged slower, catalogue
// rows and Ginkgo specs alike (base and cand: both sides' records of those
// rows, run again) and clears a flag when the second measurement has the
// same verdicts and the candidate is no longer slower past the row's slack;
// notes say what each second measurement found. A row not measured again
// keeps its flag.
func Recheck(rows []report.ComparedRow, base, cand []report.Record, tolerance time.Duration) ([]report.ComparedRow, []string) {
	find := func(recs []report.Record, source, name string) *report.Record {
		for i := range recs {
			if recs[i].Source == source && recs[i].Name == name {
				return &recs[i]
			}
		}
		return nil
	}
	out := append([]report.ComparedRow{}, rows...)
	var notes []string
	for i := range out {
		r := &out[i]
		if !strings.HasPrefix(r.Change, Slower) || r.Base == nil || r.Cand == nil {
			continue
		}
		b, c := find(base, r.Source, r.Name), find(cand, r.Source, r.Name)
		if b == nil || c == nil || b.Verdict != r.Base.Verdict || c.Verdict != r.Cand.Verdict {
			notes = append(notes, fmt.Sprintf("%s: not measured again (kept %s)", r.Name, r.Change))
			continue
		}
		again := fmt.Sprintf("%s: %s; measured again: baseline %v, candidate %v", r.Name, r.Change, b.Latency.Round(time.Millisecond), c.Latency.Round(time.Millisecond))
		if c.Latency-b.Latency > slack(*b, tolerance) {
			notes = append(notes, again+": still slower, flagged")
			continue
		}
		notes = append(notes, again+": not slower, not flagged (the first measurement was the machine's)")
		r.Change = ""
	}
	return out, notes
}
