package health

import (
	"errors"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/config"
)

// TestAnsweringToolsListIsLiveNotHealthy: a server whose probe is only
// tools/list (no check tool) is live, never healthy: that it answers says
// nothing of what stands behind it. A check tool that answers makes it
// healthy.
func TestAnsweringToolsListIsLiveNotHealthy(t *testing.T) {
	p := recorder([2]string{"p", "listed"}, [2]string{"p", "checked"})
	p.record(Target{Project: "p", Server: "listed", Check: &config.HealthCheck{}}, time.Second, nil)
	p.record(Target{Project: "p", Server: "checked", Check: &config.HealthCheck{Tool: "list_sites"}}, time.Second, nil)
	got := map[string]Status{}
	for _, in := range p.Instances() {
		got[in.Server] = in.Status
	}
	if got["listed"] != Live || got["checked"] != Healthy {
		t.Errorf("tools/list only: %s, a check tool answering: %s; want %s and %s", got["listed"], got["checked"], Live, Healthy)
	}
}

// TestUnhealthyAtTheThresholdNotAfter: failureThreshold failures in a row
// make a server unhealthy, at the threshold's own failure; the ones before
// it leave it degraded.
func TestUnhealthyAtTheThresholdNotAfter(t *testing.T) {
	p := recorder([2]string{"p", "s"})
	tg := Target{Project: "p", Server: "s", Check: &config.HealthCheck{Tool: "t", FailureThreshold: 3}}
	for i := 1; i <= 3; i++ {
		p.record(tg, time.Second, errors.New("boom"))
		want := Degraded
		if i == 3 {
			want = Unhealthy
		}
		if in := p.Instances()[0]; in.Status != want {
			t.Fatalf("after %d failure(s) of a threshold of 3: %s, want %s", i, in.Status, want)
		}
	}
}
