package upstream

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"

	"github.com/mcpchaos/mcpchaos/proxy/relay"
)

// Telling the upstream of the calls the proxy gives up.
//
// The go-sdk client (v1.8.0, mcp/transport.go `call`) sends an upstream
// notifications/cancelled for a call whose context ended, but only after
// the call returned, from a goroutine of its own, and not at all once its
// session is closing: at Close the session's DELETE overtakes it, or nothing
// goes. The upstream's tool then runs on, and a client the shutdown told to
// retry runs it twice. So the Conn keeps each call it sends on a list: the
// JSON-RPC id is read off the POST that carried it (the call's context
// reaches the transport, and so does the go-sdk's own cancel, which keeps
// the call's values), an answered call leaves the list at once, a given-up
// one when its cancel goes out, and Close tells the upstream of the rest
// before its DELETE.

// pendingCall is one call the Conn sent (or is sending) upstream.
type pendingCall struct {
	mu      sync.Mutex
	id      json.RawMessage // the JSON-RPC id of its last POSTed request; nil before it
	session string          // the upstream session it went on
	// noted: its sender notes what it sends (Sent, Told: the raw relay,
	// which knows its ids), so the transport reads none of its bodies.
	noted bool
	list  *pendingCalls
}

func (p *pendingCall) sent(id json.RawMessage, session string) {
	p.mu.Lock()
	p.id, p.session = append(json.RawMessage(nil), id...), session
	p.mu.Unlock()
}

func (p *pendingCall) sentAs() (json.RawMessage, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.id, p.session
}

type pendingKey struct{}

// pendingCalls is the Conn's list of calls not yet answered or told.
type pendingCalls struct {
	mu    sync.Mutex
	calls map[*pendingCall]struct{}
}

// track puts a new call on the list and returns the context its requests
// go out under, and end: end(false) when the call was answered (it leaves
// the list), end(true) when it was given up (it stays until its cancel
// goes out, its session is dropped, or Close tells the upstream).
// noted: the caller says what it sends (Track).
func (l *pendingCalls) track(ctx context.Context, noted bool) (context.Context, func(givenUp bool)) {
	p := &pendingCall{list: l, noted: noted}
	l.mu.Lock()
	if l.calls == nil {
		l.calls = map[*pendingCall]struct{}{}
	}
	l.calls[p] = struct{}{}
	l.mu.Unlock()
	return context.WithValue(ctx, pendingKey{}, p), func(givenUp bool) {
		if id, _ := p.sentAs(); givenUp && id != nil {
			return
		}
		l.remove(p)
	}
}

func (l *pendingCalls) remove(p *pendingCall) {
	l.mu.Lock()
	delete(l.calls, p)
	l.mu.Unlock()
}

// forgetSession drops the calls sent on an upstream session the Conn let
// go: that session is gone, and its calls with it.
func (l *pendingCalls) forgetSession(session string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for p := range l.calls {
		if _, s := p.sentAs(); s == session {
			delete(l.calls, p)
		}
	}
}

// take empties the list and returns the calls that reached the upstream.
func (l *pendingCalls) take() []*pendingCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*pendingCall
	for p := range l.calls {
		if id, _ := p.sentAs(); id != nil {
			out = append(out, p)
		}
	}
	l.calls = nil
	return out
}

// len is how many calls are on the list (for tests).
func (l *pendingCalls) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.calls)
}

// tracking is the outermost RoundTripper of a Conn: it notes the JSON-RPC
// id of each request POSTed under a tracked call's context, and takes a
// call off the list once a notifications/cancelled for it went out. Other
// requests pass untouched and unread.
type tracking struct {
	base  http.RoundTripper
	calls *pendingCalls
}

func (t tracking) RoundTrip(r *http.Request) (*http.Response, error) {
	p, _ := r.Context().Value(pendingKey{}).(*pendingCall)
	if p == nil || p.noted || r.Method != http.MethodPost || r.GetBody == nil {
		return t.base.RoundTrip(r)
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if body, err := r.GetBody(); err == nil {
		b, _ := io.ReadAll(body)
		body.Close()
		_ = json.Unmarshal(b, &m)
	}
	switch {
	case m.Method == cancelledMethod:
		resp, err := t.base.RoundTrip(r)
		t.calls.remove(p) // told, or as good as: the upstream had the chance
		return resp, err
	case m.Method != "" && len(m.ID) > 0:
		p.sent(m.ID, r.Header.Get(sessionHeader))
	}
	return t.base.RoundTrip(r)
}

func (t tracking) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

const (
	cancelledMethod = "notifications/cancelled"
	sessionHeader   = "Mcp-Session-Id"
)

// cancelReason is the reason a Conn gives the upstream for the calls it
// tells at Close.
const cancelReason = "the proxy is shutting down"

// tellPending tells the upstream, by notifications/cancelled on each call's
// own session, of every call on the list that reached it, all at once and
// bounded by ctx; it returns when each was sent or ctx ended.
func (c *Conn) tellPending(ctx context.Context, protocolVersion string) {
	calls := c.pending.take()
	var wg sync.WaitGroup
	for _, p := range calls {
		id, session := p.sentAs()
		s := relay.Session{HTTP: c.httpClient, URL: c.URL, ID: session, ProtocolVersion: protocolVersion}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if st, err := s.Post(ctx, relay.Cancelled(id, cancelReason)); err == nil {
				st.Close()
			}
		}()
	}
	wg.Wait()
}

// Track puts a call the raw relay sends on this Conn's list, as the SDK
// path's calls are, and Close tells the upstream of it if it is still
// running or was given up untold. The relay knows its ids, so the
// transport reads none of its bodies: it says what it posts (Sent) and
// when it sent the call's cancel (Told), under the returned context.
// end(false): answered; end(true): given up.
func (c *Conn) Track(ctx context.Context) (context.Context, func(givenUp bool)) {
	return c.pending.track(ctx, true)
}

// Sent notes that the call tracked by ctx (Track) posted request id on
// upstream session session.
func Sent(ctx context.Context, id json.RawMessage, session string) {
	if p, _ := ctx.Value(pendingKey{}).(*pendingCall); p != nil {
		p.sent(id, session)
	}
}

// Told takes the call tracked by ctx off its Conn's list: its cancel went
// out.
func Told(ctx context.Context) {
	if p, _ := ctx.Value(pendingKey{}).(*pendingCall); p != nil {
		p.list.remove(p)
	}
}
