package redact

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"
)

// TestURLEdges: URL on each shape of text, valid URL or not.
func TestURLEdges(t *testing.T) {
	for in, want := range map[string]string{
		"no scheme here":             "no scheme here",
		"http://u:p@h":               "http://u:REDACTED@h", // no path after the authority
		"http://u@h/x":               "http://u@h/x",        // a user without a password
		"http://h/a@b:c":             "http://h/a@b:c",      // an @ in the path is no userinfo
		"http://a@b:p@h/x":           "http://a@b:REDACTED@h/x",
		"http://h/x#frag":            "http://h/x#frag",
		"http://h/x?q=1":             "http://h/x?REDACTED",
		"http://h?q=1#f":             "http://h?REDACTED#f",
		"http://u:p@h?q#f":           "http://u:REDACTED@h?REDACTED#f",
		"postgres://u:p@h:5432/db?x": "postgres://u:REDACTED@h:5432/db?REDACTED",
		"://u:p@h?q":                 "://u:REDACTED@h?REDACTED", // "://" at the very start
		"http:///x:y@h":              "http:///x:y@h",            // an empty authority: the rest is path
		"http://:p@h":                "http://:REDACTED@h",       // an empty user name
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestTextEdges: Text on texts with only a DSN keyword, only a URL, quoted
// values, and no secret at all.
func TestTextEdges(t *testing.T) {
	for in, want := range map[string]string{
		"token=abc":                    "token=REDACTED",
		`password="a b" user=x`:        "password=REDACTED user=x",
		"PWD='x y';next":               "PWD=REDACTED;next",
		"apikey=1&api_key=2&secret=3":  "apikey=REDACTED&api_key=REDACTED&secret=REDACTED",
		"mytoken=abc":                  "mytoken=abc", // not the keyword on its own
		"see ftp://u:p@h now":          "see ftp://u:REDACTED@h now",
		"a=b":                          "a=b",
		"nothing":                      "nothing",
		`"http://h/?k=v" and passwd=z`: `"http://h/?REDACTED" and passwd=REDACTED`,
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestErrorWithoutSecretIsTheSameError: an error with nothing to redact is
// returned as it is, not wrapped.
func TestErrorWithoutSecretIsTheSameError(t *testing.T) {
	base := errors.New("connection refused")
	if got := Error(base); got != base {
		t.Errorf("Error(%v) = %#v, want the same error", base, got)
	}
	red := Error(errors.New("dial http://h/?k=v"))
	if red.Error() != "dial http://h/?REDACTED" {
		t.Errorf("redacted text = %q", red.Error())
	}
}

type stringer struct{}

func (stringer) String() string { return "postgres://u:pw5@h/db" }

// TestHandlerWholeLine: the wrapped handler writes the whole line with every
// secret masked, keeps non-string values and groups, and passes Enabled on.
func TestHandlerWholeLine(t *testing.T) {
	var buf bytes.Buffer
	inner := slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}})
	h := Handler(inner)
	if h.Enabled(context.Background(), slog.LevelDebug) || !h.Enabled(context.Background(), slog.LevelInfo) {
		t.Error("Enabled is not the wrapped handler's")
	}
	l := slog.New(h).With("dsn", "postgres://u:pw1@h/db").WithGroup("g")
	l.Info("open http://x/?apikey=pw2", "n", 7, "s", stringer{}, "err", errors.New("token=pw3"), slog.Group("in", "u", "http://u:pw4@h"))
	want := `level=INFO msg="open http://x/?REDACTED" dsn=postgres://u:REDACTED@h/db g.n=7 g.s=postgres://u:REDACTED@h/db g.err="token=REDACTED" g.in.u=http://u:REDACTED@h` + "\n"
	if buf.String() != want {
		t.Errorf("line\n got %q\nwant %q", buf.String(), want)
	}
}
