package upstream

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// advertised is what a fake answers to initialize.
func advertised(t *testing.T, s *Server) *mcp.ServerCapabilities {
	t.Helper()
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.URL(), DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	return cs.InitializeResult().Capabilities
}

// quiet reports whether caps advertise nothing a server could send unprompted.
func quiet(c *mcp.ServerCapabilities) bool {
	return c.Logging == nil && (c.Tools == nil || !c.Tools.ListChanged) && (c.Prompts == nil || !c.Prompts.ListChanged) &&
		(c.Resources == nil || (!c.Resources.ListChanged && !c.Resources.Subscribe))
}

func TestAFakeAdvertisesTheCapabilitiesItIsGiven(t *testing.T) {
	d, err := NewDocmost(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if quiet(advertised(t, d)) {
		t.Error("the default docmost fake advertises nothing unprompted; want the go-sdk's defaults (logging, tools listChanged)")
	}
	d, err = NewDocmost(Options{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}})
	if err != nil {
		t.Fatal(err)
	}
	if c := advertised(t, d); !quiet(c) || c.Tools == nil {
		t.Errorf("docmost given quiet capabilities advertises %+v", c)
	}
	e, err := NewEverything(Options{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Prompts: &mcp.PromptCapabilities{}, Resources: &mcp.ResourceCapabilities{}}})
	if err != nil {
		t.Fatal(err)
	}
	if c := advertised(t, e); !quiet(c) {
		t.Errorf("everything given quiet capabilities advertises %+v (resources subscribe %v)", c, c.Resources != nil && c.Resources.Subscribe)
	}
}
