package pause

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
)

// TestPausedListsThePausedProjectsByName: Paused lists every paused project,
// sorted by name, and none once resumed; a nil queue has none.
func TestPausedListsThePausedProjectsByName(t *testing.T) {
	q := New(time.Minute, 10)
	defer q.Close()
	for _, p := range []string{"charlie", "alpha", "bravo"} {
		if !q.Pause(p) {
			t.Fatalf("Pause(%s) = false", p)
		}
	}
	q.Resume("bravo")
	var names []string
	for _, s := range q.Paused() {
		if !s.Paused || s.Since.IsZero() || s.Waiting != 0 {
			t.Errorf("status %+v", s)
		}
		names = append(names, s.Project)
	}
	if len(names) != 2 || names[0] != "alpha" || names[1] != "charlie" {
		t.Fatalf("Paused() = %v, want [alpha charlie]", names)
	}
	var none *Queue
	if none.Paused() != nil {
		t.Fatal("a nil queue lists paused projects")
	}
}

// waitAsync runs Wait in the background.
func waitAsync(q *Queue, ctx context.Context, project string) chan error {
	out := make(chan error, 1)
	go func() { _, err := q.Wait(ctx, project); out <- err }()
	return out
}

// waiting polls Status until n requests wait on project (bounded).
func waiting(t *testing.T, q *Queue, project string, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for q.Status(project).Waiting != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d waiting on %s, want %d", q.Status(project).Waiting, project, n)
		}
		runtime.Gosched()
	}
}

// TestWaitWholeShape: an unpaused project passes at once; a paused one holds
// its requests until Resume, counts them, refuses one past the queue bound
// with its whole text, and answers the bound, the caller's cancel and Close
// each with their error.
func TestWaitWholeShape(t *testing.T) {
	q := New(time.Minute, 2)
	defer q.Close()
	if d, err := q.Wait(context.Background(), "free"); d != 0 || err != nil {
		t.Fatalf("unpaused: %v %v", d, err)
	}
	q.Pause("p")
	if q.Pause("p") {
		t.Fatal("pausing twice")
	}
	a, b := waitAsync(q, context.Background(), "p"), waitAsync(q, context.Background(), "p")
	waiting(t, q, "p", 2)
	_, err := q.Wait(context.Background(), "p")
	if want := "project p is paused and 2 requests already wait on it (MCPCTL_PAUSE_QUEUE_MAX), so this request was not queued; retry once an operator resumes it (mcpctl resume p)"; err == nil || err.Error() != want {
		t.Fatalf("third: %v", err)
	}
	if !q.Resume("p") || q.Resume("p") {
		t.Fatal("Resume")
	}
	if ea, eb := <-a, <-b; ea != nil || eb != nil {
		t.Fatalf("after resume: %v %v", ea, eb)
	}
	if s := q.Status("p"); s != (Status{Project: "p"}) {
		t.Fatalf("status after resume %+v", s)
	}

	short := New(50*time.Millisecond, 5)
	short.Pause("p")
	_, err = short.Wait(context.Background(), "p")
	if want := "project p paused for longer than 50ms (MCPCTL_PAUSE_MAX_WAIT_MS), so this request was not run; retry once an operator resumes it (mcpctl resume p)"; err == nil || err.Error() != want {
		t.Fatalf("bound: %v", err)
	}
	if short.Status("p").Waiting != 0 {
		t.Fatal("a request that left still counts as waiting")
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	q.Pause("p2")
	c := waitAsync(q, ctx, "p2")
	waiting(t, q, "p2", 1)
	cancel(errors.New("client went away"))
	if err := <-c; !errors.Is(err, ErrCancelled) || err.Error() != "cancelled while the project was paused: client went away" {
		t.Fatalf("cancel: %v", err)
	}
	d := waitAsync(q, context.Background(), "p2")
	waiting(t, q, "p2", 1)
	q.Close()
	q.Close()
	if err := <-d; err != ErrClosed {
		t.Fatalf("close: %v", err)
	}
	var none *Queue
	if _, err := none.Wait(context.Background(), "p"); err != nil || none.Status("p") != (Status{Project: "p"}) {
		t.Fatal("a nil queue holds requests")
	}
}
