package trace

import (
	"context"
	"strings"
	"testing"
)

func TestNewIsCrockfordWithoutAmbiguousLetters(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 10000; i++ {
		c := New()
		if !Valid(c) {
			t.Fatalf("New() = %q, not a valid trace code", c)
		}
		if strings.ContainsAny(c, "ILOU") {
			t.Fatalf("New() = %q contains one of I, L, O, U", c)
		}
		seen[c] = true
	}
	// 40 bits: 10,000 draws collide with probability about 5e-5.
	if len(seen) < 9999 {
		t.Fatalf("only %d distinct codes in 10000 draws", len(seen))
	}
}

func TestValidRejects(t *testing.T) {
	for _, s := range []string{"", "ABCDEFG", "ABCDEFGHJ", "ABCDEFGI", "abcdefgh", "ABCD-FGH"} {
		if Valid(s) {
			t.Errorf("Valid(%q) = true", s)
		}
	}
}

func TestContextCarriage(t *testing.T) {
	ctx := context.Background()
	if From(ctx) != "" {
		t.Fatal("empty context has a code")
	}
	ctx2, code := Ensure(ctx)
	if From(ctx2) != code || !Valid(code) {
		t.Fatalf("Ensure gave %q, From gave %q", code, From(ctx2))
	}
	ctx3, again := Ensure(ctx2)
	if again != code || From(ctx3) != code {
		t.Fatalf("Ensure on a coded context minted a new code %q (had %q)", again, code)
	}
}
