package audit

import (
	"context"
	"github.com/mcpchaos/mcpchaos/proxy/redact"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Recorder defaults.
const (
	DefaultQueueSize    = 4096
	DefaultWriteTimeout = time.Second
	DefaultLogInterval  = 30 * time.Second
	DefaultBatchSize    = 256
)

// BatchWriter is a Store that can store many rows in one call (one
// transaction): all of them, in order, or none. It must not keep rows
// after it returns. The Recorder uses it when its Store implements it.
type BatchWriter interface {
	WriteBatch(ctx context.Context, rows []Row) error
}

// RecorderOption configures a Recorder.
type RecorderOption func(*Recorder)

// WithQueueSize sets how many rows may wait for the writer (default
// DefaultQueueSize). Rows recorded while the queue is full are dropped.
func WithQueueSize(n int) RecorderOption {
	return func(r *Recorder) {
		if n > 0 {
			r.queueSize = n
		}
	}
}

// WithBatchSize sets how many queued rows the writer may store in one
// BatchWriter call (default DefaultBatchSize). 1 writes row by row.
func WithBatchSize(n int) RecorderOption {
	return func(r *Recorder) {
		if n > 0 {
			r.batchSize = n
		}
	}
}

// WithBatchWait sets how long the writer waits for more rows after the
// first of a batch when none is queued, so that rows trickling in share a
// commit (default 0: commit what is queued at once). Close and Flush do not
// wait it out.
func WithBatchWait(d time.Duration) RecorderOption {
	return func(r *Recorder) {
		if d > 0 {
			r.batchWait = d
		}
	}
}

// WithWriteTimeout bounds each Store.Write, and a WriteBatch to this much
// per row in the batch (default DefaultWriteTimeout).
func WithWriteTimeout(d time.Duration) RecorderOption {
	return func(r *Recorder) {
		if d > 0 {
			r.writeTimeout = d
		}
	}
}

// WithMaxString bounds every string of every row recorded (knob
// MCPCTL_MAX_STORED_STRING_BYTES); longer ones are cut with a marker.
func WithMaxString(n int) RecorderOption {
	return func(r *Recorder) { r.maxString = n }
}

// WithLogger sets where drops and write failures are reported (default
// slog.Default()).
func WithLogger(l *slog.Logger) RecorderOption {
	return func(r *Recorder) {
		if l != nil {
			r.log = l
		}
	}
}

// WithLogInterval sets the minimum time between two reports of dropped or
// failed rows (default DefaultLogInterval). The first problem after a quiet
// interval is reported at once; later ones are summed into the next report.
func WithLogInterval(d time.Duration) RecorderOption {
	return func(r *Recorder) {
		if d > 0 {
			r.logInterval = d
		}
	}
}

// RecorderStats are a Recorder's counters since it was created.
type RecorderStats struct {
	// Written rows reached the store.
	Written uint64
	// Dropped rows never reached a write: the queue was full or the
	// Recorder was closed (or its Close ran out of time before them).
	Dropped uint64
	// Failed rows were lost because Store.Write returned an error or timed out.
	Failed uint64
	// Queued rows are waiting for the writer right now.
	Queued int
}

// Recorder is the proxy-facing audit writer. Record never blocks and never
// fails the caller: rows go to a bounded queue that a single background
// goroutine drains into the Store, each write bounded by the write timeout.
// Rows that do not fit, and rows whose write fails, are dropped, counted
// (Stats) and reported through the logger at most once per log interval.
//
// The Recorder does not own the Store: close the Recorder first, then the
// Store.
type Recorder struct {
	store        Store
	queueSize    int
	batchSize    int
	batchWait    time.Duration
	waitTimer    *time.Timer // the writer's, reused for each batch's wait
	writeTimeout time.Duration
	logInterval  time.Duration
	log          *slog.Logger
	maxString    int // MCPCTL_MAX_STORED_STRING_BYTES; 0 keeps strings whole

	queue  chan item
	batch  []Row         // reused by the writer goroutine for each batch
	notify chan struct{} // a drop happened on a caller goroutine (capacity 1)

	mu     sync.RWMutex // Record holds it shared; Close exclusively, to flip closed
	closed bool
	stop   chan struct{} // closed by Close: drain, then exit
	done   chan struct{} // closed when the goroutine has exited

	// base is the parent of every write context; cancelled when Close runs
	// out of time, which also makes the writer drop what is left.
	base       context.Context
	cancelBase context.CancelFunc

	written, dropped, failed atomic.Uint64
}

// item is a queued row, or a Flush marker (flushed != nil).
type item struct {
	row     Row
	flushed chan struct{}
}

// NewRecorder starts a Recorder writing into store. Call Close to stop it.
func NewRecorder(store Store, opts ...RecorderOption) *Recorder {
	r := &Recorder{
		store:        store,
		queueSize:    DefaultQueueSize,
		batchSize:    DefaultBatchSize,
		writeTimeout: DefaultWriteTimeout,
		logInterval:  DefaultLogInterval,
		log:          slog.Default(),
		notify:       make(chan struct{}, 1),
		stop:         make(chan struct{}),
		done:         make(chan struct{}),
	}
	for _, o := range opts {
		o(r)
	}
	r.queue = make(chan item, r.queueSize)
	r.waitTimer = time.NewTimer(time.Hour)
	r.waitTimer.Stop()
	r.base, r.cancelBase = context.WithCancel(context.Background())
	go r.run()
	return r
}

// Record queues row for writing and returns at once. It never blocks on the
// store and never fails: when the queue is full, or the Recorder is closed,
// the row is dropped and counted.
func (r *Recorder) Record(row Row) {
	row.Detail, row.DegradedReason = redact.Text(row.Detail), redact.Text(row.DegradedReason)
	row = row.Bounded(r.maxString)
	r.mu.RLock()
	ok := false
	if !r.closed {
		select {
		case r.queue <- item{row: row}:
			ok = true
		default:
		}
	}
	r.mu.RUnlock()
	if !ok {
		r.dropped.Add(1)
		select {
		case r.notify <- struct{}{}:
		default:
		}
	}
}

// Flush waits until every row recorded before the call has been written (or
// has failed and been counted). It returns ctx's error if ctx ends first. After
// Close has finished it returns nil at once.
func (r *Recorder) Flush(ctx context.Context) error {
	marker := make(chan struct{})
	select {
	case r.queue <- item{flushed: marker}:
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-marker:
		return nil
	case <-r.done:
		// The final drain wrote or dropped everything queued before Close;
		// a marker sent after that drain is simply left behind.
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops accepting rows, writes what is queued, and stops the
// background goroutine. If ctx ends first, the in-flight write is cancelled,
// the rest of the queue is dropped (counted), and ctx's error is returned;
// the goroutine then exits as soon as the store honours the cancellation.
// Calling Close twice is fine. It does not close the Store.
func (r *Recorder) Close(ctx context.Context) error {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		close(r.stop)
	}
	r.mu.Unlock()
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		r.cancelBase()
		return ctx.Err()
	}
}

// Stats returns the counters.
func (r *Recorder) Stats() RecorderStats {
	return RecorderStats{
		Written: r.written.Load(),
		Dropped: r.dropped.Load(),
		Failed:  r.failed.Load(),
		Queued:  len(r.queue),
	}
}

// Done is closed once the background goroutine has exited.
func (r *Recorder) Done() <-chan struct{} { return r.done }

func (r *Recorder) run() {
	defer close(r.done)
	defer r.cancelBase()
	rep := reporter{r: r}
	defer rep.stopTimer()
	for {
		select {
		case it := <-r.queue:
			r.take(it, &rep)
		case <-r.notify:
			rep.maybeLog(false)
		case <-rep.timerC():
			rep.fired()
			rep.maybeLog(false)
		case <-r.stop:
			r.drain(&rep)
			rep.maybeLog(true)
			return
		}
	}
}

// drain empties the queue after Close. No Record can add to it any more
// (closed is set under the lock), so an empty queue is final; Flush markers
// sent later are answered by done.
func (r *Recorder) drain(rep *reporter) {
	for {
		select {
		case it := <-r.queue:
			r.take(it, rep)
		default:
			return
		}
	}
}

// take writes first and whatever else is queued right now, or arrives
// within the batch wait, up to the batch size, in one store call; a Flush
// marker ends the batch and is answered once the rows before it are written.
func (r *Recorder) take(first item, rep *reporter) {
	rows := r.batch[:0]
	it := first
	var waited <-chan time.Time // the batch wait's timer, once started
	defer r.waitTimer.Stop()
	for {
		if it.flushed != nil {
			r.write(rows, rep)
			close(it.flushed)
			r.batch = rows[:0]
			return
		}
		rows = append(rows, it.row)
		if len(rows) >= r.batchSize {
			break
		}
		var more bool
		select {
		case it, more = <-r.queue:
		default:
		}
		if !more && r.batchWait > 0 {
			if waited == nil {
				r.waitTimer.Reset(r.batchWait)
				waited = r.waitTimer.C
			}
			select {
			case it, more = <-r.queue:
			case <-waited:
			case <-r.stop: // Close: write now, then drain
			}
		}
		if !more {
			break
		}
	}
	r.write(rows, rep)
	r.batch = rows[:0]
}

// write stores rows: in one BatchWriter call when the store has one, else
// row by row; each row bounded by the write timeout.
func (r *Recorder) write(rows []Row, rep *reporter) {
	if len(rows) == 0 {
		return
	}
	if r.base.Err() != nil { // Close ran out of time: no more writes
		r.dropped.Add(uint64(len(rows)))
		return
	}
	if bw, ok := r.store.(BatchWriter); ok && len(rows) > 1 {
		// The write timeout bounds one row: a batch gets it once per row,
		// the same worst case as writing its rows one by one.
		ctx, cancel := context.WithTimeout(r.base, r.writeTimeout*time.Duration(len(rows)))
		err := bw.WriteBatch(ctx, rows)
		timedOut := ctx.Err() != nil
		cancel()
		if err == nil || timedOut || r.base.Err() != nil {
			r.count(uint64(len(rows)), err, rep)
			return
		}
		// The batch failed as a whole (all or nothing) for a reason other
		// than time: row by row, a row the store refuses fails alone.
	}
	for _, row := range rows {
		if r.base.Err() != nil {
			r.dropped.Add(1)
			continue
		}
		ctx, cancel := context.WithTimeout(r.base, r.writeTimeout)
		err := r.store.Write(ctx, row)
		cancel()
		r.count(1, err, rep)
	}
}

// count adds n rows to written, or to failed when err is set.
func (r *Recorder) count(n uint64, err error, rep *reporter) {
	if err != nil {
		r.failed.Add(n)
		rep.lastErr = err
		rep.maybeLog(false)
		return
	}
	r.written.Add(n)
}

// reporter turns the drop/fail counters into at most one log line per
// interval. It lives on the writer goroutine only.
type reporter struct {
	r                      *Recorder
	last                   time.Time // when the last line was logged
	loggedDrop, loggedFail uint64    // counter values at that line
	lastErr                error
	timer                  *time.Timer
}

func (p *reporter) timerC() <-chan time.Time {
	if p.timer == nil {
		return nil
	}
	return p.timer.C
}

func (p *reporter) fired() { p.timer = nil }

func (p *reporter) stopTimer() {
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
}

// maybeLog logs a summary of new drops and failures if the interval since
// the last line has passed (or final is set); otherwise it arms a timer for
// the end of the interval.
func (p *reporter) maybeLog(final bool) {
	dropped, failed := p.r.dropped.Load(), p.r.failed.Load()
	newDrop, newFail := dropped-p.loggedDrop, failed-p.loggedFail
	if newDrop == 0 && newFail == 0 {
		return
	}
	now := time.Now()
	if wait := p.r.logInterval - now.Sub(p.last); !final && !p.last.IsZero() && wait > 0 {
		if p.timer == nil {
			p.timer = time.NewTimer(wait)
		}
		return
	}
	p.stopTimer()
	attrs := []any{
		slog.Uint64("dropped", newDrop),
		slog.Uint64("failed", newFail),
		slog.Uint64("droppedTotal", dropped),
		slog.Uint64("failedTotal", failed),
		slog.Int("queueSize", p.r.queueSize),
	}
	if newFail > 0 && p.lastErr != nil {
		attrs = append(attrs, slog.String("lastError", p.lastErr.Error()))
	}
	p.r.log.Warn("audit rows lost", attrs...)
	p.last, p.loggedDrop, p.loggedFail = now, dropped, failed
}
