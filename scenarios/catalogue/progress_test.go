package catalogue

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// sseBuffered answers a tools/call with the upstream's whole SSE answer in
// one write: the progress events and the result reach the client in one
// read, as a load balancer that coalesces a stream's chunks delivers them.
// keep, when set, filters the events written.
func sseBuffered(keep func(event []byte) bool) func(w http.ResponseWriter, r *http.Request, b *[]byte) bool {
	return func(w http.ResponseWriter, r *http.Request, b *[]byte) bool {
		if !bytes.Contains(*b, []byte(`"tools/call"`)) {
			return false
		}
		rec := httptest.NewRecorder()
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(*b)), int64(len(*b))
		frontProxy(r).ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if keep != nil {
			var out [][]byte
			for _, ev := range bytes.SplitAfter(body, []byte("\n\n")) {
				if keep(ev) {
					out = append(out, ev)
				}
			}
			body = bytes.Join(out, nil)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
		return true
	}
}

// The progress row counts the notifications the proxy sent with the
// result, even when they arrive in the same read as it (the go-sdk client
// runs a notification's handler on another goroutine, a response at once),
// and fails a proxy that drops them.
func TestProgressArrivingWithTheResultIsCounted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < 5; i++ {
		if o := ProgressCall.Do(ctx, inFront(t, sseBuffered(nil))); o.Err != nil || len(o.Broken) > 0 {
			t.Fatalf("progress coalesced with the result, round %d: %v %s", i, o.Err, strings.Join(o.Broken, "; "))
		}
	}
	dropped := sseBuffered(func(ev []byte) bool { return !bytes.Contains(ev, []byte("notifications/progress")) })
	if o := ProgressCall.Do(ctx, inFront(t, dropped)); o.Err == nil && len(o.Broken) == 0 {
		t.Fatalf("passed a proxy that drops progress: %+v", o)
	}
}
