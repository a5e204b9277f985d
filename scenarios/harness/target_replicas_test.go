package harness

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// replicatedTarget is a target of two replica servers behind an address
// that answers nothing itself.
type replicatedTarget struct {
	Target
	urls []string
}

func (r replicatedTarget) Name() string          { return "replicated" }
func (r replicatedTarget) URL() string           { return "http://127.0.0.1:1" }
func (r replicatedTarget) ReplicaURLs() []string { return r.urls }

// TestAReadFromEachAsksEveryReplicaAndKeepsTheLast: on a replicated target a
// read that depends on each process's own state (the audit API flushes the
// answering replica's queue) asks every replica directly, in turn, and
// keeps the last answer, given after all flushed.
func TestAReadFromEachAsksEveryReplicaAndKeepsTheLast(t *testing.T) {
	var asked [2]atomic.Int32
	var urls []string
	for i := range asked {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			asked[i].Add(1)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"from":` + string(rune('0'+i)) + `}`))
		}))
		defer srv.Close()
		urls = append(urls, srv.URL)
	}
	e := &Env{Target: replicatedTarget{urls: urls}}
	var body struct {
		From  int    `json:"from"`
		Error string `json:"error"`
	}
	if err := e.GetJSONFromEach(context.Background(), "/api/v1/audit?trace=X", &body, &body.Error); err != nil {
		t.Fatal(err)
	}
	if asked[0].Load() != 1 || asked[1].Load() != 1 || body.From != 1 {
		t.Fatalf("asked %d and %d times, kept the answer of replica %d: want each once, the last kept", asked[0].Load(), asked[1].Load(), body.From)
	}
}
