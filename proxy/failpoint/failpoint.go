// Package failpoint lets the chaos harness make the proxy itself misbehave at
// named points, the way etcd's robustness tests use gofail: a panic or a hang
// inside a handler, to prove the layer above still answers.
//
// A Set is per proxy (never global), empty in production; mcplocal fills it
// from MCPLOCAL_FAILPOINTS for binary targets, e.g.
// "tools/call=docmost_update_page:panic".
package failpoint

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Action is what an armed failpoint does.
type Action string

// Actions.
const (
	Panic Action = "panic" // panic in the handler
	Hang  Action = "hang"  // block until the request's context ends
)

// Point names a place in the proxy where a failpoint can fire.
type Point string

// Points.
const (
	// ToolCall fires in the tools/call handler, keyed by the prefixed tool name.
	ToolCall Point = "tools/call"
)

// Set holds armed failpoints. The zero value is not usable; a nil *Set is
// empty and costs one nil check.
type Set struct {
	mu    sync.RWMutex
	armed map[string]Action
}

// New returns an empty Set.
func New() *Set { return &Set{armed: map[string]Action{}} }

// Parse reads "point=key:action,..." (the MCPLOCAL_FAILPOINTS format).
func Parse(s string) (*Set, error) {
	set := New()
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		pk, action, ok := strings.Cut(item, ":")
		point, key, ok2 := strings.Cut(pk, "=")
		if !ok || !ok2 || (Action(action) != Panic && Action(action) != Hang) {
			return nil, fmt.Errorf("failpoint %q: want point=key:panic|hang", item)
		}
		set.Arm(Point(point), key, Action(action))
	}
	return set, nil
}

// Arm makes point fire action for key.
func (s *Set) Arm(p Point, key string, a Action) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.armed[string(p)+"="+key] = a
}

// Eval fires the failpoint at p for key, if armed.
func (s *Set) Eval(ctx context.Context, p Point, key string) {
	if s == nil {
		return
	}
	s.mu.RLock()
	a, ok := s.armed[string(p)+"="+key]
	s.mu.RUnlock()
	if !ok {
		return
	}
	switch a {
	case Panic:
		panic(fmt.Sprintf("failpoint %s=%s", p, key))
	case Hang:
		<-ctx.Done()
	}
}

// String renders the set in the MCPLOCAL_FAILPOINTS format Parse reads, so a
// harness can hand armed failpoints to a proxy in another process.
func (s *Set) String() string {
	if s == nil {
		return ""
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	items := make([]string, 0, len(s.armed))
	for k, a := range s.armed {
		items = append(items, k+":"+string(a))
	}
	sort.Strings(items)
	return strings.Join(items, ",")
}

// Armed reports whether the failpoint at p for key is armed.
func (s *Set) Armed(p Point, key string) bool {
	if s == nil {
		return false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.armed[string(p)+"="+key]
	return ok
}
