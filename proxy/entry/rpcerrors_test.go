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
