package upstream

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listenBound keeps a broken Listen from hanging the test.
const listenBound = 5 * time.Second

// Listen replaces a session connected without its standalone stream by one
// with it; a call running on the old session meanwhile is answered there,
// runs once, and the old session is ended (DELETE) once that call is done.
func TestListenReplacesTheSessionWithoutFailingOrRepeatingARunningCall(t *testing.T) {
	var runs, gets, deletes atomic.Int32
	started, release := make(chan struct{}, 1), make(chan struct{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, nil)
	srv.AddTool(&mcp.Tool{Name: "block", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			runs.Add(1)
			started <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			gets.Add(1)
		case http.MethodDelete:
			deletes.Add(1)
		}
		sdk.ServeHTTP(w, r)
	}))
	defer ts.Close()

	var listening atomic.Bool
	c := New("up", ts.URL, Options{ConnectTimeout: listenBound, CallTimeout: listenBound, CloseGrace: time.Second,
		Limit: NewLimit(2), Standalone: listening.Load})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), listenBound)
	defer cancel()
	if err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	if n := gets.Load(); n != 0 {
		t.Fatalf("%d standalone streams opened by a Conn whose client does not listen; want 0", n)
	}

	answered := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "block", []byte(`{}`), nil)
		answered <- err
	}()
	<-started
	listening.Store(true)
	if err := c.Listen(ctx); err != nil {
		t.Fatalf("Listen: %v", err)
	}
	for gets.Load() == 0 && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	if gets.Load() != 1 {
		t.Fatalf("%d standalone streams after Listen; want 1", gets.Load())
	}
	if deletes.Load() != 0 {
		t.Fatal("the replaced session was ended while a call was running on it")
	}
	close(release)
	if err := <-answered; err != nil {
		t.Fatalf("the call running across Listen failed: %v", err)
	}
	for deletes.Load() == 0 && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	if deletes.Load() != 1 {
		t.Fatalf("the replaced session was not ended (DELETE) after its call")
	}
	if n := runs.Load(); n != 1 {
		t.Fatalf("the tool ran %d times; want once", n)
	}
	if n := len(c.limit.slots); n != 1 {
		t.Fatalf("%d upstream session slots held; want 1 (the new session)", n)
	}
	if err := c.Listen(ctx); err != nil || gets.Load() != 1 {
		t.Fatalf("a second Listen: %v, %d streams; want nothing done", err, gets.Load())
	}
}

// An upstream that restarts advertising more than before (here: logging,
// where it advertised nothing it could send unprompted) gets its standalone
// stream on the session that learned it: what Standalone answers depends on
// the capabilities a connect learns, so it is asked again after one.
func TestASessionThatLearnsTheUpstreamMaySendUnpromptedOpensTheStream(t *testing.T) {
	var gets atomic.Int32
	quiet := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}})
	chatty := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Logging: &mcp.LoggingCapabilities{}}})
	for _, s := range []*mcp.Server{quiet, chatty} {
		s.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			})
	}
	var current atomic.Pointer[mcp.StreamableHTTPHandler]
	current.Store(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return quiet }, nil))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1)
		}
		current.Load().ServeHTTP(w, r)
	}))
	defer ts.Close()

	// As the project decides: the client listens; the upstream may send
	// something unprompted by the capabilities its latest session learned.
	var mu sync.Mutex
	var learned *mcp.ServerCapabilities
	c := New("up", ts.URL, Options{ConnectTimeout: listenBound, CallTimeout: listenBound, CloseGrace: time.Second,
		Limit: NewLimit(2), Standalone: func() bool {
			mu.Lock()
			defer mu.Unlock()
			return learned == nil || learned.Logging != nil
		}})
	defer c.Close()
	c.OnConnect(func(_ context.Context, s *mcp.ClientSession) {
		mu.Lock()
		learned = s.InitializeResult().Capabilities
		mu.Unlock()
	})
	ctx, cancel := context.WithTimeout(context.Background(), listenBound)
	defer cancel()
	mu.Lock()
	learned = &mcp.ServerCapabilities{} // known quiet, as after an earlier session
	mu.Unlock()
	if _, err := c.CallTool(ctx, "echo", []byte(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	if n := gets.Load(); n != 0 {
		t.Fatalf("%d standalone streams opened in front of a quiet upstream; want 0", n)
	}

	// The upstream restarts (forgetting its sessions) and now advertises logging.
	current.Store(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return chatty }, nil))
	if _, err := c.CallTool(ctx, "echo", []byte(`{}`), nil); err != nil {
		t.Fatalf("the call after the restart: %v", err)
	}
	for gets.Load() == 0 && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	if n := gets.Load(); n != 1 {
		t.Fatalf("%d standalone streams after the upstream began advertising logging; want 1", n)
	}
	if n := len(c.limit.slots); n != 1 {
		t.Fatalf("%d upstream session slots held; want 1", n)
	}
}
