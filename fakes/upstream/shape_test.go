package upstream

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// kindsOf lists a result's content block types, in order, then
// "structured" and "isError" when set.
func kindsOf(t *testing.T, body []byte) string {
	t.Helper()
	var top struct {
		Content []struct {
			Type string `json:"type"`
		} `json:"content"`
		Structured json.RawMessage `json:"structuredContent"`
		IsError    bool            `json:"isError"`
	}
	if err := json.Unmarshal(body, &top); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range top.Content {
		out = append(out, c.Type)
	}
	if len(top.Structured) > 0 {
		out = append(out, "structured")
	}
	if top.IsError {
		out = append(out, "isError")
	}
	return strings.Join(out, ",")
}

// A synthetic answer has the shape asked: its blocks' kinds in order, the
// flags, and its size as JSON, exactly, whenever the kinds leave room for
// it; its content is neutral filler.
func TestASyntheticAnswerHasTheShapeAsked(t *testing.T) {
	for _, c := range []struct {
		shape Shape
		kinds string
	}{
		{Shape{Bytes: 14000, Blocks: []Block{{"text", 1}}}, "text"},
		{Shape{Bytes: 40, Blocks: []Block{{"text", 1}}}, "text"},
		{Shape{Bytes: 110, Blocks: []Block{{"resource", 1}}}, "resource"},
		{Shape{Bytes: 3000, Blocks: []Block{{"text", 2}, {"image", 1}, {"audio", 1}, {"resource_link", 1}, {"resource", 1}}, Structured: true}, "text,text,image,audio,resource_link,resource,structured"},
		{Shape{Bytes: 900, Blocks: []Block{{"image", 2}}}, "image,image"},
		{Shape{Bytes: 700, Blocks: []Block{{"resource", 1}}, IsError: true}, "resource,isError"},
		{Shape{Bytes: 500, Structured: true}, "structured"},
	} {
		body, err := json.Marshal(Synthetic(c.shape))
		if err != nil {
			t.Fatal(err)
		}
		if len(body) != c.shape.Bytes {
			t.Errorf("%+v: %d bytes, want %d", c.shape, len(body), c.shape.Bytes)
		}
		if got := kindsOf(t, body); got != c.kinds {
			t.Errorf("%+v: kinds %q, want %q", c.shape, got, c.kinds)
		}
	}
	// Kinds that need more room than the size asked keep their kinds.
	small := Shape{Bytes: 10, Blocks: []Block{{"image", 1}}}
	if body, _ := json.Marshal(Synthetic(small)); kindsOf(t, body) != "image" {
		t.Errorf("a size too small for its kinds lost them: %s", body)
	}
}

// A fake of any name serves the tools it is given, each answering with the
// shape its behaviour asks, after the behaviour's delay.
func TestANamedFakeServesItsToolsShaped(t *testing.T) {
	s, err := NewNamed("wiki", "get_page", "list")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.Serves("get_page") || s.Serves("search") {
		t.Errorf("serves get_page %v, search %v: want its own tools only", s.Serves("get_page"), s.Serves("search"))
	}
	shape := Shape{Bytes: 2048, Blocks: []Block{{"text", 1}, {"image", 1}}, Structured: true}
	s.Set("get_page", Behavior{Kind: Slow, Delay: 50 * time.Millisecond, Shape: &shape})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: s.URL(), DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	t0 := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_page", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d < 50*time.Millisecond {
		t.Errorf("answered after %v, before its 50ms delay", d)
	}
	body, _ := json.Marshal(res)
	if len(body) != shape.Bytes || kindsOf(t, body) != "text,image,structured" {
		t.Errorf("answer of %d bytes, kinds %q; want %d, text,image,structured", len(body), kindsOf(t, body), shape.Bytes)
	}
	if res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "list", Arguments: map[string]any{}}); err != nil || res.IsError {
		t.Errorf("an unshaped tool: %v %+v", err, res)
	}
}
