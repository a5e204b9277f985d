package project

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/session"
)

// What an upstream sends while it works on a call reaches the client that
// made the call: its progress (under the client's own token), a sampling
// request it answers, a log message at the level it set.
func TestUpstreamMessagesReachTheCallingClient(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "work"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		for i := 1; i <= 2; i++ {
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 2}); err != nil {
				return nil, nil, err
			}
		}
		if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "error", Logger: "up", Data: "disk low"}); err != nil {
			return nil, nil, err
		}
		mcp.AddTool(s, &mcp.Tool{Name: "more"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		}) // the upstream's tools change: every session it serves is told
		res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 5, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}})
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{res.Content}}, nil, nil
	})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(up.Close)
	p := New("p", Options{Servers: map[string]string{"s": up.URL}, Sessions: session.NewTable(), Audit: discardRows{}, Knobs: knobs.Defaults(), Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(p.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	var mu sync.Mutex
	var progress []float64
	var tokens []any
	var logs []string
	listChanged := make(chan struct{}, 8)
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			progress = append(progress, r.Params.Progress)
			tokens = append(tokens, r.Params.ProgressToken)
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			mu.Lock()
			defer mu.Unlock()
			logs = append(logs, string(r.Params.Level)+" "+r.Params.Data.(string))
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { listChanged <- struct{}{} },
		CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "sampled:" + r.Params.Messages[0].Content.(*mcp.TextContent).Text}}, nil
		},
	})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: serveProject(t, p), MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	params := &mcp.CallToolParams{Name: "s_work", Arguments: map[string]any{}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(ctx, params)
	if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "sampled:hi" {
		t.Fatalf("s_work: %+v, %v; want the client's own sampling answer", res, err)
	}
	select {
	case <-listChanged:
	case <-ctx.Done():
		t.Error("the upstream's tools/list_changed never reached the client")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(progress) != 2 || progress[0] != 1 || progress[1] != 2 || tokens[0] != "tok-1" || tokens[1] != "tok-1" {
		t.Errorf("progress %v under tokens %v, want 1, 2 under tok-1", progress, tokens)
	}
	if len(logs) != 1 || logs[0] != "error disk low" {
		t.Errorf("log messages %v, want [error disk low]", logs)
	}
}
