package bench

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the bench's golden renderings (testdata/*.golden, docs/performance-curve*.svg) from the code")

// golden compares got with the file at path, or rewrites it with -update. A
// rendering that changes must be changed on purpose: the test prints where
// the two part.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./scenarios/bench -run %s -update writes it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		n := 0
		for n < len(got) && n < len(want) && got[n] == want[n] {
			n++
		}
		from := max(0, n-120)
		t.Errorf("%s differs from %s at byte %d:\n got: %q\nwant: %q\n(go test ./scenarios/bench -run %s -update rewrites it, if the change is meant)",
			t.Name(), path, n, got[from:min(len(got), n+120)], want[from:min(len(want), n+120)], t.Name())
	}
}

// everyCell is a run whose table has every kind of cell: direct, the floor,
// mcplocal and another proxy; sizes in KiB and MiB and unknown; goroutines
// known and not; idle kinds fully opened, cut short with an error, and not
// opened at all; a first error at one concurrency.
func everyCell() *Report {
	at := func(n, calls, errs int, p50, p90, p99, rps float64) Latency {
		return Latency{Sessions: n, Calls: calls, Errors: errs, P50Ms: p50, P90Ms: p90, P99Ms: p99, ReqPerSec: rps}
	}
	slow := at(64, 900, 3, 41.5, 88.25, 301.125, 450)
	slow.FirstError = "calling update_page: connection reset by peer"
	return &Report{
		Started: time.Date(2026, 12, 7, 15, 19, 0, 0, time.UTC), Rounds: 3, Duration: 2 * time.Second,
		Machine: "2× AMD EPYC, 24 GiB, load 2.14 2.42 2.30", LoadAtEnd: "2.76 2.54 2.35",
		Targets: []TargetReport{
			{Target: Target{Name: Direct}, Latency: []Latency{at(1, 17406, 0, 0.2, 0.73, 2.27, 2901), at(64, 38457, 0, 9.57, 17, 27.6, 6383)},
				Before: Process{RSSBytes: -1, Goroutines: -1}, After: Process{RSSBytes: -1, Goroutines: -1},
				Idle: []Idle{{Kind: IdleNoStream, Sessions: 1000, Opened: 1000, HeapPerSession: -1, RSSPerSession: -1, GoroutinesPerSession: -1}}},
			{Target: Target{Name: Floor}, Latency: []Latency{at(1, 7958, 0, 0.56, 1.32, 3.42, 1325), at(64, 21220, 0, 17.63, 28.9, 39.9, 3516)},
				Before: Process{RSSBytes: 37643878, Goroutines: -1}, After: Process{RSSBytes: 44669747, Goroutines: -1},
				Idle: []Idle{{Kind: IdleNoStream, Sessions: 1000, Opened: 1000, HeapPerSession: -1, RSSPerSession: 3072, GoroutinesPerSession: -1},
					{Kind: IdleStream, Sessions: 1000, Opened: 1000, HeapPerSession: -1, RSSPerSession: 85094, GoroutinesPerSession: -1}}},
			{Target: Target{Name: "mcplocal"}, Latency: []Latency{at(1, 5519, 0, 0.87, 1.78, 3.98, 920), at(64, 16642, 0, 22.07, 37.97, 55.91, 3400)},
				Before: Process{RSSBytes: 19293798, Goroutines: 16, HeapBytes: 4 << 20}, After: Process{RSSBytes: 55679795, Goroutines: 144, HeapBytes: 9 << 20},
				Idle: []Idle{{Kind: IdleNoStream, Sessions: 1000, Opened: 1000, HeapPerSession: 22118, RSSPerSession: 69018, GoroutinesPerSession: 2},
					{Kind: IdleStream, Sessions: 1000, Opened: 412, HeapPerSession: 69530, RSSPerSession: 198758, GoroutinesPerSession: 7, FirstError: "too many open files"}}},
			{Target: Target{Name: "other"}, Latency: []Latency{at(1, 4000, 1, 1.1, 2, 5, 660), slow},
				Before: Process{RSSBytes: -1, Goroutines: -1}, After: Process{RSSBytes: -1, Goroutines: -1},
				Idle: []Idle{{Kind: IdleNoStream, Sessions: 1000, Opened: 0, HeapPerSession: -1, RSSPerSession: -1, GoroutinesPerSession: -1, FirstError: "the server sent no Mcp-Session-Id"}}},
		},
	}
}

// Every cell of the bench's table is as recorded: the ratios against
// direct, the floor section with each goal met or missed, sizes and counts
// known and unknown, and the errors said under it.
func TestTheTableIsAsRecorded(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, everyCell()); err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join("testdata", "table.golden"), b.Bytes())
}

// A run without the floor or direct compares every target with the first
// and has no floor section.
func TestATableWithoutTheFloorIsAsRecorded(t *testing.T) {
	rep := everyCell()
	rep.Targets = rep.Targets[2:] // mcplocal, then other: mcplocal is the base
	var b bytes.Buffer
	if err := WriteTable(&b, rep); err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join("testdata", "table-no-floor.golden"), b.Bytes())
}

// The committed curves are what the bench draws from the data beside
// them: docs/performance-curve.svg from docs/performance-curve.json (both
// sweeps of a run on this machine), and the stream-held idle sweep with its
// shorter steps. A change to the drawing shows here, against the pictures
// readers see.
func TestTheCurvesAreDrawnAsRecorded(t *testing.T) {
	for _, name := range []string{"performance-curve", "performance-curve-stream"} {
		t.Run(name, func(t *testing.T) {
			docs := filepath.Join("..", "..", "docs")
			data, err := os.ReadFile(filepath.Join(docs, name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var c Curve
			if err := json.Unmarshal(data, &c); err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := WriteCurveSVG(&b, &c); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join(docs, name+".svg"), b.Bytes())
		})
	}
}
