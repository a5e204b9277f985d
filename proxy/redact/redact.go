// Package redact keeps secrets out of everything the proxy writes down or
// hands out: logs, error texts, audit rows, answers and health output. It
// removes secrets by shape (passwords from URL userinfo and DSNs, the query
// strings of URLs, where API keys travel: ?apikey=...) and by value: every
// secret the proxy holds (Hold: user tokens, LLM API keys and OAuth tokens,
// upstream header values, the audit DSN's password), wherever it appears in
// a text, echoed back by whatever service (an LLM provider's 401 body
// quoting the Authorization header, say).
package redact

import (
	"bytes"
	"context"
	"log/slog"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// MinHeldLen is the shortest value Hold keeps: a shorter one would mask
// ordinary words (and is no secret worth the name).
const MinHeldLen = 6

// held is every value Hold was given, with one replacer masking them all;
// nil until the first.
var (
	held   atomic.Pointer[heldValues]
	holdMu sync.Mutex
)

type heldValues struct {
	set  map[string]bool
	list [][]byte
	r    *strings.Replacer
}

// Hold adds secret values the process holds: from then on Text (and so
// Error, Handler, and every outlet that uses them) masks each wherever it
// appears. Values shorter than MinHeldLen are ignored. The set only grows,
// for the life of the process; a value held twice is held once.
func Hold(values ...string) {
	holdMu.Lock()
	defer holdMu.Unlock()
	old := held.Load()
	set := map[string]bool{}
	if old != nil {
		for v := range old.set {
			set[v] = true
		}
	}
	added := false
	for _, v := range values {
		if v = strings.TrimSpace(v); len(v) >= MinHeldLen && !set[v] {
			set[v], added = true, true
		}
	}
	if !added {
		return
	}
	all := make([]string, 0, len(set))
	for v := range set {
		all = append(all, v)
	}
	// Longest first: a secret that contains another is masked whole.
	sort.Slice(all, func(i, j int) bool {
		return len(all[i]) > len(all[j]) || (len(all[i]) == len(all[j]) && all[i] < all[j])
	})
	pairs := make([]string, 0, 2*len(all))
	list := make([][]byte, 0, len(all))
	for _, v := range all {
		pairs = append(pairs, v, Mask)
		list = append(list, []byte(v))
	}
	held.Store(&heldValues{set: set, list: list, r: strings.NewReplacer(pairs...)})
}

// Holding reports whether any secret value is held (Hold): only then does
// text need a scan by value.
func Holding() bool { return held.Load() != nil }

// Values masks every held secret value in s (and nothing else).
func Values(s string) string {
	if h := held.Load(); h != nil {
		return h.r.Replace(s)
	}
	return s
}

// ValuesIn masks every held secret value in b, an answer's bytes on their
// way out; b itself, not copied, when it holds none (the common case costs
// one scan per held value, no allocation).
func ValuesIn(b []byte) []byte {
	h := held.Load()
	if h == nil {
		return b
	}
	for _, v := range h.list {
		if bytes.Contains(b, v) {
			return []byte(h.r.Replace(string(b)))
		}
	}
	return b
}

// SecretsOf returns the secret values in a URL or DSN: its userinfo
// password, its query values, and the values of keyword DSN passwords
// (password=...), for Hold.
func SecretsOf(dsn string) []string {
	var out []string
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		if pw, ok := u.User.Password(); ok {
			out = append(out, pw)
		}
		for _, vs := range u.Query() {
			out = append(out, vs...)
		}
	}
	for _, m := range kvRE.FindAllStringSubmatch(dsn, -1) {
		out = append(out, strings.Trim(m[2], `"'`))
	}
	return out
}

// Mask replaces every secret this package removes.
const Mask = "REDACTED"

var (
	// A URL: scheme://, then anything up to whitespace or a quote.
	urlRE = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>]+`)
	// password=... in a keyword/value DSN (host=... user=... password=...).
	kvRE = regexp.MustCompile(`(?i)\b(password|passwd|pwd|apikey|api_key|token|secret)=("[^"]*"|'[^']*'|[^\s&;]+)`)
)

// Text returns s with every held secret value (Hold), the password of every
// URL's userinfo, every URL's query string and every keyword DSN's password
// replaced by Mask.
func Text(s string) string {
	s = Values(s)
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
