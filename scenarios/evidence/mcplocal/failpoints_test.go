package mcplocal

import (
	"testing"

	"github.com/mcpchaos/mcpchaos/proxy/failpoint"
	"github.com/mcpchaos/mcpchaos/scenarios/world"
)

// The harness's failpoints are what mcplocal reads from MCPLOCAL_FAILPOINTS:
// the string a process is given parses back to the same failpoints, each
// with its action; none is "".
func TestFailpointsAreMcplocalsFormat(t *testing.T) {
	fps := world.NewFailpoints()
	fps.HangToolCall("docmost_search")
	fps.PanicToolCall("docmost_update_page")
	set, err := failpoint.Parse(fps.String())
	if err != nil {
		t.Fatalf("mcplocal cannot read %q: %v", fps.String(), err)
	}
	if !set.Armed(failpoint.ToolCall, "docmost_search") || !set.Armed(failpoint.ToolCall, "docmost_update_page") || set.String() != fps.String() {
		t.Errorf("mcplocal reads %q from %q", set.String(), fps.String())
	}
	var none *world.Failpoints
	if none.String() != "" || world.NewFailpoints().String() != "" {
		t.Error("no failpoints render as something")
	}
}

// A proxy in this process follows its spec's failpoints: those armed before
// it starts and those a fault arms while it runs.
func TestFollowArmsWhatIsArmedLater(t *testing.T) {
	fps := world.NewFailpoints()
	fps.HangToolCall("docmost_search")
	set := Follow(fps)
	fps.PanicToolCall("docmost_update_page")
	if !set.Armed(failpoint.ToolCall, "docmost_search") || !set.Armed(failpoint.ToolCall, "docmost_update_page") {
		t.Errorf("the proxy's set is %q, want both of %q", set.String(), fps.String())
	}
	if Follow(nil).String() != "" {
		t.Error("no failpoints armed one")
	}
}
