// Package pause is the pause queue: an operator pauses a project (mcpctl
// pause PROJECT), and until it is resumed every request to the project waits
// here instead of running.
//
// A paused request is not exempt from the request deadline: its deadline
// clock is suspended while it waits and armed with the remaining budget when
// the project resumes (deadline.Options.Hold runs before the clock starts), so
// a request paused longer than its whole deadline still gets its full budget
// afterwards, and a handler that hangs after resume is still answered at that
// re-armed deadline. The seed: "The pause queue suspends the clock rather
// than being exempted (with a test that it re-arms, so the exemption cannot
// become a bypass)."
//
// How long a request may wait paused is bounded by its own knob,
// MCPCTL_PAUSE_MAX_WAIT_MS: past it the request is answered (-32001, or an
// isError result for tools/call) with "project P paused for longer than …",
// its trace code and a pause_wait audit row.
package pause

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// Queue holds the pause state of every project and the requests waiting on
// it. The zero Queue is not usable; a nil *Queue never pauses anything. Its
// methods are safe for concurrent use.
type Queue struct {
	maxWait  time.Duration
	maxQueue int64

	mu       sync.Mutex
	projects map[string]*state
	closing  chan struct{} // closed by Close
	once     sync.Once
}

type state struct {
	since   time.Time
	resumed chan struct{} // closed by Resume
	waiting int
}

// New returns a queue where no project is paused. maxWait bounds how long a
// request may wait on a paused project (knob MCPCTL_PAUSE_MAX_WAIT_MS),
// maxQueue how many may wait on one at once (knob MCPCTL_PAUSE_QUEUE_MAX):
// a paused project must not let its clients grow the proxy without bound.
func New(maxWait time.Duration, maxQueue int64) *Queue {
	return &Queue{maxWait: maxWait, maxQueue: maxQueue, projects: map[string]*state{}, closing: make(chan struct{})}
}

// ErrClosed answers the requests waiting when the proxy shuts down: they are
// not run against a proxy that is closing its upstreams.
var ErrClosed = errors.New("the proxy is shutting down; the project was paused and this request was not run")

// Close ends every wait, now and later, with ErrClosed. Close may be called
// more than once.
func (q *Queue) Close() {
	if q != nil {
		q.once.Do(func() { close(q.closing) })
	}
}

// MaxWait is the bound on one request's wait.
func (q *Queue) MaxWait() time.Duration { return q.maxWait }

// Pause pauses project; requests arriving from now on wait. It reports
// whether the project was running (false: it was paused already).
func (q *Queue) Pause(project string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.projects[project] != nil {
		return false
	}
	q.projects[project] = &state{since: time.Now(), resumed: make(chan struct{})}
	return true
}

// Resume resumes project: every waiting request goes on, each with the
// deadline budget it had left. It reports whether the project was paused.
func (q *Queue) Resume(project string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	st := q.projects[project]
	if st == nil {
		return false
	}
	close(st.resumed)
	delete(q.projects, project)
	return true
}

// Status is one project's pause state.
type Status struct {
	Project string    `json:"project"`
	Paused  bool      `json:"paused"`
	Since   time.Time `json:"since,omitzero"` // when it was paused
	Waiting int       `json:"waiting"`        // requests waiting now
}

// Status returns project's pause state.
func (q *Queue) Status(project string) Status {
	if q == nil {
		return Status{Project: project}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	st := q.projects[project]
	if st == nil {
		return Status{Project: project}
	}
	return Status{Project: project, Paused: true, Since: st.since, Waiting: st.waiting}
}

// Paused lists the paused projects, sorted.
func (q *Queue) Paused() []Status {
	if q == nil {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]Status, 0, len(q.projects))
	for name, st := range q.projects {
		out = append(out, Status{Project: name, Paused: true, Since: st.since, Waiting: st.waiting})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Project < out[j].Project })
	return out
}

// BoundError answers a request that waited on a paused project for the
// whole bound.
type BoundError struct {
	Project string
	Bound   time.Duration
}

func (e *BoundError) Error() string {
	return fmt.Sprintf("project %s paused for longer than %v (MCPCTL_PAUSE_MAX_WAIT_MS), so this request was not run; retry once an operator resumes it (mcpctl resume %s)",
		e.Project, e.Bound, e.Project)
}

// FullError answers at once a request that found MCPCTL_PAUSE_QUEUE_MAX
// requests already waiting on its paused project.
type FullError struct {
	Project string
	Max     int64
}

func (e *FullError) Error() string {
	return fmt.Sprintf("project %s is paused and %d requests already wait on it (MCPCTL_PAUSE_QUEUE_MAX), so this request was not queued; retry once an operator resumes it (mcpctl resume %s)",
		e.Project, e.Max, e.Project)
}

// ErrCancelled wraps the caller's cancel of a request that was waiting.
var ErrCancelled = errors.New("cancelled while the project was paused")

// Wait returns at once if project is not paused, and at once with a
// *FullError if the project's queue is full. Otherwise it waits until the
// project resumes (nil), the bound passes (*BoundError) or ctx ends (an
// error wrapping ErrCancelled and the cause), and reports how long it waited.
func (q *Queue) Wait(ctx context.Context, project string) (time.Duration, error) {
	if q == nil {
		return 0, nil
	}
	q.mu.Lock()
	st := q.projects[project]
	if st == nil {
		q.mu.Unlock()
		return 0, nil
	}
	if int64(st.waiting) >= q.maxQueue {
		q.mu.Unlock()
		return 0, &FullError{Project: project, Max: q.maxQueue}
	}
	st.waiting++
	q.mu.Unlock()
	defer func() {
		q.mu.Lock()
		st.waiting--
		q.mu.Unlock()
	}()

	start := time.Now()
	bound := time.NewTimer(q.maxWait)
	defer bound.Stop()
	select {
	case <-st.resumed:
		return time.Since(start), nil
	case <-bound.C:
		return time.Since(start), &BoundError{Project: project, Bound: q.maxWait}
	case <-ctx.Done():
		return time.Since(start), fmt.Errorf("%w: %w", ErrCancelled, context.Cause(ctx))
	case <-q.closing:
		return time.Since(start), ErrClosed
	}
}
