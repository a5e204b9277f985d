package upstream

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A Conn past the limit is refused at once with a LimitError naming the
// knob, and the slot a closed Conn held serves the next one.
func TestLimitRefusesPastItsBoundAndFreesOnClose(t *testing.T) {
	l := NewLimit(1)
	if !l.take() {
		t.Fatal("an empty limit refused")
	}
	c := New("s", "http://127.0.0.1:1/mcp", Options{ConnectTimeout: time.Second, CallTimeout: time.Second, Limit: l})
	defer c.Close()
	start := time.Now()
	err := c.Connect(context.Background())
	var le *LimitError
	if !errors.As(err, &le) || le.Max != 1 || time.Since(start) > 100*time.Millisecond {
		t.Fatalf("connect past the limit: %v after %v; want a LimitError at once", err, time.Since(start))
	}
	if l.InUse() != 1 {
		t.Fatalf("a refused connect holds a slot: in use %d", l.InUse())
	}
	l.give()
	if !l.take() || l.InUse() != 1 {
		t.Fatal("a freed slot was not reusable")
	}
	var nilLimit *Limit
	if !nilLimit.take() || nilLimit.Max() != 0 {
		t.Fatal("a nil limit bounds something")
	}
	nilLimit.give()
}
