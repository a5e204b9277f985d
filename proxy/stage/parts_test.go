package stage

import (
	"fmt"
	"testing"
)

// TestCacheEvictsTheLeastRecentlyUsed: at its bound the cache drops the
// entry used longest ago (a Get or a Set counts as a use), never more.
func TestCacheEvictsTheLeastRecentlyUsed(t *testing.T) {
	c := NewCache(2)
	c.Set("a", "1")
	c.Set("b", "2")
	if v, ok := c.Get("a"); !ok || v != "1" {
		t.Fatalf("Get(a) = %q %v", v, ok)
	}
	c.Set("c", "3") // b is the least recently used
	if _, ok := c.Get("b"); ok || c.Len() != 2 {
		t.Fatalf("b kept (len %d)", c.Len())
	}
	c.Set("a", "1'") // an update is a use and no new entry
	c.Set("d", "4")  // so c goes
	got := map[string]string{}
	for _, k := range []string{"a", "c", "d"} {
		if v, ok := c.Get(k); ok {
			got[k] = v
		}
	}
	if fmt.Sprint(got) != "map[a:1' d:4]" || c.Len() != 2 {
		t.Fatalf("cache holds %v (len %d), want a:1' and d:4", got, c.Len())
	}
}

// TestIntOptionWholeShape: a missing option takes the default; positive
// whole numbers pass as int or float64; anything else is refused by name.
func TestIntOptionWholeShape(t *testing.T) {
	opts := map[string]any{"int": 3, "float": 4.0, "zero": 0, "negf": -1.0, "frac": 2.5, "zerof": 0.0, "str": "5"}
	for _, c := range []struct {
		name string
		want int
		err  string
	}{
		{"missing", 9, ""},
		{"int", 3, ""},
		{"float", 4, ""},
		{"zero", 0, "option zero: want a positive whole number, got 0"},
		{"zerof", 0, "option zerof: want a positive whole number, got 0"},
		{"negf", 0, "option negf: want a positive whole number, got -1"},
		{"frac", 0, "option frac: want a positive whole number, got 2.5"},
		{"str", 0, "option str: want a positive whole number, got 5"},
	} {
		n, err := IntOption(opts, c.name, 9)
		if n != c.want || (err == nil) != (c.err == "") || (err != nil && err.Error() != c.err) {
			t.Errorf("%s: %d %v, want %d %q", c.name, n, err, c.want, c.err)
		}
	}
}
