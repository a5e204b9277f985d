package harness

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// standInClient is a client.mjs speaking the TypeScript client's line
// protocol without the SDK: its URL says how it behaves (refuse, mute,
// stubborn, or answer every call with the tool, its arguments and the token).
const standInClient = `import readline from "node:readline";
const [url, token] = process.argv.slice(2);
const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");
if (url === "refuse") { out({ ok: false, error: "refused" }); process.exit(1); }
if (url === "mute") { setInterval(() => {}, 1000); }
else {
  out({ ok: true, sessionId: "sess-" + (token ?? "") });
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    const cmd = JSON.parse(line);
    if (cmd.op === "close") {
      if (url === "stubborn") { setInterval(() => {}, 1000); await new Promise(() => {}); }
      out({ ok: true });
      break;
    }
    out({ ok: true, sessionId: "sess-" + (token ?? ""), isError: cmd.tool === "fails", text: cmd.tool + " " + JSON.stringify(cmd.args) });
  }
  process.exit(0);
}
`

func standInClientDir(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is not on PATH: the TypeScript client needs Node.js 20+ (run `make deps`)")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "client.mjs"), []byte(standInClient), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The TypeScript client is driven one JSON line at a time: it connects
// with the token, answers each call, and ends at Close.
func TestTheTypeScriptClientIsDrivenALineAtATime(t *testing.T) {
	dir := standInClientDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := StartTSClient(ctx, dir, "http://proxy/mcp", "tok")
	if err != nil {
		t.Fatal(err)
	}
	if c.SessionID != "sess-tok" {
		t.Errorf("session %q, want the one the client was given with the token", c.SessionID)
	}
	r, err := c.Call(ctx, "docmost_search", map[string]any{"query": "q"})
	if err != nil || !r.OK || r.IsError || r.Text != `docmost_search {"query":"q"}` {
		t.Errorf("call: %+v, %v", r, err)
	}
	if r, err := c.Call(ctx, "fails", nil); err != nil || !r.IsError {
		t.Errorf("an isError call: %+v, %v", r, err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("a second close: %v", err)
	}
	if _, err := c.Call(ctx, "docmost_search", nil); err == nil {
		t.Error("a call after close was answered")
	}

	anon, err := StartTSClient(ctx, dir, "http://proxy/mcp", "")
	if err != nil {
		t.Fatal(err)
	}
	if anon.SessionID != "sess-" {
		t.Errorf("a client without a token was given one: %q", anon.SessionID)
	}
	_ = anon.Close()
}

// A client that cannot connect, does not answer, or does not end at Close
// is an error, and its process is gone.
func TestTheTypeScriptClientsFailuresAreErrors(t *testing.T) {
	dir := standInClientDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := StartTSClient(ctx, dir, "refuse", ""); err == nil || !strings.Contains(err.Error(), "could not connect: refused") {
		t.Errorf("a refused connection: %v", err)
	}
	short, stop := context.WithTimeout(ctx, 500*time.Millisecond)
	_, err := StartTSClient(short, dir, "mute", "")
	stop()
	if err == nil || !strings.Contains(err.Error(), "did not answer") {
		t.Errorf("a client that never answers: %v", err)
	}
	c, err := StartTSClient(ctx, dir, "stubborn", "")
	if err != nil {
		t.Fatal(err)
	}
	pid := c.cmd.Process.Pid
	if err := c.Close(); err == nil || !strings.Contains(err.Error(), "did not end") {
		t.Errorf("a client that does not end: %v", err)
	}
	requireGone(t, pid)
	if _, err := StartTSClient(ctx, t.TempDir(), "http://proxy/mcp", ""); err == nil {
		t.Error("a directory without client.mjs started a client")
	}
}

// The TypeScript client's directory is tools/tsclient of the module above
// the working directory, used as it is once its dependencies are there;
// without node or a module there is none.
func TestTSClientDirIsTheModulesToolsTsclient(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is not on PATH: the TypeScript client needs Node.js 20+ (run `make deps`)")
	}
	ctx := context.Background()
	root := t.TempDir()
	sdk := filepath.Join(root, "tools", "tsclient", "node_modules", "@modelcontextprotocol", "sdk")
	if err := os.MkdirAll(sdk, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(root, "go.mod"), filepath.Join(sdk, "package.json")} {
		if err := os.WriteFile(f, []byte("\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	deep := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(deep)
	if dir, err := TSClientDir(ctx); err != nil || dir != filepath.Join(root, "tools", "tsclient") {
		t.Errorf("dir %q, %v", dir, err)
	}
	t.Chdir(t.TempDir())
	if _, err := TSClientDir(ctx); err == nil || !strings.Contains(err.Error(), "no go.mod above") {
		t.Errorf("outside a module: %v", err)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := TSClientDir(ctx); err == nil || !strings.Contains(err.Error(), "node is not installed") {
		t.Errorf("without node: %v", err)
	}
}
