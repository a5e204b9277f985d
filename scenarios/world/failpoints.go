package world

import (
	"slices"
	"strings"
	"sync"
)

// Failpoints are failpoints armed in the proxy under test: a tool call's
// handler, by the proxy's name for the tool, made to hang until the call's
// context ends or to panic. A proxy in another process is given them as
// mcplocal reads them from MCPLOCAL_FAILPOINTS (String); a nil *Failpoints
// arms none.
type Failpoints struct {
	mu       sync.Mutex
	armed    map[string]string // "tools/call=TOOL" → "hang" or "panic"
	watchers []func(tool, action string)
}

// NewFailpoints is an empty set of failpoints.
func NewFailpoints() *Failpoints { return &Failpoints{armed: map[string]string{}} }

// HangToolCall makes the handler of tool's calls hang until the call's
// context ends.
func (f *Failpoints) HangToolCall(tool string) { f.arm(tool, "hang") }

// PanicToolCall makes the handler of tool's calls panic.
func (f *Failpoints) PanicToolCall(tool string) { f.arm(tool, "panic") }

func (f *Failpoints) arm(tool, action string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armed["tools/call="+tool] = action
	for _, w := range f.watchers {
		w(tool, action)
	}
}

// Watch calls fn for every failpoint armed, those armed already and those
// armed later: how a proxy running in this process follows failpoints a
// fault arms while it runs (a process is given them once, at its start).
func (f *Failpoints) Watch(fn func(tool, action string)) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for at, action := range f.armed {
		fn(strings.TrimPrefix(at, "tools/call="), action)
	}
	f.watchers = append(f.watchers, fn)
}

// String is the failpoints as MCPLOCAL_FAILPOINTS says them
// ("tools/call=TOOL:ACTION,...", sorted); "" for none.
func (f *Failpoints) String() string {
	if f == nil {
		return ""
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	items := make([]string, 0, len(f.armed))
	for at, action := range f.armed {
		items = append(items, at+":"+action)
	}
	slices.Sort(items)
	return strings.Join(items, ",")
}
