package proxy_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPauseHoldsInitialize: a paused project holds initialize as it holds
// every other request (the README and 'mcpctl help pause' say so): a client
// connecting to it waits in the pause queue and connects once the project
// resumes.
func TestPauseHoldsInitialize(t *testing.T) {
	w := newPauseWorld(t, 2*time.Second, 10*time.Second, false)
	w.pause(true)
	done := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "pause-init", Version: "0"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
			Endpoint: w.base + "/projects/docmost/mcp", HTTPClient: &http.Client{Transport: bearerRT{w.token}},
			DisableStandaloneSSE: true, MaxRetries: -1,
		}, nil)
		if err == nil {
			_ = cs.Close()
		}
		done <- err
	}()
	w.waitWaiting(1)
	select {
	case err := <-done:
		t.Fatalf("initialize was answered while the project was paused (err %v)", err)
	default:
	}
	resumed := w.pause(false)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("initialize after resume: %v", err)
		}
		if took := time.Since(resumed); took > time.Second+pauseTolerance {
			t.Errorf("initialize answered %v after resume", took)
		}
	case <-ctx.Done():
		t.Fatal("initialize never answered after resume")
	}
}
