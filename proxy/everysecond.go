package proxy

import (
	"sync"
	"time"
)

// everySecond allows one event a second: a log line about a state a
// request can ask about as often as it likes stays one line a second.
type everySecond struct {
	mu   sync.Mutex
	last time.Time
}

func (e *everySecond) allow() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := time.Now()
	if now.Sub(e.last) < time.Second {
		return false
	}
	e.last = now
	return true
}
