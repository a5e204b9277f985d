package audit_test

import (
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
)

// A result's shape is its size and the kinds of what it holds: block types
// counted in order, structuredContent, isError; never a word of its content,
// and an upstream's own type names only when they look like one.
func TestAShapeHoldsKindsNeverContent(t *testing.T) {
	result := `{"content":[{"type":"text","text":"PRIVATE page body"},{"type":"image","data":"AAAA","mimeType":"image/png"},` +
		`{"type":"text","text":"more"},{"type":"audio","data":"AA==","mimeType":"audio/wav"},{"type":"resource_link","uri":"x://1","name":"n"},` +
		`{"type":"resource","resource":{"uri":"x://2","text":"PRIVATE"}},{"type":"Weird Type!"}],"structuredContent":{"secret":"PRIVATE"},"isError":true}`
	n, s := audit.ShapeOf([]byte("  " + result + "\n"))
	if n != int64(len(result)) {
		t.Errorf("size %d, want %d", n, len(result))
	}
	const want = "text:2,image:1,audio:1,resource_link:1,resource:1,other:1,structured,isError"
	if got := s.String(); got != want {
		t.Errorf("shape %q, want %q", got, want)
	}
	if strings.Contains(s.String(), "PRIVATE") {
		t.Errorf("the shape holds content: %q", s)
	}
	if back := audit.ParseShape(want).String(); back != want {
		t.Errorf("parsed back as %q, want %q", back, want)
	}
	if _, s := audit.ShapeOf([]byte(`{"content":[],"structuredContent":null}`)); s.String() != "" {
		t.Errorf("an empty result's shape: %q, want empty", s)
	}
	if got := audit.ParseShape("text:3,imag…[cut]").String(); got != "text:3" {
		t.Errorf("a cut shape reads as %q, want its whole parts (text:3)", got)
	}
}
