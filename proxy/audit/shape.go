package audit

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

// Shape is what an upstream_call row keeps of a tools/call result besides
// its size: the types of its content blocks, counted in the order they first
// appear, whether it carried structuredContent, and whether it was an
// isError result. It never holds content.
type Shape struct {
	Blocks     []Block
	Structured bool
	IsError    bool
}

// Block counts the content blocks of one type ("text", "image", "audio",
// "resource_link", "resource").
type Block struct {
	Type string
	N    int
}

// The words Shape.String writes for the flags.
const (
	shapeStructured = "structured"
	shapeIsError    = "isError"
	otherType       = "other"
)

// typeRE is what a content type the row keeps by name looks like; any other
// type an upstream sends is counted as "other".
var typeRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// String writes the shape as a row's Content: "type:N" per block type, then
// "structured" and "isError" when set, comma-separated ("" for an empty
// result).
func (s Shape) String() string {
	var parts []string
	for _, b := range s.Blocks {
		parts = append(parts, b.Type+":"+strconv.Itoa(b.N))
	}
	if s.Structured {
		parts = append(parts, shapeStructured)
	}
	if s.IsError {
		parts = append(parts, shapeIsError)
	}
	return strings.Join(parts, ",")
}

// ParseShape reads what String wrote; parts it cannot read (the end of a
// Content cut to the stored-string bound) are left out.
func ParseShape(content string) Shape {
	var s Shape
	for _, p := range strings.Split(content, ",") {
		switch p {
		case "":
		case shapeStructured:
			s.Structured = true
		case shapeIsError:
			s.IsError = true
		default:
			t, n, ok := strings.Cut(p, ":")
			k, err := strconv.Atoi(n)
			if ok && err == nil && k > 0 && typeRE.MatchString(t) {
				s.add(t, k)
			}
		}
	}
	return s
}

func (s *Shape) add(typ string, n int) {
	for i := range s.Blocks {
		if s.Blocks[i].Type == typ {
			s.Blocks[i].N += n
			return
		}
	}
	s.Blocks = append(s.Blocks, Block{Type: typ, N: n})
}

// ShapeOf measures a tools/call result, as JSON: its size in bytes and its
// shape. A result that is not a JSON object has its size and an empty shape.
func ShapeOf(result []byte) (int64, Shape) {
	result = bytes.TrimSpace(result)
	var top struct {
		Content []struct {
			Type string `json:"type"`
		} `json:"content"`
		Structured json.RawMessage `json:"structuredContent"`
		IsError    bool            `json:"isError"`
	}
	var s Shape
	if json.Unmarshal(result, &top) != nil {
		return int64(len(result)), s
	}
	for _, c := range top.Content {
		t := c.Type
		if !typeRE.MatchString(t) {
			t = otherType
		}
		s.add(t, 1)
	}
	s.Structured = len(top.Structured) > 0 && string(top.Structured) != "null"
	s.IsError = top.IsError
	return int64(len(result)), s
}
