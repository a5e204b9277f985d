package bound

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

func TestStringIsCutWithAMarker(t *testing.T) {
	if got := String("short", 64); got != "short" {
		t.Errorf("a short string: %q", got)
	}
	long := strings.Repeat("é", 1000) // 2000 bytes
	got := String(long, 64)
	if len(got) > 64 || !strings.HasSuffix(got, "…[cut 2000 bytes]") || !strings.HasPrefix(got, "é") {
		t.Errorf("a 2000-byte string cut at 64: %q (%d bytes)", got, len(got))
	}
	if !strings.HasPrefix(strings.TrimSuffix(got, "…[cut 2000 bytes]"), strings.Repeat("é", 1)) || !utf8Valid(got) {
		t.Errorf("cut inside a rune: %q", got)
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// Every string a log line carries is cut: message, values, errors, groups.
func TestHandlerCutsEveryStringOfALine(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(Handler(slog.NewTextHandler(&buf, nil), 256))
	huge := strings.Repeat("x", 1<<16)
	log.With("pre", huge).Info(huge, "tool", huge, "err", errors.New(huge), slog.Group("g", "method", huge))
	out := buf.String()
	if strings.Contains(out, strings.Repeat("x", 257)) {
		t.Fatalf("a log line keeps a string past the bound (%d bytes)", len(out))
	}
	if n := strings.Count(out, "[cut 65536 bytes]"); n != 5 {
		t.Fatalf("%d markers in %q, want 5 (message, pre, tool, err, g.method)", n, out)
	}
}

type longStringer struct{ s string }

func (l longStringer) String() string { return l.s }

type payload struct{ Body string }

// TestHandlerCutsEveryKindOfValue: each kind of value a log line may carry
// is cut on its own, whatever the handler beneath (text or JSON): a string,
// an error, a Stringer, bytes, a value of any other type (a struct, a
// slice), inside a group and in attributes given to With.
func TestHandlerCutsEveryKindOfValue(t *testing.T) {
	huge := strings.Repeat("x", 1<<16)
	for _, c := range []struct {
		kind string
		attr slog.Attr
	}{
		{"string", slog.String("v", huge)},
		{"error", slog.Any("v", errors.New(huge))},
		{"Stringer", slog.Any("v", longStringer{huge})},
		{"bytes", slog.Any("v", []byte(huge))},
		{"struct", slog.Any("v", payload{Body: huge})},
		{"slice", slog.Any("v", []string{huge, huge})},
		{"group", slog.Group("g", slog.Any("v", []byte(huge)))},
	} {
		for name, newHandler := range map[string]func(*bytes.Buffer) slog.Handler{
			"text": func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
			"json": func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
		} {
			for _, with := range []bool{false, true} {
				var buf bytes.Buffer
				log := slog.New(Handler(newHandler(&buf), 256))
				if with {
					log.With(c.attr).Info("m")
				} else {
					log.Info("m", c.attr)
				}
				if out := buf.String(); len(out) > 1024 {
					t.Errorf("%s value, %s handler, with=%v: a line of %d bytes, want the value cut to 256", c.kind, name, with, len(out))
				}
			}
		}
	}
}
