package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func at(ms int) time.Time                { return t0.Add(time.Duration(ms) * time.Millisecond) }
func msd(ms int) time.Duration           { return time.Duration(ms) * time.Millisecond }
func op(name string) catalogue.Operation { return catalogue.Operation{Name: name} }

const degradedReason = "LLM timeout after 10s (budget spent)"

// pagedSpans is a 100 ms request as an evidence adapter gives it, in tree
// order: the root, an upstream call, the pipeline, and its paginate stage
// starting at exactly half the trace, degraded.
func pagedSpans(code string) []evidence.Span {
	_ = code // the spans of every trace look alike here
	return []evidence.Span{
		{Kind: "tool_call_trace", ID: "root", Name: "docmost_search", Start: at(0), Duration: msd(100), Status: "ok"},
		{Kind: "upstream_call", ID: "up", Parent: "root", Depth: 1, Name: "search", Attrs: map[string]string{"server": "docmost", "tool": "search"}, Start: at(5), Duration: msd(40), Status: "ok"},
		{Kind: "pipeline_execution", ID: "pipe", Parent: "root", Depth: 1, Start: at(48), Duration: msd(50), Status: "ok"},
		{Kind: "stage_execution", ID: "stage", Parent: "pipe", Depth: 2, Name: "paginate", Start: at(50), Duration: msd(40), Status: "ok",
			Degraded: true, Reason: degradedReason},
		{Kind: "llm_attempt", ID: "llm", Parent: "stage", Depth: 3, Start: at(51), Duration: msd(30), Status: "timeout", Detail: "provider vllm-current model qwen3-32b: deadline exceeded"},
	}
}

func sampleRun() Run {
	return Run{
		Seed: 42, Target: "inprocess", Started: t0, Duration: 3*time.Second + 250*time.Millisecond, Tolerance: 300 * time.Millisecond,
		Results: []catalogue.Result{
			{ // passed, with a waterfall; the budget lies far past the trace
				Scenario: catalogue.Scenario{Fault: harness.None{}, Operation: op("paginated search"), Promise: "4 bounded, falls back, says so", Labels: []string{"stages", "paginate"}},
				Budget:   10 * time.Second, Pass: true,
				Observation: catalogue.Observation{Latency: msd(102), Trace: "7K3M9QXA", Text: "page 1 of 3 ⚠ Smart index unavailable", Spans: pagedSpans("7K3M9QXA")},
			},
			{ // failed before any answer: no trace, a hostile reason
				Scenario: catalogue.Scenario{Fault: harness.Blackhole{}, Operation: op("small tools/call"), Promise: "1 answered within budget"},
				Budget:   2 * time.Second,
				Observation: catalogue.Observation{Latency: 2500 * time.Millisecond, Err: errors.New("context deadline exceeded"),
					Broken: []string{"no notice"}},
				Reason: `answered after 2.5s: <script>alert("x")</script> & more`,
			},
			{ // could not run on this target
				Scenario:      catalogue.Scenario{Fault: harness.ProxyKill{}, Operation: op("reconnect"), Promise: "2 stale session recreated"},
				NotApplicable: "target inprocess is not a process that can be SIGKILLed",
				Observation:   catalogue.Observation{Spans: pagedSpans("ZZZZZZZZ")}, // must not be drawn
			},
			{ // failed, with a waterfall; the budget falls inside the trace
				Scenario:    catalogue.Scenario{Fault: harness.Latency{Ms: 100}, Operation: op("paginating tools/call"), Promise: "1 answered"},
				Budget:      msd(75),
				Observation: catalogue.Observation{Latency: msd(101), Trace: "AB12CD34", IsError: true, Text: "timed out", Spans: pagedSpans("AB12CD34")},
				Reason:      "answered after 101ms, budget 75ms + tolerance 300ms",
			},
		},
	}
}

func TestJUnitParsesBackWithCounts(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJUnit(&b, sampleRun()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Skipped  int      `xml:"skipped,attr"`
		Suites   []struct {
			Name       string `xml:"name,attr"`
			Tests      int    `xml:"tests,attr"`
			Failures   int    `xml:"failures,attr"`
			Skipped    int    `xml:"skipped,attr"`
			Time       string `xml:"time,attr"`
			Properties []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
			Cases []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
				Time      string `xml:"time,attr"`
				Failure   *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
				SystemOut string `xml:"system-out"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("JUnit does not parse: %v\n%s", err, b.String())
	}
	if doc.Tests != 4 || doc.Failures != 2 || doc.Skipped != 1 {
		t.Errorf("testsuites counts = %d/%d/%d, want 4 tests, 2 failures, 1 skipped", doc.Tests, doc.Failures, doc.Skipped)
	}
	if len(doc.Suites) != 1 {
		t.Fatalf("%d testsuites, want 1", len(doc.Suites))
	}
	s := doc.Suites[0]
	if s.Name != "mcpchaos" || s.Tests != 4 || s.Failures != 2 || s.Skipped != 1 || s.Time != "3.250" {
		t.Errorf("testsuite = %q tests=%d failures=%d skipped=%d time=%s", s.Name, s.Tests, s.Failures, s.Skipped, s.Time)
	}
	props := map[string]string{}
	for _, p := range s.Properties {
		props[p.Name] = p.Value
	}
	if props["seed"] != "42" || props["target"] != "inprocess" {
		t.Errorf("properties = %v, want seed 42 and target inprocess", props)
	}
	if len(s.Cases) != 4 {
		t.Fatalf("%d testcases, want 4", len(s.Cases))
	}
	var passed, failed, skipped int
	for _, c := range s.Cases {
		switch {
		case c.Skipped != nil:
			skipped++
		case c.Failure != nil:
			failed++
		default:
			passed++
		}
	}
	if passed != 1 || failed != 2 || skipped != 1 {
		t.Errorf("testcases: %d passed, %d failed, %d skipped; want 1, 2, 1", passed, failed, skipped)
	}
	c0, c1, c2 := s.Cases[0], s.Cases[1], s.Cases[2]
	if c0.Name != "none × paginated search" || c0.Classname != "4 bounded, falls back, says so" || c0.Time != "0.102" {
		t.Errorf("passed case = %q / %q / %s", c0.Name, c0.Classname, c0.Time)
	}
	if !strings.Contains(c0.SystemOut, "trace: 7K3M9QXA") || !strings.Contains(c0.SystemOut, "budget: 10s") {
		t.Errorf("system-out lacks trace code or budget:\n%s", c0.SystemOut)
	}
	if c1.Failure == nil || !strings.Contains(c1.Failure.Message, `<script>alert("x")</script> & more`) ||
		!strings.Contains(c1.Failure.Text, "context deadline exceeded") || !strings.Contains(c1.Failure.Text, "no notice") {
		t.Errorf("failure does not carry its reason: %+v", c1.Failure)
	}
	if c2.Skipped == nil || !strings.Contains(c2.Skipped.Message, "SIGKILLed") || c2.Name != "proxy-kill × reconnect" {
		t.Errorf("not-applicable case = %q %+v", c2.Name, c2.Skipped)
	}
}

// render writes the sample's HTML and parses it.
func render(t *testing.T, run Run) (string, *html.Node) {
	t.Helper()
	var b bytes.Buffer
	if err := WriteHTML(&b, run); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatalf("HTML does not parse: %v", err)
	}
	return b.String(), doc
}

func all(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	for d := range n.Descendants() {
		if match(d) {
			out = append(out, d)
		}
	}
	return out
}

func elem(name string) func(*html.Node) bool {
	return func(n *html.Node) bool { return n.Type == html.ElementNode && n.Data == name }
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, c string) bool {
	return slices.Contains(strings.Fields(attr(n, "class")), c)
}

func text(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return b.String()
}

func section(t *testing.T, doc *html.Node, id string) *html.Node {
	t.Helper()
	for _, s := range all(doc, elem("section")) {
		if attr(s, "id") == id {
			return s
		}
	}
	t.Fatalf("no section %s", id)
	return nil
}

func TestHTMLIsWellFormedAndSelfContained(t *testing.T) {
	out, doc := render(t, sampleRun())
	// Every non-void element closes, in order.
	void := map[string]bool{"meta": true, "br": true, "hr": true, "img": true, "input": true, "link": true}
	var stack []string
	z := html.NewTokenizer(strings.NewReader(out))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		name, _ := z.TagName()
		switch tt {
		case html.StartTagToken:
			if !void[string(name)] {
				stack = append(stack, string(name))
			}
		case html.EndTagToken:
			if len(stack) == 0 || stack[len(stack)-1] != string(name) {
				t.Fatalf("</%s> closes %v", name, stack)
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) != 0 {
		t.Fatalf("unclosed elements %v", stack)
	}
	for _, tag := range []string{"script", "link", "img", "iframe", "object"} {
		if n := len(all(doc, elem(tag))); n > 0 {
			t.Errorf("%d <%s> elements in a self-contained report", n, tag)
		}
	}
	for n := range doc.Descendants() {
		for _, a := range n.Attr {
			if (a.Key == "href" || a.Key == "src") && !strings.HasPrefix(a.Val, "#") {
				t.Errorf("<%s %s=%q> points outside the file", n.Data, a.Key, a.Val)
			}
		}
	}
	if strings.Contains(out, "url(") || strings.Contains(out, "@import") {
		t.Error("the stylesheet loads something")
	}
	// The header: seed, target, counts, the replay command.
	h := text(all(doc, elem("header"))[0])
	for _, want := range []string{"42", "inprocess", "1 passed, 2 failed, 1 not applicable", "mcpchaos run --seed 42 --target inprocess", "3.25s"} {
		if !strings.Contains(strings.Join(strings.Fields(h), " "), want) {
			t.Errorf("header lacks %q:\n%s", want, h)
		}
	}
	// The summary: one row per scenario.
	if rows := all(all(doc, elem("tbody"))[0], elem("tr")); len(rows) != 4 {
		t.Errorf("%d summary rows, want 4", len(rows))
	}
}

func TestHTMLOneSVGPerScenarioWithRows(t *testing.T) {
	_, doc := render(t, sampleRun())
	if n := len(all(doc, elem("svg"))); n != 2 {
		t.Errorf("%d <svg>, want 2 (the two applicable scenarios with rows)", n)
	}
	for _, id := range []string{"s1", "s4"} {
		s := section(t, doc, id)
		svgs := all(s, elem("svg"))
		if len(svgs) != 1 {
			t.Fatalf("section %s has %d <svg>", id, len(svgs))
		}
		if spans := all(svgs[0], func(n *html.Node) bool { return elem("g")(n) && hasClass(n, "span") }); len(spans) != 5 {
			t.Errorf("section %s draws %d spans, want 5", id, len(spans))
		}
	}
	if s := text(section(t, doc, "s2")); !strings.Contains(s, "no audit rows (no trace code)") {
		t.Errorf("a scenario without rows lacks the note:\n%s", s)
	}
}

// bar finds the bar rect of the span with the given id in svg.
func bar(t *testing.T, svg *html.Node, id string) (x, w float64) {
	t.Helper()
	for _, g := range all(svg, elem("g")) {
		if attr(g, "data-span") != id {
			continue
		}
		for _, r := range all(g, elem("rect")) {
			if hasClass(r, "bar") {
				x, _ = strconv.ParseFloat(attr(r, "x"), 64)
				w, _ = strconv.ParseFloat(attr(r, "width"), 64)
				return x, w
			}
		}
	}
	t.Fatalf("no bar for span %s", id)
	return 0, 0
}

func near(a, b float64) bool { return math.Abs(a-b) < 0.11 }

func TestBarsAreProportional(t *testing.T) {
	_, doc := render(t, sampleRun())
	svg := all(section(t, doc, "s1"), elem("svg"))[0]
	x, w := bar(t, svg, "root")
	if !near(x, barX) || !near(w, barW) {
		t.Errorf("root bar at %v width %v, want the whole extent %v..%v", x, w, barX, barX+barW)
	}
	x, w = bar(t, svg, "stage") // starts at 50 of 100 ms, lasts 40
	if !near(x, barX+barW/2) || !near(w, barW*0.4) {
		t.Errorf("stage bar at %v width %v, want %v width %v", x, w, barX+barW/2, barW*0.4)
	}
	x, w = bar(t, svg, "up") // 5..45 ms
	if !near(x, barX+barW*0.05) || !near(w, barW*0.4) {
		t.Errorf("upstream bar at %v width %v", x, w)
	}
	// Nesting: labels indent one step per level.
	indent := map[string]float64{}
	for _, g := range all(svg, func(n *html.Node) bool { return elem("g")(n) && hasClass(n, "span") }) {
		for _, tx := range all(g, elem("text")) {
			if !hasClass(tx, "dur") {
				indent[attr(g, "data-span")], _ = strconv.ParseFloat(attr(tx, "x"), 64)
			}
		}
	}
	for id, depth := range map[string]float64{"root": 0, "up": 1, "pipe": 1, "stage": 2, "llm": 3} {
		if !near(indent[id], labelX+indentStep*depth) {
			t.Errorf("span %s label at x=%v, want depth %v", id, indent[id], depth)
		}
	}
	// Status colours.
	for _, r := range all(svg, elem("rect")) {
		if hasClass(r, "bar") && attr(r.Parent, "data-span") == "llm" && !hasClass(r, "st-timeout") {
			t.Errorf("timeout span drawn with class %q", attr(r, "class"))
		}
	}
}

func TestBudgetMarker(t *testing.T) {
	_, doc := render(t, sampleRun())
	marker := func(id string) *html.Node {
		g := all(section(t, doc, id), func(n *html.Node) bool { return elem("g")(n) && hasClass(n, "budget-mark") })
		if len(g) != 1 {
			t.Fatalf("section %s has %d budget marks", id, len(g))
		}
		return g[0]
	}
	// 75 ms of a 100 ms trace: three quarters across.
	line := all(marker("s4"), elem("line"))[0]
	if x, _ := strconv.ParseFloat(attr(line, "x1"), 64); !near(x, barX+barW*0.75) {
		t.Errorf("budget line at %v, want %v", x, barX+barW*0.75)
	}
	// 10 s after a 100 ms trace: off scale, right of the extent.
	line = all(marker("s1"), elem("line"))[0]
	if x, _ := strconv.ParseFloat(attr(line, "x1"), 64); x <= barX+barW {
		t.Errorf("off-scale budget line at %v, want right of %v", x, barX+barW)
	}
	if s := text(section(t, doc, "s1")); !strings.Contains(s, "1.0% of the 10s budget") {
		t.Errorf("caption does not relate the trace to its budget:\n%s", s)
	}

	// A budget near the trace's end (150 ms after a 100 ms trace) is drawn to
	// scale: the axis runs on to it, so the headroom shows.
	run := sampleRun()
	run.Results = run.Results[:1]
	run.Results[0].Budget = msd(150)
	_, doc = render(t, run)
	line = all(marker("s1"), elem("line"))[0]
	if x, _ := strconv.ParseFloat(attr(line, "x1"), 64); !near(x, barX+barW) {
		t.Errorf("near budget line at %v, want the axis end %v", x, barX+barW)
	}
	svg := all(section(t, doc, "s1"), elem("svg"))[0]
	if x, w := bar(t, svg, "stage"); !near(x, barX+barW/3) || !near(w, barW*40/150) {
		t.Errorf("stage bar at %v width %v against a 150 ms axis", x, w)
	}
}

func TestEscaping(t *testing.T) {
	out, doc := render(t, sampleRun())
	if strings.Contains(out, "<script>") {
		t.Error("a reason's <script> reached the page unescaped")
	}
	if !strings.Contains(out, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; more") {
		t.Error("the reason is not shown escaped")
	}
	if !strings.Contains(text(section(t, doc, "s2")), `<script>alert("x")</script> & more`) {
		t.Error("the reason does not read back as written")
	}
}

func TestDegradedRowShowsItsReason(t *testing.T) {
	_, doc := render(t, sampleRun())
	s := section(t, doc, "s1")
	var g *html.Node
	for _, n := range all(s, elem("g")) {
		if attr(n, "data-span") == "stage" {
			g = n
		}
	}
	if g == nil {
		t.Fatal("no stage span")
	}
	title := all(g, elem("title"))
	if len(title) != 1 || !strings.Contains(text(title[0]), "⚠ degraded: "+degradedReason) {
		t.Errorf("degraded span tooltip lacks its reason")
	}
	var outlined, marked bool
	for _, n := range all(g, elem("rect")) {
		outlined = outlined || hasClass(n, "degraded")
	}
	for _, n := range all(g, elem("text")) {
		marked = marked || strings.HasPrefix(text(n), "⚠ stage_execution paginate")
	}
	if !outlined || !marked {
		t.Errorf("degraded span outlined=%v marked=%v", outlined, marked)
	}
	var legend bool
	for _, li := range all(s, elem("li")) {
		legend = legend || (hasClass(li, "degraded") && strings.Contains(text(li), degradedReason))
	}
	if !legend {
		t.Error("no legend line with the degraded reason under the waterfall")
	}
}

func TestNotApplicableIsRenderedAsSuch(t *testing.T) {
	_, doc := render(t, sampleRun())
	s := section(t, doc, "na1") // the one reason's group, with row 3 in it
	if li := all(s, elem("li")); len(li) != 1 || attr(li[0], "id") != "s3" {
		t.Fatalf("the N/A group lists %d rows, want row s3", len(li))
	}
	got := strings.Join(strings.Fields(text(s)), " ")
	if !strings.Contains(got, "N/A") || !strings.Contains(got, "not applicable: target inprocess is not a process that can be SIGKILLed") {
		t.Errorf("N/A section reads: %s", got)
	}
	if strings.Contains(got, "PASS") {
		t.Error("a not-applicable scenario is shown as passed")
	}
	if n := len(all(s, elem("svg"))); n != 0 {
		t.Errorf("N/A scenario draws %d waterfalls", n)
	}
	if !hasClass(s, "na") {
		t.Errorf("N/A section class %q", attr(s, "class"))
	}
}

func TestDeterministic(t *testing.T) {
	a, _ := render(t, sampleRun())
	b, _ := render(t, sampleRun())
	if a != b {
		t.Error("the same run renders differently")
	}
	var j1, j2 bytes.Buffer
	_ = WriteJUnit(&j1, sampleRun())
	_ = WriteJUnit(&j2, sampleRun())
	if !bytes.Equal(j1.Bytes(), j2.Bytes()) {
		t.Error("the same run gives different JUnit")
	}
}

func TestEdgeCasesRender(t *testing.T) {
	run := edgeRun()
	zero := run.Results[0].Spans
	out, doc := render(t, run)
	if n := len(all(doc, func(n *html.Node) bool { return elem("g")(n) && hasClass(n, "span") })); n != len(zero) {
		t.Errorf("%d spans drawn, want %d", n, len(zero))
	}
	if strings.Contains(out, "NaN") || strings.Contains(out, "Inf") {
		t.Error("a zero-length trace gives NaN/Inf coordinates")
	}
	if !strings.Contains(out, "mcpchaos run --seed 1 --target &#39;binary:/tmp/my proxy&#39;") {
		t.Error("replay command does not quote the target")
	}
	var j bytes.Buffer
	if err := WriteJUnit(&j, run); err != nil {
		t.Fatal(err)
	}
	var junit struct {
		Failures []string `xml:"testsuite>testcase>failure"`
	}
	if err := xml.Unmarshal(j.Bytes(), &junit); err != nil {
		t.Fatalf("%v\n%s", err, j.String())
	}
	if len(junit.Failures) != 1 || !strings.Contains(junit.Failures[0], "]]> end") || !strings.Contains(junit.Failures[0], "error: ]]><x>") {
		t.Errorf("failure text = %q", junit.Failures)
	}
}

func TestWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "report")
	if err := Write(dir, sampleRun()); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{JUnitFile, HTMLFile} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	file := filepath.Join(t.TempDir(), "file")
	_ = os.WriteFile(file, nil, 0o644)
	if err := Write(filepath.Join(file, "sub"), sampleRun()); err == nil {
		t.Error("Write into a path under a file succeeded")
	}
}
