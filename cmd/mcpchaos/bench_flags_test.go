package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

// The relay is on by default: bench's plain mcplocal target runs
// the default config, --sdk-path adds the go-sdk path beside it, and the
// old --relay (which added the relay beside an SDK-path mcplocal) is gone.
func TestBenchOffersTheSDKPathBesideTheDefault(t *testing.T) {
	var help bytes.Buffer
	if err := runBench(context.Background(), []string{"--help"}, io.Discard, &help); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
	for _, want := range []string{"-sdk-path", "relay: false", "mcplocal-sdk"} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("--help does not say %q:\n%s", want, help.String())
		}
	}
	if strings.Contains(help.String(), "mcplocal-relay") {
		t.Errorf("--help still names the old mcplocal-relay target:\n%s", help.String())
	}
	if err := runBench(context.Background(), []string{"--relay"}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "relay") {
		t.Errorf("--relay: err %v, want it refused as an unknown flag", err)
	}
}
