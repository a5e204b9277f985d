package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/scenarios/bench"
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

// bench --curve writes the picture and its data where --curve-out says,
// both saying where they were measured; idle steps out of order are refused.
func TestBenchCurveWritesThePictureAndItsData(t *testing.T) {
	fake, err := upstream.NewDocmost(upstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	prefix := filepath.Join(t.TempDir(), "curve")
	args := []string{"--no-mcplocal", "--no-floor", "--upstream", fake.URL(), "--tool", "update_page",
		"--args", `{"page_id":"p1"}`, "--target", "a=" + fake.URL(), "--curve", "--curve-active", "1,2",
		"--curve-idle", "0,3", "--curve-idle-active", "1", "--duration", "50ms", "--curve-out", prefix}
	if err := runBench(context.Background(), args, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	var c bench.Curve
	doc, err := os.ReadFile(prefix + ".json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(doc, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Series) != 2 || c.Series[0].Target != "a" || len(c.Series[0].Points) != 2 || len(c.Series[1].Points) != 2 || c.LoadAtEnd == "" {
		t.Errorf("curve data: %+v", c)
	}
	svg, err := os.ReadFile(prefix + ".svg")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(svg), "<svg ") || !strings.Contains(string(svg), "load at the end") {
		t.Errorf("curve picture:\n%s", svg)
	}
	bad := append(slices.Clone(args), "--curve-idle", "5,0")
	if err := runBench(context.Background(), bad, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "ascending") {
		t.Errorf("idle steps 5,0: err %v, want them refused as out of order", err)
	}
}
