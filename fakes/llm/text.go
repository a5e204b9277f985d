package llm

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"
)

// replyWords is how many words of the prompt Reply quotes.
const replyWords = 8

// excerptRunes is how much of a prompt a recorded Request keeps.
const excerptRunes = 160

// Reply returns the text the fake answers to prompt under OK: "Summary " and
// the first 8 hex digits of the prompt's SHA-256, then ": " and its first eight
// words ("Summary 1a2b3c4d: what is a quaternion?"). The prompt is the text of
// the last user message of the request. Tests compute the expected answer with
// it.
func Reply(prompt string) string {
	sum := sha256.Sum256([]byte(prompt))
	head := "Summary " + hex.EncodeToString(sum[:4])
	words := strings.Fields(prompt)
	if len(words) == 0 {
		return head
	}
	if len(words) > replyWords {
		words = words[:replyWords]
	}
	return head + ": " + strings.Join(words, " ")
}

// cutMark in a text makes chunks cut the text there (and is dropped): a
// fake's answer that must cross a chunk boundary at a given place (AnswerEcho)
// carries it; the plain answer drops it too.
const cutMark = "\x1f"

// chunks splits text into the pieces of a streamed answer: one per word, each
// word but the first keeping the space before it, and one more cut at each
// cutMark. A text of one word with two runes or more is cut in two, so every
// non-trivial answer streams in at least two pieces and a partial answer is
// visibly partial.
func chunks(text string) []string {
	if strings.Contains(text, cutMark) {
		var out []string
		for _, piece := range strings.Split(text, cutMark) {
			if piece != "" {
				out = append(out, wordChunks(piece)...)
			}
		}
		return out
	}
	return wordChunks(text)
}

func wordChunks(text string) []string {
	var out []string
	start, prevSpace := 0, false
	for i, r := range text {
		space := unicode.IsSpace(r)
		if space && !prevSpace && i > start {
			out = append(out, text[start:i])
			start = i
		}
		prevSpace = space
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	if len(out) == 1 && utf8.RuneCountInString(text) >= 2 {
		runes := []rune(text)
		half := len(runes) / 2
		out = []string{string(runes[:half]), string(runes[half:])}
	}
	return out
}

// excerpt shortens s for the request log.
func excerpt(s string) string {
	if utf8.RuneCountInString(s) <= excerptRunes {
		return s
	}
	return string([]rune(s)[:excerptRunes]) + "…"
}

// tokens is the fake's token count of s: its number of words.
func tokens(s string) int { return len(strings.Fields(s)) }

// displayName derives a human name from a model id: "claude-opus-4-5" becomes
// "Claude Opus 4.5".
func displayName(id string) string {
	var out []string
	for _, part := range strings.Split(id, "-") {
		if part == "" {
			continue
		}
		numeric := strings.IndexFunc(part, func(r rune) bool { return !unicode.IsDigit(r) }) < 0
		if numeric && len(out) > 0 && len(part) < 4 && isVersion(out[len(out)-1]) {
			out[len(out)-1] += "." + part
			continue
		}
		r, size := utf8.DecodeRuneInString(part)
		out = append(out, string(unicode.ToUpper(r))+part[size:])
	}
	return strings.Join(out, " ")
}

// isVersion reports whether s is a short version number such as "4" or "4.5".
func isVersion(s string) bool {
	if s == "" || len(s) > 6 {
		return false
	}
	for _, r := range s {
		if !unicode.IsDigit(r) && r != '.' {
			return false
		}
	}
	return unicode.IsDigit(rune(s[0]))
}
