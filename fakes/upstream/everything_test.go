package upstream

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A client (or a proxy in front of it) that never answers the fake's
// sampling or elicitation request does not hold the fake's Close: the
// requests end with the server.
func TestCloseEndsRequestsTheClientNeverAnswers(t *testing.T) {
	s, err := NewEverything(Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	asked := make(chan string, 2)
	never := make(chan struct{})
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			asked <- "sampling"
			<-never
			return nil, context.Canceled
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked <- "elicitation"
			<-never
			return nil, context.Canceled
		},
	})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.URL(), DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	defer close(never) // before the client closes: it waits on its handlers
	for tool, arg := range map[string]map[string]any{"sample": {"prompt": "hi"}, "elicit": {"question": "name?"}} {
		go func() { _, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: arg}) }()
	}
	for range 2 {
		select {
		case <-asked:
		case <-ctx.Done():
			t.Fatal("the fake never asked the client")
		}
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close still waits on requests the client never answers")
	}
}
