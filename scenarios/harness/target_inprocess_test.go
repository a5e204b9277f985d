package harness

import (
	"log/slog"
	"strings"
	"testing"
)

// TestInProcessKeepsItsLog: what the in-process proxy logs is in Logs, and
// in Logger if set.
func TestInProcessKeepsItsLog(t *testing.T) {
	ip := &InProcess{}
	var also strings.Builder
	ip.Logger = slog.New(slog.NewTextHandler(&also, nil))
	ip.logger().Error("handler panicked", "stack", "goroutine 1 [running]")
	for name, got := range map[string]string{"Logs": ip.Logs(), "Logger": also.String()} {
		if !strings.Contains(got, "handler panicked") || !strings.Contains(got, "goroutine 1 [running]") {
			t.Errorf("the proxy's log line is not in %s: %q", name, got)
		}
	}
}
