package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestReproHang1800s runs the incident end to end, compressed 300×: the
// mutant never answers within the 6 s client timeout, mcplocal answers
// within its budget plus the catalogue's stated tolerance, with the notice.
func TestReproHang1800s(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	start := time.Now()
	if err := run(ctx, []string{"repro", "hang-1800s", "--compress", "300"}, &out, &errOut); err != nil {
		t.Fatalf("repro failed: %v\n%s\n%s", err, out.String(), errOut.String())
	}
	for _, want := range []string{
		"docmost_search       NO ANSWER: the client gave up after 6",
		"⚠ Smart page titles unavailable (",
		"NOT a JSON-RPC message: the client cannot tell which request it answers",
		"⚠ Session state unavailable (",
		"Reproduced: (a) never answered",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	t.Logf("repro took %v", time.Since(start))
}

func TestReproRejectsUnknownIncidents(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"repro", "hang-60s"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "unknown incident") {
		t.Fatalf("err = %v", err)
	}
}
