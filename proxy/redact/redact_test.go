package redact

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

func TestTextRemovesPasswordsAndQueries(t *testing.T) {
	cases := map[string]string{
		"postgres://mcp:s3cret@127.0.0.1:5432/audit":                          "postgres://mcp:REDACTED@127.0.0.1:5432/audit",
		`Post "http://127.0.0.1:9100/mcp?apikey=K3Y&x=1": connection refused`: `Post "http://127.0.0.1:9100/mcp?REDACTED": connection refused`,
		"https://u:p@h/x?tok=1#frag":                                          "https://u:REDACTED@h/x?REDACTED#frag",
		"host=db user=mcp password=hunter2 dbname=a":                          "host=db user=mcp password=REDACTED dbname=a",
		"http://127.0.0.1:9100/mcp":                                           "http://127.0.0.1:9100/mcp",
		"sqlite:./mcplocal-audit.db":                                          "sqlite:./mcplocal-audit.db",
		"plain text with no secret":                                           "plain text with no secret",
	}
	for in, want := range cases {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestErrorKeepsTheChain(t *testing.T) {
	base := errors.New("dial http://a:b@h/?k=v")
	err := Error(base)
	if strings.Contains(err.Error(), "k=v") || strings.Contains(err.Error(), ":b@") {
		t.Errorf("Error left a secret: %v", err)
	}
	if !errors.Is(err, base) {
		t.Error("errors.Is lost the original")
	}
	if Error(nil) != nil {
		t.Error("Error(nil) != nil")
	}
}

func TestHandlerRedactsEveryAttr(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(Handler(slog.NewTextHandler(&buf, nil)))
	l.With("dsn", "postgres://u:pw1@h/db").Info("open http://x/?apikey=pw2", "err", errors.New("GET http://h/?token=pw3"), slog.Group("g", "u", "http://u:pw4@h"))
	out := buf.String()
	for _, secret := range []string{"pw1", "pw2", "pw3", "pw4"} {
		if strings.Contains(out, secret) {
			t.Errorf("the log line leaks %s: %s", secret, out)
		}
	}
}
