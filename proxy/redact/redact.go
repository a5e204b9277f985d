// Package redact keeps secrets out of everything the proxy writes down or
// hands out: logs, error texts, audit rows and health output. It removes
// passwords from URL userinfo and DSNs, and the query strings of URLs
// (where API keys travel: ?apikey=...), wherever they appear in a text.
package redact

import (
	"context"
	"log/slog"
	"regexp"
	"strings"
)

// Mask replaces every secret this package removes.
const Mask = "REDACTED"

var (
	// A URL: scheme://, then anything up to whitespace or a quote.
	urlRE = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>]+`)
	// password=... in a keyword/value DSN (host=... user=... password=...).
	kvRE = regexp.MustCompile(`(?i)\b(password|passwd|pwd|apikey|api_key|token|secret)=("[^"]*"|'[^']*'|[^\s&;]+)`)
)

// Text returns s with the password of every URL's userinfo, every URL's
// query string and every keyword DSN's password replaced by Mask.
func Text(s string) string {
	if !strings.Contains(s, "://") && !strings.Contains(s, "=") {
		return s
	}
	s = urlRE.ReplaceAllStringFunc(s, URL)
	return kvRE.ReplaceAllString(s, "${1}="+Mask)
}

// URL returns u with the password of its userinfo and its query string
// replaced by Mask. It works on text that is not a valid URL too.
func URL(u string) string {
	scheme := strings.Index(u, "://")
	if scheme < 0 {
		return u
	}
	rest := u[scheme+3:]
	end := strings.IndexAny(rest, "/?#")
	authority := rest
	if end >= 0 {
		authority = rest[:end]
	}
	if at := strings.LastIndex(authority, "@"); at >= 0 {
		userinfo := authority[:at]
		if c := strings.Index(userinfo, ":"); c >= 0 {
			userinfo = userinfo[:c] + ":" + Mask
		}
		rest = userinfo + rest[at:]
	}
	out := u[:scheme+3] + rest
	if q := strings.Index(out, "?"); q >= 0 {
		frag := ""
		if h := strings.Index(out[q:], "#"); h >= 0 {
			frag = out[q+h:]
		}
		out = out[:q] + "?" + Mask + frag
	}
	return out
}

// Error returns err with its text redacted; errors.Is and errors.As still
// see the original. A nil err stays nil.
func Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if red := Text(msg); red != msg {
		return &redacted{msg: red, err: err}
	}
	return err
}

type redacted struct {
	msg string
	err error
}

func (r *redacted) Error() string { return r.msg }
func (r *redacted) Unwrap() error { return r.err }

// Handler wraps h so that every string attribute and message it logs is
// redacted (errors included).
func Handler(h slog.Handler) slog.Handler { return handler{h} }

type handler struct{ h slog.Handler }

func (r handler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r handler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, Text(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(attr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r handler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = attr(a)
	}
	return handler{r.h.WithAttrs(red)}
}

func (r handler) WithGroup(name string) slog.Handler { return handler{r.h.WithGroup(name)} }

func attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, Text(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]any, len(g))
		for i, x := range g {
			out[i] = attr(x)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, Text(err.Error()))
		}
		if s, ok := v.Any().(interface{ String() string }); ok {
			return slog.String(a.Key, Text(s.String()))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
