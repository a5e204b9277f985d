// Package asynclog is mcplocal's log writer: it takes log lines off the
// request path.
//
// Every request logs one line; written straight to stderr that is a write
// system call per request, made while the log handler holds its lock, on
// the goroutine that answers the request. A Writer instead copies the line
// into a bounded buffer and returns; one goroutine of its own writes what
// has gathered, many lines per write.
//
// When the buffer is full (stderr is slower than the proxy: a stalled pipe,
// a slow terminal) a Writer drops the line and counts it, and as soon as it
// can write again it logs how many lines it dropped. It does not block:
// answering a request within its budget is a promise, its log line is a
// diagnostic (the audit trail is the record of every request), so a slow
// stderr must not hold up answers. Nothing is lost silently.
package asynclog

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"
)

// Writer is an io.Writer that buffers whole writes (log lines) up to a
// bound and writes them to the underlying writer from a goroutine of its
// own. Each Write is kept whole or dropped whole. Its methods may be called
// from any goroutine.
type Writer struct {
	out io.Writer
	max int

	mu      sync.Mutex
	wake    *sync.Cond // the writer goroutine waits on it for lines
	buf     []byte     // lines waiting for the writer goroutine
	spare   []byte     // the buffer the goroutine wrote last, for reuse
	dropped int64      // lines dropped since the last notice
	total   int64      // lines dropped in the Writer's life
	closing bool
	stopped bool // the goroutine has returned: Write goes straight to out
	done    chan struct{}
}

// New starts a Writer in front of out that holds at most maxBytes of lines
// waiting to be written (it may hold twice that while one buffer is being
// written). Close it to write what is left.
func New(out io.Writer, maxBytes int) *Writer {
	w := &Writer{out: out, max: maxBytes, done: make(chan struct{})}
	w.wake = sync.NewCond(&w.mu)
	go w.run()
	return w
}

// Write queues p, one log line, and returns at once. A line that does not
// fit in what is left of the buffer is dropped and counted (see the package
// comment); Write still reports it written, as the logger has nothing
// better to do with it. After Close, Write writes p straight to the
// underlying writer.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return w.out.Write(p)
	}
	if len(w.buf)+len(p) > w.max {
		w.dropped++
		w.total++
		w.wake.Signal()
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	w.wake.Signal()
	return len(p), nil
}

// Dropped reports how many lines the Writer has dropped in its life.
func (w *Writer) Dropped() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.total
}

// Close writes every queued line and stops the goroutine, waiting at most
// until ctx ends (a stalled stderr must not keep the process from exiting);
// then it reports how much was still queued. Lines written after Close go
// straight to the underlying writer. Close may be called more than once.
func (w *Writer) Close(ctx context.Context) error {
	w.mu.Lock()
	w.closing = true
	w.wake.Signal()
	w.mu.Unlock()
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		w.mu.Lock()
		defer w.mu.Unlock()
		return fmt.Errorf("log writer: %d bytes of log lines not written to stderr in time: %w", len(w.buf), ctx.Err())
	}
}

// run is the writer goroutine: it swaps the filled buffer for the spare one
// and writes it outside the lock, so Write never waits for the underlying
// writer.
func (w *Writer) run() {
	defer close(w.done)
	for {
		w.mu.Lock()
		for len(w.buf) == 0 && w.dropped == 0 && !w.closing {
			w.wake.Wait()
		}
		if len(w.buf) == 0 && w.dropped == 0 {
			w.stopped = true // closing, and nothing is left
			w.mu.Unlock()
			return
		}
		chunk, dropped := w.buf, w.dropped
		w.buf, w.dropped = w.spare[:0], 0
		w.mu.Unlock()

		if len(chunk) > 0 {
			_, _ = w.out.Write(chunk) // a failing stderr has nobody to tell
		}
		if dropped > 0 {
			// The dropped lines came after every line of chunk: say so there.
			_, _ = w.out.Write(notice(time.Now(), dropped, w.max))
		}

		w.mu.Lock()
		w.spare = chunk[:0]
		w.mu.Unlock()
	}
}

// notice is the log line that reports dropped lines, in the format of
// log/slog's text handler that writes the others.
func notice(now time.Time, dropped int64, max int) []byte {
	return fmt.Appendf(nil, "time=%s level=WARN msg=%q dropped=%d buffer_bytes=%d\n",
		now.Format("2006-01-02T15:04:05.000Z07:00"),
		"log lines dropped: stderr was slower than the proxy and the log buffer (MCPCTL_LOG_BUFFER_BYTES) was full",
		dropped, max)
}
