package asynclog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// writeBound is how long a Write may take while stderr is stalled: it must
// not wait for stderr at all, so this only keeps a broken Writer from
// hanging the test. Generous for a loaded, shared machine.
const writeBound = 2 * time.Second

// gate is an underlying writer that blocks every write until opened, and
// records each write it was given.
type gate struct {
	open   chan struct{}
	mu     sync.Mutex
	writes [][]byte
	got    chan struct{} // one value per write that started
}

func newGate() *gate { return &gate{open: make(chan struct{}), got: make(chan struct{}, 1<<16)} }

func (g *gate) Write(p []byte) (int, error) {
	g.got <- struct{}{}
	<-g.open
	g.mu.Lock()
	defer g.mu.Unlock()
	g.writes = append(g.writes, bytes.Clone(p))
	return len(p), nil
}

func (g *gate) all() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return string(bytes.Join(g.writes, nil))
}

func (g *gate) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.writes)
}

// writeWithin calls w.Write(line) and fails the test if it does not return
// within writeBound.
func writeWithin(t *testing.T, w *Writer, line string) {
	t.Helper()
	done := make(chan struct{})
	go func() { _, _ = w.Write([]byte(line)); close(done) }()
	select {
	case <-done:
	case <-time.After(writeBound):
		t.Fatalf("Write(%q) still waiting after %v: it waits for stderr", line, writeBound)
	}
}

func closeWithin(t *testing.T, w *Writer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), writeBound)
	defer cancel()
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestWriteDoesNotWaitForAStalledStderr(t *testing.T) {
	g := newGate()
	w := New(g, 1<<20)
	for i := range 50 {
		writeWithin(t, w, fmt.Sprintf("line %d\n", i))
	}
	close(g.open)
	closeWithin(t, w)
	var want strings.Builder
	for i := range 50 {
		fmt.Fprintf(&want, "line %d\n", i)
	}
	if got := g.all(); got != want.String() {
		t.Fatalf("stderr got\n%s\nwant every line, in order\n%s", got, want.String())
	}
}

func TestLinesWaitingAreWrittenTogether(t *testing.T) {
	g := newGate()
	w := New(g, 1<<20)
	writeWithin(t, w, "first\n")
	<-g.got // the goroutine is inside the first write, stalled
	for i := range 100 {
		writeWithin(t, w, fmt.Sprintf("line %d\n", i))
	}
	close(g.open)
	closeWithin(t, w)
	if n := g.count(); n != 2 {
		t.Fatalf("%d writes to stderr for 101 lines; want 2: the first, then the 100 that gathered while it was stalled", n)
	}
}

func TestAFullBufferDropsCountsAndLogsTheCount(t *testing.T) {
	g := newGate()
	const line = "0123456789abcdef\n" // 17 bytes
	w := New(g, 5*len(line))
	writeWithin(t, w, line)
	<-g.got // the first line is being written (stalled): the buffer is empty again
	for range 8 {
		writeWithin(t, w, line) // 5 fit, 3 do not
	}
	if got := w.Dropped(); got != 3 {
		t.Fatalf("Dropped() = %d, want 3", got)
	}
	close(g.open)
	closeWithin(t, w)
	out := g.all()
	if kept := strings.Count(out, line); kept != 6 {
		t.Fatalf("stderr holds %d copies of the line, want 6 (1 + the 5 that fit):\n%s", kept, out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.Contains(last, "level=WARN") || !strings.Contains(last, "dropped=3") || !strings.Contains(last, "MCPCTL_LOG_BUFFER_BYTES") {
		t.Fatalf("the last line should report the 3 dropped lines and the knob, got %q", last)
	}
}

func TestCloseGivesUpOnAStalledStderrAndSaysWhatWasLeft(t *testing.T) {
	g := newGate()
	defer close(g.open)
	w := New(g, 1<<20)
	writeWithin(t, w, "stuck\n")
	<-g.got
	writeWithin(t, w, "queued\n")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := w.Close(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "7 bytes") {
		t.Fatalf("Close on a stalled stderr = %v, want a deadline error naming the 7 bytes left", err)
	}
}

func TestWritesAfterCloseGoStraightThrough(t *testing.T) {
	var out bytes.Buffer
	w := New(&out, 1<<20)
	writeWithin(t, w, "before\n")
	closeWithin(t, w)
	closeWithin(t, w) // a second Close is harmless
	if _, err := w.Write([]byte("after\n")); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "before\nafter\n" {
		t.Fatalf("stderr = %q, want both lines, in order", got)
	}
}

func TestConcurrentLinesStayWhole(t *testing.T) {
	var out bytes.Buffer
	var mu sync.Mutex
	w := New(writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return out.Write(p) }), 1<<20)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				_, _ = w.Write(fmt.Appendf(nil, "g%d line %03d %s\n", g, i, strings.Repeat("x", 40)))
			}
		})
	}
	wg.Wait()
	closeWithin(t, w)
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 1600 {
		t.Fatalf("%d lines on stderr, want 1600", len(lines))
	}
	next := map[string]int{}
	for _, l := range lines {
		var g string
		var i int
		if _, err := fmt.Sscanf(l, "%s line %d", &g, &i); err != nil || !strings.HasSuffix(l, strings.Repeat("x", 40)) {
			t.Fatalf("a torn line: %q", l)
		}
		if i != next[g] {
			t.Fatalf("%s: line %d came where %d was due", g, i, next[g])
		}
		next[g]++
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
