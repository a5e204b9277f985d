package report

import (
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
)

// maxAnswer caps the answer text shown per scenario.
const maxAnswer = 4000

type htmlPage struct {
	Title     string
	Seed      uint64
	Target    string
	Started   string
	Duration  string
	Tolerance string
	Replay    string
	Counts    counts
	Status    string // pass, fail or na: the page's overall colour
	// Scenarios are the rows that ran: the failures first, then the passes.
	Scenarios      []htmlScenario
	NAGroups       []htmlNAGroup
	Tiers          []string
	BudgetsAssumed string
	NoAudit        string
}

// htmlNAGroup is the rows that did not apply for one reason: one section.
type htmlNAGroup struct {
	Anchor string
	Reason string
	Rows   []htmlNARow
}

type htmlNARow struct {
	Anchor string
	Index  int
	Name   string
}

type htmlScenario struct {
	Anchor        string
	Index         int
	Name          string
	Fault         string
	Params        string
	Operation     string
	Promise       string
	Labels        string
	Budget        string
	Observed      string
	Verdict       string
	VerdictClass  string
	Trace         string
	Reason        string
	Breaches      []string // every promise broken, "[tier] promise: detail"
	NotApplicable string
	Err           string
	Broken        []string
	IsError       bool
	Answer        string
	AnswerCut     bool
	Waterfall     *waterfall
	BudgetNote    string
	Replay        string // failing rows: the command that replays this row alone
	Log           string // failing rows: the proxy's own output around it
	NoAudit       bool   // the target offers no audit rows: no "no audit rows" line
}

// WriteHTML writes run as one self-contained HTML page: no external style
// sheet, script, font or image. It shows the run (seed, target, counts,
// duration, the replay command), a summary table, and per scenario its
// verdict with the reason and the request's waterfall as an inline SVG.
func WriteHTML(w io.Writer, run Run) error {
	c := tally(run.Results)
	p := htmlPage{
		Title:     fmt.Sprintf("mcpchaos run · seed %d · %s", run.Seed, run.Target),
		Seed:      run.Seed,
		Target:    run.Target,
		Started:   stamp(run.Started),
		Duration:  run.Duration.Round(time.Millisecond).String(),
		Tolerance: run.Tolerance.String(),
		Replay:    ReplayCommand(run),
		Counts:    c,
		Status:    "pass",
		Tiers:     TierSummary(run),

		BudgetsAssumed: run.BudgetsAssumed,
		NoAudit:        run.NoAudit,
	}
	switch {
	case c.Failed > 0:
		p.Status = "fail"
	case c.Passed == 0:
		p.Status = "na"
	}
	fails, passes, na := ordered(run.Results)
	for gi, g := range na {
		hg := htmlNAGroup{Anchor: fmt.Sprintf("na%d", gi+1), Reason: g.Reason}
		for _, x := range g.Rows {
			hg.Rows = append(hg.Rows, htmlNARow{Anchor: fmt.Sprintf("s%d", x.N), Index: x.N, Name: scenarioName(x.Scenario)})
		}
		p.NAGroups = append(p.NAGroups, hg)
	}
	for _, x := range append(fails, passes...) {
		r, i := x.Result, x.N-1
		s := r.Scenario
		v := verdictOf(r)
		hs := htmlScenario{
			Anchor:        fmt.Sprintf("s%d", i+1),
			Index:         i + 1,
			Name:          scenarioName(s),
			Fault:         faultName(s),
			Params:        dash(faultParams(s)),
			Operation:     dash(s.Operation.Name),
			Promise:       dash(s.Promise),
			Labels:        strings.Join(s.Labels, ", "),
			Budget:        BudgetText(r, run.Tolerance),
			Observed:      observed(r),
			Verdict:       string(v),
			VerdictClass:  map[verdict]string{verdictPass: "pass", verdictFail: "fail", verdictNA: "na"}[v],
			Trace:         r.Trace,
			Reason:        r.Reason,
			NotApplicable: r.NotApplicable,
			Broken:        r.Broken,
			Breaches:      breachTexts(r),
			IsError:       r.IsError,
			BudgetNote:    r.BudgetNote,
			NoAudit:       run.NoAudit != "",
		}
		if v == verdictFail {
			hs.Replay = RowReplay(run, r)
			hs.Log = tailOf(r.Log, logTail)
		}
		if r.Err != nil {
			hs.Err = fmt.Sprintf("%s: %v", catalogue.EndingOf(r.Observation), r.Err)
		}
		if r.Text != "" {
			hs.Answer = truncate(r.Text, maxAnswer)
			hs.AnswerCut = hs.Answer != r.Text
		}
		if v != verdictNA {
			hs.Waterfall = layoutWaterfall(r.Trace, r.Spans, r.Budget)
		}
		p.Scenarios = append(p.Scenarios, hs)
	}
	return pageTemplate.Execute(w, p)
}

var pageTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
{{template "style"}}
</style>
</head>
<body>
<header class="{{.Status}}">
<h1>mcpchaos run</h1>
<div class="counts"><b>{{.Counts.Total}}</b> scenarios: <b>{{.Counts.Passed}}</b> passed, <b>{{.Counts.Failed}}</b> failed, <b>{{.Counts.NotApplicable}}</b> not applicable</div>
<dl>
<dt>seed</dt><dd class="mono">{{.Seed}}</dd>
<dt>target</dt><dd class="mono">{{.Target}}</dd>
<dt>started</dt><dd>{{.Started}}</dd>
<dt>duration</dt><dd>{{.Duration}} (tolerance {{.Tolerance}} beyond each budget)</dd>
<dt>replay</dt><dd><code class="replay">{{.Replay}}</code></dd>
{{- if .BudgetsAssumed}}
<dt>budgets</dt><dd class="assumed">{{.BudgetsAssumed}}</dd>
{{- end}}
{{- if .NoAudit}}
<dt>evidence</dt><dd>{{.NoAudit}}</dd>
{{- end}}
<dt>by tier</dt><dd><ul class="tiers">{{range .Tiers}}<li>{{.}}</li>{{end}}</ul></dd>
</dl>
</header>

<table class="summary">
<thead><tr><th>#</th><th>fault</th><th>params</th><th>operation</th><th>budget</th><th>observed</th><th>verdict</th><th>trace</th></tr></thead>
<tbody>
{{- range .Scenarios}}
<tr><td class="num"><a href="#{{.Anchor}}">{{.Index}}</a></td><td>{{.Fault}}</td><td class="mono">{{.Params}}</td><td>{{.Operation}}</td><td class="num">{{.Budget}}{{if .BudgetNote}}*{{end}}</td><td class="num">{{.Observed}}</td><td><span class="verdict {{.VerdictClass}}">{{.Verdict}}</span></td><td class="mono">{{if .Trace}}{{.Trace}}{{else}}-{{end}}</td></tr>
{{- end}}
{{- range .NAGroups}}
<tr class="na-group"><td class="num"><a href="#{{.Anchor}}">×{{len .Rows}}</a></td><td colspan="5">{{.Reason}}</td><td><span class="verdict na">N/A</span></td><td></td></tr>
{{- end}}
</tbody>
</table>
{{range .Scenarios}}
<section class="scenario {{.VerdictClass}}" id="{{.Anchor}}">
<h2>{{.Index}}. <span class="verdict {{.VerdictClass}}">{{.Verdict}}</span> {{.Name}}</h2>
<p class="facts">{{if .BudgetNote}}<span class="assumed">{{.BudgetNote}}</span>{{end}}<span>promise: {{.Promise}}</span><span>fault: {{.Fault}} <span class="mono">{{.Params}}</span></span><span>budget {{.Budget}}</span><span>observed {{.Observed}}</span><span>trace <span class="mono">{{if .Trace}}{{.Trace}}{{else}}-{{end}}</span></span>{{if .Labels}}<span>labels: {{.Labels}}</span>{{end}}</p>
{{- if .NotApplicable}}
<div class="reason na">not applicable: {{.NotApplicable}}</div>
{{- else if .Breaches}}
{{- range .Breaches}}
<div class="reason">broken {{.}}</div>
{{- end}}
{{- else if .Reason}}
<div class="reason">{{.Reason}}</div>
{{- end}}
{{- if .Err}}
<div class="reason">ended with {{.Err}}</div>
{{- end}}
{{- if not .Breaches}}{{range .Broken}}
<div class="reason">broken: {{.}}</div>{{end}}
{{- end}}
{{- if .Replay}}
<p class="caption">replay this row alone:</p>
<code class="replay">{{.Replay}}</code>
{{- end}}
{{- if .NotApplicable}}
{{- else if .Waterfall}}
{{- template "waterfall" .Waterfall}}
{{- else if not .NoAudit}}
<p class="empty">{{if .Trace}}no audit rows for trace <span class="mono">{{.Trace}}</span>{{else}}no audit rows (no trace code){{end}}</p>
{{- end}}
{{- if .Log}}
<details open><summary>the proxy's own output around it (last {{len .Log}} bytes)</summary>
<pre class="log">{{.Log}}</pre>
</details>
{{- end}}
{{- if .Answer}}
<details><summary>answer{{if .IsError}} (isError){{end}}{{if .AnswerCut}}, cut{{end}}</summary>
<pre>{{.Answer}}</pre>
</details>
{{- end}}
</section>
{{end}}
{{- range .NAGroups}}
<section class="scenario na" id="{{.Anchor}}">
<h2><span class="verdict na">N/A</span> ×{{len .Rows}}: {{.Reason}}</h2>
<div class="reason na">not applicable: {{.Reason}}</div>
<ul class="na-rows">
{{- range .Rows}}
<li id="{{.Anchor}}">{{.Index}}. {{.Name}}</li>
{{- end}}
</ul>
</section>
{{end}}
</body>
</html>
{{define "style"}}
:root { --ok:#2f9e5b; --error:#d64541; --timeout:#e8891c; --refused:#8e44ad; --cancelled:#8a949c; --other:#4a78c2; --degraded:#b8860b;
  --fg:#1d232a; --muted:#5f6b76; --line:#d9dee3; --band:#f4f6f8; }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 32px 48px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 0 0 6px; }
code, pre, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 12.5px; }
header { border-left: 6px solid var(--ok); padding: 8px 16px; margin-bottom: 20px; background: var(--band); }
header.fail { border-left-color: var(--error); }
header.na { border-left-color: var(--cancelled); }
header dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 8px 0 0; }
header dt { color: var(--muted); }
header dd { margin: 0; }
.counts b { margin-right: 4px; }
.replay { user-select: all; background: #fff; border: 1px solid var(--line); padding: 1px 6px; border-radius: 3px; }
table.summary { border-collapse: collapse; width: 100%; margin-bottom: 28px; }
table.summary th, table.summary td { text-align: left; padding: 4px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
table.summary th { background: var(--band); font-weight: 600; }
table.summary td.num { text-align: right; white-space: nowrap; }
table.summary tr:hover td { background: #fafbfc; }
.verdict { display: inline-block; min-width: 44px; text-align: center; font-weight: 700; font-size: 12px; padding: 1px 6px; border-radius: 3px; color: #fff; }
.verdict.pass { background: var(--ok); }
.verdict.fail { background: var(--error); }
.verdict.na { background: var(--cancelled); }
section.scenario { border: 1px solid var(--line); border-radius: 6px; padding: 12px 16px; margin: 0 0 18px; overflow-x: auto; }
section.scenario.fail { border-left: 6px solid var(--error); }
section.scenario.na { border-left: 6px solid var(--cancelled); }
section.scenario.pass { border-left: 6px solid var(--ok); }
.facts { color: var(--muted); margin: 0 0 8px; }
.facts > span { display: inline-block; margin-right: 14px; }
.reason { margin: 6px 0; padding: 6px 10px; background: #fdecea; border-radius: 4px; white-space: pre-wrap; }
.reason.na { background: var(--band); }
.assumed { color: #7a5a00; font-weight: 600; }
ul.tiers { margin: 0; padding-left: 18px; }
pre.log { white-space: pre-wrap; word-break: break-word; background: #1d232a; color: #e8eaed; padding: 8px; border-radius: 4px; max-height: 320px; overflow: auto; }
section .replay { display: block; margin: 2px 0 8px; white-space: pre-wrap; word-break: break-all; }
.caption { color: var(--muted); margin: 8px 0 2px; }
.empty { color: var(--muted); font-style: italic; margin: 8px 0; }
ul.notes { margin: 4px 0 0; padding-left: 18px; }
ul.notes li { list-style: none; margin-left: -18px; }
ul.notes li.degraded { color: #7a5a00; }
ul.notes li.failure { color: #a02622; }
details { margin-top: 8px; }
details pre { white-space: pre-wrap; word-break: break-word; background: var(--band); padding: 8px; border-radius: 4px; max-height: 320px; overflow: auto; }
svg.waterfall { display: block; width: 100%; min-width: 860px; max-width: 1100px; height: auto; }
svg.waterfall text { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 12px; fill: var(--fg); }
svg.waterfall text.tick, svg.waterfall text.dur { fill: var(--muted); font-size: 11px; }
svg.waterfall .band { fill: var(--band); }
svg.waterfall .grid { stroke: var(--line); stroke-width: 1; }
svg.waterfall .axis { stroke: #9aa5b0; stroke-width: 1; }
svg.waterfall .bar { stroke: none; }
svg.waterfall .st-ok { fill: var(--ok); }
svg.waterfall .st-error { fill: var(--error); }
svg.waterfall .st-timeout { fill: var(--timeout); }
svg.waterfall .st-refused { fill: var(--refused); }
svg.waterfall .st-cancelled { fill: var(--cancelled); }
svg.waterfall .st-other { fill: var(--other); }
svg.waterfall .bar.degraded { stroke: var(--degraded); stroke-width: 2.5; stroke-dasharray: 4 2; fill-opacity: 0.55; }
svg.waterfall text.degraded { fill: #7a5a00; font-weight: 600; }
svg.waterfall .budget { stroke: var(--error); stroke-width: 1.5; stroke-dasharray: 5 3; }
svg.waterfall text.budget-label { fill: var(--error); font-size: 11px; }
svg.waterfall g.span:hover .band, svg.waterfall g.span:hover .hover { fill: #e6ecf2; }
svg.waterfall .hover { fill: transparent; }
{{end}}
{{define "waterfall"}}
<p class="caption">{{.Caption}}</p>
<svg class="waterfall" xmlns="http://www.w3.org/2000/svg" viewBox="{{.ViewBox}}" width="{{.Width}}" height="{{.Height}}" role="img" aria-label="{{.Aria}}">
<title>{{.Aria}}</title>
{{- range .Ticks}}
<line class="grid" x1="{{.X}}" y1="{{$.GridTop}}" x2="{{.X}}" y2="{{$.GridBottom}}"/>
<text class="tick" x="{{.X}}" y="14" text-anchor="{{.Anchor}}">{{.Label}}</text>
{{- end}}
{{- range .Rows}}
<g class="span" data-span="{{.SpanID}}" data-offset-ns="{{.OffsetNs}}" data-duration-ns="{{.DurationNs}}">
<title>{{.Title}}</title>
{{- if .Stripe}}
<rect class="band" x="0" y="{{.Y}}" width="{{$.Width}}" height="{{.BandH}}"/>
{{- else}}
<rect class="hover" x="0" y="{{.Y}}" width="{{$.Width}}" height="{{.BandH}}"/>
{{- end}}
<text{{if .Degraded}} class="degraded"{{end}} x="{{.LabelX}}" y="{{.TextY}}">{{.Label}}</text>
<text class="dur" x="{{.DurX}}" y="{{.TextY}}" text-anchor="end">{{.Dur}}</text>
<rect class="{{.Class}}" x="{{.BarX}}" y="{{.BarY}}" width="{{.BarW}}" height="{{.BarH}}" rx="2"/>
</g>
{{- end}}
<line class="axis" x1="{{.AxisX1}}" y1="{{.AxisY}}" x2="{{.AxisX2}}" y2="{{.AxisY}}"/>
{{- with .Budget}}
<g class="budget-mark">
<title>{{.Label}}, measured from the start of the trace</title>
<line class="budget" x1="{{.X}}" y1="{{.Y1}}" x2="{{.X}}" y2="{{.Y2}}"/>
{{- if .OffScale}}
<text class="budget-label" x="{{.BreakX}}" y="{{.BreakY}}" text-anchor="middle">≫</text>
{{- end}}
<text class="budget-label" x="{{.LabelX}}" y="{{.LabelY}}" text-anchor="{{.Anchor}}">{{.Label}}</text>
</g>
{{- end}}
<g class="legend">
{{- range .Legend}}
<rect class="{{.Class}}" x="{{.X}}" y="{{.Y}}" width="12" height="12" rx="2"/><text x="{{.TextX}}" y="{{.TextY}}">{{.Label}}</text>
{{- end}}
</g>
</svg>
{{- if .Notes}}
<ul class="notes">
{{- range .Notes}}
<li class="{{if .Degraded}}degraded{{else}}failure{{end}}">{{if .Degraded}}⚠ {{else}}✗ {{end}}{{.Text}}</li>
{{- end}}
</ul>
{{- end}}
{{- end}}`))

// breachTexts is each breach of r as text, in order.
func breachTexts(r catalogue.Result) []string {
	out := make([]string, len(r.Breaches))
	for i := range r.Breaches {
		out[i] = r.Breaches[i].Error()
	}
	return out
}
