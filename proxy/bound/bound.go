// Package bound cuts the strings the proxy keeps from what a request or an
// upstream sent (audit rows, log lines) to MCPCTL_MAX_STORED_STRING_BYTES,
// ending a cut string in a marker that says how much was cut.
package bound

import (
	"context"
	"fmt"
	"log/slog"
	"unicode/utf8"
)

// String returns s if it is at most max bytes; otherwise its first bytes
// (cut on a rune boundary) and a marker "…[cut N bytes]", max bytes at most
// in all when max leaves room for the marker. max <= 0 keeps s whole.
func String(s string, max int) string {
	if max <= 0 || len(s) <= max {
		return s
	}
	marker := fmt.Sprintf("…[cut %d bytes]", len(s))
	keep := max - len(marker)
	if keep < 0 {
		keep = 0
	}
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + marker
}

// Handler wraps h so that the message and every string value of every line
// (errors, Stringers and bytes included, groups walked) is cut to max bytes;
// a value of any other type whose printed form is longer is cut as that form.
func Handler(h slog.Handler, max int) slog.Handler { return handler{h: h, max: max} }

type handler struct {
	h   slog.Handler
	max int
}

func (b handler) Enabled(ctx context.Context, l slog.Level) bool { return b.h.Enabled(ctx, l) }

func (b handler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, String(rec.Message, b.max), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(b.attr(a))
		return true
	})
	return b.h.Handle(ctx, out)
}

func (b handler) WithAttrs(as []slog.Attr) slog.Handler {
	cut := make([]slog.Attr, len(as))
	for i, a := range as {
		cut[i] = b.attr(a)
	}
	return handler{h: b.h.WithAttrs(cut), max: b.max}
}

func (b handler) WithGroup(name string) slog.Handler {
	return handler{h: b.h.WithGroup(name), max: b.max}
}

func (b handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, String(v.String(), b.max))
	case slog.KindGroup:
		g := v.Group()
		out := make([]any, len(g))
		for i, x := range g {
			out[i] = b.attr(x)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, String(err.Error(), b.max))
		}
		if s, ok := v.Any().(fmt.Stringer); ok {
			return slog.String(a.Key, String(s.String(), b.max))
		}
		if bs, ok := v.Any().([]byte); ok {
			return slog.String(a.Key, String(string(bs), b.max))
		}
		// Any other value (a struct, a slice, a map) is kept as it is while
		// its printed form fits, else cut as that printed form.
		if s := fmt.Sprint(v.Any()); b.max > 0 && len(s) > b.max {
			return slog.String(a.Key, String(s, b.max))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
