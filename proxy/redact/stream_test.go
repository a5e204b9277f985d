package redact

import (
	"strings"
	"testing"
)

// A held value is masked in a text that leaves in pieces, wherever the
// pieces cut it: whole in one piece, across two, across many; and nothing
// of the text is lost or held back for good.
func TestStreamMasksAValueCutAcrossPieces(t *testing.T) {
	const secret = "sk-stream-0123456789"
	Hold(secret)
	text := "you sent Authorization=\"Bearer " + secret + "\" and " + secret + " again, sk-str and more"
	want := strings.ReplaceAll(text, secret, Mask)
	for _, size := range []int{1, 2, 3, 5, 7, 11, len(text)} {
		var s Stream
		var out strings.Builder
		for i := 0; i < len(text); i += size {
			piece := s.Next(text[i:min(i+size, len(text))])
			if strings.Contains(piece, "0123456789") {
				t.Errorf("pieces of %d: a piece given out holds the secret's end: %q", size, piece)
			}
			out.WriteString(piece)
		}
		out.WriteString(s.Flush())
		if out.String() != want {
			t.Errorf("pieces of %d: got %q, want %q", size, out.String(), want)
		}
	}
	var s Stream
	if got := s.Next("a plain piece") + s.Flush(); got != "a plain piece" {
		t.Errorf("a piece that could start no held value: %q", got)
	}
}
