package shared_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/audit/audittest"
)

// One throwaway PostgreSQL server for the whole test binary, started by the
// first test that needs it and stopped by TestMain; each test gets a
// database of its own, which its replicas share.
var (
	pgOnce  sync.Once
	pgAdmin string
	pgStop  func() error
	pgErr   error
	pgSeq   atomic.Int64
)

func sharedDSN(t *testing.T) string {
	t.Helper()
	pgOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		pgAdmin, pgStop, pgErr = audittest.StartPostgres(ctx)
	})
	if errors.Is(pgErr, audittest.ErrNoPostgres) {
		t.Fatalf("the replica tests need a local PostgreSQL server installation (make deps) and none was found.\n%v", pgErr)
	}
	if pgErr != nil {
		t.Fatalf("start throwaway PostgreSQL: %v", pgErr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dsn, err := audittest.CreateDatabase(ctx, pgAdmin, fmt.Sprintf("replicas_%d", pgSeq.Add(1)))
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

func TestMain(m *testing.M) {
	code := m.Run()
	if pgStop != nil {
		if err := pgStop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop throwaway PostgreSQL:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// newUpstream starts an upstream MCP server with the one tool name (it
// answers "<name> ok"), closed when the test ends.
func newUpstream(t *testing.T, name string) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "replica-test-upstream", Version: "0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: name, Description: "Answers."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " ok"}}}, nil, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	return srv.URL
}
