package redact

import "strings"

// Stream masks held secret values (Hold) in a text that leaves in pieces, a
// streamed answer's chunks, including a value cut across two pieces: Next
// keeps back the end of what it was given as long as that end could be the
// start of a held value, and gives it out with the next piece or at Flush.
// The zero Stream is ready; it is not safe for concurrent use.
type Stream struct {
	pending string
}

// Next takes the next piece and returns the text that may leave now, every
// held value in it masked.
func (s *Stream) Next(piece string) string {
	h := held.Load()
	if h == nil {
		out := s.pending + piece
		s.pending = ""
		return out
	}
	text := h.r.Replace(s.pending + piece)
	keep := heldPrefixAtEnd(text, h.list)
	s.pending = text[len(text)-keep:]
	return text[:len(text)-keep]
}

// Flush returns what Next kept back, masked: the text's end, once no piece
// follows.
func (s *Stream) Flush() string {
	out := Values(s.pending)
	s.pending = ""
	return out
}

// heldPrefixAtEnd is the length of the longest end of text that is a proper
// start of a held value (0 if none).
func heldPrefixAtEnd(text string, list [][]byte) int {
	best := 0
	for _, v := range list {
		n := min(len(v)-1, len(text))
		for k := n; k > best; k-- {
			if strings.HasSuffix(text, string(v[:k])) {
				best = k
				break
			}
		}
	}
	return best
}
