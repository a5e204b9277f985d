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
