package bench

import (
	"context"
	"encoding/xml"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
)

func TestRunCurveMeasuresEachTargetAtEveryStepOfBothSweeps(t *testing.T) {
	fake, err := upstream.NewDocmost(upstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	fresh := map[string]int{}
	mk := func(name string) Target {
		t := Target{Name: name, URL: fake.URL(), Tool: "update_page"}
		t.Fresh = func(context.Context) (Target, func(), error) { fresh[name]++; return t, func() {}, nil }
		return t
	}
	c, err := RunCurve(context.Background(), []Target{mk("a"), mk("b")}, CurveOptions{
		Args: map[string]any{"page_id": "p"}, Active: []int{1, 3}, Idle: []int{0, 4, 10}, IdleActive: 2,
		Openers: 3, Duration: 80 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Series) != 4 {
		t.Fatalf("%d series, want 4 (2 targets × 2 sweeps): %+v", len(c.Series), c.Series)
	}
	for _, s := range c.Series {
		var got []int
		for _, p := range s.Points {
			if p.Calls == 0 || p.Errors != 0 || p.ReqPerSec <= 0 || p.P50Ms > p.P99Ms {
				t.Errorf("%s %s: point %+v", s.Target, s.Sweep, p)
			}
			if s.Sweep == SweepActive {
				got = append(got, p.Active)
			} else {
				got = append(got, p.Idle)
				if p.Active != 2 {
					t.Errorf("%s idle sweep: %d active sessions beside the idle ones, want 2", s.Target, p.Active)
				}
			}
		}
		want := "[1 3]"
		if s.Sweep == SweepIdle {
			want = "[0 4 10]"
		}
		if g := fmtInts(got); g != want {
			t.Errorf("%s %s: steps %s, want %s", s.Target, s.Sweep, g, want)
		}
	}
	if fresh["a"] != 1 || fresh["b"] != 1 {
		t.Errorf("fresh processes for the idle sweep: %v, want one per target", fresh)
	}
	if c.Machine == "" || c.LoadAtEnd == "" {
		t.Errorf("the curve does not say where it ran and under what load: %q, %q", c.Machine, c.LoadAtEnd)
	}
}

func TestRunCurveRefusesIdleStepsOutOfOrder(t *testing.T) {
	_, err := RunCurve(context.Background(), []Target{{Name: "a"}}, CurveOptions{Idle: []int{10, 0}, IdleActive: 1})
	if err == nil {
		t.Fatal("idle steps 10, 0 were accepted")
	}
}

// The SVG is well-formed, draws one line per target in every panel whose
// series has two points or more, and keeps every point inside the picture.
func TestTheCurveSVGDrawsEveryTargetInEveryPanel(t *testing.T) {
	pts := func(sweep string, scale float64) []CurvePoint {
		var out []CurvePoint
		for i, n := range []int{1, 16, 64} {
			p := CurvePoint{Active: n, Calls: 10, P50Ms: scale * float64(i+1), P99Ms: 3 * scale * float64(i+1), ReqPerSec: 100 * scale, RSSBytes: int64(scale * (20 << 20))}
			if sweep == SweepIdle {
				p.Active, p.Idle = 16, []int{0, 1000, 10000}[i]
			}
			out = append(out, p)
		}
		return out
	}
	c := &Curve{Machine: "2× cpu, load 1 2 3", LoadAtEnd: "1 2 3", Duration: time.Second, IdleActive: 16, Series: []CurveSeries{
		{Target: Floor, Sweep: SweepActive, Points: pts(SweepActive, 1)},
		{Target: "mcplocal", Sweep: SweepActive, Points: pts(SweepActive, 1.3)},
		{Target: Floor, Sweep: SweepIdle, Points: pts(SweepIdle, 1)},
		{Target: "mcplocal<&>", Sweep: SweepIdle, Points: pts(SweepIdle, 2)},
	}}
	var b strings.Builder
	if err := WriteCurveSVG(&b, c); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName xml.Name `xml:"svg"`
		Width   float64  `xml:"width,attr"`
		Height  float64  `xml:"height,attr"`
		Lines   []struct {
			Points string `xml:"points,attr"`
		} `xml:"polyline"`
		Circles []struct {
			CX float64 `xml:"cx,attr"`
			CY float64 `xml:"cy,attr"`
		} `xml:"circle"`
	}
	if err := xml.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatalf("not well-formed SVG: %v\n%s", err, b.String())
	}
	if want := len(c.Series) * len(curveMetrics); len(doc.Lines) != want {
		t.Errorf("%d lines, want %d (every series in each of %d panels)", len(doc.Lines), want, len(curveMetrics))
	}
	if want := len(c.Series) * len(curveMetrics) * 3; len(doc.Circles) != want {
		t.Errorf("%d points, want %d", len(doc.Circles), want)
	}
	for _, p := range doc.Circles {
		if p.CX < 0 || p.CX > doc.Width || p.CY < headH || p.CY > doc.Height {
			t.Errorf("a point at (%v, %v) lies outside the panels of a %v × %v picture", p.CX, p.CY, doc.Width, doc.Height)
		}
	}
	for _, want := range []string{"load at the end 1 2 3", "mcplocal&lt;&amp;&gt;", "p99 (ms) by idle sessions", ">10000<"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the SVG lacks %q", want)
		}
	}
}

func TestNiceCeilGivesRoundAxisTops(t *testing.T) {
	for v, want := range map[float64]float64{0: 1, 0.7: 1, 1.2: 2, 2.2: 2.5, 3: 5, 61: 100, 2611: 5000} {
		if got := niceCeil(v); got != want {
			t.Errorf("niceCeil(%v) = %v, want %v", v, got, want)
		}
	}
}

func fmtInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return "[" + strings.Join(s, " ") + "]"
}

func TestRaisedKnobsRaiseOnlyTheBoundsTheCurveWouldHitAndLeaveTheUsersAlone(t *testing.T) {
	none := func(string) string { return "" }
	if got := RaisedKnobs(500, none); len(got) != 0 {
		t.Errorf("500 sessions: %v, want no bound raised (every default holds 500)", got)
	}
	got := strings.Join(RaisedKnobs(10_300, none), " ")
	if got != "MCPCTL_SESSIONS_MAX=10300 MCPCTL_SESSIONS_PER_USER_MAX=10300" {
		t.Errorf("10,300 sessions: %q", got)
	}
	set := func(k string) string {
		if k == "MCPCTL_SESSIONS_PER_USER_MAX" {
			return "50"
		}
		return ""
	}
	if got := strings.Join(RaisedKnobs(30_000, set), " "); got != "MCPCTL_SESSIONS_MAX=30000 MCPCTL_UPSTREAM_SESSIONS_MAX=30000 MCPCTL_CONNS_MAX=30000" {
		t.Errorf("30,000 sessions with the per-user bound set by the user: %q", got)
	}
}

func TestALogAxisPutsEachPowerOfTenAtAnEqualStep(t *testing.T) {
	a := newAxis([]float64{0.57, 977}, true)
	if a.lo != 0.1 || a.hi != 1000 || len(a.ticks) != 5 {
		t.Fatalf("axis %+v, want 0.1 to 1000 with a tick at each power of ten", a)
	}
	for i, want := range []float64{0, 0.25, 0.5, 0.75, 1} {
		if got := a.frac(a.ticks[i]); !near(got, want) {
			t.Errorf("tick %v at %v, want %v", a.ticks[i], got, want)
		}
	}
	if a.frac(0) != 0 || a.frac(1e6) != 1 {
		t.Error("values outside the axis are not clamped to it")
	}
	if l := newAxis([]float64{3}, false); l.hi != 5 || !near(l.frac(2.5), 0.5) {
		t.Errorf("linear axis %+v", l)
	}
}
