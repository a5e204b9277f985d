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
	responded bool // the SDK wrote the JSON-RPC answer on its SSE stream
	answered  bool // the shutdown answers it: the SDK's writes are dropped
	finished  bool // the shutdown's answer was written
	id        json.RawMessage
	method    string
	code      string
	session   string
	user      string
	project   string
	cancel    context.CancelCauseFunc // ends the request's context, so the SDK lets go of it
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
		f.responded = true
	}
	return f.ResponseWriter.Write(b)
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
func (f *inflight) message() []byte {
	text := fmt.Sprintf("%s [trace %s]", ShuttingDown, f.code)
	msg := map[string]any{"jsonrpc": "2.0", "id": f.id}
	if f.method == "tools/call" {
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
// the SDK had begun: the client reads its answer there, then the stream ends.
func (f *inflight) writeEvent() {
	_, _ = fmt.Fprintf(f.ResponseWriter, "event: message\ndata: %s\n\n", f.message())
	if fl, ok := f.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

// track registers a request on a live session so the shutdown can answer
// it; body is its JSON-RPC message (a notification or a batch is not
// tracked: nothing or too much to answer). It sets the request's trace code,
// so its audit rows and the shutdown answer quote the same one.
func (h *Handler) track(w http.ResponseWriter, r *http.Request, rd rpcread.Reading) (*inflight, *http.Request, func()) {
	m, ok := rd.Single()
	if !ok || !m.Call() || m.Method == "" {
		return nil, r, func() {}
	}
	code := r.Header.Get(trace.Header)
	if !trace.Valid(code) {
		code = trace.New()
		r.Header.Set(trace.Header, code)
	}
	ctx, cancel := context.WithCancelCause(r.Context())
	r = r.WithContext(ctx)
	f := &inflight{ResponseWriter: w, cancel: cancel, id: m.ID, method: m.Method, code: code, session: r.Header.Get(sessionHeader), user: r.Header.Get(project.HeaderUser), project: r.PathValue("project")}
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
	h.o.Logger.Warn("answered at shutdown: the request did not complete within the grace", "trace", f.code, "method", f.method)
	if f.method == "tools/call" {
		h.o.Audit.Record(shutdownRow(f))
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
func shutdownRow(f *inflight) audit.Row {
	detail := f.method + ": " + ShuttingDown
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
