package upstream

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// TestListenWithoutASessionConnectsNothing: Listen on a Conn that holds no
// session yet sends the upstream nothing; the session its next call
// connects opens the standalone stream.
func TestListenWithoutASessionConnectsNothing(t *testing.T) {
	var requests, gets atomic.Int32
	url := pinging(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			requests.Add(1)
			if r.Method == http.MethodGet {
				gets.Add(1)
			}
			h.ServeHTTP(w, r)
		})
	})
	c := New("s", url, Options{ConnectTimeout: 5 * time.Second, CallTimeout: 5 * time.Second, Standalone: func() bool { return true }})
	defer c.Close()
	if err := c.Listen(context.Background()); err != nil {
		t.Fatalf("Listen: %v", err)
	}
	if n := requests.Load(); n != 0 {
		t.Fatalf("Listen without a session sent the upstream %d requests, want none", n)
	}
	if _, err := c.ListTools(context.Background()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for gets.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if gets.Load() == 0 {
		t.Error("the session the next call connected opened no standalone stream within 5 s")
	}
}
