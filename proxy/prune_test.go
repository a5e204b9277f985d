package proxy

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
)

// Start forgets the session records older than MCPCTL_SESSION_RECORD_TTL_MS
// before serving and says how many; a prune with nothing to forget says
// nothing; one the store refuses is a warning.
func TestPruneForgetsExpiredRecordsAndSaysSo(t *testing.T) {
	lg, buf := textLogger()
	kv := knobs.Defaults()
	kv.SessionRecordTTL = time.Hour
	p, err := New(context.Background(), &config.Config{Audit: "memory", Listen: "127.0.0.1:0", Projects: oneProject("http://127.0.0.1:1/mcp")},
		Options{Knobs: &kv, Getenv: func(string) string { return "" }, Logger: lg})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	ctx := context.Background()
	old := time.Now().Add(-2 * time.Hour)
	for _, r := range []audit.SessionRecord{
		{Project: "p", ID: "old-open", Owner: "a", Created: old},
		{Project: "p", ID: "old-closed", Owner: "a", Created: old, Closed: old.Add(time.Minute)},
		{Project: "p", ID: "recent", Owner: "a", Created: time.Now().Add(-time.Minute)},
		{Project: "p", ID: "closed-recently", Owner: "a", Created: old, Closed: time.Now().Add(-time.Minute)},
	} {
		if r.Closed.IsZero() {
			_, err = p.store.ClaimSession(ctx, r)
		} else {
			err = p.store.CloseSession(ctx, r)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	for id, kept := range map[string]bool{"old-open": false, "old-closed": false, "recent": true, "closed-recently": true} {
		if got, _ := p.store.LookupSession(ctx, id); (len(got) == 1) != kept {
			t.Errorf("%s: %+v after Start, kept want %v", id, got, kept)
		}
	}
	want := "level=INFO msg=\"forgot expired session records\" records=2 ttl=1h0m0s\n"
	if got := buf.String(); got != want {
		t.Errorf("log %q\nwant %q", got, want)
	}
	p.prune(ctx)
	if got := buf.String(); got != want {
		t.Errorf("a prune with nothing to forget logged %q", got[len(want):])
	}
	_ = p.store.Close()
	p.prune(ctx)
	want += "level=WARN msg=\"pruning expired session records failed; will retry\" err=\"audit: closed\"\n"
	if got := buf.String(); got != want {
		t.Errorf("log %q\nwant %q", got, want)
	}
}

// The janitor expires an idle session within a quarter of the idle knob of
// its expiry (plus a tolerance for this loaded machine), and prunes records
// hourly, not at every tick.
func TestJanitorExpiresIdleSessionsPromptlyAndPrunesHourly(t *testing.T) {
	const idle = 400 * time.Millisecond
	const tolerance = 600 * time.Millisecond
	kv := knobs.Defaults()
	kv.SessionIdle = idle
	kv.SessionRecordTTL = time.Hour
	p, err := New(context.Background(), &config.Config{Audit: "memory", Listen: "127.0.0.1:0", Projects: oneProject("http://127.0.0.1:1/mcp")},
		Options{Knobs: &kv, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	if err := p.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := p.store.ClaimSession(ctx, audit.SessionRecord{Project: "p", ID: "stale", Created: time.Now().Add(-2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	opened := time.Now()
	if code := postInit(t, p, init); code != 200 {
		t.Fatalf("initialize: %d", code)
	}
	if p.Sessions().Len() != 1 {
		t.Fatalf("%d sessions after initialize", p.Sessions().Len())
	}
	for p.Sessions().Len() != 0 && time.Since(opened) < idle+idle/4+tolerance+time.Second {
		time.Sleep(5 * time.Millisecond) // polling the registry; the janitor's own ticker does the work
	}
	took := time.Since(opened)
	if p.Sessions().Len() != 0 || took > idle+idle/4+tolerance {
		t.Errorf("the idle session expired after %v (left %d), want within %v + %v + %v", took, p.Sessions().Len(), idle, idle/4, tolerance)
	}
	if got, _ := p.store.LookupSession(ctx, "stale"); len(got) != 1 {
		t.Errorf("the janitor pruned at a tick, not hourly: %+v", got)
	}
}

func postInit(t *testing.T, p *Proxy, body string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+p.Addr()+"/projects/p/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}
