package report

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
)

// What a person reads first: the failures, then the passes, then the rows
// that did not apply, collapsed by their reason.

// Width is the widest line the CLI table writes: details go to the report.
const Width = 120

// logTail is how much of the proxy's own output a failing row keeps.
const logTail = 2 << 10

// indexed is a result with its place in the run (1-based; the HTML anchors).
type indexed struct {
	N int
	catalogue.Result
}

// naGroup is the rows that did not apply for one reason.
type naGroup struct {
	Reason string
	Rows   []indexed
}

// ordered splits a run's results: failures, then passes, in run order; then
// the not-applicable rows grouped by reason, the largest group first (ties
// by reason).
func ordered(results []catalogue.Result) (fails, passes []indexed, na []naGroup) {
	at := map[string]int{}
	for i, r := range results {
		x := indexed{N: i + 1, Result: r}
		switch verdictOf(r) {
		case verdictFail:
			fails = append(fails, x)
		case verdictPass:
			passes = append(passes, x)
		default:
			k, ok := at[r.NotApplicable]
			if !ok {
				k = len(na)
				at[r.NotApplicable] = k
				na = append(na, naGroup{Reason: r.NotApplicable})
			}
			na[k].Rows = append(na[k].Rows, x)
		}
	}
	sort.SliceStable(na, func(i, j int) bool {
		if len(na[i].Rows) != len(na[j].Rows) {
			return len(na[i].Rows) > len(na[j].Rows)
		}
		return na[i].Reason < na[j].Reason
	})
	return fails, passes, na
}

// TierSummary is one line per promise tier: how many failing rows broke a
// promise of it, and which promises, most broken first.
func TierSummary(run Run) []string {
	tiers := []catalogue.Tier{catalogue.Generic, catalogue.Own, catalogue.Harness}
	rows := map[catalogue.Tier]int{}
	promises := map[catalogue.Tier]map[string]int{}
	for _, r := range run.Results {
		if verdictOf(r) != verdictFail {
			continue
		}
		seen := map[catalogue.Tier]bool{}
		for _, b := range r.Breaches {
			if promises[b.Tier] == nil {
				promises[b.Tier] = map[string]int{}
			}
			promises[b.Tier][b.Promise]++
			if !seen[b.Tier] {
				seen[b.Tier] = true
				rows[b.Tier]++
			}
		}
	}
	desc := map[catalogue.Tier]string{catalogue.Generic: "generic MCP promises", catalogue.Own: "mcplocal's own promises", catalogue.Harness: "the run itself"}
	var out []string
	for _, t := range tiers {
		if rows[t] == 0 {
			if t != catalogue.Harness {
				out = append(out, fmt.Sprintf("%s (%s): no row broke one", t, desc[t]))
			}
			continue
		}
		type pc struct {
			p string
			n int
		}
		var ps []pc
		for p, n := range promises[t] {
			ps = append(ps, pc{p, n})
		}
		sort.Slice(ps, func(i, j int) bool {
			if ps[i].n != ps[j].n {
				return ps[i].n > ps[j].n
			}
			return ps[i].p < ps[j].p
		})
		var parts []string
		for _, x := range ps {
			parts = append(parts, fmt.Sprintf("%s ×%d", x.p, x.n))
		}
		noun := "failing rows"
		if rows[t] == 1 {
			noun = "failing row"
		}
		out = append(out, fmt.Sprintf("%s (%s): %d %s: %s", t, desc[t], rows[t], noun, strings.Join(parts, ", ")))
	}
	return out
}

// RowReplay is the command that replays r alone: run.Replay's when set,
// else the run's seed and target focused on r's name.
func RowReplay(run Run, r catalogue.Result) string {
	if run.Replay != nil {
		return run.Replay(r)
	}
	return ReplayCommand(run) + " --focus " + shellQuote("^"+regexp.QuoteMeta(scenarioName(r.Scenario))+"$")
}

// tailOf is the last n bytes of log, from a line boundary.
func tailOf(log string, n int) string {
	if len(log) <= n {
		return log
	}
	t := log[len(log)-n:]
	if i := strings.IndexByte(t, '\n'); i >= 0 && i < len(t)-1 {
		t = t[i+1:]
	}
	return "[…]\n" + t
}

// Wrap breaks s into lines of at most Width runes at spaces, every line
// after the first indented by indent.
func Wrap(s, indent string) []string {
	var out []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) > Width:
			out = append(out, fit(line))
			line = indent + w
		default:
			line += " " + w
		}
	}
	if line != "" {
		out = append(out, fit(line))
	}
	return out
}

// fit cuts s to Width runes.
func fit(s string) string { return truncate(s, Width) }
