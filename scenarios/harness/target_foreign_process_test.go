package harness

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// standInSpec is a foreign spec whose proxy is this test binary's stand-in
// (TestHelperListen): it listens on {{.Listen}} and answers 200 on every
// path, until it is stopped or killed; env are more variables for it.
func standInSpec(t *testing.T, env, extra string) *ForeignSpec {
	t.Helper()
	return mustParseForeign(t, `name: stand-in
command: ["`+os.Args[0]+`", "-test.run=^TestHelperListen$", "-test.v"]
env: {`+helperListenEnv+`: "{{.Listen}}"`+env+`}
`+extra)
}

// foreignWorld is a world whose project has docmost and everything, two LLMs
// and a user, none of them running: a foreign proxy is only told of them.
func foreignWorld(t *testing.T) Spec {
	t.Helper()
	w := &World{
		Store: "sqlite:" + filepath.Join(t.TempDir(), "audit.db"),
		Projects: map[string]*WorldProject{Project: {Servers: map[string]*WorldServer{
			"docmost":    {URL: "http://127.0.0.1:1/mcp"},
			"everything": {URL: "http://127.0.0.1:2/mcp"},
		}}},
		LLMs: []LLMProvider{
			{Name: "primary", Kind: LLMOpenAI, URL: "http://127.0.0.1:3/v1", Model: "m1"},
			{Name: "fallback", Kind: LLMAnthropic, URL: "http://127.0.0.1:4", Model: "m2"},
		},
		Users: map[string]User{"alice": {Token: "alice-token"}},
	}
	fps := NewFailpoints()
	fps.PanicToolCall("docmost_search")
	return Spec{World: w, Bounds: CompressedBounds().With(BoundSessions, 17), Failpoints: fps}
}

// environOf is the environment process pid started with.
func environOf(t *testing.T, pid int) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

// A foreign proxy is rendered with the world's addresses and started on a
// free loopback port: its files written, its command and environment
// rendered, the harness's own knobs and failpoints given only as the spec
// says.
func TestAForeignProxyIsRenderedWithTheWorld(t *testing.T) {
	t.Setenv(BoundRequest, "99999")
	t.Setenv(failpointsEnv, "tools/call=stray:hang")
	spec := standInSpec(t, `, SPEC_PORT: "{{.Port}}"`, `files:
  vars.txt: "{{.Host}} {{.Port}} {{.URL}} {{.Project}} {{.DocmostURL}} {{.EverythingURL}} {{.LLMURL}} {{.LLMModel}} {{.FallbackURL}} {{.FallbackModel}} {{index .Users \"alice\"}} {{index .Knobs \"`+BoundSessions+`\"}} {{.Failpoints}} {{.AuditDSN}}"
  other.txt: "{{index .Files \"vars.txt\"}} {{.Dir}} {{.ConfigFile}}"
passKnobs: true
capabilities: [failpoints]
ready: /healthz
`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := spec.Target(nil).(*Foreign)
	ws := foreignWorld(t)
	if err := f.Start(ctx, ws); err != nil {
		t.Fatal(err)
	}
	defer f.Stop(context.Background())
	v := f.vars
	vars, err := os.ReadFile(v.Files["vars.txt"])
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{"127.0.0.1", v.Port, "http://" + v.Listen, Project, "http://127.0.0.1:1/mcp", "http://127.0.0.1:2/mcp",
		"http://127.0.0.1:3/v1", "m1", "http://127.0.0.1:4", "m2", "alice-token", "17", ws.Failpoints.String(), ws.World.Store}, " ")
	if string(vars) != want {
		t.Errorf("vars.txt:\n%s\nwant\n%s", vars, want)
	}
	other, err := os.ReadFile(v.Files["other.txt"])
	if err != nil {
		t.Fatal(err)
	}
	if want := v.Files["vars.txt"] + " " + f.dir + " " + filepath.Join(f.dir, "mcplocal.yaml"); string(other) != want {
		t.Errorf("other.txt %q, want %q", other, want)
	}
	if _, err := os.Stat(v.ConfigFile); err != nil {
		t.Errorf("mcplocal's config is not written: %v", err)
	}
	if got := f.URL(); got != "http://"+v.Listen {
		t.Errorf("URL %q", got)
	}
	env := environOf(t, f.PID())
	count := func(kv string) int {
		n := 0
		for _, e := range env {
			if e == kv || strings.HasPrefix(e, kv+"=") && !strings.Contains(kv, "=") {
				n++
			}
		}
		return n
	}
	for kv, n := range map[string]int{
		"SPEC_PORT=" + v.Port:                        1,
		helperListenEnv + "=" + v.Listen:             1,
		BoundSessions + "=17":                        1,
		BoundRequest + "=99999":                      0,
		failpointsEnv + "=" + ws.Failpoints.String(): 1,
		failpointsEnv + "=tools/call=stray:hang":     0,
		"MCPLOCAL_ENABLE_FAILPOINTS=1":               1,
		BoundRequest:                                 1,
	} {
		if got := count(kv); got != n {
			t.Errorf("%s: %d times in the proxy's environment, want %d", kv, got, n)
		}
	}
	if err := f.Start(ctx, ws); err == nil || !strings.Contains(err.Error(), "already started") {
		t.Errorf("a second start: %v", err)
	}
}

// Without passKnobs or the failpoints capability, the proxy gets neither,
// nor the test process's own.
func TestAForeignProxyGetsNoKnobsItDidNotAskFor(t *testing.T) {
	t.Setenv(BoundRequest, "99999")
	t.Setenv(failpointsEnv, "tools/call=stray:hang")
	t.Setenv("MCPCHAOS_UNRELATED", "kept")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := standInSpec(t, "", "").Target(nil).(*Foreign)
	if err := f.Start(ctx, foreignWorld(t)); err != nil {
		t.Fatal(err)
	}
	defer f.Stop(context.Background())
	env := environOf(t, f.PID())
	for _, kv := range env {
		if strings.HasPrefix(kv, "MCPCTL_") || strings.HasPrefix(kv, failpointsEnv+"=") || strings.HasPrefix(kv, "MCPLOCAL_ENABLE_FAILPOINTS=") {
			t.Errorf("the proxy was given %s", kv)
		}
	}
	if !slices.Contains(env, "MCPCHAOS_UNRELATED=kept") {
		t.Error("the test process's environment is not passed on")
	}
}

// The lifecycle of a command spec: ready by its probe, restarted and killed
// on its address, its output kept, everything removed at Stop.
func TestAForeignProxyRestartsAndIsKilledOnItsAddress(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out syncBuffer
	f := standInSpec(t, "", "ready: tcp\ncapabilities: [kill]").Target(&out)
	k, ok := f.(Killer)
	if !ok {
		t.Fatal("a spec claiming kill gave no Killer")
	}
	fo := f.(*killableForeign).Foreign
	if err := f.Restart(ctx); err == nil || !strings.Contains(err.Error(), "restart before start") {
		t.Errorf("restart before start: %v", err)
	}
	if err := k.KillRestart(ctx); err == nil || !strings.Contains(err.Error(), "kill-restart before start") {
		t.Errorf("kill-restart before start: %v", err)
	}
	if err := fo.Ready(ctx); err == nil || !strings.Contains(err.Error(), "not running") {
		t.Errorf("ready before start: %v", err)
	}
	if err := f.Start(ctx, Spec{}); err == nil || !strings.Contains(err.Error(), "no world") {
		t.Errorf("a start without a world: %v", err)
	}
	if err := f.Start(ctx, foreignWorld(t)); err != nil {
		t.Fatal(err)
	}
	url, dir, pid := f.URL(), fo.dir, fo.PID()
	if err := fo.Ready(ctx); err != nil {
		t.Errorf("ready: %v", err)
	}
	// Between scenarios, readiness is the spec's own probe answering.
	fo.Spec.Ready = "tcp:1"
	if err := fo.Ready(ctx); err == nil || !strings.Contains(err.Error(), "tcp 127.0.0.1:1 did not answer") {
		t.Errorf("ready by a probe that does not answer: %v", err)
	}
	fo.Spec.Ready = "tcp"
	if err := f.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if f.URL() != url || fo.PID() == pid || fo.PID() == 0 {
		t.Errorf("after a restart: %s pid %d, want %s and a new pid", f.URL(), fo.PID(), url)
	}
	requireGone(t, pid)
	pid = fo.PID()
	if err := k.KillRestart(ctx); err != nil {
		t.Fatal(err)
	}
	requireGone(t, pid)
	pid = fo.PID()
	if err := fo.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	requireGone(t, pid)
	if fo.PID() != 0 {
		t.Errorf("pid %d after a kill", fo.PID())
	}
	if err := fo.Ready(ctx); err == nil {
		t.Error("a killed proxy is ready")
	}
	if err := f.Restart(ctx); err != nil {
		t.Fatalf("a restart after a kill only starts: %v", err)
	}
	if err := fo.Ready(ctx); err != nil {
		t.Errorf("ready after the restart: %v", err)
	}
	logs := fo.Logs()
	if got := strings.Count(logs, "--- mcpchaos: starting"); got != 4 {
		t.Errorf("%d starts in the logs, want 4:\n%s", got, logs)
	}
	if !strings.Contains(out.String(), "=== RUN") || !strings.Contains(logs, "=== RUN") {
		t.Error("the proxy's output does not reach Stderr")
	}
	pid = fo.PID()
	if err := f.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	requireGone(t, pid)
	// Each run's end is marked too.
	if got := strings.Count(fo.Logs(), " ended: "); got != 4 {
		t.Errorf("%d ends in the logs, want 4:\n%s", got, fo.Logs())
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the temp dir %s is left: %v", dir, err)
	}
	if err := f.Stop(ctx); err != nil {
		t.Errorf("a second stop: %v", err)
	}
}

// A proxy that exits on its own is an error at the next stop, and one that
// never comes up fails its start with its output, leaving nothing behind.
func TestAForeignProxyThatExitsIsAnError(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := standInSpec(t, "", "").Target(nil).(*Foreign)
	if err := f.Start(ctx, foreignWorld(t)); err != nil {
		t.Fatal(err)
	}
	pid := f.PID()
	p, _ := os.FindProcess(pid)
	_ = p.Kill()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if err := f.Ready(ctx); err != nil && strings.Contains(err.Error(), "exited") {
			break
		}
	}
	if err := f.Ready(ctx); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Errorf("ready after the proxy died: %v", err)
	}
	if err := f.Stop(ctx); err == nil || !strings.Contains(err.Error(), "had exited on its own") {
		t.Errorf("stop after the proxy died: %v", err)
	}

	// A restart of a proxy that died says so, and stops nothing more.
	g := standInSpec(t, "", "").Target(nil).(*Foreign)
	if err := g.Start(ctx, foreignWorld(t)); err != nil {
		t.Fatal(err)
	}
	pid = g.PID()
	q, _ := os.FindProcess(pid)
	_ = q.Kill()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if err := g.Ready(ctx); err != nil && strings.Contains(err.Error(), "exited") {
			break
		}
	}
	if err := g.Restart(ctx); err == nil || !strings.Contains(err.Error(), "foreign:stand-in: restart: pid") || !strings.Contains(err.Error(), "exited on its own") {
		t.Errorf("a restart after the proxy died: %v", err)
	}
	if err := g.Stop(ctx); err != nil {
		t.Errorf("stop after a failed restart: %v", err)
	}

	dead := mustParseForeign(t, "name: dead\ncommand: [/bin/sh, -c, 'echo no config here >&2; exit 3']").Target(nil).(*Foreign)
	err := dead.Start(ctx, foreignWorld(t))
	if err == nil || !strings.Contains(err.Error(), "no config here") || !strings.HasPrefix(err.Error(), "foreign:dead: ") {
		t.Errorf("a proxy that exits at once: %v", err)
	}
	if dead.dir != "" || dead.PID() != 0 {
		t.Errorf("a failed start left dir %q pid %d", dead.dir, dead.PID())
	}
}

// A spec's relative program is relative to the spec file; a bare name is
// looked up on PATH; a file name that is no plain name is refused.
func TestAForeignSpecRendersItsCommandFromItsDirectory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(path, []byte("name: rel\ncommand: [./bin/proxy, '{{.Listen}}']\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := LoadForeign(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Dir != dir {
		t.Errorf("spec dir %q, want %q", s.Dir, dir)
	}
	f := s.Target(nil).(*Foreign)
	f.dir = t.TempDir()
	w := foreignWorld(t).World
	if err := f.prepareLocked(w, Spec{}, "127.0.0.1:5"); err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(dir, "bin", "proxy"), "127.0.0.1:5"}; !slices.Equal(f.argv, want) {
		t.Errorf("argv %q, want %q", f.argv, want)
	}
	f.Spec.Command = []string{"proxy"}
	if err := f.prepareLocked(w, Spec{}, "127.0.0.1:5"); err != nil || f.argv[0] != "proxy" {
		t.Errorf("a bare name: %q, %v", f.argv, err)
	}
	f.Spec.Command = []string{"/abs/proxy"}
	if err := f.prepareLocked(w, Spec{}, "127.0.0.1:5"); err != nil || f.argv[0] != "/abs/proxy" {
		t.Errorf("an absolute path: %q, %v", f.argv, err)
	}
	img := mustParseForeign(t, "name: img\nimage: some/image:tag\nargs: [serve, '{{.Listen}}']").Target(nil).(*Foreign)
	img.Spec.Dir, img.dir = dir, t.TempDir()
	if err := img.prepareLocked(w, Spec{}, "127.0.0.1:5"); err != nil || !slices.Equal(img.argv, []string{"some/image:tag", "serve", "127.0.0.1:5"}) {
		t.Errorf("an image spec: %q, %v; want the image as it is, then its args", img.argv, err)
	}
	for _, name := range []string{"../x", "sub/x", ".", ".."} {
		f.Spec.Files = map[string]string{name: "x"}
		if err := f.prepareLocked(w, Spec{}, "127.0.0.1:5"); err == nil {
			t.Errorf("file name %q accepted", name)
		}
	}
	f.Spec.Files = nil
	for what, doc := range map[string]string{
		"argument": "name: a\ncommand: [x, '{{.Nope}}']",
		"file":     "name: a\ncommand: [x]\nfiles: {a: '{{.Nope}}'}",
		"env":      "name: a\ncommand: [x]\nenv: {A: '{{.Nope}}'}",
	} {
		g := mustParseForeign(t, doc).Target(nil).(*Foreign)
		g.dir = t.TempDir()
		if err := g.prepareLocked(w, Spec{}, "127.0.0.1:5"); err == nil || !strings.Contains(err.Error(), what) {
			t.Errorf("a %s naming no variable: %v", what, err)
		}
	}
	if _, err := LoadForeign(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Error("a missing spec file loaded")
	}
	if err := os.WriteFile(path, []byte("name: bad\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadForeign(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("a bad spec file: %v, want its path in the error", err)
	}
}

// The variables of a world with one LLM, or none, or without the harness
// project, are empty where the world has nothing; failpoints are passed
// only when some are armed.
func TestForeignVarsAreEmptyWhereTheWorldHasNothing(t *testing.T) {
	f := mustParseForeign(t, "name: v\ncommand: [x]\ncapabilities: [failpoints]").Target(nil).(*Foreign)
	f.dir = t.TempDir()
	w := foreignWorld(t).World
	w.LLMs = w.LLMs[:1]
	if err := f.prepareLocked(w, Spec{}, "127.0.0.1:5"); err != nil {
		t.Fatal(err)
	}
	if v := f.vars; v.LLMURL != "http://127.0.0.1:3/v1" || v.LLMModel != "m1" || v.FallbackURL != "" || v.FallbackModel != "" {
		t.Errorf("one LLM: %q %q, fallback %q %q", v.LLMURL, v.LLMModel, v.FallbackURL, v.FallbackModel)
	}
	for _, kv := range f.env {
		if strings.HasPrefix(kv, failpointsEnv) || strings.HasPrefix(kv, "MCPLOCAL_ENABLE_FAILPOINTS") {
			t.Errorf("no failpoint is armed, yet the proxy gets %s", kv)
		}
	}
	w.LLMs = nil
	w.Projects = map[string]*WorldProject{OtherProject: w.Projects[Project]}
	if err := f.prepareLocked(w, Spec{}, "127.0.0.1:5"); err != nil {
		t.Fatal(err)
	}
	if v := f.vars; v.LLMURL != "" || v.DocmostURL != "" || v.EverythingURL != "" {
		t.Errorf("no LLM and no harness project: LLM %q docmost %q everything %q", v.LLMURL, v.DocmostURL, v.EverythingURL)
	}
}
