package upstream

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Shape is the shape of a tools/call answer a fake can be told to give: its
// size in bytes as JSON, its content blocks' types counted in order, whether
// it carries structuredContent, whether it is an isError result. A replay
// answers with the shape a recorded answer had, never its content.
type Shape struct {
	Bytes      int     `json:"bytes"`
	Blocks     []Block `json:"blocks,omitempty"`
	Structured bool    `json:"structured,omitempty"`
	IsError    bool    `json:"isError,omitempty"`
}

// Block is N content blocks of one MCP type: text, image, audio,
// resource_link or resource (any other type is answered as text).
type Block struct {
	Type string `json:"type"`
	N    int    `json:"n"`
}

// neutral is what a synthetic answer's blocks hold: no one's content.
const neutral = "replay"

// padKey is the _meta key that pads a synthetic answer with no text to
// hold the filler.
const padKey = "mcpchaos/pad"

// Synthetic is an answer of shape s with neutral content: its blocks of the
// types asked, in order (a text block says "replay", an image or audio
// block holds the bytes of that word, a link or resource points at
// replay://neutral/N), structuredContent {"replay": "neutral"} when asked,
// and filler words in its first text (or resource text, or else its _meta)
// so that its JSON is s.Bytes long (a text is cut short, to nothing at
// most, for a smaller one). Kinds that take more room than s.Bytes are
// kept, at their own size.
func Synthetic(s Shape) *mcp.CallToolResult {
	res := &mcp.CallToolResult{Content: []mcp.Content{}, IsError: s.IsError}
	var text, resource *string // where the filler goes
	n := 0
	for _, b := range s.Blocks {
		for range b.N {
			n++
			uri := fmt.Sprintf("replay://neutral/%d", n)
			switch b.Type {
			case "image":
				res.Content = append(res.Content, &mcp.ImageContent{Data: []byte(neutral), MIMEType: "image/png"})
			case "audio":
				res.Content = append(res.Content, &mcp.AudioContent{Data: []byte(neutral), MIMEType: "audio/wav"})
			case "resource_link":
				res.Content = append(res.Content, &mcp.ResourceLink{URI: uri, Name: neutral})
			case "resource":
				r := &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: uri, MIMEType: "text/plain", Text: neutral}}
				res.Content = append(res.Content, r)
				if resource == nil {
					resource = &r.Resource.Text
				}
			default:
				t := &mcp.TextContent{Text: neutral}
				res.Content = append(res.Content, t)
				if text == nil {
					text = &t.Text
				}
			}
		}
	}
	if s.Structured {
		res.StructuredContent = map[string]any{neutral: "neutral"}
	}
	if s.Bytes <= 0 {
		return res
	}
	pad := text
	if pad == nil {
		pad = resource
	}
	if pad == nil {
		res.Meta = mcp.Meta{padKey: ""}
	}
	base, err := json.Marshal(res)
	if err != nil {
		return res
	}
	need := s.Bytes - len(base)
	switch {
	case need < 0 && pad != nil:
		*pad = (*pad)[:max(0, len(*pad)+need)] // a smaller answer than the word itself
	case need <= 0:
		res.Meta = nil // no room for filler: no pad either
	case pad != nil:
		*pad += filler(need)
	default:
		res.Meta[padKey] = filler(need)
	}
	return res
}

// filler is n bytes of neutral words, needing no JSON escape.
func filler(n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(" " + neutral)
	}
	return b.String()[:n]
}
