package entry

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// writeRPCError's whole answer: headers and body.
func TestWriteRPCErrorWholeShape(t *testing.T) {
	rec := httptest.NewRecorder()
	rec.Header().Set("Content-Length", "999") // set by a handler that meant to answer otherwise
	writeRPCError(rec, http.StatusTeapot, CodeInvalidRequest, "ABCDEFGH", "no tea")
	want := `{"error":{"code":-32600,"data":{"traceCode":"ABCDEFGH"},"message":"no tea [trace ABCDEFGH]"},"id":null,"jsonrpc":"2.0"}` + "\n"
	h := rec.Header()
	if rec.Code != http.StatusTeapot || rec.Body.String() != want || h.Get("Content-Type") != "application/json" ||
		h.Get("X-Content-Type-Options") != "nosniff" || h.Values("Content-Length") != nil {
		t.Errorf("got %d %v %q\nwant 418, JSON, nosniff, no Content-Length, %q", rec.Code, h, rec.Body, want)
	}
}

// requestID reads the id of one JSON-RPC message, and nothing else.
func TestRequestIDReadsOneMessagesID(t *testing.T) {
	for body, want := range map[string]string{
		`{"jsonrpc":"2.0","id":7,"method":"ping"}`:               "7",
		`{"jsonrpc":"2.0","id":"a","method":"ping"}`:             `"a"`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`: "",
		`{"jsonrpc":"2.0","id":7,`:                               "",
		`[{"jsonrpc":"2.0","id":7,"method":"ping"}]`:             "",
		``: "",
	} {
		got := requestID([]byte(body))
		if string(got) != want || (want == "" && got != nil) {
			t.Errorf("requestID(%s) = %q (nil %v), want %q", body, got, got == nil, want)
		}
	}
}

// A plain-text refusal of the SDK becomes a JSON-RPC error that answers the
// request's own id when it had one, null otherwise.
func TestSDKRefusalsAnswerTheRequestsID(t *testing.T) {
	srv, _, _ := newServer(t, 1<<20)
	for body, wantID := range map[string]string{
		`{"jsonrpc":"2.0","id":41,"method":"initialize","params":{}}`: "41",
		`{"jsonrpc":"2.0","method":"initialize"}`:                     "null",
	} {
		a := send(t, srv, http.MethodPost, map[string]string{"Content-Type": "application/json", "Accept": "text/html"}, body)
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal([]byte(a.body), &m)
		if a.status != 400 || a.code != CodeInvalidRequest || string(m.ID) != wantID {
			t.Errorf("%s: %d code %d id %s (%s), want 400 -32600 id %s", body, a.status, a.code, m.ID, a.body, wantID)
		}
	}
}

// rpcErrors rewrites a plain-text refusal (4xx but 404, 5xx) and passes
// everything else through untouched.
func TestRPCErrorsRewritesPlainTextRefusalsOnly(t *testing.T) {
	type answer struct {
		status int
		ct     string
	}
	for _, c := range []struct {
		answer
		rewritten bool
	}{
		{answer{400, "text/plain; charset=utf-8"}, true},
		{answer{500, "text/plain; charset=utf-8"}, true},
		{answer{404, "text/plain; charset=utf-8"}, false},
		{answer{200, "text/plain; charset=utf-8"}, false},
		{answer{399, "text/plain"}, false},
		{answer{400, "application/json"}, false},
		{answer{500, "text/html"}, false},
	} {
		rec := httptest.NewRecorder()
		pe := &rpcErrors{w: rec}
		pe.Header().Set("Content-Type", c.ct)
		pe.Header().Set("X-Content-Type-Options", "nosniff")
		pe.Header().Set("Content-Length", "4")
		pe.WriteHeader(c.status)
		pe.WriteHeader(201)
		_, _ = pe.Write([]byte("bad\n"))
		pe.Flush()
		pe.finish()
		if rec.Code != c.status {
			t.Errorf("%v: status %d", c.answer, rec.Code)
		}
		if !c.rewritten {
			if rec.Body.String() != "bad\n" || rec.Header().Get("Content-Type") != c.ct || !rec.Flushed {
				t.Errorf("%v: not passed through: %q %v flushed %v", c.answer, rec.Body, rec.Header(), rec.Flushed)
			}
			continue
		}
		var e struct {
			ID    json.RawMessage `json:"id"`
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal(rec.Body.Bytes(), &e)
		h := rec.Header()
		m := traceSuffix.FindString(e.Error.Message)
		if m == "" || e.Error.Message[:len(e.Error.Message)-len(m)] != "bad" || string(e.ID) != "null" || rec.Flushed ||
			h.Get("Content-Type") != "application/json" || h.Values("X-Content-Type-Options") != nil || h.Values("Content-Length") != nil {
			t.Errorf("%v: rewritten as %v %s (flushed %v)", c.answer, h, rec.Body, rec.Flushed)
		}
	}
	// A Write without WriteHeader is a 200, passed through.
	rec := httptest.NewRecorder()
	pe := &rpcErrors{w: rec}
	pe.Header().Set("Content-Type", "text/plain")
	_, _ = pe.Write([]byte("fine"))
	pe.finish()
	if rec.Code != 200 || rec.Body.String() != "fine" {
		t.Errorf("an implicit 200: %d %q", rec.Code, rec.Body)
	}
	// A held refusal keeps its first 4096 bytes.
	rec = httptest.NewRecorder()
	pe = &rpcErrors{w: rec}
	pe.Header().Set("Content-Type", "text/plain")
	pe.WriteHeader(400)
	_, _ = pe.Write(make([]byte, 4096))
	if n, err := pe.Write([]byte("b")); n != 1 || err != nil {
		t.Errorf("a write past the cap returned %d, %v", n, err)
	}
	if pe.body.Len() != 4096 {
		t.Errorf("held %d bytes, want 4096", pe.body.Len())
	}
}

// rpcCode maps a refusal to JSON-RPC's code for it.
func TestRPCCodeOfEachRefusal(t *testing.T) {
	for _, c := range []struct {
		status int
		msg    string
		want   int
	}{
		{400, "method \"x\" not handled", codeMethodNotFound},
		{500, "method \"x\" not handled", codeMethodNotFound},
		{400, "malformed payload: eof", codeParseError},
		{400, "it is a malformed payload", codeInvalidRequest},
		{500, "boom", codeInternalError},
		{503, "boom", codeInternalError},
		{499, "boom", codeInvalidRequest},
		{415, "Content-Type must be application/json", codeInvalidRequest},
	} {
		if got := rpcCode(c.status, c.msg); got != c.want {
			t.Errorf("rpcCode(%d, %q) = %d, want %d", c.status, c.msg, got, c.want)
		}
	}
}
