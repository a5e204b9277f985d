package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Comparison is one canary run: the same suite on a baseline and on a
// candidate, row by row.
type Comparison struct {
	Baseline  string // what the baseline is built from ("baseline (go.mod)")
	Candidate string // the candidate's switches
	Seed      uint64
	Started   time.Time
	Duration  time.Duration
	// Tolerance is how much slower a candidate row may be before it is flagged.
	Tolerance time.Duration
	// CandidateBuild, when set, is why the candidate does not build (the
	// compiler's first lines); Rows are then empty.
	CandidateBuild string
	Rows           []ComparedRow
	// Verdict is the canary's one-line verdict.
	Verdict string
	Failed  bool
}

// ComparedRow is one scenario on both sides. Base or Cand is nil when that
// side has no result for it.
type ComparedRow struct {
	Name   string
	Source string
	Base   *Record
	Cand   *Record
	// Change is empty when nothing changed, else e.g. "NEWLY FAILING".
	Change string
	// Allowed is the reason an accepted change was allowed (--allow).
	Allowed string
	// Regression: it passed on the baseline and does not on the candidate,
	// and no --allow accepts it.
	Regression bool
}

// File names WriteComparison creates inside its directory.
const (
	CanaryJUnitFile = "canary-junit.xml"
	CanaryHTMLFile  = "canary.html"
)

// WriteComparison writes dir/canary-junit.xml and dir/canary.html.
func WriteComparison(dir string, c Comparison) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	for name, write := range map[string]func(io.Writer, Comparison) error{
		CanaryJUnitFile: WriteComparisonJUnit, CanaryHTMLFile: WriteComparisonHTML,
	} {
		var b bytes.Buffer
		if err := write(&b, c); err != nil {
			return fmt.Errorf("report: %s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	return nil
}

// SideText is one side's cell: verdict and latency, or "-" when absent.
func SideText(r *Record) string {
	if r == nil {
		return "-"
	}
	if r.Verdict == string(verdictNA) {
		return r.Verdict
	}
	if r.Latency < time.Millisecond {
		return r.Verdict + " <1ms"
	}
	return r.Verdict + " " + r.Latency.Round(time.Millisecond).String()
}

// WriteComparisonJUnit writes c as JUnit XML: one testcase per row, failed
// when the row is a regression, its change and both sides in system-out.
// A candidate that does not build is one failed testcase.
func WriteComparisonJUnit(w io.Writer, c Comparison) error {
	suite := junitSuite{
		Name: "mcpchaos canary", Time: secs(c.Duration),
		Properties: []junitProperty{
			{Name: "baseline", Value: c.Baseline},
			{Name: "candidate", Value: c.Candidate},
			{Name: "seed", Value: fmt.Sprint(c.Seed)},
			{Name: "tolerance", Value: c.Tolerance.String()},
		},
	}
	if !c.Started.IsZero() {
		suite.Timestamp = c.Started.UTC().Format("2006-01-02T15:04:05")
	}
	if c.CandidateBuild != "" {
		suite.Cases = append(suite.Cases, junitCase{Name: "the candidate builds", Classname: "canary.build",
			Failure: &junitFailure{Message: "the candidate does not build", Type: "build", Text: c.CandidateBuild}})
	}
	for _, r := range c.Rows {
		jc := junitCase{Name: r.Name, Classname: "canary." + r.Source, Time: "0.000"}
		if r.Cand != nil {
			jc.Time = secs(r.Cand.Latency)
		}
		out := fmt.Sprintf("baseline: %s\ncandidate: %s\nchange: %s", SideText(r.Base), SideText(r.Cand), dash(r.Change))
		if r.Allowed != "" {
			out += "\nallowed: " + r.Allowed
		}
		jc.SystemOut = &junitText{Text: out}
		if r.Regression {
			why := "no result"
			if r.Cand != nil {
				why = r.Cand.Reason
			}
			jc.Failure = &junitFailure{Message: r.Change + ": passed on the baseline", Type: "regression", Text: why}
		}
		suite.Cases = append(suite.Cases, jc)
	}
	for _, jc := range suite.Cases {
		suite.Tests++
		if jc.Failure != nil {
			suite.Failures++
		}
	}
	doc := junitSuites{Name: "mcpchaos canary", Tests: suite.Tests, Failures: suite.Failures, Time: suite.Time, Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

type cmpPage struct {
	Comparison
	Status  string
	Table   []cmpRow
	Changed []cmpRow
}

type cmpRow struct {
	Anchor, Name, Source, Base, Cand, BaseClass, CandClass, Change, Allowed string
	Regression                                                              bool
	BaseSide, CandSide                                                      *cmpSide
}

type cmpSide struct {
	Verdict, Reason, Trace string
	Waterfall              *waterfall
}

func sideOf(r *Record) *cmpSide {
	if r == nil {
		return &cmpSide{Verdict: "-", Reason: "no result on this side"}
	}
	return &cmpSide{Verdict: r.Verdict, Reason: r.Reason, Trace: r.Trace, Waterfall: layoutWaterfall(r.Trace, r.Spans, r.Budget)}
}

func classOf(r *Record) string {
	if r == nil {
		return "na"
	}
	switch r.Verdict {
	case string(verdictPass):
		return "pass"
	case string(verdictFail):
		return "fail"
	}
	return "na"
}

// WriteComparisonHTML writes c as one self-contained page: the verdict, the
// side-by-side table, and for every changed row both runs' waterfalls next
// to each other.
func WriteComparisonHTML(w io.Writer, c Comparison) error {
	p := cmpPage{Comparison: c, Status: "pass"}
	if c.Failed {
		p.Status = "fail"
	}
	for i, r := range c.Rows {
		row := cmpRow{Anchor: fmt.Sprintf("c%d", i+1), Name: r.Name, Source: r.Source, Base: SideText(r.Base), Cand: SideText(r.Cand),
			BaseClass: classOf(r.Base), CandClass: classOf(r.Cand), Change: r.Change, Allowed: r.Allowed, Regression: r.Regression}
		if r.Change != "" {
			row.BaseSide, row.CandSide = sideOf(r.Base), sideOf(r.Cand)
			p.Changed = append(p.Changed, row)
		}
		p.Table = append(p.Table, row)
	}
	return comparePage.Execute(w, p)
}

var comparePage = template.Must(template.Must(pageTemplate.Clone()).New("compare").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>mcpchaos canary · {{.Candidate}}</title>
<style>
{{template "style"}}
.sides { display: grid; grid-template-columns: 1fr 1fr; gap: 16px; }
.sides > div { min-width: 0; overflow-x: auto; }
tr.changed td { background: #fff8e1; }
tr.regression td { background: #fdecea; }
.change { font-weight: 700; }
</style>
</head>
<body>
<header class="{{.Status}}">
<h1>mcpchaos canary</h1>
<div class="counts">{{.Verdict}}</div>
<dl>
<dt>baseline</dt><dd class="mono">{{.Baseline}}</dd>
<dt>candidate</dt><dd class="mono">{{.Candidate}}</dd>
<dt>seed</dt><dd class="mono">{{.Seed}}</dd>
<dt>tolerance</dt><dd>{{.Tolerance}} (a row is slower when the candidate takes longer than the baseline by more)</dd>
<dt>duration</dt><dd>{{.Duration}}</dd>
</dl>
</header>
{{- if .CandidateBuild}}
<section class="scenario fail"><h2>The candidate does not build</h2><pre>{{.CandidateBuild}}</pre></section>
{{- end}}
<table class="summary">
<thead><tr><th>scenario</th><th>source</th><th>baseline</th><th>candidate</th><th>CHANGED</th></tr></thead>
<tbody>
{{- range .Table}}
<tr{{if .Regression}} class="regression"{{else if .Change}} class="changed"{{end}}><td>{{if .Change}}<a href="#{{.Anchor}}">{{.Name}}</a>{{else}}{{.Name}}{{end}}</td><td>{{.Source}}</td><td><span class="verdict {{.BaseClass}}">{{.Base}}</span></td><td><span class="verdict {{.CandClass}}">{{.Cand}}</span></td><td class="change">{{.Change}}{{if .Allowed}} (allowed: {{.Allowed}}){{end}}</td></tr>
{{- end}}
</tbody>
</table>
{{range .Changed}}
<section class="scenario {{if .Regression}}fail{{else}}na{{end}}" id="{{.Anchor}}">
<h2>{{.Change}}: {{.Name}}</h2>
{{- if .Allowed}}<p class="facts">allowed: {{.Allowed}}</p>{{end}}
<div class="sides">
<div><h2>baseline: <span class="verdict {{.BaseClass}}">{{.Base}}</span></h2>{{template "side" .BaseSide}}</div>
<div><h2>candidate: <span class="verdict {{.CandClass}}">{{.Cand}}</span></h2>{{template "side" .CandSide}}</div>
</div>
</section>
{{end}}
</body>
</html>
{{define "side"}}
{{- if .Reason}}<div class="reason">{{.Reason}}</div>{{end}}
{{- if .Waterfall}}{{template "waterfall" .Waterfall}}{{else}}<p class="empty">{{if .Trace}}no audit rows for trace <span class="mono">{{.Trace}}</span>{{else}}no waterfall (no trace code){{end}}</p>{{end}}
{{- end}}`))
