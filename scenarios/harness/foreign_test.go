package harness

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

func TestParseForeignRejectsBadSpecs(t *testing.T) {
	for name, doc := range map[string]string{
		"no name":            `command: [x]`,
		"neither":            `name: a`,
		"both":               "name: a\ncommand: [x]\nimage: y",
		"args without image": "name: a\ncommand: [x]\nargs: [y]",
		"unknown field":      "name: a\ncommand: [x]\nport: 1",
		"unknown capability": "name: a\ncommand: [x]\ncapabilities: [teleport]",
		"bad template":       "name: a\ncommand: ['{{.Listen']",
		"bad stopTimeout":    "name: a\ncommand: [x]\nstopTimeout: soon",
	} {
		if _, err := ParseForeign([]byte(doc)); err == nil {
			t.Errorf("%s: accepted %q", name, doc)
		}
	}
	s, err := ParseForeign([]byte("name: a\ncommand: [x]"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Endpoint != "/projects/{{.Project}}/mcp" || s.Health != "/healthz" || s.stopTimeout != foreignStopDefault {
		t.Errorf("defaults: endpoint %q health %q stop %v", s.Endpoint, s.Health, s.stopTimeout)
	}
}

func TestLacksNamesTheMissingCapabilities(t *testing.T) {
	if why := Lacks(&InProcess{}, CapAuditAPI, CapSessionAdoption); why != "" {
		t.Errorf("the in-process mcplocal lacks %q", why)
	}
	if why := Lacks(&InProcess{}, CapKill); !strings.Contains(why, CapKill) {
		t.Errorf("the in-process target cannot be killed, got %q", why)
	}
	if why := Lacks(&Binary{}, AllCapabilities...); why != "" {
		t.Errorf("the binary mcplocal lacks %q", why)
	}
	bare, err := ParseForeign([]byte("name: bare\ncommand: [x]\ncapabilities: [auditAPI]"))
	if err != nil {
		t.Fatal(err)
	}
	why := Needs(CapAuditAPI, CapSessionAdoption, CapKill)(bare.Target(nil))
	if want := "target foreign:bare lacks sessionAdoption, kill"; why != want {
		t.Errorf("got %q, want %q", why, want)
	}
	if _, ok := bare.Target(nil).(Killer); ok {
		t.Error("a spec without kill gave a Killer")
	}
}

// The first worked example of docs/targets.md: mcplocal as a foreign proxy
// answers, keeps its sessions across a restart and a kill (adoption), and
// serves its audit API.
func TestForeignRunsTheDocumentedMcplocalExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "targets.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```yaml\n(name: mcplocal\n.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/targets.md has no ```yaml block starting with name: mcplocal")
	}
	spec, err := ParseForeign(m[1])
	if err != nil {
		t.Fatal(err)
	}
	if spec.Command[0] != "./bin/mcplocal" {
		t.Fatalf("the example runs %q, this test expects ./bin/mcplocal", spec.Command[0])
	}
	spec.Command[0] = mcplocalBinary(t) // the doc's ./bin/mcplocal, built for this test
	if !spec.Has(CapKill) || Lacks(spec.Target(nil), AllCapabilities...) != "" {
		t.Fatalf("the example claims %v, want every capability", spec.Capabilities)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out strings.Builder
	target := spec.Target(&syncWriter{w: &out})
	env, err := NewEnv(ctx, EnvOptions{Target: target, Users: map[string]string{"alice": "alice-token"}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := env.Close(context.Background()); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Log(out.String())
		}
	}()
	if got, want := target.Name(), "foreign:mcplocal"; got != want {
		t.Errorf("name %q, want %q", got, want)
	}
	if got, want := target.(Endpointer).Endpoint(Project), env.ProjectURL(); got != want {
		t.Errorf("endpoint %q, want %q", got, want)
	}
	cs, err := SDKClient(ctx, env.ProjectURL(), env.Token("alice"))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(step string) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "docmost_update_page", Arguments: map[string]any{"page_id": "p1", "content": step}})
		if err != nil || res.IsError {
			t.Fatalf("%s: err=%v result=%+v", step, err, res)
		}
		code, _ := res.Meta[trace.MetaKey].(string)
		if !trace.Valid(code) {
			t.Fatalf("%s: no trace code in _meta: %v", step, res.Meta)
		}
		return code
	}
	code := call("first")
	if rows, err := env.Audit(ctx, code); err != nil || len(rows) == 0 {
		t.Errorf("audit of %s: %d rows, %v", code, len(rows), err)
	}
	if err := target.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	call("after a restart")
	if err := target.(Killer).KillRestart(ctx); err != nil {
		t.Fatal(err)
	}
	call("after a kill")
}

// syncWriter serialises writes from the process's output copier and the
// target's own markers.
type syncWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
