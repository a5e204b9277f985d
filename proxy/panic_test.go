package proxy

import (
	"context"
	"github.com/mcpchaos/mcpchaos/internal/syncbuf"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/failpoint"
)

type syncBuffer = syncbuf.Buffer

// TestPanicStackIsLogged: a handler that panics is answered (promise 1, its
// own specs) and its goroutine's stack is logged with the request's trace
// code, so an operator can find where it broke from the code the user quotes.
func TestPanicStackIsLogged(t *testing.T) {
	up := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "t"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	upSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	defer upSrv.Close()
	fps, err := failpoint.Parse("tools/call=s_t:panic")
	if err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	cfg := &config.Config{
		Listen: "127.0.0.1:0", Audit: "memory",
		Projects: map[string]*config.Project{"p": {Servers: map[string]*config.Server{"s": {URL: upSrv.URL}}}},
	}
	p, err := New(context.Background(), cfg, Options{Getenv: func(string) string { return "" }, Failpoints: fps,
		Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: "http://" + p.Addr() + "/projects/p/mcp", DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "s_t", Arguments: map[string]any{}})
	if err != nil || !res.IsError {
		t.Fatalf("the panicking call was answered %+v, %v; want an isError", res, err)
	}
	code, _ := res.Meta["traceCode"].(string)
	var line string
	for l := range strings.Lines(log.String()) {
		if strings.Contains(l, "handler panicked") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no \"handler panicked\" line in the log:\n%s", log.String())
	}
	if code == "" || !strings.Contains(line, code) {
		t.Errorf("the panic's log line does not quote the answer's trace code %q: %s", code, line)
	}
	if !strings.Contains(line, "stack=") || !strings.Contains(line, "goroutine ") || !strings.Contains(line, "failpoint") {
		t.Errorf("the panic's log line has no stack through the failpoint that panicked: %.600s", line)
	}
}
