package bycall

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// upstreamStream serves one SSE answer made of events.
func upstreamStream(t *testing.T, events ...string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			_, _ = io.WriteString(w, e)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func fetch(ctx context.Context, t *testing.T, url string) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader("{}"))
	resp, err := (&http.Client{Transport: Transport(http.DefaultTransport)}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tagsOf is the route tag in each data line's params._meta ("-" for none).
func tagsOf(t *testing.T, stream string) []string {
	t.Helper()
	var out []string
	for line := range strings.SplitSeq(stream, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var m struct {
			Params struct {
				Meta map[string]any `json:"_meta"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("a data line is no longer JSON: %q", data)
		}
		tag, ok := m.Params.Meta[MetaKey].(string)
		if !ok {
			tag = "-"
		}
		out = append(out, tag)
	}
	return out
}

var events = []string{
	"event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n",
	"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"sampling/createMessage\",\"params\":{\"_meta\":{\"" + MetaKey + "\":\"forged\",\"k\":1},\"maxTokens\":5}}\n\n",
	"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"the \\\"method\\\" word\"}]}}\n\n",
}

// On a tagged call's stream, every request and notification carries the
// call's tag (a forged one replaced), the response is passed on untouched,
// and the notifications are counted for Drain.
func TestTheStreamOfATaggedCallCarriesItsTag(t *testing.T) {
	url := upstreamStream(t, events...)
	c := NewCall("t1")
	got := fetch(With(context.Background(), c), t, url)
	if tags := strings.Join(tagsOf(t, got), ","); tags != "t1,t1,-" {
		t.Errorf("tags %s, want t1,t1,- (the response untouched)\n%s", tags, got)
	}
	if !strings.Contains(got, events[2]) || !strings.Contains(got, "id: 1\n") || !strings.Contains(got, `"k":1`) {
		t.Errorf("the stream lost what it carried:\n%s", got)
	}
	if c.sent.Load() != 1 {
		t.Errorf("%d notifications counted, want 1 (the log message; a request is answered before the result)", c.sent.Load())
	}
}

// On a stream of no call (the upstream's standalone stream), a tag the
// upstream wrote itself is removed: it cannot steer a message onto a call.
func TestAnUpstreamCannotForgeATag(t *testing.T) {
	got := fetch(context.Background(), t, upstreamStream(t, events...))
	if tags := strings.Join(tagsOf(t, got), ","); tags != "-,-,-" {
		t.Errorf("tags %s, want none\n%s", tags, got)
	}
	if !strings.Contains(got, `"k":1`) {
		t.Errorf("the rest of _meta was lost:\n%s", got)
	}
}

// Drain returns once every counted notification was handled, and gives up
// at its bound when one never is.
func TestDrainWaitsForTheCallsNotifications(t *testing.T) {
	c := NewCall("t")
	c.sent.Add(2)
	go func() {
		c.Handled()
		time.Sleep(20 * time.Millisecond)
		c.Handled()
	}()
	if !c.Drain(context.Background(), 5*time.Second) {
		t.Error("Drain gave up with every notification handled")
	}
	c.sent.Add(1)
	start := time.Now()
	if c.Drain(context.Background(), 50*time.Millisecond) || time.Since(start) > 2*time.Second {
		t.Error("Drain did not give up at its bound")
	}
}

// Take removes the tag and returns it.
func TestTakeRemovesTheTag(t *testing.T) {
	m := map[string]any{MetaKey: "t", "k": 1}
	if Take(m) != "t" || len(m) != 1 {
		t.Errorf("Take left %v", m)
	}
	if Take(nil) != "" {
		t.Error("a tag out of nothing")
	}
}
