package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Bounds of the TypeScript client.
const (
	tsDir = "tools/tsclient" // in the module
)

// TSClient is the official TypeScript MCP SDK's Streamable HTTP client
// (npm @modelcontextprotocol/sdk, pinned by tools/tsclient/package-lock.json),
// run by node and driven one JSON line at a time. It needs node on PATH.
type TSClient struct {
	// SessionID is the id the server gave at initialize.
	SessionID string

	mu    sync.Mutex
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines *bufio.Scanner
	done  chan struct{}
	err   *tailBuffer
}

// TSResult is one tools/call as the TypeScript client saw it.
type TSResult struct {
	OK        bool   `json:"ok"`
	SessionID string `json:"sessionId"`
	IsError   bool   `json:"isError"`
	Text      string `json:"text"`
	Error     string `json:"error"`
}

// TSClientDir finds tools/tsclient of the module holding the working
// directory, installing its locked dependencies (npm ci) when they are
// missing.
func TSClientDir(ctx context.Context) (string, error) {
	if _, err := exec.LookPath("node"); err != nil {
		return "", errors.New("node is not installed: the TypeScript SDK client needs Node.js 18+ (apt-get install nodejs npm)")
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory: cannot find " + tsDir)
		}
		dir = parent
	}
	dir = filepath.Join(dir, tsDir)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err == nil {
		return dir, nil
	}
	ctx, cancel := context.WithTimeout(ctx, tsInstallCap)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm ci in %s: %w\n%s", dir, err, out)
	}
	return dir, nil
}

// StartTSClient starts the TypeScript client in dir (see TSClientDir) and
// connects it to url, sending token as a bearer token if set.
func StartTSClient(ctx context.Context, dir, url, token string) (*TSClient, error) {
	args := []string{"client.mjs", url}
	if token != "" {
		args = append(args, token)
	}
	c := &TSClient{cmd: exec.Command("node", args...), done: make(chan struct{}), err: newTailBuffer(16 << 10)}
	c.cmd.Dir = dir
	c.cmd.Stderr = c.err
	c.cmd.SysProcAttr = dieWithParent()
	in, err := c.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c.in, c.lines = in, bufio.NewScanner(out)
	c.lines.Buffer(make([]byte, 64<<10), 4<<20)
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("node client.mjs: %w", err)
	}
	go func() { _ = c.cmd.Wait(); close(c.done) }()
	var hello TSResult
	if err := c.read(ctx, &hello); err != nil {
		c.kill()
		return nil, err
	}
	if !hello.OK {
		c.kill()
		return nil, fmt.Errorf("the TypeScript client could not connect: %s", hello.Error)
	}
	c.SessionID = hello.SessionID
	return c, nil
}

// Call sends one tools/call and returns what the client saw.
func (c *TSClient) Call(ctx context.Context, tool string, args map[string]any) (TSResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, err := json.Marshal(map[string]any{"op": "call", "tool": tool, "args": args})
	if err != nil {
		return TSResult{}, err
	}
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		return TSResult{}, fmt.Errorf("the TypeScript client: %w\n%s", err, c.err)
	}
	var r TSResult
	err = c.read(ctx, &r)
	return r, err
}

// read reads one JSON line, bounded by ctx (the process is killed when ctx
// ends first: a line never comes back after that).
func (c *TSClient) read(ctx context.Context, v any) error {
	got := make(chan error, 1)
	go func() {
		if !c.lines.Scan() {
			got <- fmt.Errorf("the TypeScript client ended: %v\n%s", c.lines.Err(), c.err)
			return
		}
		got <- json.Unmarshal(c.lines.Bytes(), v)
	}()
	select {
	case err := <-got:
		return err
	case <-ctx.Done():
		c.kill()
		<-got
		return fmt.Errorf("the TypeScript client did not answer: %w\n%s", ctx.Err(), c.err)
	}
}

// Close closes the session (the client's DELETE) and ends the process,
// killing it if it does not end within a few seconds. It may be called more
// than once.
func (c *TSClient) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, _ = c.in.Write([]byte(`{"op":"close"}` + "\n"))
	_ = c.in.Close()
	select {
	case <-c.done:
		return nil
	case <-time.After(tsStopCap):
		c.kill()
		return fmt.Errorf("the TypeScript client did not end within %v of close; killed\n%s", tsStopCap, strings.TrimSpace(c.err.String()))
	}
}

func (c *TSClient) kill() {
	if c.cmd.Process != nil {
		_ = c.cmd.Process.Kill()
	}
	<-c.done
}
