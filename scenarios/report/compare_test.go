package report

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
	"time"
)

func sampleComparison() Comparison {
	base := &Record{Name: "proxy-restart × reconnect after restart", Source: "catalogue", Verdict: "PASS", Latency: msd(9), Budget: 1500 * time.Millisecond,
		Trace: "7K3M9QXA", Spans: pagedSpans("7K3M9QXA")}
	cand := &Record{Name: base.Name, Source: "catalogue", Verdict: "FAIL", Latency: msd(1), Reason: `not answered: Bad Request <b>`,
		Trace: "A1B2C3D4", Spans: pagedSpans("A1B2C3D4")}
	same := &Record{Name: "none × tools/list", Source: "catalogue", Verdict: "PASS", Latency: msd(2)}
	return Comparison{
		Baseline: "go.mod", Candidate: "github.com/modelcontextprotocol/go-sdk=/tmp/sdk", Seed: 7, Started: t0, Duration: time.Minute, Tolerance: 300 * time.Millisecond,
		Rows: []ComparedRow{
			{Name: base.Name, Source: "catalogue", Base: base, Cand: cand, Change: "NEWLY FAILING", Regression: true},
			{Name: same.Name, Source: "catalogue", Base: same, Cand: same},
		},
		Verdict: "FAIL: 1 of 2 rows", Failed: true,
	}
}

// A changed row shows both runs' waterfalls side by side; an unchanged row
// is a table line only.
func TestComparisonHTMLShowsBothWaterfallsOfAChangedRow(t *testing.T) {
	var b bytes.Buffer
	if err := WriteComparisonHTML(&b, sampleComparison()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if n := strings.Count(page, `<svg class="waterfall"`); n != 2 {
		t.Errorf("%d waterfalls, want 2 (baseline and candidate of the changed row)", n)
	}
	for _, want := range []string{"7K3M9QXA", "A1B2C3D4", "NEWLY FAILING", "none × tools/list", "PASS 9ms", "FAIL 1ms", "&lt;b&gt;"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, "<b>") && strings.Contains(page, "Bad Request <b>") {
		t.Error("a reason is not escaped")
	}
}

// JUnit: one testcase per row, failed only for a regression.
func TestComparisonJUnitFailsOnlyRegressions(t *testing.T) {
	var b bytes.Buffer
	if err := WriteComparisonJUnit(&b, sampleComparison()); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b.String())
	}
	if doc.Tests != 2 || doc.Failures != 1 || len(doc.Suites) != 1 || doc.Suites[0].Cases[0].Failure == nil || doc.Suites[0].Cases[1].Failure != nil {
		t.Errorf("tests %d failures %d:\n%s", doc.Tests, doc.Failures, b.String())
	}
	c := sampleComparison()
	c.Rows, c.CandidateBuild = nil, "proxy/upstream/upstream.go:108:31: unknown field ProtocolVersion"
	b.Reset()
	if err := WriteComparisonJUnit(&b, c); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "unknown field ProtocolVersion") || !strings.Contains(b.String(), `failures="1"`) {
		t.Errorf("a candidate that does not build is a failed testcase:\n%s", b.String())
	}
}
