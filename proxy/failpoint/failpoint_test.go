package failpoint

import (
	"context"
	"testing"
	"time"
)

func TestParseAndEval(t *testing.T) {
	s, err := Parse("tools/call=a_b:panic, tools/call=c_d:hang")
	if err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("armed panic did not panic")
			}
		}()
		s.Eval(context.Background(), ToolCall, "a_b")
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	s.Eval(ctx, ToolCall, "c_d") // returns only when ctx ends
	if ctx.Err() == nil {
		t.Error("hang returned before its context ended")
	}
	s.Eval(context.Background(), ToolCall, "other") // unarmed: no-op
	var none *Set
	none.Eval(context.Background(), ToolCall, "a_b") // nil set: no-op
	for _, bad := range []string{"x", "tools/call=a", "tools/call=a:explode"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

func TestStringRoundTrips(t *testing.T) {
	in := "tools/call=a_b:panic,tools/call=c_d:hang"
	s, err := Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	if s.String() != in {
		t.Fatalf("String() = %q, want %q", s.String(), in)
	}
}
