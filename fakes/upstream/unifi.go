package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Controller is a fake UniFi controller: GET /api/sites lists sites. The
// unifi-like MCP server reaches it over the network (in the harness, through
// a toxiproxy link), so its readiness can fail while its liveness holds.
type Controller struct {
	srv  *http.Server
	ln   net.Listener
	wg   sync.WaitGroup
	once sync.Once
}

// NewController starts a controller on a free loopback port.
func NewController() (*Controller, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	c := &Controller{ln: ln}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/sites", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"data":[{"name":"default","desc":"Home"},{"name":"lab","desc":"Lab"}]}`)
	})
	c.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	c.wg.Add(1)
	go func() { defer c.wg.Done(); _ = c.srv.Serve(ln) }()
	return c, nil
}

// Addr is the controller's host:port.
func (c *Controller) Addr() string { return c.ln.Addr().String() }

// Close stops the controller. Close may be called more than once.
func (c *Controller) Close() error {
	c.once.Do(func() { _ = c.srv.Close(); c.wg.Wait() })
	return nil
}

// NewUnifi starts a unifi-like MCP server at /mcp whose list_sites tool
// asks the controller at controllerAddr (a round trip: readiness material),
// and whose get_version tool answers from memory (local-only: a probe on it
// proves nothing about the controller).
func NewUnifi(controllerAddr string, opts Options) (*Server, error) {
	s := newServer("unifi", opts)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	s.mcp.AddTool(&mcp.Tool{Name: "list_sites", Description: "List the controller's sites.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{}}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return s.run(ctx, "list_sites", func() *mcp.CallToolResult {
				sites, err := fetchSites(ctx, client, controllerAddr)
				if err != nil {
					return errorResult("controller unreachable: " + err.Error())
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sites: " + strings.Join(sites, ", ")}}}
			}), nil
		})
	s.mcp.AddTool(&mcp.Tool{Name: "get_version", Description: "The server's own version (no controller involved).",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{}}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return s.run(ctx, "get_version", func() *mcp.CallToolResult {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "unifi-mcp 1.0.0"}}}
			}), nil
		})
	return s, s.start(opts.Addr)
}

func fetchSites(ctx context.Context, client *http.Client, addr string) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/api/sites", nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Data []struct{ Name string } `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("controller answered %s: %w", resp.Status, err)
	}
	var names []string
	for _, d := range body.Data {
		names = append(names, d.Name)
	}
	return names, nil
}
