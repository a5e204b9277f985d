package gctune

import (
	"runtime/debug"
	"testing"
)

// Without GOGC in the environment, mcplocal collects at DefaultPercent, not
// Go's 100: the go-sdk allocates a 32 KiB decode buffer per JSON message
// while the live heap stays small, so at 100 the collector runs every few
// dozen requests (docs/performance.md).
func TestApplySetsTheDefaultPercentWhenGOGCIsUnset(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	got, from := Apply(func(string) string { return "" })
	if got != DefaultPercent || from != "default" {
		t.Fatalf("Apply = %d from %s; want %d from default", got, from, DefaultPercent)
	}
	if now := debug.SetGCPercent(100); now != DefaultPercent {
		t.Fatalf("the runtime collects at %d%%; want %d%%", now, DefaultPercent)
	}
}

// A GOGC the user set wins: Go already applied it, Apply leaves it alone.
func TestApplyLeavesAUsersGOGCAlone(t *testing.T) {
	old := debug.SetGCPercent(150)
	defer debug.SetGCPercent(old)
	got, from := Apply(func(k string) string {
		if k == "GOGC" {
			return "150"
		}
		return ""
	})
	if got != 150 || from != "GOGC" {
		t.Fatalf("Apply = %d from %s; want 150 from GOGC", got, from)
	}
	if now := debug.SetGCPercent(100); now != 150 {
		t.Fatalf("the runtime collects at %d%%; want the user's 150%%", now)
	}
}
