package main

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestGetInstancesPrintsTheTableAndNotes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/instances" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`{"instances":[
 {"project":"home","server":"unifi","status":"unhealthy","probe":"readiness: tools/call list_sites","latencyNs":` + itoa(300*time.Millisecond) + `,"lastError":"controller unreachable: dial tcp: connection refused","consecutiveFailures":3,"checkedAt":"2026-11-30T01:00:00Z"},
 {"project":"home","server":"version","status":"healthy","probe":"readiness: tools/call get_version","latencyNs":` + itoa(2*time.Millisecond) + `,"note":"answered in 2ms: a probe this fast is likely reading a local table","checkedAt":"2026-11-30T01:00:00Z"},
 {"project":"docs","server":"docmost","status":"live","probe":"liveness: tools/list","latencyNs":` + itoa(4*time.Millisecond) + `,"checkedAt":"2026-11-30T01:00:00Z"}]}`))
	}))
	defer srv.Close()
	r := cli(t, "get", "instances", "--url", srv.URL)
	r.wantCode(t, 0)
	for _, want := range []string{
		"SERVER", "STATUS", "PROBE", "LATENCY", "LAST ERROR",
		"unifi", "unhealthy", "readiness: tools/call list_sites", "300ms", "controller unreachable",
		"docmost", "live", "liveness: tools/list",
		"note: home/version answered in 2ms",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestGetInstancesReportsAnUnreachableProxy(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	r := cli(t, "get", "instances", "--url", url)
	r.wantCode(t, 1)
	if !strings.Contains(r.stderr, "cannot reach the proxy") {
		t.Errorf("stderr: %s", r.stderr)
	}
}

func itoa(d time.Duration) string { return strconv.FormatInt(int64(d), 10) }

// TestGetInstancesShowsTheCauseOfALongError: a last error too long for the
// table keeps its end, where the cause is ("connection refused"), and is
// printed whole under the table.
func TestGetInstancesShowsTheCauseOfALongError(t *testing.T) {
	const long = `calling "initialize": rejected by transport: sending "initialize": Post "http://127.0.0.1:9300/mcp": dial tcp 127.0.0.1:9300: connect: connection refused`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"instances":[{"project":"docmost","server":"wiki","status":"unhealthy","probe":"liveness: tools/list","lastError":` + strconv.Quote(long) + `,"consecutiveFailures":3,"checkedAt":"2026-11-30T01:00:00Z"}]}`))
	}))
	defer srv.Close()
	r := cli(t, "get", "instances", "--url", srv.URL)
	r.wantCode(t, 0)
	table, below, _ := strings.Cut(r.stdout, "\n\n")
	row := strings.Split(strings.TrimSpace(table), "\n")[1]
	if !strings.HasSuffix(row, "connect: connection refused") || !strings.Contains(row, `calling "initialize"`) || len([]rune(row)) > 160 {
		t.Errorf("the table's row does not keep the error's start and cause within its width:\n%s", r.stdout)
	}
	if !strings.Contains(below, "docmost/wiki: "+long) {
		t.Errorf("the whole error is not printed under the table:\n%s", r.stdout)
	}
}

// TestGetInstancesErrorColumnWidth: a last error of the column's width (80
// characters) is shown whole in the table with nothing printed below it;
// one character more keeps its first 39 and last 40 around an ellipsis.
// Latency is shown to a tenth of a millisecond.
func TestGetInstancesErrorColumnWidth(t *testing.T) {
	fits := strings.Repeat("a", 40) + strings.Repeat("z", 40)
	over := "b" + fits
	for _, c := range []struct{ lastError, cell, below string }{
		{fits, fits, ""},
		{over, "b" + strings.Repeat("a", 38) + "…" + strings.Repeat("z", 40), "\nlast error of docmost/wiki: " + over + "\n"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"instances":[{"project":"docmost","server":"wiki","status":"unhealthy","probe":"liveness: tools/list","latencyNs":` + itoa(1234567) + `,"lastError":` + strconv.Quote(c.lastError) + `,"checkedAt":"2026-11-30T01:00:00Z"}]}`))
		}))
		r := cli(t, "get", "instances", "--url", srv.URL)
		srv.Close()
		r.wantCode(t, 0)
		lines := strings.SplitAfter(r.stdout, "\n")
		if len(lines) < 2 {
			t.Fatalf("output:\n%s", r.stdout)
		}
		if row := strings.Fields(lines[1]); len(row) != 7 || row[5] != "1.2ms" || row[6] != c.cell {
			t.Errorf("row %q, want latency 1.2ms and last error %q", lines[1], c.cell)
		}
		if got := strings.Join(lines[2:], ""); got != c.below {
			t.Errorf("below the table %q, want %q", got, c.below)
		}
	}
}
