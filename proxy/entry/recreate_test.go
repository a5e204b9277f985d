package entry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/syncbuf"
	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/project"
	"github.com/mcpchaos/mcpchaos/proxy/session"
)

// rows is an audit sink that keeps what it is given.
type rows struct {
	mu sync.Mutex
	rr []audit.Row
}

func (s *rows) Record(r audit.Row) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rr = append(s.rr, r)
}

func (s *rows) all() []audit.Row {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]audit.Row(nil), s.rr...)
}

// instance is one proxy process's entry: its own project, session registry,
// audit sink and log, over a Records store that may outlive it.
type instance struct {
	srv  *httptest.Server
	h    *Handler
	reg  *session.Registry
	rows *rows
	// prows are project p's own rows (mcp_request, tool_call_trace).
	prows *rows
	log   *syncbuf.Buffer
}

// start serves project "p" (and an empty project "a", for the list of known
// projects) over recs; o's zero fields are filled as newServer fills them.
func start(t *testing.T, recs Records, o Options, limits session.Limits) *instance {
	t.Helper()
	in := &instance{reg: session.NewRegistry(limits), rows: &rows{}, prows: &rows{}, log: &syncbuf.Buffer{}}
	tbl := in.reg.Table("p")
	p := project.New("p", project.Options{Sessions: tbl, Audit: in.prows, Knobs: knobs.Defaults(), Logger: nopLogger()})
	t.Cleanup(p.Close)
	pa := project.New("a", project.Options{Sessions: in.reg.Table("a"), Audit: discard{}, Knobs: knobs.Defaults(), Logger: nopLogger()})
	t.Cleanup(pa.Close)
	o.Projects = map[string]Project{"p": {P: p, Sessions: tbl, RequireAuth: o.Strict}, "a": {P: pa}}
	if o.Users == nil {
		o.Users = map[string]string{"alice-token": "alice", "bob-token": "bob"}
	}
	o.Registry, o.Records, o.Audit = in.reg, recs, in.rows
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(in.log, &slog.HandlerOptions{
			ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			}}))
	}
	in.h = New(o)
	mux := http.NewServeMux()
	mux.Handle("/projects/{project}/mcp", in.h)
	in.srv = httptest.NewServer(mux)
	t.Cleanup(in.srv.Close)
	return in
}

func initAs(t *testing.T, srv *httptest.Server, token string) string {
	t.Helper()
	hdr := map[string]string{}
	if token != "" { // an anonymous client sends no Authorization (a wrong one is 401 everywhere)
		hdr["Authorization"] = "Bearer " + token
	}
	a := send(t, srv, http.MethodPost, with(hdr), initBody)
	id := a.header.Get("Mcp-Session-Id")
	if a.status != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d %s", a.status, a.msg)
	}
	return id
}

func onSession(token, id string) map[string]string {
	h := with(map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-11-25"})
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	return h
}

const pingBody = `{"jsonrpc":"2.0","id":7,"method":"ping"}`

var traceSuffix = regexp.MustCompile(` \[trace ([0-9A-Z]+)\]$`)

// whole checks an error message is want followed by its trace code, and
// returns the code.
func whole(t *testing.T, what string, a rpcAnswer, status, code int, want string) string {
	t.Helper()
	m := traceSuffix.FindStringSubmatch(a.msg)
	if a.status != status || a.code != code || a.ct != "application/json" || m == nil || strings.TrimSuffix(a.msg, m[0]) != want {
		t.Errorf("%s: got %d %q code %d %q\nwant %d application/json code %d %q [trace …]", what, a.status, a.ct, a.code, a.msg, status, code, want)
		return ""
	}
	return m[1]
}

// A restart loses every live session; the owner's id is recreated under the
// owner, with its audit row and log line, and refused to anyone else.
func TestRestartRecreatesTheOwnersSessionOnly(t *testing.T) {
	recs := audit.NewMemory()
	first := start(t, recs, Options{}, session.Limits{})
	id := initAs(t, first.srv, "alice-token")
	if got := first.log.String(); got != "" {
		t.Errorf("an initialize whose owner was recorded logged %q", got)
	}
	first.srv.Close()

	second := start(t, recs, Options{}, session.Limits{})
	a := send(t, second.srv, http.MethodPost, onSession("bob-token", id), pingBody)
	whole(t, "bob on alice's id after the restart", a, 404, -32001, "session "+id+" is not open for this client; initialize a new session")
	a = send(t, second.srv, http.MethodPost, onSession("", id), pingBody)
	whole(t, "an anonymous client on alice's id after the restart", a, 404, -32001, "session "+id+" is not open for this client; initialize a new session")
	if n := second.reg.Len(); n != 0 {
		t.Fatalf("refused requests opened %d sessions", n)
	}
	if len(second.rows.all()) != 0 {
		t.Fatalf("refused requests wrote rows: %+v", second.rows.all())
	}

	before := time.Now()
	a = send(t, second.srv, http.MethodPost, onSession("alice-token", id), pingBody)
	if a.status != http.StatusOK || a.code != 0 || !strings.Contains(a.body, `"id":7,"result":{}`) {
		t.Fatalf("alice's ping on her id after the restart: %d code %d %s, want 200 and ping's result", a.status, a.code, a.body)
	}
	var adopting int
	second.h.adopting.Range(func(any, any) bool { adopting++; return true })
	if adopting != 0 {
		t.Errorf("%d adoption locks left after the recreation", adopting)
	}
	if info, ok := second.reg.Table("p").Get(id); !ok || info.User != "alice" || !info.Recreated || info.Reason != RecreatedReason {
		t.Fatalf("the recreated session in the table: %+v %v, want alice's, recreated because %q", info, ok, RecreatedReason)
	}
	if why, ok := second.reg.Table("p").TakeNotice(id); !ok || why != RecreatedReason {
		t.Errorf("the recreated session owes no notice: %q %v", why, ok)
	}
	rr := second.rows.all()
	if len(rr) != 1 {
		t.Fatalf("rows after the recreation: %+v, want one session_recreated row", rr)
	}
	r := rr[0]
	if r.Kind != audit.KindSessionRecreated || r.SessionID != id || r.User != "alice" || r.Project != "p" ||
		r.Status != audit.StatusOK || !r.Degraded || r.DegradedReason != "session state unavailable: "+RecreatedReason ||
		r.CorrelationID == "" || r.SpanID == "" || r.ParentID != "" || r.Server != "" || r.Tool != "" || r.Detail != "" ||
		r.Start.Before(before.Add(-time.Second)) || r.Start.After(time.Now()) || r.Duration < 0 || r.Duration > time.Since(before) {
		t.Errorf("session_recreated row: %+v", r)
	}
	// The client's request, served after the replayed initialize, quotes
	// the recreation's trace code in its row.
	if pr := second.prows.all(); len(pr) != 2 || pr[0].Tool != "initialize" || pr[1].Tool != "ping" ||
		pr[1].CorrelationID != r.CorrelationID || pr[1].User != "alice" {
		t.Errorf("p's rows of the recreation %s: %+v, want the replayed initialize and the ping under the recreation's code", r.CorrelationID, pr)
	}
	want := `level=INFO msg="session recreated" trace=` + r.CorrelationID + ` session=` + id + ` user=alice project=p` + "\n"
	if got := second.log.String(); got != want {
		t.Errorf("log:\n%q\nwant\n%q", got, want)
	}
	// Recreated once: the next request is served on the live session.
	if a := send(t, second.srv, http.MethodPost, onSession("alice-token", id), pingBody); a.status != http.StatusOK {
		t.Fatalf("second ping: %d %s", a.status, a.msg)
	}
	if n := len(second.rows.all()); n != 1 {
		t.Errorf("%d rows after a second request, want still 1", n)
	}

	// Alice closes it on the third instance (which never saw it live): a
	// tombstone, and the id is refused from then on, even to her.
	third := start(t, recs, Options{}, session.Limits{})
	a = send(t, third.srv, http.MethodDelete, onSession("bob-token", id), "")
	whole(t, "bob's DELETE of alice's id", a, 404, -32001, "session "+id+" is not open for this client; initialize a new session")
	if got, _ := recs.LookupSession(context.Background(), id); len(got) != 1 || got[0].Tombstone() {
		t.Fatalf("bob's refused DELETE tombstoned the id: %+v", got)
	}
	a = send(t, third.srv, http.MethodDelete, onSession("alice-token", id), "")
	if a.status != http.StatusNoContent {
		t.Fatalf("alice's DELETE of her id on a restarted proxy: %d %s, want 204", a.status, a.msg)
	}
	if got, _ := recs.LookupSession(context.Background(), id); len(got) != 1 || !got[0].Tombstone() || got[0].Owner != "alice" || got[0].Project != "p" {
		t.Fatalf("alice's DELETE left: %+v, want her tombstone in p", got)
	}
	if got := third.log.String(); got != "" {
		t.Errorf("a recorded tombstone logged %q", got)
	}
	a = send(t, third.srv, http.MethodDelete, onSession("alice-token", id), "")
	whole(t, "alice's second DELETE of her id", a, 404, -32001, "session "+id+" is not open for this client; initialize a new session")
	a = send(t, third.srv, http.MethodPost, onSession("alice-token", id), pingBody)
	whole(t, "alice on her DELETEd id", a, 404, -32001, "session "+id+" is not open for this client; initialize a new session")
	a = send(t, third.srv, http.MethodDelete, onSession("alice-token", "never-issued"), "")
	whole(t, "a DELETE of an id never issued", a, 404, -32001, "session never-issued is not open for this client; initialize a new session")
	if got, _ := recs.LookupSession(context.Background(), "never-issued"); len(got) != 0 {
		t.Errorf("a DELETE of an id never issued left a record: %+v", got)
	}
	if n := len(third.rows.all()); n != 0 {
		t.Errorf("the third instance wrote %d rows, want none", n)
	}
}

// Strict sessions refuse to recreate, and say why, in the exact words.
func TestStrictSessionsAreNotRecreated(t *testing.T) {
	recs := audit.NewMemory()
	first := start(t, recs, Options{}, session.Limits{})
	id := initAs(t, first.srv, "alice-token")
	strict := start(t, recs, Options{Strict: true}, session.Limits{})
	a := send(t, strict.srv, http.MethodPost, onSession("alice-token", id), pingBody)
	whole(t, "strict", a, 404, -32001, "session "+id+" is not known to this proxy (strict sessions); initialize a new session")
	if strict.reg.Len() != 0 || len(strict.rows.all()) != 0 {
		t.Errorf("strict refusal recreated: %d sessions, rows %+v", strict.reg.Len(), strict.rows.all())
	}
}

// The entry's own refusals, word for word: an unknown project names the
// known ones in order; a project that requires a token says so, with the
// header RFC 6750 asks for.
func TestProjectRefusalsWholeShape(t *testing.T) {
	in := start(t, audit.NewMemory(), Options{Strict: true}, session.Limits{}) // Strict also sets RequireAuth on p
	req, _ := http.NewRequest(http.MethodPost, in.srv.URL+"/projects/zz/mcp", strings.NewReader(initBody))
	for k, v := range jsonHeaders {
		req.Header.Set(k, v)
	}
	resp, err := in.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	e := rpcErrorOf(b)
	if m := traceSuffix.FindString(e.Error.Message); resp.StatusCode != 404 || e.Error.Code != -32001 || m == "" ||
		strings.TrimSuffix(e.Error.Message, m) != `unknown project "zz" (projects: a, p)` {
		t.Errorf("unknown project: %d %s", resp.StatusCode, b)
	}

	a := send(t, in.srv, http.MethodPost, jsonHeaders, initBody)
	whole(t, "no token", a, 401, -32001, "project p requires a bearer token (Authorization: Bearer <token>)")
	if got := a.header.Get("WWW-Authenticate"); got != `Bearer realm="mcplocal"` {
		t.Errorf("WWW-Authenticate %q", got)
	}
	a = send(t, in.srv, http.MethodPost, with(map[string]string{"Authorization": "Bearer nobody"}), initBody)
	whole(t, "an unknown token", a, 401, -32001, "project p requires a bearer token (Authorization: Bearer <token>)")
	if in.reg.Len() != 0 {
		t.Errorf("refused initializes opened %d sessions", in.reg.Len())
	}
	// With a token the same request opens a session.
	initAs(t, in.srv, "bob-token")
}

// New fills every option left zero: the body limit, the record timeout, the
// logger, the registry, the records.
func TestZeroOptionsTakeTheDefaults(t *testing.T) {
	p := project.New("p", project.Options{Sessions: session.NewTable(), Audit: discard{}, Knobs: knobs.Defaults(), Logger: nopLogger()})
	t.Cleanup(p.Close)
	h := New(Options{Projects: map[string]Project{"p": {P: p}}, Audit: discard{}})
	mux := http.NewServeMux()
	mux.Handle("/projects/{project}/mcp", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	a := send(t, srv, http.MethodPost, jsonHeaders, initBody)
	id := a.header.Get("Mcp-Session-Id")
	if a.status != http.StatusOK || id == "" {
		t.Fatalf("initialize with zero options: %d %s", a.status, a.msg)
	}
	got, err := h.o.Records.LookupSession(context.Background(), id)
	if err != nil || len(got) != 1 {
		t.Fatalf("the default records hold %+v, %v", got, err)
	}
	if h.o.MaxBodyBytes != knobs.Defaults().MaxBodyBytes || h.o.RecordTimeout != knobs.Defaults().AuditWriteTimeout || h.o.Logger == nil || h.o.Registry == nil {
		t.Errorf("defaults: body %d, record timeout %v, logger %v, registry %v", h.o.MaxBodyBytes, h.o.RecordTimeout, h.o.Logger, h.o.Registry)
	}
	if n := h.ExpireIdle(context.Background()); n != 0 { // no idle limit: closes nothing
		t.Errorf("ExpireIdle without an idle limit closed %d", n)
	}
	if a := send(t, srv, http.MethodPost, onSession("", id), pingBody); a.status != http.StatusOK {
		t.Fatalf("ping: %d %s", a.status, a.msg)
	}
	// Given values are kept.
	lg := nopLogger()
	reg := session.NewRegistry(session.Limits{})
	recs := audit.NewMemory()
	h = New(Options{Projects: map[string]Project{}, MaxBodyBytes: 1, RecordTimeout: time.Nanosecond, Logger: lg, Registry: reg, Records: recs})
	if h.o.MaxBodyBytes != 1 || h.o.RecordTimeout != time.Nanosecond || h.o.Logger != lg || h.o.Registry != reg || h.o.Records != Records(recs) {
		t.Errorf("given options were replaced: %+v", h.o)
	}
}

// An idle session is closed and released, without a tombstone: its owner
// gets it recreated.
func TestExpireIdleClosesWithoutATombstone(t *testing.T) {
	recs := audit.NewMemory()
	in := start(t, recs, Options{}, session.Limits{Idle: time.Millisecond})
	id := initAs(t, in.srv, "alice-token")
	n, deadline := 0, time.Now().Add(5*time.Second)
	for n == 0 && time.Now().Before(deadline) {
		n = in.h.ExpireIdle(context.Background())
		if n == 0 {
			time.Sleep(2 * time.Millisecond) // the idle limit's own time must pass
		}
	}
	if n != 1 {
		t.Fatalf("ExpireIdle closed %d sessions, want 1", n)
	}
	if _, ok := in.reg.Table("p").Get(id); ok {
		t.Fatal("the expired session is still in the table")
	}
	if got, _ := recs.LookupSession(context.Background(), id); len(got) != 1 || got[0].Tombstone() {
		t.Fatalf("expiry left %+v, want alice's open record", got)
	}
	want := `level=INFO msg="session expired after idling" project=p session=` + id + ` user=alice` + "\n"
	if got := in.log.String(); got != want {
		t.Errorf("log:\n%q\nwant\n%q", got, want)
	}
	a := send(t, in.srv, http.MethodPost, onSession("alice-token", id), pingBody)
	if a.status != http.StatusOK {
		t.Fatalf("alice's ping after expiry: %d %s", a.status, a.msg)
	}
	if rr := in.rows.all(); len(rr) != 1 || rr[0].Kind != audit.KindSessionRecreated {
		t.Errorf("rows: %+v, want one session_recreated", rr)
	}
}

// A client cannot set the headers the proxy passes to itself: who the user
// is, that a session was recreated, the trace code.
func TestClientCannotSetTheProxysOwnHeaders(t *testing.T) {
	in := start(t, audit.NewMemory(), Options{}, session.Limits{})
	forged := with(map[string]string{project.HeaderUser: "alice", project.HeaderRecreated: "forged", "X-Mcplocal-Trace": "AAAAAAAA"})
	a := send(t, in.srv, http.MethodPost, forged, initBody)
	id := a.header.Get("Mcp-Session-Id")
	if a.status != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d %s", a.status, a.msg)
	}
	info, ok := in.reg.Table("p").Get(id)
	if !ok || info.User != "" || info.Recreated || info.Reason != "" {
		t.Errorf("an anonymous initialize with forged headers made %+v, want an anonymous session not recreated", info)
	}
	if got, _ := in.h.o.Records.LookupSession(context.Background(), id); len(got) != 1 || got[0].Owner != "" {
		t.Errorf("recorded owner %+v, want anonymous", got)
	}
	hdr := onSession("", id)
	for k, v := range forged {
		if strings.HasPrefix(k, "X-") {
			hdr[k] = v
		}
	}
	if a := send(t, in.srv, http.MethodPost, hdr, pingBody); a.status != http.StatusOK {
		t.Fatalf("ping: %d %s", a.status, a.msg)
	}
	for _, r := range in.prows.all() {
		if r.CorrelationID == "AAAAAAAA" || r.User != "" {
			t.Errorf("a row took the client's forged headers: %+v", r)
		}
	}
	if n := len(in.prows.all()); n != 2 {
		t.Errorf("%d rows of p, want 2 (initialize, ping)", n)
	}
}

// Mcp-Session-Id is one non-empty value or absent.
func TestSessionIDHeaderIsOneNonEmptyValue(t *testing.T) {
	in := start(t, audit.NewMemory(), Options{}, session.Limits{})
	id := initAs(t, in.srv, "alice-token")
	const msg = "invalid Mcp-Session-Id: one id of 1 to 128 visible ASCII characters (0x21-0x7E) is required"
	for name, ids := range map[string][]string{"two values": {id, id}, "empty": {""}, "empty then the id": {"", id}} {
		req, _ := http.NewRequest(http.MethodPost, in.srv.URL+"/projects/p/mcp", strings.NewReader(pingBody))
		for k, v := range onSession("alice-token", id) {
			req.Header.Set(k, v)
		}
		req.Header["Mcp-Session-Id"] = ids
		resp, err := in.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		e := rpcErrorOf(b)
		if m := traceSuffix.FindString(e.Error.Message); resp.StatusCode != 400 || e.Error.Code != CodeInvalidRequest || m == "" || strings.TrimSuffix(e.Error.Message, m) != msg {
			t.Errorf("%s: %d %s", name, resp.StatusCode, b)
		}
	}
	if session.MaxIDBytes != 128 {
		t.Errorf("the message above assumes MaxIDBytes 128, it is %d", session.MaxIDBytes)
	}
}

// The session cap refuses an initialize past it, in its own words, and
// nothing else: a request without a session that is no initialize is the
// SDK's to answer, as without a cap.
func TestSessionCapRefusesInitializeOnly(t *testing.T) {
	free := start(t, audit.NewMemory(), Options{}, session.Limits{})
	capped := start(t, audit.NewMemory(), Options{}, session.Limits{MaxTotal: 1})
	initAs(t, capped.srv, "alice-token")
	a := send(t, capped.srv, http.MethodPost, with(map[string]string{"Authorization": "Bearer bob-token"}), initBody)
	whole(t, "an initialize past the cap", a, 429, -32001, "the proxy already holds 1 live sessions, the most it may hold (MCPCTL_SESSIONS_MAX=1); try again when others close or expire")
	for _, body := range []string{pingBody, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`} {
		want := send(t, free.srv, http.MethodPost, with(map[string]string{"Authorization": "Bearer bob-token"}), body)
		got := send(t, capped.srv, http.MethodPost, with(map[string]string{"Authorization": "Bearer bob-token"}), body)
		if got.status != want.status || got.code != want.code || traceSuffix.ReplaceAllString(got.msg, "") != traceSuffix.ReplaceAllString(want.msg, "") {
			t.Errorf("%s without a session past the cap: %d %d %q; without a cap %d %d %q", body, got.status, got.code, got.msg, want.status, want.code, want.msg)
		}
	}
}

// failingClaims is a Records whose claims fail.
type failingClaims struct{ *audit.Memory }

func (failingClaims) ClaimSession(context.Context, audit.SessionRecord) (audit.SessionRecord, error) {
	return audit.SessionRecord{}, errors.New("disk full")
}

// An owner the store could not record still gets its session, and the log
// says what that costs.
func TestOwnerNotRecordedIsLogged(t *testing.T) {
	in := start(t, failingClaims{audit.NewMemory()}, Options{}, session.Limits{})
	id := initAs(t, in.srv, "alice-token")
	want := `level=ERROR msg="session owner not recorded: after a restart this session cannot be recreated" project=p session=` + id + ` user=alice err="disk full"` + "\n"
	if got := in.log.String(); got != want {
		t.Errorf("log:\n%q\nwant\n%q", got, want)
	}
}

// racingRecords says the id is the caller's, open, when looked up, and
// tombstoned when claimed: its client's DELETE, on another instance, landed
// in between.
type racingRecords struct{ *audit.Memory }

func (racingRecords) LookupSession(_ context.Context, id string) ([]audit.SessionRecord, error) {
	return []audit.SessionRecord{{Project: "p", ID: id, Owner: "alice", Created: time.Now()}}, nil
}

func (racingRecords) ClaimSession(_ context.Context, rec audit.SessionRecord) (audit.SessionRecord, error) {
	rec.Closed = time.Now()
	return rec, nil
}

// The claim decides, not the lookup before it: a session closed in between
// is not recreated.
func TestAClaimThatFindsATombstoneRefuses(t *testing.T) {
	in := start(t, racingRecords{audit.NewMemory()}, Options{}, session.Limits{})
	a := send(t, in.srv, http.MethodPost, onSession("alice-token", "closed-meanwhile"), pingBody)
	whole(t, "a claim that finds a tombstone", a, 404, -32001, "session closed-meanwhile is not open for this client; initialize a new session")
	if in.reg.Len() != 0 || len(in.rows.all()) != 0 {
		t.Errorf("recreated anyway: %d sessions, rows %+v", in.reg.Len(), in.rows.all())
	}
}

// A client of the first Streamable HTTP version sends no
// Mcp-Protocol-Version; its session is recreated all the same.
func TestRecreationWithoutAProtocolVersionHeader(t *testing.T) {
	recs := audit.NewMemory()
	first := start(t, recs, Options{}, session.Limits{})
	id := initAs(t, first.srv, "alice-token")
	second := start(t, recs, Options{}, session.Limits{})
	hdr := onSession("alice-token", id)
	delete(hdr, "Mcp-Protocol-Version")
	a := send(t, second.srv, http.MethodPost, hdr, pingBody)
	if a.status != http.StatusOK || !strings.Contains(a.body, `"id":7,"result":{}`) {
		t.Fatalf("ping without a protocol version after the restart: %d %s", a.status, a.body)
	}
}

// Requests on the same lost id at once: every one is served, one recreates.
func TestConcurrentRequestsOnALostIDRecreateItOnce(t *testing.T) {
	recs := audit.NewMemory()
	first := start(t, recs, Options{}, session.Limits{})
	id := initAs(t, first.srv, "alice-token")
	second := start(t, recs, Options{}, session.Limits{})
	const n = 8
	status := make(chan rpcAnswer, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status <- send(t, second.srv, http.MethodPost, onSession("alice-token", id), fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, 100+i))
		}()
	}
	wg.Wait()
	close(status)
	for s := range status {
		if s.status != http.StatusOK {
			t.Errorf("a concurrent request got %d %s", s.status, s.body)
		}
	}
	if rr := second.rows.all(); len(rr) != 1 {
		t.Errorf("%d session_recreated rows, want 1", len(rr))
	}
	var adopting int
	second.h.adopting.Range(func(any, any) bool { adopting++; return true })
	if adopting != 0 {
		t.Errorf("%d adoption locks left", adopting)
	}
}

// A body over MCPCTL_MAX_BODY_BYTES is refused on a live session and on one
// being recreated alike, before anything is recreated.
func TestBodyLimitOnLiveAndLostSessions(t *testing.T) {
	recs := audit.NewMemory()
	first := start(t, recs, Options{MaxBodyBytes: 512}, session.Limits{})
	id := initAs(t, first.srv, "alice-token")
	big := `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":"` + strings.Repeat("a", 600) + `"}}`
	const msg = "request body exceeds 512 bytes (knob MCPCTL_MAX_BODY_BYTES)"
	a := send(t, first.srv, http.MethodPost, onSession("alice-token", id), big)
	whole(t, "a big body on a live session", a, 413, CodeInvalidRequest, msg)
	second := start(t, recs, Options{MaxBodyBytes: 512}, session.Limits{})
	a = send(t, second.srv, http.MethodPost, onSession("alice-token", id), big)
	whole(t, "a big body on a lost session", a, 413, CodeInvalidRequest, msg)
	if second.reg.Len() != 0 || len(second.rows.all()) != 0 {
		t.Errorf("a refused body recreated the session: %d, %+v", second.reg.Len(), second.rows.all())
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

// A body that cannot be read is refused, in words that say so, whether the
// session is new, live or lost.
func TestUnreadableBodyIsRefused(t *testing.T) {
	recs := audit.NewMemory()
	first := start(t, recs, Options{}, session.Limits{})
	id := initAs(t, first.srv, "alice-token")
	second := start(t, recs, Options{}, session.Limits{})
	for name, c := range map[string]struct {
		h  *Handler
		id string
	}{"new": {first.h, ""}, "live": {first.h, id}, "lost": {second.h, id}} {
		r := httptest.NewRequest(http.MethodPost, "/projects/p/mcp", io.NopCloser(failingReader{}))
		r.SetPathValue("project", "p")
		for k, v := range onSession("alice-token", c.id) {
			r.Header.Set(k, v)
		}
		if c.id == "" {
			r.Header.Del("Mcp-Session-Id")
		}
		rec := httptest.NewRecorder()
		c.h.ServeHTTP(rec, r)
		e := rpcErrorOf(rec.Body.Bytes())
		if m := traceSuffix.FindString(e.Error.Message); rec.Code != 400 || e.Error.Code != CodeInvalidRequest || m == "" ||
			strings.TrimSuffix(e.Error.Message, m) != "reading the request body: connection reset" {
			t.Errorf("%s session: %d %s", name, rec.Code, rec.Body)
		}
	}
	if second.reg.Len() != 0 {
		t.Errorf("an unreadable body recreated the session")
	}
}

// failingStore fails what it is told to.
type failingStore struct {
	*audit.Memory
	close, lookup bool
}

func (f failingStore) CloseSession(ctx context.Context, rec audit.SessionRecord) error {
	if f.close {
		return errors.New("disk full")
	}
	return f.Memory.CloseSession(ctx, rec)
}

func (f failingStore) LookupSession(ctx context.Context, id string) ([]audit.SessionRecord, error) {
	if f.lookup {
		return nil, errors.New("connection refused")
	}
	return f.Memory.LookupSession(ctx, id)
}

// A tombstone the store could not write is logged, and the session is
// closed all the same; a lookup the store cannot answer is a 503, logged.
func TestStoreFailuresAreLoggedAndAnswered(t *testing.T) {
	in := start(t, failingStore{Memory: audit.NewMemory(), close: true}, Options{}, session.Limits{})
	id := initAs(t, in.srv, "alice-token")
	if a := send(t, in.srv, http.MethodDelete, onSession("alice-token", id), ""); a.status/100 != 2 {
		t.Fatalf("DELETE: %d %s", a.status, a.msg)
	}
	want := `level=ERROR msg="tombstone not recorded: the closed id could be recreated after a restart" project=p session=` + id + ` err="disk full"` + "\n"
	if got := in.log.String(); got != want {
		t.Errorf("log:\n%q\nwant\n%q", got, want)
	}
	if _, ok := in.reg.Table("p").Get(id); ok {
		t.Error("the DELETEd session is still in the table")
	}

	down := start(t, failingStore{Memory: audit.NewMemory(), lookup: true}, Options{}, session.Limits{})
	a := send(t, down.srv, http.MethodPost, onSession("alice-token", id), pingBody)
	whole(t, "a lookup the store cannot answer", a, 503, -32001, "cannot check who owns this session: the audit store is unavailable; retry later")
	want = `level=ERROR msg="session owner lookup failed" project=p err="connection refused"` + "\n"
	if got := down.log.String(); got != want {
		t.Errorf("log:\n%q\nwant\n%q", got, want)
	}
}

// The SDK's own refusal of a request's Host (DNS-rebinding protection) is
// passed on as a JSON-RPC error, whether the session is live (a request, a
// DELETE) or lost (it cannot be recreated then), and closes nothing.
func TestSDKHostRefusalIsPassedOn(t *testing.T) {
	recs := audit.NewMemory()
	first := start(t, recs, Options{}, session.Limits{})
	id := initAs(t, first.srv, "alice-token")
	evil := func(srv *httptest.Server, method, body string) rpcAnswer {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+"/projects/p/mcp", strings.NewReader(body))
		for k, v := range onSession("alice-token", id) {
			req.Header.Set(k, v)
		}
		req.Host = "evil.example"
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		e := rpcErrorOf(b)
		return rpcAnswer{status: resp.StatusCode, ct: resp.Header.Get("Content-Type"), code: e.Error.Code, msg: e.Error.Message, body: string(b)}
	}
	const refusal = `Forbidden: invalid Host header "evil.example"`
	whole(t, "a live session's request", evil(first.srv, http.MethodPost, pingBody), 403, CodeInvalidRequest, refusal)
	whole(t, "a live session's DELETE", evil(first.srv, http.MethodDelete, ""), 403, CodeInvalidRequest, refusal)
	if _, ok := first.reg.Table("p").Get(id); !ok {
		t.Fatal("a refused DELETE closed the session")
	}
	if got, _ := recs.LookupSession(context.Background(), id); len(got) != 1 || got[0].Tombstone() {
		t.Fatalf("a refused DELETE tombstoned: %+v", got)
	}
	second := start(t, recs, Options{}, session.Limits{})
	whole(t, "a lost session's request", evil(second.srv, http.MethodPost, pingBody), 404, -32001,
		"session "+id+" is not known and could not be recreated: replayed initialize answered 403 with session \"\": "+refusal)
	if second.reg.Len() != 0 || len(second.rows.all()) != 0 {
		t.Errorf("a refused recreation left %d sessions, rows %+v", second.reg.Len(), second.rows.all())
	}
	// The same requests from a good Host are served.
	if a := send(t, second.srv, http.MethodPost, onSession("alice-token", id), pingBody); a.status != 200 || !strings.Contains(a.body, `"result":{}`) {
		t.Fatalf("alice's ping: %d %s", a.status, a.body)
	}
}

// A session the SDK closed by itself while the entry's table still holds it
// is recreated on its owner's next request.
func TestASessionTheSDKForgotIsRecreated(t *testing.T) {
	in := start(t, audit.NewMemory(), Options{}, session.Limits{})
	id := initAs(t, in.srv, "alice-token")
	if a := send(t, in.srv, http.MethodPost, onSession("alice-token", id), pingBody); a.status != 200 || !strings.Contains(a.body, `"id":7,"result":{}`) {
		t.Fatalf("a ping on the live session: %d %s", a.status, a.body)
	}
	forget := func() {
		r := httptest.NewRequest(http.MethodDelete, "/projects/p/mcp", nil)
		for k, v := range onSession("alice-token", id) {
			r.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		in.h.sdkUser["p"].ServeHTTP(rec, r) // past the entry: only the SDK forgets
		if rec.Code/100 != 2 {
			t.Fatalf("the SDK's DELETE: %d %s", rec.Code, rec.Body)
		}
	}
	forget()
	a := send(t, in.srv, http.MethodPost, onSession("alice-token", id), pingBody)
	if a.status != 200 || !strings.Contains(a.body, `"id":7,"result":{}`) {
		t.Fatalf("alice's ping on a session the SDK forgot: %d %s, want it recreated", a.status, a.body)
	}
	if rr := in.rows.all(); len(rr) != 1 || rr[0].Kind != audit.KindSessionRecreated {
		t.Errorf("rows %+v, want one session_recreated", rr)
	}
	// Forgotten again, a DELETE finds nothing to close: refused, no tombstone.
	forget()
	a = send(t, in.srv, http.MethodDelete, onSession("alice-token", id), "")
	whole(t, "a DELETE of a session the SDK forgot", a, 404, -32001, "session "+id+" is not open for this client; initialize a new session")
	if got, _ := in.h.o.Records.LookupSession(context.Background(), id); len(got) != 1 || got[0].Tombstone() {
		t.Errorf("records %+v", got)
	}
}

// After idle expiry the SDK has closed the session too (the entry's DELETE
// reached it as its owner), not only the entry's table.
func TestExpireIdleClosesTheSDKSession(t *testing.T) {
	for _, token := range []string{"alice-token", ""} {
		in := start(t, audit.NewMemory(), Options{}, session.Limits{Idle: time.Millisecond})
		id := initAs(t, in.srv, token)
		n, deadline := 0, time.Now().Add(5*time.Second)
		for n == 0 && time.Now().Before(deadline) {
			if n = in.h.ExpireIdle(context.Background()); n == 0 {
				time.Sleep(2 * time.Millisecond) // the idle limit's own time must pass
			}
		}
		if n != 1 {
			t.Fatalf("ExpireIdle closed %d", n)
		}
		r := httptest.NewRequest(http.MethodPost, "/projects/p/mcp", strings.NewReader(pingBody))
		for k, v := range onSession(token, id) {
			r.Header.Set(k, v)
		}
		sdk := in.h.sdk["p"]
		if token != "" {
			sdk = in.h.sdkUser["p"]
		}
		rec := httptest.NewRecorder()
		sdk.ServeHTTP(rec, r)
		if rec.Code != http.StatusNotFound {
			t.Errorf("token %q: the SDK still serves the expired session: %d %s", token, rec.Code, rec.Body)
		}
	}
}

// An initialize-less method on a lost id is the SDK's to refuse; a lost id
// past the session cap is refused in the cap's words.
func TestLostSessionOtherMethodsAndTheCap(t *testing.T) {
	recs := audit.NewMemory()
	first := start(t, recs, Options{}, session.Limits{})
	id := initAs(t, first.srv, "alice-token")
	second := start(t, recs, Options{}, session.Limits{MaxTotal: 1})
	a := send(t, second.srv, http.MethodPut, onSession("alice-token", id), pingBody)
	if a.status != http.StatusMethodNotAllowed || a.code != CodeInvalidRequest {
		t.Errorf("PUT on a lost id: %d %s", a.status, a.body)
	}
	initAs(t, second.srv, "bob-token")
	a = send(t, second.srv, http.MethodPost, onSession("alice-token", id), pingBody)
	whole(t, "a lost id past the cap", a, 429, -32001, "the proxy already holds 1 live sessions, the most it may hold (MCPCTL_SESSIONS_MAX=1); try again when others close or expire")
	if len(second.rows.all()) != 0 {
		t.Errorf("recreated past the cap: %+v", second.rows.all())
	}
}

// gatedClaims holds every claim until n lookups were made: n requests on
// one lost id are then all at its adoption at once.
type gatedClaims struct {
	*audit.Memory
	n       int
	mu      sync.Mutex
	lookups int
	all     chan struct{}
}

func (g *gatedClaims) LookupSession(ctx context.Context, id string) ([]audit.SessionRecord, error) {
	g.mu.Lock()
	if g.lookups++; g.lookups == g.n {
		close(g.all)
	}
	g.mu.Unlock()
	return g.Memory.LookupSession(ctx, id)
}

func (g *gatedClaims) ClaimSession(ctx context.Context, rec audit.SessionRecord) (audit.SessionRecord, error) {
	select {
	case <-g.all:
	case <-time.After(2 * time.Second): // a bound, should the requests not all come
	}
	return g.Memory.ClaimSession(ctx, rec)
}

// Requests that meet at one adoption wait for it and are served; none hangs.
func TestRequestsMeetingAtOneAdoptionAreAllServed(t *testing.T) {
	recs := audit.NewMemory()
	first := start(t, recs, Options{}, session.Limits{})
	id := initAs(t, first.srv, "alice-token")
	const n = 4
	second := start(t, &gatedClaims{Memory: recs, n: n, all: make(chan struct{})}, Options{}, session.Limits{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errs := make(chan string, n)
	for i := range n {
		go func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, second.srv.URL+"/projects/p/mcp", strings.NewReader(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, 200+i)))
			for k, v := range onSession("alice-token", id) {
				req.Header.Set(k, v)
			}
			resp, err := second.srv.Client().Do(req)
			if err != nil {
				errs <- err.Error()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(b), `"result":{}`) {
				errs <- fmt.Sprintf("%d %s", resp.StatusCode, b)
				return
			}
			errs <- ""
		}()
	}
	for range n {
		if e := <-errs; e != "" {
			t.Errorf("a request at the adoption: %s", e)
		}
	}
	if rr := second.rows.all(); len(rr) != 1 {
		t.Errorf("%d session_recreated rows, want 1", len(rr))
	}
}

// rpcError is the error member of a JSON-RPC answer body.
type rpcError struct {
	Error struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// rpcErrorOf reads the error member of an answer body (zero if it has none).
func rpcErrorOf(b []byte) rpcError {
	var e rpcError
	_ = json.Unmarshal(b, &e)
	return e
}
