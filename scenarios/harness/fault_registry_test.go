package harness

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	fakellm "github.com/mcpchaos/mcpchaos/fakes/llm"
)

// TestEveryKindBuildsItsDefault: each registry entry builds a fault of its
// own name from its defaults, and declares when it strikes.
func TestEveryKindBuildsItsDefault(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Faults() {
		if seen[k.Name] {
			t.Errorf("fault %q is registered twice", k.Name)
		}
		seen[k.Name] = true
		f, err := ParseFault(k.Name)
		if err != nil {
			t.Errorf("ParseFault(%q): %v", k.Name, err)
			continue
		}
		if f.Name() != k.Name {
			t.Errorf("ParseFault(%q) built %q", k.Name, f.Name())
		}
		switch f.Strikes() {
		case StrikeNever, StrikeBeforeStart, StrikeBeforeCall, StrikeMidway:
		default:
			t.Errorf("fault %s strikes %q, not a Strike", k.Name, f.Strikes())
		}
		if _, midway := f.(Midway); midway != (f.Strikes() == StrikeMidway) {
			t.Errorf("fault %s: Midway marker %v but strikes %s", k.Name, midway, f.Strikes())
		}
	}
}

// TestParseFaultTakesItsParameters: given parameters replace the defaults,
// the others keep theirs.
func TestParseFaultTakesItsParameters(t *testing.T) {
	cases := []struct {
		spec string
		want Fault
	}{
		{"latency:link=llm,latencyMs=250", Latency{Link: LinkLLM, Ms: 250}},
		{"latency:latencyMs=7", Latency{Link: LinkDocmost, Ms: 7}},
		{"slicer: averageSize = 10 ", Slicer{Link: LinkDocmost, AvgBytes: 10, DelayUs: 200}},
		{"tool-slow:tool=update_page,delay=150ms", ToolSlow{Tool: "update_page", Delay: 150 * time.Millisecond}},
		{"tool-hang:server=everything,tool=progress", ToolHang{Tool: "progress", Server: LinkEverything}},
		{"handler-panic:tool=docmost_search", HandlerPanic{Tool: "docmost_search"}},
		{"llm-slow:delay=2s", LLMFault{Step: fakellm.Step{Kind: fakellm.Slow, Delay: 2 * time.Second}}},
		{"proxy-kill", ProxyKill{}},
	}
	for _, c := range cases {
		got, err := ParseFault(c.spec)
		if err != nil {
			t.Errorf("ParseFault(%q): %v", c.spec, err)
			continue
		}
		if got != c.want {
			t.Errorf("ParseFault(%q) = %#v, want %#v", c.spec, got, c.want)
		}
	}
	r, err := ParseFault("llm-random:choices=ok+not_found")
	if err != nil {
		t.Fatal(err)
	}
	if ch := r.(LLMRandom).Choices; len(ch) != 2 || ch[0].Step.Kind != fakellm.OK || ch[1].Step.Kind != fakellm.NotFound {
		t.Errorf("llm-random choices = %v", ch)
	}
}

// TestParseFaultErrorsSayWhatIsWrong: an unknown name or parameter, or a
// value that does not parse, is an error naming it and what is wanted.
func TestParseFaultErrorsSayWhatIsWrong(t *testing.T) {
	cases := []struct{ spec, want string }{
		{"latensy", `unknown fault "latensy" (` + "`mcpchaos faults`" + ` lists them: none, latency,`},
		{"latency:speed=3", `fault latency: unknown parameter "speed" (want link, latencyMs)`},
		{"proxy-kill:x=1", `fault proxy-kill: unknown parameter "x" (it takes none)`},
		{"latency:latencyMs", `fault latency: parameter "latencyMs" is not k=v`},
		{"latency:latencyMs=fast", `fault latency: latencyMs="fast" is not a non-negative integer`},
		{"latency:latencyMs=-5", `fault latency: latencyMs="-5" is not a non-negative integer`},
		{"down:link=db", `fault down: link="db" is not a link (want docmost, llm, everything, controller)`},
		{"tool-slow:delay=soon", `fault tool-slow: delay="soon" is not a duration`},
		{"latency:link=llm,link=docmost", `fault latency: parameter "link" given twice`},
		{"llm-random:choices=ok+sulk", `fault llm-random: choices:`},
	}
	for _, c := range cases {
		_, err := ParseFault(c.spec)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseFault(%q) = %v, want an error containing %q", c.spec, err, c.want)
		}
	}
}

// TestUnmetNamesWhatIsMissing: a fault's world needs are checked against
// the scenario's world, its capabilities against the target.
func TestUnmetNamesWhatIsMissing(t *testing.T) {
	in := &InProcess{}
	if why := Unmet(in, EnvOptions{}, LLMFault{}.Requires()...); why != "the scenario's world lacks LLM fake" {
		t.Errorf("llm fault without an LLM: %q", why)
	}
	if why := Unmet(in, EnvOptions{LLM: true}, LLMFault{}.Requires()...); why != "" {
		t.Errorf("llm fault with an LLM: %q", why)
	}
	if why := Unmet(in, EnvOptions{}, Latency{Link: LinkEverything}.Requires()...); !strings.Contains(why, "everything fake") {
		t.Errorf("a fault on the everything link without it: %q", why)
	}
	if why := Unmet(in, EnvOptions{}, ProxyKill{}.Requires()...); !strings.Contains(why, "lacks kill") {
		t.Errorf("proxy-kill in process: %q", why)
	}
	live, _ := ParseLive("http://127.0.0.1:1/mcp")
	if why := Unmet(live, EnvOptions{}, Latency{}.Requires()...); !strings.Contains(why, "lacks toxiproxy") {
		t.Errorf("a network fault on a live target: %q", why)
	}
}

// TestSeedForMixesSeedAndName: one scenario's seed changes with the run's
// seed, and two scenarios of one run get different seeds.
func TestSeedForMixesSeedAndName(t *testing.T) {
	if SeedFor(1, "a") == SeedFor(2, "a") || SeedFor(1, "a") == SeedFor(1, "b") || SeedFor(1, "a") != SeedFor(1, "a") {
		t.Fatal("SeedFor must depend on the run's seed and the scenario's name, and on nothing else")
	}
}

// TestArmRefusesABeforeStartFault: a failpoint armed after the proxy
// started would never reach a proxy in another process.
func TestArmRefusesABeforeStartFault(t *testing.T) {
	e := &Env{}
	if err := e.Arm(context.Background(), HandlerPanic{Tool: "x"}); err == nil || !strings.Contains(err.Error(), "EnvOptions.Fault") {
		t.Fatalf("Arm(handler-panic) = %v", err)
	}
	if err := e.Arm(context.Background(), ProxyRestart{}); err != nil || e.Struck() {
		t.Fatalf("a midway fault armed: err %v, struck %v (want not yet)", err, e.Struck())
	}
}

// Usage renders a kind as --fault takes it, its defaults filled in.
func TestUsageRendersTheDefaults(t *testing.T) {
	want := map[string]string{
		"none":          "none",
		"latency":       "latency:link=docmost,latencyMs=100",
		"tool-hang":     "tool-hang:tool=search,server=",
		"llm-slow":      "llm-slow:delay=5s",
		"llm-not_found": "llm-not_found:delay=0s",
	}
	for _, k := range Faults() {
		if w, ok := want[k.Name]; ok {
			if got := k.Usage(); got != w {
				t.Errorf("Usage() = %q, want %q", got, w)
			}
			delete(want, k.Name)
		}
		// Every usage parses back to the kind's default fault.
		f, err := ParseFault(k.Usage())
		if err != nil {
			t.Errorf("ParseFault(%q): %v", k.Usage(), err)
			continue
		}
		if f.Params() != k.Default().Params() {
			t.Errorf("%s: usage builds %q, default %q", k.Name, f.Params(), k.Default().Params())
		}
	}
	if len(want) != 0 {
		t.Errorf("kinds not registered: %v", want)
	}
}

// A kind whose defaults do not build is a registry bug: Default panics.
func TestDefaultPanicsOnABrokenKind(t *testing.T) {
	k := FaultKind{Name: "broken", Params: []Param{{"n", "many", ""}}, Build: func(a *Args) Fault { return Latency{Ms: a.Int("n")} }}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "fault broken") {
			t.Errorf("recovered %v, want a panic naming the kind", r)
		}
	}()
	k.Default()
	t.Error("Default built a kind whose defaults do not parse")
}

// Zero is a value like any other; a value left empty or a second error
// keeps the first error.
func TestParseFaultTakesZeroAndReportsTheFirstError(t *testing.T) {
	for spec, want := range map[string]Fault{
		"latency:latencyMs=0":            Latency{Link: LinkDocmost, Ms: 0},
		"tool-slow:delay=0s":             ToolSlow{Tool: "search", Delay: 0},
		"down:link=everything":           LinkDown{Link: LinkEverything},
		"blackhole:link=llm":             Blackhole{Link: LinkLLM},
		"limit-data:bytes=1":             LimitData{Link: LinkDocmost, Bytes: 1},
		"tool-hang:server=":              ToolHang{Tool: "search"},
		" reset-peer:timeoutMs=":         nil,
		"tool-slow:delay=-1s":            nil,
		"tool-hang:server=other":         nil,
		"latency:=5":                     nil,
		"latency: =5":                    nil,
		"slicer:averageSize=x,delayUs=y": nil,
	} {
		got, err := ParseFault(spec)
		if want == nil {
			if err == nil {
				t.Errorf("ParseFault(%q) = %#v, want an error", spec, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("ParseFault(%q) = %#v, %v; want %#v", spec, got, err, want)
		}
	}
	_, err := ParseFault("slicer:averageSize=x,delayUs=y")
	if err == nil || !strings.Contains(err.Error(), "averageSize") || strings.Contains(err.Error(), "delayUs") {
		t.Errorf("two bad values: %v, want the first one's error alone", err)
	}
	r, err := ParseFault("llm-random:choices=ok+not_found")
	if err != nil {
		t.Fatal(err)
	}
	if ch := r.(LLMRandom).Choices; ch[0].Step.Text != LLMTitles || ch[1].Step.Text != "" || ch[0].Weight != 1 {
		t.Errorf("ok draws answer %q, not_found %q (weight %v): want the titles on ok alone", ch[0].Step.Text, ch[1].Step.Text, ch[0].Weight)
	}
}

// Each fault says what it needs of the world by the link or server it acts on.
func TestFaultsRequireWhatTheirLinkOrServerNeeds(t *testing.T) {
	for _, c := range []struct {
		f    Fault
		want []string
	}{
		{Latency{}, []string{NeedToxiproxy}},
		{Latency{Link: LinkDocmost}, []string{NeedToxiproxy}},
		{Bandwidth{Link: LinkLLM}, []string{NeedToxiproxy, NeedLLM}},
		{Blackhole{Link: LinkEverything}, []string{NeedToxiproxy, NeedEverything}},
		{ResetPeer{Link: LinkController}, []string{NeedToxiproxy, NeedUnifi}},
		{IngressHairpin{Link: LinkLLM}, []string{NeedToxiproxy, NeedLLM, CapAuditAPI}},
		{ToolHang{}, []string{NeedUpstreamFake}},
		{ToolHang{Server: LinkEverything}, []string{NeedUpstreamFake, NeedEverything}},
		{ProxyKill{}, []string{CapKill}},
		{HandlerHang{}, []string{CapFailpoints}},
	} {
		if got := c.f.Requires(); !slices.Equal(got, c.want) {
			t.Errorf("%s %s requires %v, want %v", c.f.Name(), c.f.Params(), got, c.want)
		}
	}
	for f, want := range map[Fault]string{
		Latency{Ms: 5}: "link=docmost latency=5ms",
		Slicer{Link: LinkLLM, AvgBytes: 8, DelayUs: 3}: "link=llm size=8B delay=3µs",
		ToolHang{Tool: "t"}:                            "tool=t",
		ToolHang{Tool: "t", Server: LinkEverything}:    "server=everything tool=t",
		ToolSlow{Tool: "t", Delay: time.Second}:        "tool=t delay=1s",
		IngressHairpin{}:                               `link=docmost answers 403 text/plain "Access denied"`,
	} {
		if got := f.Params(); got != want {
			t.Errorf("%s: params %q, want %q", f.Name(), got, want)
		}
	}
}
