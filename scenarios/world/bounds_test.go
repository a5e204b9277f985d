package world

import (
	"strings"
	"testing"
	"time"
)

// A Bounds is a value: With changes a copy, never the bounds it was made
// from, nor the map it was built on.
func TestBoundsAreValues(t *testing.T) {
	raw := map[string]int64{"A_MS": 100, "B_MAX": 3}
	b := NewBounds(raw)
	raw["A_MS"] = 1
	c := b.With("A_MS", 250)
	if b.D("A_MS") != 100*time.Millisecond || c.D("A_MS") != 250*time.Millisecond {
		t.Errorf("b %v c %v: want 100ms and 250ms", b.D("A_MS"), c.D("A_MS"))
	}
	got := c.Raw()
	got["B_MAX"] = 99
	if c.N("B_MAX") != 3 {
		t.Error("Raw gave the bounds' own map")
	}
	if n := strings.Join(b.Names(), ","); n != "A_MS,B_MAX" {
		t.Errorf("names %q, want sorted A_MS,B_MAX", n)
	}
	if b.WithD("A_MS", 1500*time.Microsecond).N("A_MS") != 1 {
		t.Error("a duration is held in whole milliseconds")
	}
}

// A name the bounds do not hold panics, naming it: a verdict never reads
// zero for a misspelt bound.
func TestAnUnknownBoundPanics(t *testing.T) {
	b := NewBounds(map[string]int64{"A_MS": 1})
	for what, f := range map[string]func(){
		"read": func() { b.D("MCPCTL_NO_SUCH_MS") },
		"set":  func() { b.With("MCPCTL_NO_SUCH_MS", 1) },
	} {
		func() {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(r.(string), "MCPCTL_NO_SUCH_MS") {
					t.Errorf("%s of an unknown bound: recovered %v, want a panic naming it", what, r)
				}
			}()
			f()
		}()
	}
}
