package profiling

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"
)

func TestCheckLoopbackRefusesEveryNonLoopbackHost(t *testing.T) {
	for _, addr := range []string{":6060", "0.0.0.0:6060", "[::]:6060", "10.1.2.3:6060", "example.com:6060", "6060"} {
		if err := CheckLoopback(addr); err == nil {
			t.Errorf("CheckLoopback(%q) = nil, want a refusal", addr)
		}
	}
	for _, addr := range []string{"127.0.0.1:6060", "127.0.0.1:0", "[::1]:6060", "localhost:6060"} {
		if err := CheckLoopback(addr); err != nil {
			t.Errorf("CheckLoopback(%q) = %v, want nil", addr, err)
		}
	}
}

func TestServeRefusesAWildcardAddress(t *testing.T) {
	if stop, err := Serve("0.0.0.0:0", slog.New(slog.DiscardHandler)); err == nil {
		stop()
		t.Fatal("Serve on 0.0.0.0 started; profiles would be reachable from other hosts")
	}
}

func TestServeAnswersTheGoroutineProfileOnLoopback(t *testing.T) {
	var logs strings.Builder
	stop, err := Serve("127.0.0.1:0", slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	_, rest, ok := strings.Cut(logs.String(), "addr=")
	if !ok {
		t.Fatalf("no address logged: %s", logs.String())
	}
	addr := strings.Fields(rest)[0]
	resp, err := http.Get("http://" + addr + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(string(body), "goroutine profile: total ") {
		t.Fatalf("goroutine profile: %d %.80q", resp.StatusCode, body)
	}
	stop()
	stop() // twice is fine
}

// TestHandlerServesEveryProfileEndpoint: the index serves the named
// profiles, but cmdline, the CPU profile, symbol and the execution trace
// each need their own handler (the index answers 404 "Unknown profile" for
// them).
func TestHandlerServesEveryProfileEndpoint(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	for _, c := range []struct {
		path, contentType, prefix string
	}{
		{"/debug/pprof/cmdline", "text/plain; charset=utf-8", os.Args[0]},
		{"/debug/pprof/symbol", "text/plain; charset=utf-8", "num_symbols: 1\n"},
		{"/debug/pprof/trace?seconds=0.05", "application/octet-stream", "go 1."},
		{"/debug/pprof/profile?seconds=1", "application/octet-stream", "\x1f\x8b"}, // gzipped protobuf
	} {
		resp, err := http.Get(srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != c.contentType || !strings.HasPrefix(string(body), c.prefix) {
			t.Errorf("%s: %d %q %.40q, want 200 %q starting %q", c.path, resp.StatusCode, resp.Header.Get("Content-Type"), body, c.contentType, c.prefix)
		}
	}
}

// TestStopLogsNoErrorAndRestoresTheMutexFraction: a clean stop is no server
// error in the log, and the mutex profile's sampling set by Serve is put back.
func TestStopLogsNoErrorAndRestoresTheMutexFraction(t *testing.T) {
	prev := runtime.SetMutexProfileFraction(3)
	defer runtime.SetMutexProfileFraction(prev)
	var logs strings.Builder
	stop, err := Serve("127.0.0.1:0", slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if got := runtime.SetMutexProfileFraction(-1); got != mutexFraction {
		t.Errorf("while serving the mutex fraction is %d, want %d", got, mutexFraction)
	}
	stop()
	if got := runtime.SetMutexProfileFraction(-1); got != 3 {
		t.Errorf("after stop the mutex fraction is %d, want 3 back", got)
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("a clean stop logged an error: %s", logs.String())
	}
}
