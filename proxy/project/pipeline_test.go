package project

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/session"
	"github.com/mcpchaos/mcpchaos/proxy/stage"
)

// The stages run over a result made only of text, not over an error or a
// result with an image; a paginated result's other pages come from
// get_page, which refuses an unknown handle, a page out of range and
// arguments it cannot read, in its own words.
func TestStagesAndGetPage(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, nil)
	long := "aaaaaaaaaabbbbbbbbbbccccc"
	mcp.AddTool(s, &mcp.Tool{Name: "long"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: long[:12]}, &mcp.TextContent{Text: long[12:]}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "broken"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: long}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "picture"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: long}, &mcp.ImageContent{Data: []byte("png"), MIMEType: "image/png"}}}, nil, nil
	})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(up.Close)
	k := knobs.Defaults()
	pages := stage.NewPages()
	pl, err := stage.NewPipeline([]config.Stage{{Name: "paginate", Options: map[string]any{"thresholdBytes": 10, "pageBytes": 10}}},
		&stage.Shared{Knobs: k, Cache: stage.NewCache(8), Pages: pages, Audit: discardRows{}})
	if err != nil {
		t.Fatal(err)
	}
	p := New("p", Options{Servers: map[string]string{"s": up.URL}, Pipeline: pl, Pages: pages, Sessions: session.NewTable(), Audit: discardRows{}, Knobs: k, Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(p.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs := connectClient(ctx, t, serveProject(t, p))
	texts := func(name string, args map[string]any) ([]string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var out []string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				out = append(out, traceCode.ReplaceAllString(tc.Text, "[trace X]"))
			} else {
				out = append(out, "(not text)")
			}
		}
		return out, res.IsError
	}
	first, isErr := texts("s_long", map[string]any{})
	handle := regexp.MustCompile(`"handle": "([^"]+)"`).FindStringSubmatch(strings.Join(first, ""))
	if isErr || len(first) != 1 || handle == nil || !strings.HasPrefix(first[0], "This result is 25 bytes in 3 pages; page 1 follows.") || !strings.HasSuffix(first[0], "\naaaaaaaaaa") {
		t.Fatalf("s_long: %q", first)
	}
	if got, isErr := texts("get_page", map[string]any{"handle": handle[1], "page": 3}); isErr || strings.Join(got, "|") != "--- Page 3 of 3 ---\nccccc" {
		t.Errorf("page 3: %q", got)
	}
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"handle": handle[1], "page": 4}, "page 4 does not exist; the result has pages 1 to 3 [trace X]"},
		{map[string]any{"handle": "NOSUCH", "page": 1}, `no paginated result with handle "NOSUCH" (it may have expired); call the original tool again [trace X]`},
	} {
		if got, isErr := texts("get_page", c.args); !isErr || strings.Join(got, "|") != c.want {
			t.Errorf("get_page %v: %q (error %v), want %q", c.args, got, isErr, c.want)
		}
	}
	if got, isErr := texts("get_page", map[string]any{"handle": 7, "page": "one"}); !isErr || len(got) != 1 || !strings.HasPrefix(got[0], `get_page wants {"handle": string, "page": number}: `) {
		t.Errorf("get_page with arguments it cannot read: %q", got)
	}
	if got, isErr := texts("s_broken", map[string]any{}); !isErr || strings.Join(got, "|") != long {
		t.Errorf("an error result went through the stages: %q", got)
	}
	if got, _ := texts("s_picture", map[string]any{}); strings.Join(got, "|") != long+"|(not text)" {
		t.Errorf("a result with an image went through the stages: %q", got)
	}
}

// Without stages a result passes as the upstream gave it: its parts stay
// apart.
func TestWithoutStagesAResultPassesWhole(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "two"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "one"}, &mcp.TextContent{Text: "two"}}}, nil, nil
	})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(up.Close)
	p := New("p", Options{Servers: map[string]string{"s": up.URL}, Sessions: session.NewTable(), Audit: discardRows{}, Knobs: knobs.Defaults(), Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(p.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := connectClient(ctx, t, serveProject(t, p)).CallTool(ctx, &mcp.CallToolParams{Name: "s_two", Arguments: map[string]any{}})
	if err != nil || len(res.Content) != 2 || res.Content[0].(*mcp.TextContent).Text != "one" || res.Content[1].(*mcp.TextContent).Text != "two" {
		t.Errorf("s_two: %+v, %v; want its two parts as they came", res, err)
	}
}
