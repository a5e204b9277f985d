package entry

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/mcpchaos/mcpchaos/proxy/rpcread"
)

// The go-sdk reads a JSON-RPC id into a float64 and answers with its int64
// (123456789012345678901234567890 comes back as -9223372036854775808, 1.5 as
// 1, 1e3 as 1000) and re-encodes string ids ("\u0041b" comes back as "Ab").
// JSON-RPC ids round-trip byte for byte: a request whose id the SDK would
// not give back as sent is served under a stand-in id the SDK keeps exactly,
// and the stand-in is replaced by the client's own id in the answer.

// sdkKeeps reports whether the SDK answers id with the very bytes it got.
func sdkKeeps(id json.RawMessage) bool {
	if len(id) == 0 || string(id) == "null" {
		return true
	}
	if id[0] == '"' {
		var s string
		if json.Unmarshal(id, &s) != nil {
			return false
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		return enc.Encode(s) == nil && bytes.Equal(bytes.TrimSuffix(b.Bytes(), []byte("\n")), id)
	}
	n, err := strconv.ParseInt(string(id), 10, 64)
	return err == nil && strconv.FormatInt(n, 10) == string(id) && n > -(1<<53) && n < 1<<53 // exact as a float64
}

// exactIDs rewrites the requests of a body (one message or each of a
// batch's) whose id the SDK would not keep, each under a stand-in of its
// own, and a client's notifications/cancelled naming such a request (by
// the client's id, on session) to name its stand-in. It returns the writer
// that puts the clients' ids back in the answer, the body to serve, and a
// done to call once the SDK has answered (the stand-ins are forgotten then).
// A body that needs none of this is returned as it is.
func (h *Handler) exactIDs(w http.ResponseWriter, body []byte, rd rpcread.Reading, session string) (http.ResponseWriter, []byte, func()) {
	nothing := func() {}
	if rd.Err != nil || len(rd.Messages) == 0 {
		return w, body, nothing
	}
	type change struct {
		i     int
		id    json.RawMessage // the stand-in id, or nil
		cause json.RawMessage // a cancel's requestId stand-in, or nil
	}
	var changes []change
	var pairs []idPair
	for i, m := range rd.Messages {
		switch {
		case m.Call() && !sdkKeeps(m.ID):
			stand := standIn()
			changes = append(changes, change{i: i, id: stand})
			pairs = append(pairs, idPair{from: stand, to: m.ID})
		case m.Request && m.Method == "notifications/cancelled" && session != "":
			if stand := h.stands.lookup(session, cancelledID(m.Params)); stand != nil {
				changes = append(changes, change{i: i, cause: stand})
			}
		}
	}
	if len(changes) == 0 {
		return w, body, nothing
	}
	raws := []json.RawMessage{body}
	if rd.Batch && rpcread.Decode(body, &raws) != nil {
		return w, body, nothing
	}
	for _, c := range changes {
		var fields map[string]json.RawMessage
		if c.i >= len(raws) || rpcread.Decode(raws[c.i], &fields) != nil {
			return w, body, nothing
		}
		if c.id != nil {
			fields["id"] = c.id
		} else {
			var params map[string]json.RawMessage
			if rpcread.Decode(fields["params"], &params) != nil {
				return w, body, nothing
			}
			params["requestId"] = c.cause
			b, err := json.Marshal(params)
			if err != nil {
				return w, body, nothing
			}
			fields["params"] = b
		}
		b, err := json.Marshal(fields)
		if err != nil {
			return w, body, nothing
		}
		raws[c.i] = b
	}
	out := []byte(raws[0])
	if rd.Batch {
		b, err := json.Marshal(raws)
		if err != nil {
			return w, body, nothing
		}
		out = b
	}
	if len(pairs) == 0 {
		return w, out, nothing
	}
	forget := h.stands.note(session, pairs)
	return &idWriter{ResponseWriter: w, pairs: pairs}, out, forget
}

// cancelledID is the requestId of a notifications/cancelled's params, as
// sent (nil if none).
func cancelledID(params json.RawMessage) json.RawMessage {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if rpcread.Decode(params, &p) != nil {
		return nil
	}
	return p.RequestID
}

// serveExact serves r through sdk with exactIDs applied to body; session
// is the request's session id ("" for none).
func (h *Handler) serveExact(sdk http.Handler, w http.ResponseWriter, r *http.Request, body []byte, rd rpcread.Reading, session string) {
	xw, xbody, done := h.exactIDs(w, body, rd, session)
	defer done()
	if len(xbody) != len(body) || !bytes.Equal(xbody, body) {
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(xbody)), int64(len(xbody))
	}
	iw, ok := xw.(*idWriter)
	if !ok {
		sdk.ServeHTTP(w, r)
		return
	}
	sdk.ServeHTTP(iw, r)
	iw.release()
}

// standIns are the stand-in ids of the requests in flight served under
// one, by session and the client's id as sent, so that the client's
// cancel, which names its own id, reaches the request the SDK knows by
// the stand-in.
type standIns struct {
	mu sync.Mutex
	m  map[standInKey]json.RawMessage
}

type standInKey struct{ session, id string }

// note remembers pairs (stand-in, client id) for session until the
// returned func is called.
func (s *standIns) note(session string, pairs []idPair) func() {
	if session == "" {
		return func() {}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[standInKey]json.RawMessage{}
	}
	for _, p := range pairs {
		s.m[standInKey{session, string(bytes.TrimSpace(p.to))}] = p.from
	}
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, p := range pairs {
			k := standInKey{session, string(bytes.TrimSpace(p.to))}
			if bytes.Equal(s.m[k], p.from) { // a later request under the same id keeps its own
				delete(s.m, k)
			}
		}
	}
}

// lookup is the stand-in of the request in flight on session that its
// client knows as id, or nil.
func (s *standIns) lookup(session string, id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[standInKey{session, string(bytes.TrimSpace(id))}]
}

// standIn is an id no client sends: a string of 128 random bits.
func standIn() json.RawMessage {
	return json.RawMessage(strconv.Quote("mcplocal-id-" + rand.Text()))
}

// idPair is one stand-in id (from, quotes included) and the client's id
// it stands for (to).
type idPair struct{ from, to []byte }

// idWriter replaces every occurrence of each pair's from (a stand-in id,
// quotes included) by its to (the client's id) in what it writes. A
// stand-in cut across two writes is held until the next write or flush.
type idWriter struct {
	http.ResponseWriter
	pairs []idPair
	held  []byte
	wrote bool
}

func (i *idWriter) WriteHeader(status int) {
	if !i.wrote {
		i.wrote = true
		i.Header().Del("Content-Length") // the client's id may be longer
	}
	i.ResponseWriter.WriteHeader(status)
}

func (i *idWriter) Write(b []byte) (int, error) {
	if !i.wrote {
		i.WriteHeader(http.StatusOK)
	}
	data := append(i.held, b...)
	keep := 0
	for _, p := range i.pairs {
		data = bytes.ReplaceAll(data, p.from, p.to)
	}
	for _, p := range i.pairs {
		for k := min(len(p.from)-1, len(data)); k > keep; k-- {
			if bytes.HasSuffix(data, p.from[:k]) {
				keep = k
				break
			}
		}
	}
	i.held = append([]byte(nil), data[len(data)-keep:]...)
	if _, err := i.ResponseWriter.Write(data[:len(data)-keep]); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Flush writes what is held: an event is whole when the SDK flushes it.
func (i *idWriter) Flush() {
	i.release()
	if f, ok := i.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (i *idWriter) release() {
	if len(i.held) > 0 {
		_, _ = i.ResponseWriter.Write(i.held)
		i.held = nil
	}
}

func (i *idWriter) Unwrap() http.ResponseWriter { return i.ResponseWriter }
