package load

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestReadEventSkipsOtherMessagesAndFindsTheAnswer(t *testing.T) {
	stream := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n" +
		"id: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":7,\n" +
		"data: \"result\":{\"ok\":true}}\n\n"
	got, err := readEvent(strings.NewReader(stream), 7)
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\"jsonrpc\":\"2.0\",\"id\":7,\n\"result\":{\"ok\":true}}"; string(got) != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestReadEventReportsAStreamThatEndsWithoutTheAnswer(t *testing.T) {
	_, err := readEvent(strings.NewReader("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"), 2)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err = %v, want unexpected EOF", err)
	}
}

// An event's data may be larger than a scanner's default token (64 KiB):
// the client reads a tool result up to maxBody.
func TestReadEventReadsAnAnswerLargerThanAScannersDefault(t *testing.T) {
	text := strings.Repeat("a", 200<<10)
	stream := "data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"text\":\"" + text + "\"}}\n\n"
	got, err := readEvent(strings.NewReader(stream), 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(stream)-len("data: \n\n") {
		t.Fatalf("read %d bytes of data, want %d", len(got), len(stream)-len("data: \n\n"))
	}
}

// An event ends at a blank line, not at another field: data lines
// separated by an id line or a comment are still one event.
func TestReadEventJoinsDataLinesAcrossOtherFields(t *testing.T) {
	stream := "data: {\"jsonrpc\":\"2.0\",\"id\":4,\n" +
		"id: 17\n" +
		": keep-alive\n" +
		"data: \"result\":{}}\n\n"
	got, err := readEvent(strings.NewReader(stream), 4)
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\"jsonrpc\":\"2.0\",\"id\":4,\n\"result\":{}}"; string(got) != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestAnsweredSeparatesAnswersFromFailuresToAnswer(t *testing.T) {
	for _, err := range []error{nil, &RPCError{Code: -32001}, &HTTPError{Status: 404},
		fmt.Errorf("initialize: %w", &HTTPError{Status: 500}), fmt.Errorf("x: %w", &RPCError{})} {
		if !Answered(err) {
			t.Errorf("Answered(%v) = false, want true", err)
		}
	}
	for _, err := range []error{io.ErrUnexpectedEOF, context.DeadlineExceeded, errors.New("connection refused")} {
		if Answered(err) {
			t.Errorf("Answered(%v) = true, want false", err)
		}
	}
}

// NewHTTPClient keeps a keep-alive connection for each of its sessions, so
// that rounds of calls from all of them at once open no new connections.
func TestNewHTTPClientKeepsAConnectionForEverySession(t *testing.T) {
	const sessions, rounds = 4, 5
	var (
		mu      sync.Mutex
		dialled int
		waiting int
		release = make(chan struct{})
	)
	// Each round's calls are held until all of them arrived, so that each
	// round needs one connection per session at once.
	f := &fakeServer{Script: func(m string, id json.RawMessage) (reply, bool) {
		if m != "tools/call" {
			return reply{}, false
		}
		mu.Lock()
		waiting++
		ch := release
		if waiting == sessions {
			waiting = 0
			close(release)
			release = make(chan struct{})
		}
		mu.Unlock()
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
		}
		return reply{http.StatusOK, "application/json", rpcAnswer(id, `"result":{"content":[]}`)}, true
	}}
	f.gone = make(chan struct{}, 1)
	srv := httptest.NewUnstartedServer(f)
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			mu.Lock()
			dialled++
			mu.Unlock()
		}
	}
	srv.Start()
	defer srv.Close()
	hc := NewHTTPClient(sessions)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for range rounds {
		var wg sync.WaitGroup
		for range sessions {
			wg.Go(func() {
				s := &Session{HTTP: hc, URL: srv.URL, Stateless: true}
				if _, err := s.CallTool(ctx, "t", nil); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	mu.Lock()
	defer mu.Unlock()
	// One spare: a round may start before the last connection of the
	// previous one is back in the pool.
	if dialled > sessions+1 {
		t.Errorf("%d connections for %d rounds of %d sessions, want at most %d: idle ones were not kept",
			dialled, rounds, sessions, sessions+1)
	}
}
