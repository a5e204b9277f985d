package entry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/deadline"
	"github.com/mcpchaos/mcpchaos/proxy/project"
	"github.com/mcpchaos/mcpchaos/proxy/rpcread"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// ShuttingDown is what a request still running when the shutdown grace runs
// out is told.
const ShuttingDown = deadline.StoppedText

// inflight is one JSON-RPC request on a live session whose answer has not
// been written. Its writer lets exactly one of the SDK and the shutdown
// answer it: with an HTTP answer of its own if none had started, or with a
// last event on the SSE stream the SDK had begun (progress, a server request)
// but not yet ended with the answer.
type inflight struct {
	http.ResponseWriter
	mu        sync.Mutex
	started   bool // the SDK began the answer
	sse       bool // the begun answer is an SSE stream
	responded bool // the SDK wrote the JSON-RPC answer on its SSE stream (every answer, for a batch)
	answered  bool // the shutdown answers it: the SDK's writes are dropped
	finished  bool // the shutdown's answer was written
	id        json.RawMessage
	method    string
	// batch holds the requests of a JSON-RPC batch (protocols before
	// 2025-06-18), each owed its own answer; id and method are then unset.
	// onStream are those whose answer the SDK wrote on its SSE stream.
	batch    []call
	onStream map[string]bool
	code     string
	session  string
	user     string
	project  string
	cancel   context.CancelCauseFunc // ends the request's context, so the SDK lets go of it
}

// call is one request of a batch: its id as the client sent it, its method.
type call struct {
	id     json.RawMessage
	method string
}

// errShutdown is the cause of a request context the shutdown ended.
var errShutdown = errors.New(ShuttingDown)

func (f *inflight) WriteHeader(status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.answered {
		return
	}
	f.begin()
	f.ResponseWriter.WriteHeader(status)
}

// begin notes that the SDK began the answer, and whether as an SSE stream.
func (f *inflight) begin() {
	if !f.started {
		f.started = true
		f.sse = strings.HasPrefix(f.ResponseWriter.Header().Get("Content-Type"), "text/event-stream")
	}
}

func (f *inflight) Write(b []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.answered {
		return len(b), nil
	}
	f.begin()
	if f.sse && !f.responded && isAnswerEvent(b) {
		f.noteAnswer(b)
	}
	return f.ResponseWriter.Write(b)
}

// noteAnswer notes the answer event b: the request's answer, or, in a
// batch, the answer to the request its id names (all answered: responded).
func (f *inflight) noteAnswer(b []byte) {
	if f.batch == nil {
		f.responded = true
		return
	}
	var ev struct {
		ID json.RawMessage `json:"id"`
	}
	data := b[bytes.Index(b, []byte("data: "))+len("data: "):]
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		data = data[:i]
	}
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	if f.onStream == nil {
		f.onStream = map[string]bool{}
	}
	f.onStream[idKey(ev.ID)] = true
	f.responded = len(f.unanswered()) == 0
}

// idKey is an id's key for matching an answer to its request: its compact
// JSON (the answer carries the id as the client sent it, ids.go).
func idKey(id json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, id) != nil {
		return string(id)
	}
	return b.String()
}

// unanswered are the requests of a batch whose answer the SDK has not
// written on its stream.
func (f *inflight) unanswered() []call {
	var out []call
	for _, c := range f.batch {
		if !f.onStream[idKey(c.id)] {
			out = append(out, c)
		}
	}
	return out
}

// isAnswerEvent reports whether b, one SSE event as the go-sdk writes it (one
// Write per event), carries a JSON-RPC answer: an id and a result or an
// error, no method. Only the event's first bytes are looked at: the SDK's
// messages put jsonrpc, id and method before params, result and error.
func isAnswerEvent(b []byte) bool {
	i := bytes.Index(b, []byte("data: "))
	if i < 0 {
		return false
	}
	head := b[i:min(len(b), i+256)]
	return !bytes.Contains(head, []byte(`"method":`)) &&
		(bytes.Contains(head, []byte(`"result":`)) || bytes.Contains(head, []byte(`"error":`)))
}

func (f *inflight) Flush() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.answered {
		return
	}
	if fl, ok := f.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

func (f *inflight) Unwrap() http.ResponseWriter { return f.ResponseWriter }

// stop marks the request as answered by the shutdown, if the SDK has not
// written its answer (nothing written, or an SSE stream without the answer
// yet), and ends its context; the handler goroutine writes the answer
// (finish) once the SDK lets go. It reports whether it marked it.
func (f *inflight) stop() bool {
	f.mu.Lock()
	marked := !f.answered && (!f.started || (f.sse && !f.responded))
	if marked {
		f.answered = true // from now on the SDK's writes are dropped
	}
	f.mu.Unlock()
	if marked {
		f.cancel(errShutdown)
	}
	return marked
}

// finish writes the shutdown answer on the handler goroutine if stop marked
// the request; it reports whether it did.
func (f *inflight) finish() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.answered || f.finished {
		return false
	}
	f.finished = true
	if f.started {
		f.writeEvent()
	} else {
		f.write()
	}
	return true
}

// message is the shutdown answer: a tools/call gets an isError result,
// anything else JSON-RPC error -32001; both quote the request's trace code.
// A batch's is the array of its requests' answers.
func (f *inflight) message() []byte {
	if f.batch != nil {
		all := make([]json.RawMessage, len(f.batch))
		for i, c := range f.batch {
			all[i] = f.messageOf(c.id, c.method)
		}
		b, _ := json.Marshal(all)
		return b
	}
	return f.messageOf(f.id, f.method)
}

// messageOf is the shutdown answer to the request id of method.
func (f *inflight) messageOf(id json.RawMessage, method string) []byte {
	text := fmt.Sprintf("%s [trace %s]", ShuttingDown, f.code)
	msg := map[string]any{"jsonrpc": "2.0", "id": id}
	if method == "tools/call" {
		msg["result"] = map[string]any{
			"content": []map[string]string{{"type": "text", "text": text}},
			"isError": true,
			"_meta":   map[string]string{trace.MetaKey: f.code},
		}
	} else {
		msg["error"] = map[string]any{"code": deadline.CodeRequestFailed, "message": text, "data": map[string]string{trace.MetaKey: f.code}}
	}
	b, _ := json.Marshal(msg)
	return b
}

// write writes the shutdown answer as the whole HTTP answer, complete (with
// its length) before the connection goes.
func (f *inflight) write() {
	b := f.message()
	h := f.ResponseWriter.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("Connection", "close")
	f.ResponseWriter.WriteHeader(http.StatusOK)
	_, _ = f.ResponseWriter.Write(b)
	if fl, ok := f.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

// writeEvent writes the shutdown answer as the last event of the SSE stream
// the SDK had begun (for a batch, one event per request not yet answered):
// the client reads its answer there, then the stream ends.
func (f *inflight) writeEvent() {
	if f.batch == nil {
		_, _ = fmt.Fprintf(f.ResponseWriter, "event: message\ndata: %s\n\n", f.message())
	}
	for _, c := range f.unanswered() {
		_, _ = fmt.Fprintf(f.ResponseWriter, "event: message\ndata: %s\n\n", f.messageOf(c.id, c.method))
	}
	if fl, ok := f.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

// track registers a request on a live session so the shutdown can answer
// it: one JSON-RPC request, or a batch holding requests (each answered);
// a notification is owed nothing and is not tracked. It sets the request's
// trace code, so its audit rows and the shutdown answer quote the same one.
func (h *Handler) track(w http.ResponseWriter, r *http.Request, rd rpcread.Reading) (*inflight, *http.Request, func()) {
	m, ok := rd.Single()
	if !ok || !m.Call() || m.Method == "" {
		if batch := batchCalls(rd); len(batch) > 0 {
			return h.trackAs(w, r, nil, "", batch)
		}
		return nil, r, func() {}
	}
	return h.trackAs(w, r, m.ID, m.Method, nil)
}

// batchCalls are the requests of a batch, each owed an answer; none for a
// body that is no batch.
func batchCalls(rd rpcread.Reading) []call {
	if !rd.Batch || rd.Err != nil {
		return nil
	}
	var out []call
	for _, m := range rd.Messages {
		if m.Call() && m.Method != "" {
			out = append(out, call{id: m.ID, method: m.Method})
		}
	}
	return out
}

func (h *Handler) trackAs(w http.ResponseWriter, r *http.Request, id json.RawMessage, method string, batch []call) (*inflight, *http.Request, func()) {
	code := r.Header.Get(trace.Header)
	if !trace.Valid(code) {
		code = trace.New()
		r.Header.Set(trace.Header, code)
	}
	ctx, cancel := context.WithCancelCause(r.Context())
	r = r.WithContext(ctx)
	f := &inflight{ResponseWriter: w, cancel: cancel, id: id, method: method, batch: batch, code: code, session: r.Header.Get(sessionHeader), user: r.Header.Get(project.HeaderUser), project: r.PathValue("project")}
	h.inflightMu.Lock()
	h.inflight[f] = struct{}{}
	h.inflightMu.Unlock()
	return f, r, func() {
		h.inflightMu.Lock()
		delete(h.inflight, f)
		h.inflightMu.Unlock()
		cancel(nil)
	}
}

// finishInFlight writes the shutdown answer of f if the shutdown stopped it,
// and its audit row; it reports whether it did.
func (h *Handler) finishInFlight(f *inflight) bool {
	if f == nil || !f.finish() {
		return false
	}
	if f.batch != nil {
		h.o.Logger.Warn("answered at shutdown: a batch did not complete within the grace", "trace", f.code, "requests", len(f.batch))
		for _, c := range f.batch {
			if c.method == "tools/call" {
				h.o.Audit.Record(shutdownRow(f, c.method))
			}
		}
		return true
	}
	h.o.Logger.Warn("answered at shutdown: the request did not complete within the grace", "trace", f.code, "method", f.method)
	if f.method == "tools/call" {
		h.o.Audit.Record(shutdownRow(f, f.method))
	}
	return true
}

// AnswerInFlight makes every request whose answer has not started be
// answered with ShuttingDown (by its own handler goroutine, once the SDK
// lets go of it) and reports how many. The proxy calls it before its
// shutdown grace ends, so no client meets a closed connection instead.
func (h *Handler) AnswerInFlight() int {
	h.inflightMu.Lock()
	fs := make([]*inflight, 0, len(h.inflight))
	for f := range h.inflight {
		fs = append(fs, f)
	}
	h.inflightMu.Unlock()
	n := 0
	for _, f := range fs {
		if f.stop() {
			n++
		}
	}
	return n
}

// shutdownRow is the audit row of a request the shutdown answered: its
// status says so, whatever the handler writes when it is finally stopped.
func shutdownRow(f *inflight, method string) audit.Row {
	detail := method + ": " + ShuttingDown
	if f.started {
		detail += " (" + AnsweredOnStream + ")"
	}
	return audit.Row{
		Kind: audit.KindToolCallTrace, CorrelationID: f.code, SpanID: trace.NewSpanID(),
		SessionID: f.session, User: f.user, Project: f.project, Start: time.Now(), Status: StatusShutdown, Detail: detail,
	}
}

// AnsweredOnStream is what the row of a request answered at shutdown adds
// when its answer's SSE stream had begun.
const AnsweredOnStream = "its SSE stream had begun: answered as the stream's last event"

// StatusShutdown is the audit status of a request answered at shutdown.
const StatusShutdown = "shutting_down"
