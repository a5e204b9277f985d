package entry

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// claimWriter claims the session id of a 2xx answer exactly once, before
// the client can read it, however the SDK begins the answer: WriteHeader,
// Write or Flush.
func TestClaimWriterClaimsOnceOnAnySuccessfulStart(t *testing.T) {
	begin := map[string]func(c *claimWriter){
		"WriteHeader 200": func(c *claimWriter) { c.WriteHeader(http.StatusOK) },
		"WriteHeader 202": func(c *claimWriter) { c.WriteHeader(http.StatusAccepted) },
		"Write":           func(c *claimWriter) { _, _ = c.Write([]byte("x")) },
		"Flush":           func(c *claimWriter) { c.Flush() },
	}
	for name, b := range begin {
		t.Run(name, func(t *testing.T) {
			rec := &events{ResponseRecorder: httptest.NewRecorder()}
			var claims []string
			c := &claimWriter{ResponseWriter: rec, claim: func(id string) {
				claims = append(claims, id)
				if len(rec.seen) != 0 {
					t.Errorf("claimed after the answer began: %v", rec.seen)
				}
			}}
			c.Header().Set(sessionHeader, "S1")
			b(c)
			_, _ = c.Write([]byte("more"))
			c.Flush()
			c.WriteHeader(http.StatusInternalServerError)
			if len(claims) != 1 || claims[0] != "S1" {
				t.Errorf("claims %v, want [S1]", claims)
			}
		})
	}
	for name, status := range map[string]int{"no id": http.StatusOK, "a 400": http.StatusBadRequest, "a 301": http.StatusMovedPermanently} {
		t.Run(name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			claimed := 0
			c := &claimWriter{ResponseWriter: rec, claim: func(string) { claimed++ }}
			if name != "no id" {
				c.Header().Set(sessionHeader, "S1")
			}
			c.WriteHeader(status)
			_, _ = c.Write([]byte("x"))
			if claimed != 0 {
				t.Errorf("claimed %d times", claimed)
			}
			if rec.Code != status || rec.Body.String() != "x" {
				t.Errorf("passed %d %q", rec.Code, rec.Body)
			}
		})
	}
}

// events notes what reached the client's writer.
type events struct {
	*httptest.ResponseRecorder
	seen []string
}

func (e *events) WriteHeader(s int) {
	e.seen = append(e.seen, "header")
	e.ResponseRecorder.WriteHeader(s)
}
func (e *events) Write(b []byte) (int, error) {
	e.seen = append(e.seen, "write")
	return e.ResponseRecorder.Write(b)
}
func (e *events) Flush() { e.seen = append(e.seen, "flush"); e.ResponseRecorder.Flush() }

// intercept passes everything through but a 404 or 403, which it holds
// (4096 bytes of its body at most) for the entry to decide on.
func TestInterceptHoldsRefusalsOnly(t *testing.T) {
	for _, status := range []int{http.StatusOK, http.StatusAccepted, http.StatusBadRequest, http.StatusInternalServerError} {
		rec := httptest.NewRecorder()
		i := &intercept{w: rec, h: http.Header{}}
		i.Header().Set("X-A", "1")
		i.WriteHeader(status)
		i.WriteHeader(http.StatusNotFound)
		_, _ = i.Write([]byte("body"))
		i.Flush()
		if i.refused() || i.passed != status || rec.Code != status || rec.Body.String() != "body" || rec.Header().Get("X-A") != "1" || !rec.Flushed {
			t.Errorf("%d: refused %v passed %d, wrote %d %q %v", status, i.refused(), i.passed, rec.Code, rec.Body, rec.Header())
		}
	}
	rec := httptest.NewRecorder()
	i := &intercept{w: rec, h: http.Header{}}
	i.Flush()
	if i.passed != http.StatusOK || !rec.Flushed {
		t.Errorf("a Flush without WriteHeader: passed %d, flushed %v", i.passed, rec.Flushed)
	}
	rec = httptest.NewRecorder()
	i = &intercept{w: rec, h: http.Header{}}
	_, _ = i.Write([]byte("implicit"))
	if i.passed != http.StatusOK || rec.Code != http.StatusOK || rec.Body.String() != "implicit" {
		t.Errorf("a Write without WriteHeader: passed %d, wrote %d %q", i.passed, rec.Code, rec.Body)
	}
	for _, status := range []int{http.StatusNotFound, http.StatusForbidden} {
		rec := httptest.NewRecorder()
		i := &intercept{w: rec, h: http.Header{}}
		i.Header().Set("X-A", "1")
		i.WriteHeader(status)
		i.WriteHeader(http.StatusOK)
		_, _ = i.Write([]byte(strings.Repeat("a", 4000)))
		n, err := i.Write([]byte(strings.Repeat("b", 200)))
		i.Flush()
		if n != 200 || err != nil {
			t.Errorf("a held write returned %d, %v", n, err)
		}
		if !i.refused() || i.status != status || i.body.String() != strings.Repeat("a", 4000)+strings.Repeat("b", 96) {
			t.Errorf("%d: refused %v status %d, held %d bytes", status, i.refused(), i.status, i.body.Len())
		}
		if rec.Code != http.StatusOK || rec.Body.Len() != 0 || rec.Flushed || len(rec.Header()) != 0 {
			t.Errorf("%d: a held refusal reached the client: %d %q flushed %v %v", status, rec.Code, rec.Body, rec.Flushed, rec.Header())
		}
		// Replayed when it is not about the session: a 403 (Host, Origin).
		out := httptest.NewRecorder()
		i.replayNon404(out)
		if status == http.StatusForbidden && (out.Code != 403 || out.Body.Len() != 4096 || out.Header().Get("X-A") != "1") {
			t.Errorf("a held 403 replayed as %d, %d bytes, %v", out.Code, out.Body.Len(), out.Header())
		}
		if status == http.StatusNotFound && (out.Body.Len() != 0 || len(out.Header()) != 0) {
			t.Errorf("a held 404 was replayed: %q", out.Body)
		}
	}
	m := &intercept{status: http.StatusForbidden}
	m.body.WriteString("Forbidden: session user mismatch\n")
	if !m.mismatch() {
		t.Error("a 403 about the session's user is no mismatch")
	}
	out := httptest.NewRecorder()
	m.replayNon404(out)
	if out.Body.Len() != 0 {
		t.Errorf("a user mismatch was replayed: %q", out.Body)
	}
	for _, o := range []*intercept{{status: http.StatusNotFound}, {status: http.StatusForbidden}} {
		o.body.WriteString("forbidden: bad Origin")
		if o.status == http.StatusNotFound {
			o.body.Reset()
			o.body.WriteString("session user mismatch")
		}
		if o.mismatch() {
			t.Errorf("%d %q is a mismatch", o.status, o.body.String())
		}
	}
}

// recorder keeps the first status, 200 for a Write without one.
func TestRecorderKeepsTheFirstStatus(t *testing.T) {
	r := &recorder{h: http.Header{}}
	_, _ = r.Write([]byte("a"))
	r.WriteHeader(http.StatusNotFound)
	if r.status != http.StatusOK || r.body.String() != "a" {
		t.Errorf("got %d %q", r.status, r.body.String())
	}
	r = &recorder{h: http.Header{}}
	r.WriteHeader(http.StatusAccepted)
	r.WriteHeader(http.StatusNotFound)
	_, _ = r.Write([]byte("b"))
	if r.status != http.StatusAccepted || r.body.String() != "b" {
		t.Errorf("got %d %q", r.status, r.body.String())
	}
}
