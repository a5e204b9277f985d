package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// adminStandIn stands in for the proxy's admin API: it notes every request
// (method, path, query, bearer token, JSON body) and answers as mcplocal
// does. Server wiki is docmost's (with a readiness probe and a header);
// project ops has another server, so the proxy has two projects.
type adminStandIn struct {
	mu     sync.Mutex
	seen   []seenRequest
	checks int
	warmUp int           // checks answered "not yet healthy" before the first healthy one
	delay  time.Duration // before each answer
	srv    *httptest.Server
}

type seenRequest struct {
	method, path, query, auth string
	body                      map[string]any
}

const standInServers = `{"servers":[
 {"name":"wiki","project":"docmost","url":"http://127.0.0.1:1/old","headers":{"X-Old":{"valueEnv":"OLD_KEY"}},
  "healthCheck":{"tool":"search","arguments":{"query":"health"},"intervalSeconds":60,"timeoutSeconds":15,"failureThreshold":3}},
 {"name":"blog","project":"ops","url":"http://127.0.0.1:1/blog"}]}`

func newAdminStandIn(t *testing.T, warmUp int, delay time.Duration) *adminStandIn {
	a := &adminStandIn{warmUp: warmUp, delay: delay}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *adminStandIn) serve(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(b, &body)
	a.mu.Lock()
	a.seen = append(a.seen, seenRequest{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"), body})
	a.mu.Unlock()
	select {
	case <-time.After(a.delay):
	case <-r.Context().Done():
		return
	}
	w.Header().Set("Content-Type", "application/json")
	p := r.URL.Path
	switch {
	case r.Method == http.MethodGet && p == "/api/v1/audit":
		rows, _ := json.Marshal(sampleRows("7K3M9QXZ"))
		fmt.Fprintf(w, `{"rows":%s}`, rows)
	case r.Method == http.MethodGet && p == "/api/v1/replay/context":
		fmt.Fprintf(w, `{"version":"stand-in","config":"listen: 127.0.0.1:8080\n","private":%v}`, r.URL.Query().Get("private") == "true")
	case r.Method == http.MethodGet && p == "/api/v1/instances":
		io.WriteString(w, `{"instances":[{"server":"wiki","project":"docmost","status":"healthy","probe":"readiness"}]}`)
	case r.Method == http.MethodPost && p == "/api/v1/chat":
		if body["stream"] == true {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: chunk\ndata: {\"text\":\"stre\"}\n\nevent: chunk\ndata: {\"text\":\"amed\"}\n\n"+
				"event: done\ndata: {\"llm\":\"vllm\",\"model\":\"qwen\",\"traceCode\":\"7K3M9QXZ\"}\n\n")
			return
		}
		io.WriteString(w, `{"text":"whole","llm":"vllm","model":"qwen","traceCode":"7K3M9QXZ"}`)
	case r.Method == http.MethodPost && strings.HasPrefix(p, "/api/v1/projects/"):
		paused := strings.HasSuffix(p, "/pause")
		fmt.Fprintf(w, `{"project":%q,"paused":%v,"changed":true}`, strings.Split(p, "/")[4], paused)
	case r.Method == http.MethodGet && p == "/api/v1/servers":
		io.WriteString(w, standInServers)
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/check"):
		a.mu.Lock()
		a.checks++
		healthy := a.checks > a.warmUp
		a.mu.Unlock()
		fmt.Fprintf(w, `{"answered":true,"tools":2,"probe":"liveness","healthy":%v,"error":"warming up"}`, healthy)
	case r.Method == http.MethodPost && p == "/api/v1/servers":
		io.WriteString(w, `{"outcome":"created"}`)
	case r.Method == http.MethodPut:
		io.WriteString(w, `{"outcome":"replaced"}`)
	case r.Method == http.MethodDelete:
		io.WriteString(w, `{}`)
	default:
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":"the stand-in has no `+r.Method+` `+p+`"}`)
	}
}

func (a *adminStandIn) requests() []seenRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]seenRequest(nil), a.seen...)
}

// invocation is one run of a command with some of its flags, as seen from
// outside: the exit code, the output, what the stand-in was sent.
type invocation struct {
	given      map[string]bool
	values     map[string]string // the value typed for each flag given one
	res        result
	reqs       []seenRequest
	bundlePath string
}

// write is the request that creates, replaces or deletes a server.
func (r invocation) write() (seenRequest, bool) {
	for _, q := range r.reqs {
		if (q.method == http.MethodPost && q.path == "/api/v1/servers") || q.method == http.MethodPut || q.method == http.MethodDelete {
			return q, true
		}
	}
	return seenRequest{}, false
}

// field is the value at a dotted path of the write's JSON body.
func (r invocation) field(path string) any {
	q, ok := r.write()
	if !ok {
		return nil
	}
	var v any = q.body
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func (r invocation) want(path string, value any) string {
	if got := r.field(path); fmt.Sprint(got) != fmt.Sprint(value) {
		return fmt.Sprintf("the server sent has %s = %v, want %v", path, got, value)
	}
	return ""
}

// flagModel is what one flag means to a user: the value typed, and what a
// run given it must show ("" when it does).
type flagModel struct {
	value    string // "" for a boolean flag given bare
	honoured func(r invocation) string
	// slow makes the stand-in answer later than the flag allows: the run
	// must fail (exit 1) saying so, and the other flag is not judged.
	slow bool
}

// commandModel is one command's flags as a user sees them. A pair is
// refused (exit 2, naming its flags) when conflicts lists it, when a flag
// lacks the one it requires, or when the command lacks what needs says;
// any other pair is accepted and each flag honoured.
type commandModel struct {
	args      []string
	flags     map[string]flagModel
	conflicts [][2]string
	requires  map[string]string
	needs     func(r invocation) []string // flags a refusal must name; nil: accepted
	fixed     map[string]string           // flags given in every run, with their values
	warmUp    func(given map[string]bool) int
}

func authIs(want string) func(r invocation) string {
	return func(r invocation) string {
		for _, q := range r.reqs {
			if q.auth != want {
				return fmt.Sprintf("%s %s carried Authorization %q, want %q", q.method, q.path, q.auth, want)
			}
		}
		return ""
	}
}

func stdoutHas(s string) func(r invocation) string {
	return func(r invocation) string {
		if !strings.Contains(r.res.stdout, s) {
			return fmt.Sprintf("stdout lacks %q", s)
		}
		return ""
	}
}

func stdoutIsJSON(r invocation) string {
	var v any
	if err := json.Unmarshal([]byte(r.res.stdout), &v); err != nil {
		return fmt.Sprintf("stdout is not JSON (%v)", err)
	}
	return ""
}

// connModel is the flags every command takes. --url names the stand-in in
// every run; --timeout is honoured by a stand-in slower than it failing the
// run with a word on --timeout.
func connModel(tokenFile string) map[string]flagModel {
	return map[string]flagModel{
		"url": {honoured: func(r invocation) string {
			return map[bool]string{true: "", false: "the stand-in was sent nothing"}[len(r.reqs) > 0]
		}},
		"token":      {value: "tok-flag", honoured: authIs("Bearer tok-flag")},
		"token-file": {value: tokenFile, honoured: authIs("Bearer tok-file")},
		"timeout": {value: "100ms", slow: true, honoured: func(r invocation) string {
			if r.res.code != exitFailure || !strings.Contains(r.res.stderr, "--timeout") {
				return fmt.Sprintf("a stand-in answering after the --timeout: exit %d %q, want 1 saying so and naming --timeout", r.res.code, r.res.stderr)
			}
			return ""
		}},
	}
}

func with(base map[string]flagModel, more map[string]flagModel) map[string]flagModel {
	out := map[string]flagModel{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

func models(t *testing.T, dir string) map[string]commandModel {
	tokenFile := filepath.Join(dir, "token")
	specs := filepath.Join(dir, "servers.yaml")
	for path, body := range map[string]string{tokenFile: "tok-file\n", specs: "- name: wiki\n  project: docmost\n  url: http://127.0.0.1:1/applied\n"} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	conn := connModel(tokenFile)
	conflicts := [][2]string{{"token", "token-file"}}
	// Flags left out of a --force create keep what the server had: its URL
	// and, without a --health-check-* flag, its whole probe.
	kept := func(r invocation) string {
		if r.given["server-url"] {
			return ""
		}
		return r.want("url", "http://127.0.0.1:1/old")
	}
	probeKept := func(r invocation) string {
		for f := range r.given {
			if strings.HasPrefix(f, "health-check-") {
				return ""
			}
		}
		for path, v := range map[string]any{"healthCheck.tool": "search", "healthCheck.arguments.query": "health",
			"healthCheck.intervalSeconds": 60, "healthCheck.timeoutSeconds": 15, "healthCheck.failureThreshold": 3} {
			if why := r.want(path, v); why != "" {
				return "the existing probe was not kept: " + why
			}
		}
		return ""
	}
	all := map[string]commandModel{
		"trace": {args: []string{"trace", "7K3M9QXZ"}, flags: with(conn, map[string]flagModel{
			"json":    {honoured: stdoutIsJSON},
			"bundle":  {value: filepath.Join(dir, "bundle.json"), honoured: func(r invocation) string { return bundleWritten(r) }},
			"private": {honoured: func(r invocation) string { return queried(r, "/api/v1/replay/context", "private=true") }},
		}), conflicts: append(conflicts, [2]string{"json", "bundle"}), requires: map[string]string{"private": "bundle"}},
		"get instances": {args: []string{"get", "instances"}, flags: with(conn, map[string]flagModel{
			"json": {honoured: stdoutIsJSON},
		}), conflicts: conflicts},
		"chat": {args: []string{"chat", "hello"}, flags: with(conn, map[string]flagModel{
			"stream": {honoured: stdoutHas("streamed")},
		}), conflicts: conflicts},
		"pause":  {args: []string{"pause", "docmost"}, flags: conn, conflicts: conflicts},
		"resume": {args: []string{"resume", "docmost"}, flags: conn, conflicts: conflicts},
		"get servers": {args: []string{"get", "servers"}, flags: with(conn, map[string]flagModel{
			"project": {value: "docmost", honoured: func(r invocation) string { return queried(r, "/api/v1/servers", "project=docmost") }},
			"o":       {value: "yaml", honoured: stdoutHas("name: wiki")},
			"output":  {value: "json", honoured: stdoutIsJSON},
		}), conflicts: append(conflicts, [2]string{"o", "output"})},
		"delete server": {args: []string{"delete", "server", "wiki"}, flags: with(conn, map[string]flagModel{
			"project": {value: "ops", honoured: func(r invocation) string {
				if q, ok := r.write(); !ok || q.path != "/api/v1/servers/ops/wiki" {
					return fmt.Sprintf("deleted %s %s, want DELETE /api/v1/servers/ops/wiki", q.method, q.path)
				}
				return ""
			}},
		}), conflicts: conflicts},
		"apply": {args: []string{"apply"}, flags: with(conn, map[string]flagModel{
			"f": {value: specs, honoured: func(r invocation) string { return r.want("url", "http://127.0.0.1:1/applied") }},
		}), conflicts: conflicts, needs: func(r invocation) []string {
			if !r.given["f"] {
				return []string{"f"}
			}
			return nil
		}},
	}
	create := commandModel{args: []string{"create", "server", "wiki"}, flags: with(conn, map[string]flagModel{
		"project":    {value: "ops", honoured: func(r invocation) string { return r.want("project", r.values["project"]) }},
		"server-url": {value: "http://127.0.0.1:1/new", honoured: func(r invocation) string { return r.want("url", "http://127.0.0.1:1/new") }},
		"health-check-tool": {value: "lookup", honoured: func(r invocation) string {
			return r.want("healthCheck.tool", "lookup")
		}},
		"health-check-arguments": {value: `{"q":"v"}`, honoured: func(r invocation) string { return r.want("healthCheck.arguments.q", "v") }},
		"health-check-interval":  {value: "45", honoured: func(r invocation) string { return r.want("healthCheck.intervalSeconds", 45) }},
		"health-check-timeout":   {value: "5", honoured: func(r invocation) string { return r.want("healthCheck.timeoutSeconds", 5) }},
		"health-check-failure-threshold": {value: "4", honoured: func(r invocation) string {
			return r.want("healthCheck.failureThreshold", 4)
		}},
		"header": {value: "X-Api-Key=env:WIKI_KEY", honoured: func(r invocation) string { return r.want("headers.X-Api-Key.valueEnv", "WIKI_KEY") }},
		"force": {honoured: func(r invocation) string {
			project := "docmost" // wiki's, when --project does not say
			if r.given["project"] {
				project = r.values["project"] // ops: a new server there, nothing to keep
			}
			if q, ok := r.write(); !ok || q.method != http.MethodPut || q.path != "/api/v1/servers/"+project+"/wiki" {
				return fmt.Sprintf("wrote %s %s, want PUT /api/v1/servers/%s/wiki", q.method, q.path, project)
			}
			if project != "docmost" {
				return ""
			}
			if why := kept(r); why != "" {
				return why
			}
			return probeKept(r)
		}},
		"wait": {value: "5s", honoured: func(r invocation) string {
			if r.res.code != 0 || !strings.Contains(r.res.stdout, "/wiki answered initialize") {
				return "create did not wait for the server warming up to pass its check"
			}
			return ""
		}},
	}), conflicts: conflicts, requires: map[string]string{"health-check-arguments": "health-check-tool"},
		needs: func(r invocation) []string {
			// A new server (wiki in ops, or without --force) needs its URL.
			if g := r.given; !g["server-url"] && (!g["force"] || g["project"] && r.values["project"] != "docmost") {
				return []string{"server-url"}
			}
			return nil
		},
		warmUp: func(g map[string]bool) int {
			if g["wait"] {
				return 1
			}
			return 0
		}}
	all["create server"] = create
	// The known class: --force with --project and --server-url given, no
	// --health-check-* flag, still keeps the server's probe.
	create.fixed = map[string]string{"project": "docmost"}
	all["create server --project docmost"] = create
	return all
}

func bundleWritten(r invocation) string {
	b, err := os.ReadFile(r.bundlePath)
	if err != nil || !strings.Contains(r.res.stdout, "bundle of trace 7K3M9QXZ written") {
		return fmt.Sprintf("no bundle written (%v)", err)
	}
	if r.given["private"] && !strings.Contains(string(b), `"private": true`) && !strings.Contains(string(b), `"private":true`) {
		return "the bundle does not say it keeps private texts"
	}
	return ""
}

func queried(r invocation, path, query string) string {
	for _, q := range r.reqs {
		if q.path == path && strings.Contains(q.query, query) {
			return ""
		}
	}
	return fmt.Sprintf("no request to %s?%s", path, query)
}

// flagsOf is the flag set a command parses, read from the command itself.
func flagsOf(t *testing.T, args []string) []string {
	var names []string
	old := flagSetParsed
	flagSetParsed = func(fs *flag.FlagSet) { fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) }) }
	defer func() { flagSetParsed = old }()
	if r := cli(t, append(append([]string(nil), args...), "--help")...); r.code != 0 {
		t.Fatalf("mcpctl %s --help: exit %d %s", strings.Join(args, " "), r.code, r.stderr)
	}
	sort.Strings(names)
	return names
}

// TestEveryPairOfFlagsIsHonouredOrRefused: for every mcpctl command, every
// pair of the flags it takes (read from its own flag set, so a new flag is
// covered at once and fails until the model says what it means) is either
// accepted with both flags honoured in what mcpctl sends the admin API (a
// stand-in here) or prints, or refused as a usage error (exit 2) naming the
// flags at odds. Held: create server --force without --health-check-* keeps
// the server's probe whatever else is given.
func TestEveryPairOfFlagsIsHonouredOrRefused(t *testing.T) {
	dir := t.TempDir()
	for name, m := range models(t, dir) {
		flags := flagsOf(t, m.args)
		var paired []string
		for _, f := range flags {
			if _, ok := m.fixed[f]; !ok {
				paired = append(paired, f)
			}
		}
		flags = paired
		for _, f := range flags {
			if _, ok := m.flags[f]; !ok {
				t.Errorf("%s: flag --%s is not in the model: say what a user expects of it with each other flag", name, f)
			}
		}
		for f := range m.flags {
			if _, fixed := m.fixed[f]; !fixed && !contains(flags, f) {
				t.Errorf("%s: the model has --%s, which the command does not take", name, f)
			}
		}
		for i, a := range flags {
			for _, b := range flags[i:] {
				if _, ok := m.flags[a]; !ok {
					continue
				}
				if _, ok := m.flags[b]; !ok {
					continue
				}
				pairRun(t, name, m, a, b)
			}
		}
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func pairRun(t *testing.T, name string, m commandModel, a, b string) {
	t.Helper()
	given := map[string]bool{"url": true, a: true, b: true}
	values := map[string]string{}
	for f, v := range m.fixed {
		given[f], values[f] = true, v
	}
	for _, f := range []string{a, b} {
		values[f] = m.flags[f].value
	}
	warm := 0
	if m.warmUp != nil {
		warm = m.warmUp(given)
	}
	var delay time.Duration
	for f := range given {
		if m.flags[f].slow {
			delay = 500 * time.Millisecond
		}
	}
	st := newAdminStandIn(t, warm, delay)
	args := append([]string(nil), m.args...)
	args = append(args, "--url", st.srv.URL)
	for f := range given {
		if f == "url" {
			continue
		}
		if v := values[f]; v != "" {
			args = append(args, "-"+dash(f)+f, v)
		} else {
			args = append(args, "-"+dash(f)+f)
		}
	}
	bundlePath := ""
	if given["bundle"] {
		bundlePath = m.flags["bundle"].value
		_ = os.Remove(bundlePath)
	}
	r := invocation{given: given, values: values, res: cli(t, args...), reqs: st.requests(), bundlePath: bundlePath}
	pair := fmt.Sprintf("%s --%s --%s", name, a, b)

	var refusal []string
	for _, c := range m.conflicts {
		if given[c[0]] && given[c[1]] && c[0] != c[1] {
			refusal = []string{c[0], c[1]}
		}
	}
	for f, req := range m.requires {
		if refusal == nil && given[f] && !given[req] {
			refusal = []string{f, req}
		}
	}
	slow := ""
	for f := range given {
		if m.flags[f].slow {
			slow = f
		}
	}
	if refusal == nil && m.needs != nil {
		refusal = m.needs(r)
		// What a command needs may take the proxy's answer to know (is the
		// server new?): a proxy slower than --timeout never gives it.
		if refusal != nil && slow != "" && r.res.code != exitUsage {
			refusal = nil
		}
	}
	if refusal != nil {
		if r.res.code != exitUsage {
			t.Errorf("%s: exit %d, want %d refusing it (%s)\nstdout: %s\nstderr: %s", pair, r.res.code, exitUsage, strings.Join(refusal, ", "), r.res.stdout, r.res.stderr)
			return
		}
		for _, f := range refusal {
			if !strings.Contains(r.res.stderr, "-"+f) {
				t.Errorf("%s: refused without naming -%s: %s", pair, f, r.res.stderr)
			}
		}
		if _, wrote := r.write(); wrote {
			t.Errorf("%s: refused, yet a server was written", pair)
		}
		return
	}
	if slow != "" {
		if why := m.flags[slow].honoured(r); why != "" {
			t.Errorf("%s: --%s not honoured: %s", pair, slow, why)
		}
		return
	}
	if r.res.code != exitOK {
		t.Errorf("%s: exit %d, want it accepted\nstdout: %s\nstderr: %s", pair, r.res.code, r.res.stdout, r.res.stderr)
		return
	}
	for f := range given {
		if why := m.flags[f].honoured(r); why != "" {
			t.Errorf("%s: --%s not honoured: %s", pair, f, why)
		}
	}
}

// dash is the second dash of a long flag: one-letter flags are typed -o, -f.
func dash(f string) string {
	if len(f) == 1 {
		return ""
	}
	return "-"
}
