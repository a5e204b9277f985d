package harness

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A live target is a proxy's MCP endpoint, http or https with a host; the
// harness only reads from it.
func TestParseLiveTakesAnHTTPEndpointWithAHost(t *testing.T) {
	for _, bad := range []string{"ftp://h/mcp", "h/mcp", "http:///mcp", "https://", "http://h:bad port/mcp", "%zz"} {
		if _, err := ParseLive(bad); err == nil {
			t.Errorf("ParseLive(%q) accepted", bad)
		}
	}
	for _, good := range []string{"http://127.0.0.1:9/mcp", "https://proxy.example/projects/p/mcp"} {
		if _, err := ParseLive(good); err != nil {
			t.Errorf("ParseLive(%q): %v", good, err)
		}
	}
	l, err := ParseLive("https://proxy.example:8443/projects/p/mcp")
	if err != nil {
		t.Fatal(err)
	}
	if got := l.URL(); got != "https://proxy.example:8443" {
		t.Errorf("URL %q, want the scheme and host", got)
	}
	if got := l.Endpoint("anything"); got != l.MCP {
		t.Errorf("endpoint %q, want the given one whatever the project", got)
	}
	if got := l.Name(); got != "url:"+l.MCP {
		t.Errorf("name %q", got)
	}
	if err := l.Restart(context.Background()); err == nil || !strings.Contains(err.Error(), "cannot be restarted") {
		t.Errorf("restart: %v", err)
	}
	if l.Start(context.Background(), Spec{}) != nil || l.Stop(context.Background()) != nil {
		t.Error("starting or stopping a live target is not a no-op")
	}
	if l.Has(CapAuditAPI) || !strings.Contains(l.ReadOnly(), "read-only") {
		t.Errorf("a live target claims a capability or is not read-only: %q", l.ReadOnly())
	}
	if got := (&Live{MCP: "%zz/"}).URL(); got != "%zz" {
		t.Errorf("an endpoint that does not parse: URL %q", got)
	}
}

// A world on a live target lacks the fakes and the links: a fault that needs
// them is not applicable, said of the target.
func TestUnmetOnALiveTargetNamesTheTarget(t *testing.T) {
	live, _ := ParseLive("http://127.0.0.1:1/mcp")
	why := Unmet(live, EnvOptions{}, ToolSlow{}.Requires()...)
	if want := "target url:http://127.0.0.1:1/mcp lacks upstream fake"; why != want {
		t.Errorf("%q, want %q", why, want)
	}
	why = Unmet(live, EnvOptions{}, HandlerPanic{}.Requires()...)
	if !strings.Contains(why, "lacks failpoints") || strings.Contains(why, ";") {
		t.Errorf("a capability only: %q", why)
	}
	why = Unmet(live, EnvOptions{}, CapFailpoints, NeedToxiproxy)
	if want := "target url:http://127.0.0.1:1/mcp lacks failpoints; target url:http://127.0.0.1:1/mcp lacks toxiproxy"; why != want {
		t.Errorf("%q, want %q", why, want)
	}
	if why := Unmet(&InProcess{}, EnvOptions{}, NeedToxiproxy, NeedUpstreamFake); why != "" {
		t.Errorf("an in-process world has its links and fakes: %q", why)
	}
	if why := Unmet(&InProcess{}, EnvOptions{}, NeedUnifi, NeedEverything); why != "the scenario's world lacks unifi fake, everything fake" {
		t.Errorf("%q", why)
	}
	if why := Unmet(&InProcess{}, EnvOptions{Unifi: &HealthCheck{}, Everything: true, LLM: true}, NeedUnifi, NeedEverything, NeedLLM); why != "" {
		t.Errorf("a world with every fake: %q", why)
	}
}

// A stall meter reports what SimulateStalls adds until it is restored.
func TestSimulatedStallsAreAddedUntilRestored(t *testing.T) {
	restore := SimulateStalls(time.Hour)
	m := MeterStalls()
	if got := m.Stop(); got < time.Hour {
		t.Errorf("a meter under SimulateStalls(1h) saw %v", got)
	}
	restore()
	m = MeterStalls()
	if got := m.Stop(); got >= time.Hour {
		t.Errorf("after restore a meter saw %v", got)
	}
}
