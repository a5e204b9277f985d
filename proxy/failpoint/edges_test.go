package failpoint

import (
	"context"
	"testing"
)

// TestParseRefusesAnItemWithoutAKey: "point:action" (no "=key") is refused,
// whatever its action.
func TestParseRefusesAnItemWithoutAKey(t *testing.T) {
	for _, bad := range []string{"tools/call:panic", "tools/call:hang", "tools/call=a:panic,tools/call:hang"} {
		if _, err := Parse(bad); err == nil || err.Error() != `failpoint "`+lastItem(bad)+`": want point=key:panic|hang` {
			t.Errorf("Parse(%q) = %v", bad, err)
		}
	}
}

func lastItem(s string) string {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ',' {
			return s[i+1:]
		}
	}
	return s
}

// TestArmAfterEval: evaluating a point leaves the set free to be armed again
// (Eval releases what it holds), and the new arming fires.
func TestArmAfterEval(t *testing.T) {
	s := New()
	s.Eval(context.Background(), ToolCall, "k") // unarmed: no-op
	s.Arm(ToolCall, "k", Panic)
	defer func() {
		if recover() == nil {
			t.Error("the point armed after an Eval did not fire")
		}
	}()
	s.Eval(context.Background(), ToolCall, "k")
}
