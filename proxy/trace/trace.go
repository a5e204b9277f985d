// Package trace mints the trace code every request carries and moves it through
// context.Context to every layer that writes an audit row, a log line or a
// notice.
//
// A trace code is 8 characters of Crockford base32 (40 random bits) without
// I, L, O or U, so it can be read aloud and typed back into `mcpctl trace`.
package trace

import (
	"context"
	"crypto/rand"
	"encoding/binary"
)

// Alphabet is Crockford's base32 alphabet: digits and letters minus I, L, O, U.
const Alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// Len is the length of a trace code in characters (5 bits each, 40 bits in all).
const Len = 8

// New returns a fresh random trace code. It is safe for concurrent use.
func New() string {
	var b [8]byte
	_, _ = rand.Read(b[3:]) // crypto/rand.Read never fails on supported platforms
	n := binary.BigEndian.Uint64(b[:])
	var out [Len]byte
	for i := Len - 1; i >= 0; i-- {
		out[i] = Alphabet[n&31]
		n >>= 5
	}
	return string(out[:])
}

// Valid reports whether s is a well-formed trace code.
func Valid(s string) bool {
	if len(s) != Len {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !validChar(s[i]) {
			return false
		}
	}
	return true
}

func validChar(c byte) bool {
	for i := 0; i < len(Alphabet); i++ {
		if Alphabet[i] == c {
			return true
		}
	}
	return false
}

type codeKey struct{}

// With returns a context carrying code as the request's trace code.
func With(ctx context.Context, code string) context.Context {
	return context.WithValue(ctx, codeKey{}, code)
}

// From returns the trace code carried by ctx, or "" if there is none.
func From(ctx context.Context) string {
	s, _ := ctx.Value(codeKey{}).(string)
	return s
}

// Ensure returns ctx with a trace code, minting one if ctx has none, and the code.
func Ensure(ctx context.Context) (context.Context, string) {
	if c := From(ctx); c != "" {
		return ctx, c
	}
	c := New()
	return With(ctx, c), c
}

// Header carries a trace code minted before the JSON-RPC layer (by the
// entry, when it recreated the session the request arrived on) so the
// request's rows share it. The entry strips any value a client sends.
const Header = "X-Mcplocal-Trace"

// MetaKey is the key under which a result's _meta carries its trace code.
const MetaKey = "traceCode"

type spanKey struct{}

// NewSpanID returns a short random span id (6 Crockford characters, 30 bits):
// a trace has tens of spans, so ids collide within one with odds under 1e-6.
func NewSpanID() string {
	return New()[:6]
}

// StartSpan returns ctx with a new current span, the new span's id and the id
// of the span that encloses it ("" for a root span).
func StartSpan(ctx context.Context) (context.Context, string, string) {
	parent := SpanFrom(ctx)
	id := NewSpanID()
	return context.WithValue(ctx, spanKey{}, id), id, parent
}

// SpanFrom returns the current span id carried by ctx, or "".
func SpanFrom(ctx context.Context) string {
	s, _ := ctx.Value(spanKey{}).(string)
	return s
}
