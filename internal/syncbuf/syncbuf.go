// Package syncbuf is a bytes buffer safe for concurrent use: a process's or a
// logger's output that tests read while it is still being written.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer collects writes; String may be called while others write.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write implements io.Writer.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
