package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	fakellm "github.com/mcpchaos/mcpchaos/fakes/llm"
	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/audit/waterfall"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
	"github.com/mcpchaos/mcpchaos/scenarios/mutants"
)

// The incident, as the seed measured it: the client gave up after 1800 s.
const incidentClientTimeout = 1800 * time.Second

func runRepro(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("repro", flag.ContinueOnError)
	fs.SetOutput(stderr)
	factor := fs.Int("compress", 300, "time compression: every knob and the client's timeout divided by this")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: mcpchaos repro hang-1800s [--compress N]

Reproduces the seed's incident, time-compressed, in its two halves, against
(a) mcplocal built with the seed's two bugs (the unbounded-paginate and
bare-404 mutants) and (b) the real mcplocal:

 1. the hang: update_page (small, not paginated), then docmost_search (about
    14 kB, so it paginates) with an LLM that never answers;
 2. the stale session: the proxy restarts, and the client calls again with
    the session id it holds.

Prints what the client saw and the waterfalls. Exit 0 when (a) hangs past the
client timeout and answers the stale id with a bare 404 the client cannot
correlate, and (b) answers in budget with the ⚠ notice, recreates the
session under the client's id with its notice, and answers a raw request on
that id with a JSON-RPC message carrying its id (JSON or SSE alike).
`)
		fs.PrintDefaults()
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fs.Usage()
		return exitError(2)
	}
	if args[0] != "hang-1800s" {
		fs.Usage()
		return fmt.Errorf("unknown incident %q (known: hang-1800s)", args[0])
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("repro: unexpected argument %q", fs.Arg(0))
	}
	if err := checkFlags("repro", fs); err != nil {
		return err
	}
	if *factor < 1 {
		return fmt.Errorf("--compress %d: want a whole number >= 1", *factor)
	}
	kv := mcplocal.CompressBy(*factor)
	// The upstream was never the problem (the seed measured Docmost at
	// 203 ms): its bounds get the whole compressed request deadline, so a
	// loaded machine's connect time does not pass for the incident.
	kv.UpstreamConnect, kv.UpstreamCallTimeout = kv.RequestDeadline, kv.RequestDeadline
	clientTimeout := incidentClientTimeout / time.Duration(*factor)
	fmt.Fprintf(stdout, "hang-1800s: time compressed %d×: the client's 1800 s timeout is %v; MCPCTL_PAGINATION_LLM_TIMEOUT_MS %v, MCPCTL_REQUEST_DEADLINE_MS %v.\n",
		*factor, clientTimeout, kv.PaginationLLMTimeout, kv.RequestDeadline)

	dir, err := os.MkdirTemp("", "mcpchaos-repro-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Fprintln(stderr, "building mcplocal with the seed's two bugs (mutants unbounded-paginate and bare-404)...")
	start := time.Now()
	mutant, err := mutants.BuildWith(ctx, []string{"unbounded-paginate", "bare-404"}, dir)
	if err != nil {
		return fmt.Errorf("building the mutant: %w", err)
	}
	fmt.Fprintf(stderr, "built in %v\n", time.Since(start).Round(time.Millisecond))

	// The seed's proxy had no outer request deadline either: (a) runs with
	// one well past the client's timeout, so only pagination is in play.
	seedKnobs := kv
	seedKnobs.RequestDeadline = 10 * clientTimeout
	fmt.Fprintf(stdout, "(a) runs with MCPCTL_REQUEST_DEADLINE_MS=%d, past the client's timeout: the seed's proxy had no outer deadline.\n", seedKnobs.RequestDeadline.Milliseconds())
	a := reproduce(ctx, stdout, "(a) mcplocal with the seed's bugs (unbounded pagination, bare 404)", &harness.Binary{Path: mutant}, seedKnobs, clientTimeout)
	b := reproduce(ctx, stdout, "(b) mcplocal", &harness.InProcess{}, kv, clientTimeout)
	if err := judgeRepro(a, b); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nReproduced: (a) never answered within the compressed client timeout (%v, the incident's 1800 s), and after a restart answered the client's session id with a bare 404 carrying no JSON-RPC id; (b) answered in %v with the ⚠ notice and trace %s, and after a restart recreated the session under the client's id with the ⚠ Session state unavailable notice (trace %s).\n",
		clientTimeout, b.latency.Round(time.Millisecond), b.trace, b.stale.trace)
	return nil
}

// judgeRepro says whether the incident was reproduced, as the usage
// promises: (a) hangs past the client timeout and answers the stale id with
// a bare 404; (b) answers in budget with the notice, recreates the session
// with its notice and answers a raw request on that id inside the envelope.
func judgeRepro(a, b reproResult) error {
	switch {
	case a.err != nil:
		return fmt.Errorf("(a): %w", a.err)
	case b.err != nil:
		return fmt.Errorf("(b): %w", b.err)
	case a.answered:
		return errors.New("(a) answered: the mutant did not reproduce the hang")
	case !a.stale.bare:
		return fmt.Errorf("(a) did not answer the stale session id with a bare 404: %s", a.stale.wire)
	case !b.answered || !b.bounded || !b.noticed:
		return fmt.Errorf("(b) broke its promise: answered=%v within budget=%v notice=%v", b.answered, b.bounded, b.noticed)
	case !b.stale.recreated:
		return fmt.Errorf("(b) did not recreate the stale session with its notice: %s", b.stale.seen)
	case !b.stale.correlated:
		return fmt.Errorf("(b) answered a raw request on the recreated id outside the JSON-RPC envelope: %s", b.stale.wire)
	}
	return nil
}

type reproResult struct {
	answered, bounded, noticed bool
	latency                    time.Duration
	trace                      string
	stale                      staleResult
	err                        error
}

// staleResult is what the second half of the incident showed: the client's
// session id after the proxy restarted.
type staleResult struct {
	bare       bool   // answered 404 with a body that is no JSON-RPC message the client can correlate
	recreated  bool   // the client's next call succeeded on its own id, with the ⚠ notice
	correlated bool   // the raw request on the id got a JSON-RPC answer carrying its id
	trace      string // the recreated call's trace code
	seen       string // what the client saw, for errors
	wire       string // what the raw request got, for errors
}

// reproduce runs the incident's two calls against one target and prints what
// happened and the waterfall of what the proxy recorded.
func reproduce(ctx context.Context, w io.Writer, title string, target harness.Target, kv knobs.Values, clientTimeout time.Duration) (r reproResult) {
	fmt.Fprintf(w, "\n== %s\n", title)
	env, err := harness.NewEnv(ctx, harness.EnvOptions{
		Target: target, Bounds: mcplocal.BoundsOf(kv), LLM: true,
		LLMDefault: fakellm.Step{Kind: fakellm.HangBeforeHeaders},
		Pipeline:   []harness.Stage{{Name: "paginate"}},
	})
	if err != nil {
		r.err = err
		return r
	}
	defer env.Close(context.Background())
	cs, err := harness.SDKClient(ctx, env.ProjectURL(), "")
	if err != nil {
		r.err = err
		return r
	}
	defer cs.Close()

	call := func(tool string, args map[string]any) (*mcp.CallToolResult, time.Duration, error) {
		cctx, cancel := context.WithTimeout(ctx, clientTimeout)
		defer cancel()
		t0 := time.Now()
		res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		return res, time.Since(t0), err
	}
	res, d, err := call("docmost_update_page", map[string]any{"page_id": "notes", "content": "found notes"})
	if err != nil || res.IsError {
		r.err = fmt.Errorf("update_page was not answered well: %v %s", err, firstText(res))
		return r
	}
	fmt.Fprintf(w, "docmost_update_page  answered in %v (small result, not paginated)\n", d.Round(time.Millisecond))

	defer func() {
		if r.err == nil {
			r.stale, r.err = staleSession(ctx, w, env, cs, clientTimeout)
		}
	}()
	res, r.latency, err = call("docmost_search", map[string]any{"query": "notes"})
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			fmt.Fprintf(w, "docmost_search       NO ANSWER: the client gave up after %v (the incident's 1800 s)\n", r.latency.Round(time.Millisecond))
		} else {
			fmt.Fprintf(w, "docmost_search       failed: %v\n", err)
		}
		printSessionRows(ctx, w, env, cs.ID())
		return r
	}
	r.answered = true
	r.trace, _ = res.Meta[trace.MetaKey].(string)
	budget := kv.PaginationLLMTimeout + kv.UpstreamCallTimeout
	r.bounded = r.latency <= budget+catalogue.Tolerance
	var text string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			text += t.Text + "\n"
		}
	}
	r.noticed = strings.Contains(text, "⚠ Smart page titles unavailable (")
	first, _, _ := strings.Cut(text, "\n")
	fmt.Fprintf(w, "docmost_search       answered in %v (budget %v + tolerance %v), trace %s\n  %s\n", r.latency.Round(time.Millisecond), budget, catalogue.Tolerance, r.trace, first)
	rows, err := mcplocal.Audit(ctx, env, r.trace)
	if err != nil {
		r.err = err
		return r
	}
	fmt.Fprintln(w)
	_ = waterfall.Render(w, r.trace, rows)
	return r
}

// printSessionRows shows what the proxy recorded for the session: nothing for
// the hung request, which never finished.
func printSessionRows(ctx context.Context, w io.Writer, env *harness.Env, session string) {
	rows, err := mcplocal.AuditSession(ctx, env, session)
	if err != nil {
		fmt.Fprintf(w, "(audit rows unavailable: %v)\n", err)
		return
	}
	byTrace := map[string][]audit.Row{}
	var order []string
	for _, row := range rows {
		if _, seen := byTrace[row.CorrelationID]; !seen {
			order = append(order, row.CorrelationID)
		}
		byTrace[row.CorrelationID] = append(byTrace[row.CorrelationID], row)
	}
	fmt.Fprintf(w, "\nThe proxy's audit trail for the session (%d trace codes): the hung docmost_search has no tool_call_trace row, because it never finished; its upstream call is there, answered in milliseconds (the seed measured Docmost at 203 ms: it was never Docmost).\n\n", len(order))
	for _, code := range order {
		_ = waterfall.Render(w, code, byTrace[code])
		fmt.Fprintln(w)
	}
}

func firstText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}

// staleSession is the incident's second half: the proxy restarts while the
// client holds its session id, and the client calls again with it. The seed's
// proxy answered a bare 404 outside the JSON-RPC envelope (3.5 ms server-side;
// 1800 s client-side, since the client could not correlate it); mcplocal
// recreates the session under the same id and says so.
func staleSession(ctx context.Context, w io.Writer, env *harness.Env, cs *mcp.ClientSession, clientTimeout time.Duration) (staleResult, error) {
	var s staleResult
	fmt.Fprintf(w, "\n-- the proxy restarts; the client still holds session %s\n", cs.ID())
	if err := env.Target.Restart(ctx); err != nil {
		return s, fmt.Errorf("restarting the proxy: %w", err)
	}
	cctx, cancel := context.WithTimeout(ctx, clientTimeout)
	defer cancel()
	t0 := time.Now()
	res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "docmost_update_page", Arguments: map[string]any{"page_id": "notes", "content": "again"}})
	d := time.Since(t0).Round(time.Millisecond)
	switch {
	case err != nil:
		s.seen = err.Error()
		fmt.Fprintf(w, "docmost_update_page  the client's call failed after %v: %v\n", d, err)
	default:
		text := firstText(res)
		s.trace, _ = res.Meta[trace.MetaKey].(string)
		s.seen = text
		s.recreated = !res.IsError && strings.HasPrefix(text, "⚠ Session state unavailable (")
		first, _, _ := strings.Cut(text, "\n")
		fmt.Fprintf(w, "docmost_update_page  answered in %v on the same session id, trace %s\n  %s\n", d, s.trace, first)
	}
	// What went over the wire for a request on that id, read raw: a client
	// can only match an answer to its request by the JSON-RPC id.
	status, ctype, body, err := rawCall(cctx, env.ProjectURL(), cs)
	if err != nil {
		return s, fmt.Errorf("raw request on the stale id: %w", err)
	}
	jsonRPC := answersID(ctype, body, rawCallID)
	s.wire = fmt.Sprintf("%d %s %q", status, ctype, clip(string(body), 80))
	s.bare = status == http.StatusNotFound && !jsonRPC
	s.correlated = jsonRPC
	verdict := "a JSON-RPC message the client can correlate"
	if !jsonRPC {
		verdict = "NOT a JSON-RPC message: the client cannot tell which request it answers"
	}
	fmt.Fprintf(w, "raw tools/call on the id answered %s: %s\n", s.wire, verdict)
	if s.trace != "" {
		if rows, err := mcplocal.Audit(ctx, env, s.trace); err == nil {
			fmt.Fprintln(w)
			_ = waterfall.Render(w, s.trace, rows)
		}
	}
	return s, nil
}

// rawCallID is the JSON-RPC id of rawCall's request.
const rawCallID = "7"

// answersID reports whether body, served as ctype, is the JSON-RPC answer to
// request id: a JSON object carrying it, or an SSE stream one of whose
// events does.
func answersID(ctype string, body []byte, id string) bool {
	is := func(data []byte) bool {
		var msg struct {
			ID json.RawMessage `json:"id"`
		}
		return json.Unmarshal(data, &msg) == nil && string(msg.ID) == id
	}
	if mt, _, _ := mime.ParseMediaType(ctype); mt != "text/event-stream" {
		return is(body)
	}
	// An event's data lines, joined by newlines, are its message; a blank
	// line (or the end of the stream) ends the event.
	var data [][]byte
	for _, line := range bytes.Split(body, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		switch {
		case len(line) == 0:
			if len(data) > 0 && is(bytes.Join(data, []byte("\n"))) {
				return true
			}
			data = nil
		case bytes.HasPrefix(line, []byte("data:")):
			data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" ")))
		}
	}
	return len(data) > 0 && is(bytes.Join(data, []byte("\n")))
}

// rawCall sends one tools/call on cs's session id with a plain HTTP client.
func rawCall(ctx context.Context, url string, cs *mcp.ClientSession) (status int, ctype string, body []byte, err error) {
	req := `{"jsonrpc":"2.0","id":` + rawCallID + `,"method":"tools/call","params":{"name":"docmost_update_page","arguments":{"page_id":"notes","content":"raw"}}}`
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(req))
	if err != nil {
		return 0, "", nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json, text/event-stream")
	hr.Header.Set("Mcp-Session-Id", cs.ID())
	if ir := cs.InitializeResult(); ir != nil {
		hr.Header.Set("Mcp-Protocol-Version", ir.ProtocolVersion)
	}
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, resp.Header.Get("Content-Type"), bytes.TrimSpace(body), err
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
