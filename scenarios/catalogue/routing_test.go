package catalogue

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// rewritingLines is an event stream with each line rewritten by r.
func rewritingLines(body io.ReadCloser, r *strings.Replacer) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		defer body.Close()
		sc := bufio.NewScanner(body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if _, err := io.WriteString(pw, r.Replace(sc.Text())+"\n"); err != nil {
				return
			}
		}
		pw.CloseWithError(sc.Err())
	}()
	return pr
}

// routingFront serves the everything fake under mcplocal's tool names,
// rewriting what its answers' streams carry with streams; a standalone
// message, if given, is sent on the session's standalone stream.
func routingFront(t *testing.T, streams *strings.Replacer, standalone string) *harness.Env {
	t.Helper()
	up, err := upstream.NewEverything(upstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("http://" + up.Addr())
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	rp.ModifyResponse = func(resp *http.Response) error {
		if streams != nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			resp.Body = rewritingLines(resp.Body, streams)
		}
		return nil
	}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && standalone != "" {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "event: message\ndata: "+standalone+"\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		b, _ := io.ReadAll(r.Body)
		b = bytes.ReplaceAll(b, []byte(`"name":"everything_`), []byte(`"name":"`))
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	return harness.JudgedOn(wireTarget{url: front.URL}, harness.CompressedBounds())
}

// The routing row passes a proxy that routes each message to its call's
// stream, and fails one that delivers another call's sampling request or
// log message on a call's stream, or a call's message on the standalone
// stream, naming what went astray.
func TestRoutingFailsAProxyThatCrossesTheStreams(t *testing.T) {
	for _, c := range []struct {
		name       string
		streams    *strings.Replacer
		standalone string
		says       []string
	}{
		{name: "routed", streams: nil},
		{name: "a sampling request crossed", streams: strings.NewReplacer("route-sample-0", "route-sample-1"),
			says: []string{"the sampling request of the call for", "did not get its own sampling answer"}},
		{name: "a log message crossed", streams: strings.NewReplacer("route-log-0", "route-log-1"),
			says: []string{`the log message "`, `no log message of the call for "route-log-0"`}},
		{name: "a call's log message on the standalone stream",
			standalone: `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x: route-log-3"}}`,
			says:       []string{"notifications/message caused by a call came on the standalone stream"}},
		{name: "a sampling request on the standalone stream",
			standalone: `{"jsonrpc":"2.0","id":"astray","method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hello"}}]}}`,
			says:       []string{"sampling/createMessage caused by a call came on the standalone stream"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			o := RoutingByCall.Do(ctx, routingFront(t, c.streams, c.standalone))
			if o.Err != nil {
				t.Fatalf("the row could not run: %v", o.Err)
			}
			broken := strings.Join(o.Broken, "; ")
			if len(c.says) == 0 && broken != "" {
				t.Errorf("a proxy that routes each message to its call failed: %s", broken)
			}
			for _, s := range c.says {
				if !strings.Contains(broken, s) {
					t.Errorf("want %q among what broke: %s", s, broken)
				}
			}
		})
	}
}

// A proxy that refuses the session's standalone stream cannot be judged on
// where messages go: the row says why it could not run.
func TestRoutingSaysAStandaloneStreamRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	env := inFront(t, func(w http.ResponseWriter, r *http.Request, b *[]byte) bool {
		if r.Method == http.MethodGet {
			http.Error(w, "no standalone stream", http.StatusMethodNotAllowed)
			return true
		}
		*b = bytes.ReplaceAll(*b, []byte(`"name":"everything_`), []byte(`"name":"`))
		return false
	})
	if o := RoutingByCall.Do(ctx, env); o.Err == nil || !strings.Contains(o.Err.Error(), "standalone stream was refused") {
		t.Errorf("a refused standalone stream: %v, broken %v", o.Err, o.Broken)
	}
}
