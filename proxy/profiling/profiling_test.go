package profiling

import (
	"io"
	"log/slog"
	"net/http"
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
