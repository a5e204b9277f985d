package audit

import (
	"context"
	"testing"
	"time"
)

// A zero or negative option keeps the recorder's default.
func TestZeroRecorderOptionsKeepTheDefaults(t *testing.T) {
	for _, n := range []int{0, -1} {
		r := NewRecorder(NewMemory(), WithQueueSize(n), WithBatchSize(n), WithBatchWait(time.Duration(n)),
			WithWriteTimeout(time.Duration(n)), WithLogInterval(time.Duration(n)), WithLogger(nil))
		if r.queueSize != DefaultQueueSize || cap(r.queue) != DefaultQueueSize || r.batchSize != DefaultBatchSize || r.batchWait != 0 ||
			r.writeTimeout != DefaultWriteTimeout || r.logInterval != DefaultLogInterval || r.log == nil {
			t.Errorf("options %d: queue %d (cap %d), batch %d, wait %v, write timeout %v, log interval %v; want the defaults",
				n, r.queueSize, cap(r.queue), r.batchSize, r.batchWait, r.writeTimeout, r.logInterval)
		}
		_ = r.Close(context.Background())
	}
	r := NewRecorder(NewMemory(), WithQueueSize(3), WithBatchSize(2), WithBatchWait(time.Millisecond))
	if r.queueSize != 3 || cap(r.queue) != 3 || r.batchSize != 2 || r.batchWait != time.Millisecond {
		t.Errorf("given options: queue %d, batch %d, wait %v", r.queueSize, r.batchSize, r.batchWait)
	}
	_ = r.Close(context.Background())
}
