package entry

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/rpcread"
	"github.com/mcpchaos/mcpchaos/proxy/session"
)

func newInflight(method string) (*inflight, *httptest.ResponseRecorder, context.Context) {
	rec := httptest.NewRecorder()
	ctx, cancel := context.WithCancelCause(context.Background())
	return &inflight{ResponseWriter: rec, cancel: cancel, id: []byte("5"), method: method, code: "TRACE001",
		session: "S", user: "alice", project: "p"}, rec, ctx
}

// A request the shutdown stops before the SDK began its answer gets the
// whole shutdown answer, complete with its length; the SDK's later writes
// are dropped.
func TestShutdownAnswerBeforeTheSDKBegan(t *testing.T) {
	for method, want := range map[string]string{
		"tools/call": `{"id":5,"jsonrpc":"2.0","result":{"_meta":{"traceCode":"TRACE001"},"content":[{"text":"` + ShuttingDown + ` [trace TRACE001]","type":"text"}],"isError":true}}`,
		"ping":       `{"error":{"code":-32001,"data":{"traceCode":"TRACE001"},"message":"` + ShuttingDown + ` [trace TRACE001]"},"id":5,"jsonrpc":"2.0"}`,
	} {
		f, rec, ctx := newInflight(method)
		if !f.stop() {
			t.Fatalf("%s: stop did not mark a request nothing answered", method)
		}
		if !errors.Is(context.Cause(ctx), errShutdown) {
			t.Errorf("%s: the request's context ended with %v", method, context.Cause(ctx))
		}
		f.WriteHeader(http.StatusTeapot)
		if n, err := f.Write([]byte("late")); n != 4 || err != nil {
			t.Errorf("a dropped write returned %d, %v", n, err)
		}
		f.Flush()
		if rec.Body.Len() != 0 || rec.Flushed {
			t.Fatalf("%s: the SDK's writes after stop reached the client: %q", method, rec.Body)
		}
		if !f.finish() || f.finish() {
			t.Fatalf("%s: finish should write once", method)
		}
		h := rec.Header()
		if rec.Code != 200 || rec.Body.String() != want || h.Get("Content-Type") != "application/json" ||
			h.Get("Content-Length") != strconv.Itoa(len(want)) || h.Get("Connection") != "close" || !rec.Flushed {
			t.Errorf("%s: %d %v %s\nwant %s", method, rec.Code, h, rec.Body, want)
		}
		if f.stop() {
			t.Errorf("%s: stop marked a request twice", method)
		}
	}
}

// A begun SSE stream without the answer gets the answer as its last event;
// one that carried the answer, or a begun JSON answer, is left alone.
func TestShutdownAnswerOnABegunStream(t *testing.T) {
	f, rec, _ := newInflight("tools/call")
	f.Header().Set("Content-Type", "text/event-stream")
	f.WriteHeader(http.StatusOK)
	if !f.started || !f.sse || rec.Code != http.StatusOK {
		t.Fatalf("WriteHeader: started %v sse %v, passed %d", f.started, f.sse, rec.Code)
	}
	_, _ = f.Write([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n"))
	f.Flush()
	if !rec.Flushed {
		t.Error("Flush did not reach the client")
	}
	if !f.stop() {
		t.Fatal("stop did not mark a stream without its answer")
	}
	before := rec.Body.Len()
	if !f.finish() {
		t.Fatal("finish wrote nothing")
	}
	want := "event: message\ndata: " + string(f.message()) + "\n\n"
	if got := rec.Body.String()[before:]; got != want {
		t.Errorf("last event %q, want %q", got, want)
	}
	if rec.Header().Get("Content-Length") != "" {
		t.Error("a stream's answer set a Content-Length")
	}
	row := shutdownRow(f, f.method)
	if row.Kind != audit.KindToolCallTrace || row.CorrelationID != "TRACE001" || row.SpanID == "" || row.SessionID != "S" || row.User != "alice" ||
		row.Project != "p" || row.Status != StatusShutdown || row.Detail != "tools/call: "+ShuttingDown+" ("+AnsweredOnStream+")" ||
		time.Since(row.Start) > time.Minute || row.Duration != 0 {
		t.Errorf("row %+v", row)
	}

	answered, _, _ := newInflight("tools/call")
	answered.Header().Set("Content-Type", "text/event-stream")
	_, _ = answered.Write([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}\n\n"))
	if answered.stop() || answered.finish() {
		t.Error("a stream that carried its answer was answered again")
	}
	jsonBegun, _, _ := newInflight("ping")
	jsonBegun.Header().Set("Content-Type", "application/json")
	jsonBegun.WriteHeader(http.StatusOK)
	if jsonBegun.stop() {
		t.Error("a begun JSON answer was marked")
	}
	if r := shutdownRow(jsonBegun, jsonBegun.method); r.Detail != "ping: "+ShuttingDown+" ("+AnsweredOnStream+")" {
		t.Errorf("a begun answer's row detail %q", r.Detail)
	}
	fresh, _, _ := newInflight("ping")
	if r := shutdownRow(fresh, fresh.method); r.Detail != "ping: "+ShuttingDown {
		t.Errorf("an unbegun answer's row detail %q", r.Detail)
	}
}

// An event that is nothing but its data line is read all the same.
func TestIsAnswerEventWithTheDataLineFirst(t *testing.T) {
	if !isAnswerEvent([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\n")) {
		t.Error("an answer whose event starts with its data line was not seen")
	}
	if isAnswerEvent([]byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"result\":1}}\n\n")) {
		t.Error("a request whose event starts with its data line was taken for an answer")
	}
}

// track follows requests only (an id and a method): not notifications,
// batches or what does not parse; each tracked request gets a trace code in
// its header (the one already there when valid), which the shutdown answer
// quotes.
func TestTrackFollowsRequestsOnly(t *testing.T) {
	h := New(Options{Projects: map[string]Project{}})
	for body, tracked := range map[string]bool{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`:           true,
		`{"jsonrpc":"2.0","id":"x","method":"ping"}`:               true,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`:   false,
		`{"jsonrpc":"2.0","id":1,"result":{}}`:                     false,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`:               true,
		`[{"jsonrpc":"2.0","method":"notifications/initialized"}]`: false,
		`{"jsonrpc":"2.0","id":1,"method":"ping"`:                  false,
	} {
		for _, preset := range []string{"", "ABCDEFGH", "not-a-code"} {
			r := httptest.NewRequest(http.MethodPost, "/projects/p/mcp", nil)
			if preset != "" {
				r.Header.Set("X-Mcplocal-Trace", preset)
			}
			f, tr, untrack := h.track(httptest.NewRecorder(), r, rpcread.Read([]byte(body)))
			if (f != nil) != tracked {
				t.Errorf("%s: tracked %v, want %v", body, f != nil, tracked)
			}
			h.inflightMu.Lock()
			n := len(h.inflight)
			h.inflightMu.Unlock()
			if (n == 1) != tracked {
				t.Errorf("%s: %d in flight", body, n)
			}
			if f != nil {
				code := tr.Header.Get("X-Mcplocal-Trace")
				if code != f.code || len(code) != 8 || (preset == "ABCDEFGH") != (code == "ABCDEFGH") {
					t.Errorf("%s with %q: header code %q, answer's %q", body, preset, code, f.code)
				}
			}
			untrack()
			if f != nil && tr.Context().Err() == nil {
				t.Errorf("%s: untrack left the request's context running", body)
			}
			h.inflightMu.Lock()
			n = len(h.inflight)
			h.inflightMu.Unlock()
			if n != 0 {
				t.Errorf("%s: %d in flight after untrack", body, n)
			}
		}
	}
}

// finishInFlight writes the shutdown answer of a stopped request, logs it,
// and audits a tools/call (other methods' rows are their handler's).
func TestFinishInFlightLogsAndAuditsAToolCall(t *testing.T) {
	for method, rowsWant := range map[string]int{"tools/call": 1, "ping": 0} {
		in := start(t, audit.NewMemory(), Options{}, session.Limits{})
		f, rec, _ := newInflight(method)
		if in.h.finishInFlight(f) || in.h.finishInFlight(nil) {
			t.Fatalf("%s: finished a request the shutdown did not stop", method)
		}
		f.stop()
		if !in.h.finishInFlight(f) || rec.Body.Len() == 0 {
			t.Fatalf("%s: not finished", method)
		}
		want := `level=WARN msg="answered at shutdown: the request did not complete within the grace" trace=TRACE001 method=` + method + "\n"
		if got := in.log.String(); got != want {
			t.Errorf("%s: log %q\nwant %q", method, got, want)
		}
		rr := in.rows.all()
		if len(rr) != rowsWant || (rowsWant == 1 && (rr[0].Status != StatusShutdown || rr[0].CorrelationID != "TRACE001")) {
			t.Errorf("%s: rows %+v", method, rr)
		}
	}
}

// The SDK's status reaches the client through the in-flight writer, and
// AnswerInFlight lets go of the table it reads (a second call, and the
// requests' own untracking, go through).
func TestInflightPassesTheStatusAndAnswerInFlightLetsGo(t *testing.T) {
	f, rec, _ := newInflight("ping")
	f.WriteHeader(http.StatusAccepted)
	if rec.Code != http.StatusAccepted {
		t.Errorf("passed %d, want 202", rec.Code)
	}
	h := New(Options{Projects: map[string]Project{}})
	r := httptest.NewRequest(http.MethodPost, "/projects/p/mcp", nil)
	_, _, untrack := h.track(httptest.NewRecorder(), r, rpcread.Read([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)))
	done := make(chan [2]int, 1)
	go func() {
		a := h.AnswerInFlight()
		untrack()
		done <- [2]int{a, h.AnswerInFlight()}
	}()
	select {
	case n := <-done:
		if n != [2]int{1, 0} {
			t.Errorf("AnswerInFlight answered %d then %d, want 1 then 0", n[0], n[1])
		}
	case <-time.After(5 * time.Second):
		t.Fatal("AnswerInFlight kept the in-flight table locked")
	}
}

func newBatchInflight() (*inflight, *httptest.ResponseRecorder) {
	rec := httptest.NewRecorder()
	_, cancel := context.WithCancelCause(context.Background())
	return &inflight{ResponseWriter: rec, cancel: cancel, code: "TRACE001", session: "S", user: "alice", project: "p",
		batch: []call{{id: []byte("1"), method: "tools/call"}, {id: []byte(`"b"`), method: "ping"}}}, rec
}

// A batch (protocols before 2025-06-18) still running at shutdown is owed
// an answer to each of its requests, as one request is: the whole array
// when the SDK had written nothing, and on a begun SSE stream an event for
// each request the stream has not answered yet.
func TestShutdownAnswersEveryRequestOfABatch(t *testing.T) {
	toolAnswer := `{"id":1,"jsonrpc":"2.0","result":{"_meta":{"traceCode":"TRACE001"},"content":[{"text":"` + ShuttingDown + ` [trace TRACE001]","type":"text"}],"isError":true}}`
	pingAnswer := `{"error":{"code":-32001,"data":{"traceCode":"TRACE001"},"message":"` + ShuttingDown + ` [trace TRACE001]"},"id":"b","jsonrpc":"2.0"}`

	f, rec := newBatchInflight()
	if !f.stop() || !f.finish() {
		t.Fatal("a batch nothing answered was not answered at shutdown")
	}
	if want := "[" + toolAnswer + "," + pingAnswer + "]"; rec.Body.String() != want || rec.Header().Get("Content-Length") != strconv.Itoa(len(want)) {
		t.Errorf("the batch's shutdown answer:\n%s\nwant\n%s", rec.Body, want)
	}

	f, rec = newBatchInflight()
	f.Header().Set("Content-Type", "text/event-stream")
	f.WriteHeader(http.StatusOK)
	_, _ = f.Write([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\": \"b\",\"result\":{}}\n\n"))
	if f.responded {
		t.Fatal("one answer of two taken for the batch's whole answer")
	}
	if !f.stop() || !f.finish() {
		t.Fatal("a begun stream missing one answer was not answered at shutdown")
	}
	if want := "event: message\ndata: " + toolAnswer + "\n\n"; !strings.HasSuffix(rec.Body.String(), want) || strings.Count(rec.Body.String(), "event: message") != 2 {
		t.Errorf("the stream ends:\n%s\nwant one more event, for the request not answered:\n%s", rec.Body, want)
	}

	f, _ = newBatchInflight()
	f.Header().Set("Content-Type", "text/event-stream")
	f.WriteHeader(http.StatusOK)
	_, _ = f.Write([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"))
	_, _ = f.Write([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"b\",\"result\":{}}\n\n"))
	if f.stop() {
		t.Error("a batch whose every answer was written was answered again at shutdown")
	}
}
