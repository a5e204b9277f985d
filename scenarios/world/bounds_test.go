package world

import (
	"encoding/json"
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

// Environ gives a proxy process every bound with a positive value, sorted,
// in its unit; a bound at 0 (or below) is left out so the proxy takes its
// default.
func TestEnvironGivesThePositiveBoundsSorted(t *testing.T) {
	b := NewBounds(map[string]int64{"Z_MAX": 4, "A_MS": 250, "OFF_MS": 0, "NEG_MS": -1})
	got := strings.Join(b.Environ(), " ")
	if want := "A_MS=250 Z_MAX=4"; got != want {
		t.Errorf("environ %q, want %q", got, want)
	}
	if env := NewBounds(map[string]int64{"OFF_MS": 0}).Environ(); len(env) != 0 {
		t.Errorf("only a bound at 0: environ %q, want none", env)
	}
}

// IsZero says whether the bounds name none at all (the proxy's defaults),
// not whether their values are 0.
func TestIsZeroIsNoBoundAtAll(t *testing.T) {
	if !NewBounds(nil).IsZero() || !(Bounds{}).IsZero() {
		t.Error("bounds that name nothing are not zero")
	}
	if NewBounds(map[string]int64{"OFF_MS": 0}).IsZero() {
		t.Error("bounds that name one bound, at 0, are zero")
	}
	if b := NewBounds(map[string]int64{"A_MS": 1}); !b.Has("A_MS") || b.Has("B_MS") {
		t.Error("Has does not say which bounds are held")
	}
}

// Bounds are written to JSON as their names and values, never as an empty
// object: options that differ only in their bounds must not read the same.
func TestBoundsMarshalAsTheirValues(t *testing.T) {
	a, err := json.Marshal(NewBounds(map[string]int64{"A_MS": 1}))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(NewBounds(map[string]int64{"A_MS": 2}))
	if string(a) != `{"A_MS":1}` || string(a) == string(b) {
		t.Errorf("bounds written as %s and %s", a, b)
	}
}
