package project

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/session"
)

// An upstream is told what the client offers, no more and no less: for a
// client offering each subset of sampling, elicitation and roots, with and
// without its standalone stream, on the relay and on the go-sdk path, the
// upstream's session is initialized with exactly the client's capabilities.
// A call is relayed unless the client offers requests it could only be
// asked on a standalone stream it does not hold.
func TestUpstreamIsToldExactlyWhatTheClientOffers(t *testing.T) {
	for _, relayOn := range []bool{false, true} {
		up := newUpstreamSeen(t)
		p := New("p", Options{Servers: map[string]string{"s": up.srv.URL}, Sessions: session.NewTable(), Audit: discardRows{},
			Knobs: knobs.Defaults(), Logger: slog.New(slog.DiscardHandler), Relay: relayOn})
		t.Cleanup(p.Close)
		url := serveRelaying(t, p)
		for shape := range 8 {
			sampling, elicitation, roots := shape&1 != 0, shape&2 != 0, shape&4 != 0
			for _, standalone := range []bool{false, true} {
				name := fmt.Sprintf("relay=%v sampling=%v elicitation=%v roots=%v standalone=%v", relayOn, sampling, elicitation, roots, standalone)
				t.Run(name, func(t *testing.T) {
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					defer cancel()
					o := &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}
					if sampling {
						o.CreateMessageHandler = func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
							return &mcp.CreateMessageResult{}, nil
						}
					}
					if elicitation {
						o.ElicitationHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
							return &mcp.ElicitResult{Action: "decline"}, nil
						}
					}
					if roots {
						o.Capabilities.RootsV2 = &mcp.RootCapabilities{ListChanged: true}
					}
					seen := len(up.seen()) // the first client's upstream session opens at its initialize
					c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, o)
					cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: !standalone, MaxRetries: -1}, nil)
					if err != nil {
						t.Fatal(err)
					}
					defer cs.Close()
					if standalone { // the stream is announced before the call
						waitListening(t, p, cs.ID())
					}
					before := p.Relayed()
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "s_echo", Arguments: map[string]any{"s": "hi"}})
					if err != nil || res.IsError {
						t.Fatalf("s_echo: %+v, %v", res, err)
					}
					all := up.seen()
					for i := 0; i < 100 && len(all) == seen; i++ { // notifications/initialized may trail the call
						time.Sleep(10 * time.Millisecond)
						all = up.seen()
					}
					if len(all) != seen+1 {
						t.Fatalf("%d upstream sessions opened for one client, want 1", len(all)-seen)
					}
					got := all[len(all)-1]
					if got == nil {
						t.Fatal("the upstream was told no capabilities at all")
					}
					if (got.Sampling != nil) != sampling || (got.Elicitation != nil) != elicitation || (got.RootsV2 != nil || got.Roots.ListChanged) != roots {
						t.Errorf("the upstream was told sampling=%v elicitation=%v roots=%v, want %v %v %v",
							got.Sampling != nil, got.Elicitation != nil, got.RootsV2 != nil || got.Roots.ListChanged, sampling, elicitation, roots)
					}
					wantRelayed := relayOn && (standalone || !(sampling || elicitation || roots))
					if relayed := p.Relayed() > before; relayed != wantRelayed {
						t.Errorf("relayed %v, want %v", relayed, wantRelayed)
					}
				})
			}
		}
	}
}

// waitListening waits (bounded) until p knows the client's standalone stream.
func waitListening(t *testing.T, p *Project, id string) {
	t.Helper()
	for range 200 {
		p.mu.Lock()
		cl := p.clients[id]
		p.mu.Unlock()
		if cl != nil && cl.isListening() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the client's standalone stream never reached the project")
}
