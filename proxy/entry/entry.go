// Package entry is where an MCP request enters the proxy: the HTTP handler
// for /projects/{project}/mcp.
//
// It authenticates the client, checks the session id (its form, then its
// owner), answers every refusal with a JSON-RPC error body (never a bare
// status or plain text), recreates sessions the proxy lost (after a restart)
// under the client's own id for their own user only, and hands everything
// else to the go-sdk Streamable HTTP handler of the project.
//
// A session belongs to the user who opened it. Two layers hold that: the
// proxy's session table (per project) refuses any other user before the SDK
// sees the request, and the SDK's own auth seam (auth.TokenInfo) binds each
// SDK session to its user's id. Who owns an id, and which ids their clients
// DELETEd, is kept in the audit store so that it survives restarts.
package entry

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/project"
	"github.com/mcpchaos/mcpchaos/proxy/relay"
	"github.com/mcpchaos/mcpchaos/proxy/rpcread"
	"github.com/mcpchaos/mcpchaos/proxy/session"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

const sessionHeader = "Mcp-Session-Id"

// Project is one routable project.
type Project struct {
	P           *project.Project
	RequireAuth bool
	// Sessions is the project's own session table.
	Sessions *session.Table
}

// Records is where the entry keeps who owns a session and which sessions
// their clients closed (audit.Store implements it).
type Records interface {
	ClaimSession(ctx context.Context, rec audit.SessionRecord) (audit.SessionRecord, error)
	CloseSession(ctx context.Context, rec audit.SessionRecord) error
	LookupSession(ctx context.Context, id string) ([]audit.SessionRecord, error)
}

// Options configures the entry handler.
type Options struct {
	Projects map[string]Project
	Users    map[string]string // bearer token -> user name
	// Registry holds every project's session table and its caps.
	Registry *session.Registry
	// Records keeps session owners and tombstones durably.
	Records Records
	// RecordTimeout bounds one read or write of Records (knob
	// MCPCTL_AUDIT_WRITE_TIMEOUT_MS).
	RecordTimeout time.Duration
	Audit         audit.Sink
	// Strict answers unknown session ids with a JSON-RPC 404 instead of
	// recreating them.
	Strict bool
	Logger *slog.Logger
	// MaxBodyBytes bounds one POST body (knob MCPCTL_MAX_BODY_BYTES).
	MaxBodyBytes int64
	// BatchMax bounds the messages of one batch (knob MCPCTL_BATCH_MAX).
	BatchMax int64
	// MaxNameBytes bounds a tool's or prompt's name (knob
	// MCPCTL_MAX_NAME_BYTES).
	MaxNameBytes int64
}

// Handler serves /projects/{project}/mcp. It is safe for concurrent use.
type Handler struct {
	o        Options
	sdk      map[string]http.Handler // anonymous requests
	sdkUser  map[string]http.Handler // authenticated: the SDK binds the session to the user
	stands   standIns                // stand-in ids of requests in flight (ids.go)
	tokens   map[string]string       // user -> token, to act for a user (expiry)
	adopting sync.Map                // session id -> *sync.Mutex, one adoption at a time per id

	inflightMu sync.Mutex
	inflight   map[*inflight]struct{} // requests on live sessions not yet answered (shutdown.go)
}

type adoptKey struct{}

// New returns the entry handler for the given projects.
func New(o Options) *Handler {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = knobs.Defaults().MaxBodyBytes
	}
	if o.BatchMax <= 0 {
		o.BatchMax = knobs.Defaults().BatchMax
	}
	if o.MaxNameBytes <= 0 {
		o.MaxNameBytes = knobs.Defaults().MaxNameBytes
	}
	if o.RecordTimeout <= 0 {
		o.RecordTimeout = knobs.Defaults().AuditWriteTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Registry == nil {
		o.Registry = session.NewRegistry(session.Limits{})
	}
	if o.Records == nil {
		o.Records = audit.NewMemory()
	}
	h := &Handler{o: o, sdk: map[string]http.Handler{}, sdkUser: map[string]http.Handler{}, tokens: map[string]string{}, inflight: map[*inflight]struct{}{}}
	for tok, user := range o.Users {
		h.tokens[user] = tok
	}
	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		user, ok := lookupToken(tok, o.Users)
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: user}, nil
	}
	for name, pr := range o.Projects {
		p := pr.P
		if pr.Sessions == nil {
			pr.Sessions = o.Registry.Table(name)
			h.o.Projects[name] = pr
		}
		sdk := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
			if s, ok := r.Context().Value(adoptKey{}).(*mcp.Server); ok {
				return s
			}
			return p.Server()
		}, &mcp.StreamableHTTPOptions{Logger: o.Logger, MaxRequestBodyBytes: o.MaxBodyBytes}) // SSE answers: progress and server-to-client requests ride the call's own stream
		h.sdk[name] = sdk
		h.sdkUser[name] = auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(sdk)
	}
	return h
}

// ServeHTTP implements http.Handler for the pattern /projects/{project}/mcp.
func (h *Handler) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	pe := &rpcErrors{w: rw} // the SDK's plain-text refusals become JSON-RPC errors (rpcerrors.go)
	defer pe.finish()
	var w http.ResponseWriter = pe
	name := r.PathValue("project")
	pr, ok := h.o.Projects[name]
	if !ok {
		known := make([]string, 0, len(h.o.Projects))
		for n := range h.o.Projects {
			known = append(known, n)
		}
		sort.Strings(known)
		writeError(w, http.StatusNotFound, trace.New(), fmt.Sprintf("unknown project %q (projects: %s)", name, strings.Join(known, ", ")))
		return
	}
	r.Header.Del(project.HeaderUser)
	r.Header.Del(project.HeaderRecreated)
	r.Header.Del(trace.Header)
	user, ok := h.authenticate(r)
	if !ok && (pr.RequireAuth || r.Header.Get("Authorization") != "") {
		// A token that is not a user's is refused on every project: on one
		// that serves anonymous requests too, it never becomes anonymous.
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcplocal"`)
		writeError(w, http.StatusUnauthorized, trace.New(), fmt.Sprintf("project %s requires a bearer token (Authorization: Bearer <token>)", name))
		return
	}
	sdk := h.sdk[name]
	if user != "" {
		r.Header.Set(project.HeaderUser, user)
		sdk = h.sdkUser[name]
	}
	id := r.Header.Get(sessionHeader)
	if len(r.Header.Values(sessionHeader)) > 1 || (id == "" && r.Header.Values(sessionHeader) != nil) || (id != "" && !session.ValidID(id)) {
		// Never looked up, never stored, never echoed.
		writeRPCError(w, http.StatusBadRequest, CodeInvalidRequest, trace.New(),
			fmt.Sprintf("invalid Mcp-Session-Id: one id of 1 to %d visible ASCII characters (0x21-0x7E) is required", session.MaxIDBytes))
		return
	}
	body, ok := h.readBody(w, r)
	if !ok {
		return
	}
	rd := rpcread.ReadAtMost(body, int(h.o.BatchMax))
	if m, ok := rd.Single(); ok {
		pe.id = m.ID
	}
	if pv := r.Header.Get("Mcp-Protocol-Version"); r.Method == http.MethodPost && pv != "" && !slices.Contains(project.ProtocolVersions, pv) && !rd.HasMethod("initialize") {
		// MCP Streamable HTTP: an invalid or unsupported protocol version
		// header MUST be answered 400 (an initialize negotiates in its body).
		writeRPCError(w, http.StatusBadRequest, CodeInvalidRequest, trace.New(),
			fmt.Sprintf("unsupported MCP-Protocol-Version %.40q (supported: %s)", pv, strings.Join(project.ProtocolVersions, ", ")))
		return
	}
	if id == "" {
		if r.Method == http.MethodPost && !h.admit(w, rd, servedVersion(r, "")) {
			return
		}
		h.serveNew(w, r, pr, sdk, user, body, rd)
		return
	}
	tbl := pr.Sessions
	if info, live := tbl.Get(id); live {
		if info.User != user {
			h.refuse(w, id)
			return
		}
		if r.Method == http.MethodPost && !h.admit(w, rd, servedVersion(r, info.Protocol)) {
			return
		}
		done := tbl.Use(id)
		defer done()
		if r.Method == http.MethodGet {
			defer pr.P.Listening(r.Context(), id)()
		}
		if r.Method == http.MethodDelete {
			h.delete(w, r, pr, sdk, id, user)
			return
		}
		if h.serveLive(w, r, pr, sdk, id, body, rd) {
			return
		}
		// The SDK no longer knows the session (it closed): recreate it below.
		tbl.Forget(id)
	}
	h.serveUnknown(w, r, pr, sdk, id, user, body, rd)
}

// serveNew serves a request without a session id: an initialize opens a
// session, within the caps, and its owner is recorded before the client
// learns the id.
func (h *Handler) serveNew(w http.ResponseWriter, r *http.Request, pr Project, sdk http.Handler, user string, body []byte, rd rpcread.Reading) {
	if r.Method != http.MethodPost {
		sdk.ServeHTTP(w, r)
		return
	}
	if !rd.IsInitialize() {
		// The SDK opens no session for anything else (it closes one that
		// never initialized): nothing to count or to record.
		sdk.ServeHTTP(w, r)
		return
	}
	release, err := h.o.Registry.Admit(user)
	if err != nil {
		writeError(w, http.StatusTooManyRequests, trace.New(), err.Error())
		return
	}
	defer release()
	cw := &claimWriter{ResponseWriter: w, claim: func(id string) {
		h.claim(r.Context(), pr.P.Name, id, user, clientHello(body))
	}}
	h.serveExact(sdk, cw, r, body, rd, "")
}

// claim records the owner of a session the SDK just opened, and what its
// client said of itself (client: clientHello of its initialize).
func (h *Handler) claim(ctx context.Context, projectName, id, user, client string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.o.RecordTimeout)
	defer cancel()
	if _, err := h.o.Records.ClaimSession(ctx, audit.SessionRecord{Project: projectName, ID: id, Owner: user, Created: time.Now(), Client: client}); err != nil {
		h.o.Logger.Error("session owner not recorded: after a restart this session cannot be recreated", "project", projectName, "session", id, "user", user, "err", err)
	}
}

// refuse answers a session id the caller may not use. It says the same
// whether the id belongs to another user, was closed by its client or was
// never issued, so that nobody learns which ids exist.
func (h *Handler) refuse(w http.ResponseWriter, id string) {
	writeError(w, http.StatusNotFound, trace.New(), fmt.Sprintf("session %s is not open for this client; initialize a new session", id))
}

// delete closes a live session of the caller whatever the body and
// Content-Type say (some clients send Content-Type: application/json with an
// empty body, and rejecting that leaks the session). Only a DELETE the SDK
// accepted leaves a tombstone.
func (h *Handler) delete(w http.ResponseWriter, r *http.Request, pr Project, sdk http.Handler, id, user string) {
	r.Body = http.NoBody
	iw := &intercept{w: w, h: http.Header{}}
	sdk.ServeHTTP(iw, r)
	if iw.refused() {
		iw.replayNon404(w)
		if iw.status == http.StatusNotFound || iw.mismatch() {
			h.refuse(w, id)
		}
		return
	}
	if iw.passed/100 == 2 {
		h.tombstone(r.Context(), pr, id, user)
	}
}

// tombstone remembers, durably, that the client closed id, and frees what
// the session held.
func (h *Handler) tombstone(ctx context.Context, pr Project, id, user string) {
	now := time.Now()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.o.RecordTimeout)
	defer cancel()
	if err := h.o.Records.CloseSession(ctx, audit.SessionRecord{Project: pr.P.Name, ID: id, Owner: user, Created: now, Closed: now}); err != nil {
		h.o.Logger.Error("tombstone not recorded: the closed id could be recreated after a restart", "project", pr.P.Name, "session", id, "err", err)
	}
	pr.Sessions.Forget(id)
	pr.P.Release(id)
}

// serveLive forwards a request on a session the table holds; it reports
// false when the SDK does not know the session (nothing was written then).
func (h *Handler) serveLive(w http.ResponseWriter, r *http.Request, pr Project, sdk http.Handler, id string, body []byte, rd rpcread.Reading) bool {
	relaying := pr.P.Relaying() // config `relay: true`: plain tools/calls skip the go-sdk (project.RelayCall)
	if relaying && body != nil && (pr.P.CancelRelayed(id, body) || pr.P.AnswerRelayed(id, body)) {
		// the client's notifications/cancelled of a relayed call, or its
		// answer to a request the relay asked of it on a call's stream
		w.WriteHeader(http.StatusAccepted)
		return true
	}
	f, tr, untrack := h.track(w, r, rd)
	defer untrack()
	var tw http.ResponseWriter = w
	if f != nil {
		tw = f
	}
	if relaying && f != nil {
		if rc, ok := relay.Of(rd); ok && pr.P.RelayCall(tw, tr, id, rc) {
			h.finishInFlight(f)
			return true
		}
	}
	iw := &intercept{w: tw, h: http.Header{}}
	h.serveExact(sdk, iw, tr, body, rd, id)
	if h.finishInFlight(f) {
		return true
	}
	if !iw.refused() {
		return true
	}
	if iw.mismatch() {
		h.refuse(w, id)
		return true
	}
	if iw.status != http.StatusNotFound {
		iw.replayNon404(w)
		return true
	}
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	return false
}

func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if r.Method != http.MethodPost {
		return nil, true
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.o.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeRPCError(w, http.StatusRequestEntityTooLarge, CodeInvalidRequest, trace.New(),
				fmt.Sprintf("request body exceeds %d bytes (knob MCPCTL_MAX_BODY_BYTES)", mbe.Limit))
		} else {
			writeRPCError(w, http.StatusBadRequest, CodeInvalidRequest, trace.New(), fmt.Sprintf("reading the request body: %v", err))
		}
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	return b, true
}

// serveUnknown answers a request on an id the proxy holds no live session
// for: recreated under the caller when the store records it as the caller's
// own in this project (and open), unless sessions are strict; refused
// otherwise, whether its client closed it, another user owns it, or it was
// never issued here.
func (h *Handler) serveUnknown(w http.ResponseWriter, r *http.Request, pr Project, sdk http.Handler, id, user string, body []byte, rd rpcread.Reading) {
	ctx, cancel := context.WithTimeout(r.Context(), h.o.RecordTimeout)
	recs, err := h.o.Records.LookupSession(ctx, id)
	cancel()
	if err != nil {
		h.o.Logger.Error("session owner lookup failed", "project", pr.P.Name, "err", err)
		writeError(w, http.StatusServiceUnavailable, trace.New(), "cannot check who owns this session: the audit store is unavailable; retry later")
		return
	}
	var own *audit.SessionRecord
	for i := range recs {
		rec := recs[i]
		if rec.Owner != user || (rec.Project == pr.P.Name && rec.Tombstone()) {
			h.refuse(w, id)
			return
		}
		if rec.Project == pr.P.Name {
			own = &rec
		}
	}
	if r.Method == http.MethodDelete {
		if own == nil {
			h.refuse(w, id) // nothing of the caller's to close: no tombstone
			return
		}
		h.tombstone(r.Context(), pr, id, user)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if r.Method != http.MethodPost && r.Method != http.MethodGet {
		sdk.ServeHTTP(w, r)
		return
	}
	if h.o.Strict {
		writeError(w, http.StatusNotFound, trace.New(), fmt.Sprintf("session %s is not known to this proxy (strict sessions); initialize a new session", id))
		return
	}
	if own == nil {
		// Every id this proxy issues is recorded, with its owner, before its
		// client learns it: an id without a record of the caller's in this
		// project was never issued here (or its record expired), and adopting
		// it would give it to whoever presents it first.
		h.refuse(w, id)
		return
	}
	if r.Method == http.MethodPost && !h.admit(w, rd, servedVersion(r, "")) {
		return
	}
	release, err := h.o.Registry.Admit(user)
	if err != nil {
		writeError(w, http.StatusTooManyRequests, trace.New(), err.Error())
		return
	}
	defer release()
	code := trace.New()
	if err := h.adopt(r, pr, sdk, id, user, code); err != nil {
		pr.P.Release(id)
		if errors.Is(err, errNotOwner) {
			h.refuse(w, id)
			return
		}
		writeError(w, http.StatusNotFound, code, fmt.Sprintf("session %s is not known and could not be recreated: %v", id, err))
		return
	}
	done := pr.Sessions.Use(id)
	defer done()
	if r.Method == http.MethodGet {
		defer pr.P.Listening(r.Context(), id)()
	}
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	r.Header.Set(trace.Header, code) // the replayed request's rows share the recreation's code
	iw := &intercept{w: w, h: http.Header{}}
	h.serveExact(sdk, iw, r, body, rd, id)
	if iw.refused() {
		if iw.status == http.StatusNotFound || iw.mismatch() {
			writeError(w, http.StatusNotFound, code, fmt.Sprintf("session %s was recreated but is gone again; initialize a new session", id))
			return
		}
		iw.replayNon404(w)
	}
}

// RecreatedReason is what the ⚠ notice and the audit row say about an
// adopted session.
const RecreatedReason = "the proxy did not know this session id, most likely because it restarted"

var errNotOwner = errors.New("the session belongs to another user")

// adopt recreates session id for user: it claims the id's record (the first
// claim wins, so a concurrent claim by another user refuses this one),
// replays an initialize handshake (with the client's capabilities and
// clientInfo from its record) through the SDK handler with a server that
// mints exactly id, and writes a session_recreated audit row.
func (h *Handler) adopt(r *http.Request, pr Project, sdk http.Handler, id, user, code string) error {
	p := pr.P
	muAny, _ := h.adopting.LoadOrStore(id, &sync.Mutex{})
	mu := muAny.(*sync.Mutex)
	mu.Lock()
	defer func() {
		mu.Unlock()
		h.adopting.CompareAndDelete(id, mu)
	}()
	if info, ok := pr.Sessions.Get(id); ok {
		if info.User != user {
			return errNotOwner
		}
		return nil // a concurrent request on the same id adopted it first
	}
	start := time.Now()
	cctx, cancel := context.WithTimeout(r.Context(), h.o.RecordTimeout)
	rec, err := h.o.Records.ClaimSession(cctx, audit.SessionRecord{Project: p.Name, ID: id, Owner: user, Created: start})
	cancel()
	if err != nil {
		return fmt.Errorf("cannot record its owner: %w", err)
	}
	if rec.Owner != user || rec.Tombstone() {
		return errNotOwner
	}
	pv := r.Header.Get("Mcp-Protocol-Version")
	if !slices.Contains(project.ProtocolVersions, pv) {
		pv = "2025-03-26" // clients of the first Streamable HTTP version send no header
	}
	ctx := context.WithValue(r.Context(), adoptKey{}, p.NewServer(id))
	hdr := func(withSession bool) http.Header {
		hd := http.Header{}
		hd.Set("Content-Type", "application/json")
		hd.Set("Accept", "application/json, text/event-stream")
		hd.Set(project.HeaderRecreated, RecreatedReason)
		if user != "" {
			hd.Set(project.HeaderUser, user)
			hd.Set("Authorization", "Bearer "+h.tokens[user])
		}
		if withSession {
			hd.Set(sessionHeader, id)
			hd.Set("Mcp-Protocol-Version", pv)
		}
		return hd
	}
	// The client's own capabilities and clientInfo, as it sent them when it
	// opened the session: its upstream sessions offer what it offers.
	init := replayedInitialize(pv, rec.Client)
	rc := &recorder{h: http.Header{}}
	sdk.ServeHTTP(rc, synthetic(ctx, r, hdr(false), init))
	if rc.status != http.StatusOK || rc.h.Get(sessionHeader) != id {
		return fmt.Errorf("replayed initialize answered %d with session %q: %s", rc.status, rc.h.Get(sessionHeader), strings.TrimSpace(rc.body.String()))
	}
	rc = &recorder{h: http.Header{}}
	sdk.ServeHTTP(rc, synthetic(ctx, r, hdr(true), `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if rc.status/100 != 2 {
		return fmt.Errorf("replayed notifications/initialized answered %d: %s", rc.status, strings.TrimSpace(rc.body.String()))
	}
	h.o.Audit.Record(audit.Row{
		Kind: audit.KindSessionRecreated, CorrelationID: code, SpanID: trace.NewSpanID(),
		SessionID: id, User: user, Project: p.Name, Start: start, Duration: time.Since(start),
		Status: audit.StatusOK, Degraded: true, DegradedReason: "session state unavailable: " + RecreatedReason,
	})
	h.o.Logger.Info("session recreated", "trace", code, "session", id, "user", user, "project", p.Name)
	return nil
}

func synthetic(ctx context.Context, orig *http.Request, hd http.Header, body string) *http.Request {
	r := orig.Clone(ctx)
	r.Method = http.MethodPost
	r.Header = hd
	r.Body = io.NopCloser(strings.NewReader(body))
	r.ContentLength = int64(len(body))
	return r
}

// ExpireIdle closes every session nobody used for longer than the idle knob
// (MCPCTL_SESSION_IDLE_MS) and releases what it held upstream. The client
// did not close it, so it leaves no tombstone: the owner may come back with
// the id and have it recreated. It returns how many sessions it closed.
func (h *Handler) ExpireIdle(ctx context.Context) int {
	n := 0
	for _, k := range h.o.Registry.Idle() {
		pr, ok := h.o.Projects[k.Project]
		if !ok {
			continue
		}
		sdk := h.sdk[k.Project]
		req, err := http.NewRequestWithContext(ctx, http.MethodDelete, "/projects/"+k.Project+"/mcp", http.NoBody)
		if err != nil {
			continue
		}
		req.Header.Set(sessionHeader, k.ID)
		if k.User != "" {
			sdk = h.sdkUser[k.Project]
			req.Header.Set("Authorization", "Bearer "+h.tokens[k.User])
		}
		sdk.ServeHTTP(&recorder{h: http.Header{}}, req)
		pr.Sessions.Forget(k.ID)
		pr.P.Release(k.ID)
		n++
		h.o.Logger.Info("session expired after idling", "project", k.Project, "session", k.ID, "user", k.User)
	}
	return n
}

// CloseLive closes the live session id of project because its client
// closed it through another replica (whose tombstone this replica read from
// the shared store): its SDK session ends and what it held upstream is
// released. It reports whether the session was live here.
func (h *Handler) CloseLive(ctx context.Context, project, id string) bool {
	pr, ok := h.o.Projects[project]
	if !ok {
		return false
	}
	info, live := pr.Sessions.Get(id)
	if !live {
		return false
	}
	sdk := h.sdk[project]
	if req, err := http.NewRequestWithContext(ctx, http.MethodDelete, "/projects/"+project+"/mcp", http.NoBody); err == nil {
		req.Header.Set(sessionHeader, id)
		if info.User != "" {
			sdk = h.sdkUser[project]
			req.Header.Set("Authorization", "Bearer "+h.tokens[info.User])
		}
		sdk.ServeHTTP(&recorder{h: http.Header{}}, req)
	}
	pr.Sessions.Forget(id)
	pr.P.Release(id)
	h.o.Logger.Info("session closed through another replica", "project", project, "session", id, "user", info.User)
	return true
}

func (h *Handler) authenticate(r *http.Request) (string, bool) {
	return Authenticate(r, h.o.Users)
}

// Authenticate maps the request's bearer token to its user; ok is false
// when the token is missing or unknown. The scheme is case-insensitive
// (RFC 6750); tokens are compared in constant time.
func Authenticate(r *http.Request, users map[string]string) (string, bool) {
	fields := strings.Fields(r.Header.Get("Authorization"))
	if len(fields) != 2 || !strings.EqualFold(fields[0], "Bearer") {
		return "", false
	}
	return lookupToken(fields[1], users)
}

func lookupToken(tok string, users map[string]string) (string, bool) {
	if tok == "" {
		return "", false
	}
	found, name := 0, ""
	for t, user := range users {
		if subtle.ConstantTimeCompare([]byte(t), []byte(tok)) == 1 {
			found, name = 1, user
		}
	}
	return name, found == 1
}

// claimWriter calls claim with the session id of a response that opens a
// session, before the client can read the id.
type claimWriter struct {
	http.ResponseWriter
	claim   func(id string)
	claimed bool
}

func (c *claimWriter) WriteHeader(status int) {
	if !c.claimed {
		c.claimed = true
		if id := c.Header().Get(sessionHeader); id != "" && status/100 == 2 {
			c.claim(id)
		}
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *claimWriter) Write(b []byte) (int, error) {
	if !c.claimed {
		c.WriteHeader(http.StatusOK)
	}
	return c.ResponseWriter.Write(b)
}

func (c *claimWriter) Flush() {
	if !c.claimed {
		c.WriteHeader(http.StatusOK)
	}
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (c *claimWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// intercept passes a response through unless its status is 404 or 403,
// which the SDK's handler sends (as plain text) for a session id it does not
// know or that belongs to another user; those are held for the entry to
// decide on.
type intercept struct {
	w      http.ResponseWriter
	h      http.Header
	wrote  bool
	passed int // the status passed through
	status int // 404 or 403 once held
	body   bytes.Buffer
}

func (i *intercept) refused() bool { return i.status != 0 }

// mismatch reports whether the SDK refused the request because the session
// belongs to another user.
func (i *intercept) mismatch() bool {
	return i.status == http.StatusForbidden && strings.Contains(i.body.String(), "session user mismatch")
}

// replayNon404 writes a held 403 that was not about the session's user (a
// Host or Origin refusal) as it was.
func (i *intercept) replayNon404(w http.ResponseWriter) {
	if i.status == http.StatusNotFound || i.mismatch() {
		return
	}
	for k, v := range i.h {
		w.Header()[k] = v
	}
	w.WriteHeader(i.status)
	_, _ = w.Write(i.body.Bytes())
}

func (i *intercept) Header() http.Header { return i.h }

func (i *intercept) WriteHeader(status int) {
	if i.wrote || i.status != 0 {
		return
	}
	if status == http.StatusNotFound || status == http.StatusForbidden {
		i.status = status
		return
	}
	dst := i.w.Header()
	for k, v := range i.h {
		dst[k] = v
	}
	i.wrote, i.passed = true, status
	i.w.WriteHeader(status)
}

func (i *intercept) Write(b []byte) (int, error) {
	if !i.wrote && i.status == 0 {
		i.WriteHeader(http.StatusOK)
	}
	if i.status != 0 {
		if i.body.Len() < 4096 {
			i.body.Write(b[:min(len(b), 4096-i.body.Len())])
		}
		return len(b), nil
	}
	return i.w.Write(b)
}

func (i *intercept) Flush() {
	if i.status != 0 {
		return
	}
	if !i.wrote {
		i.WriteHeader(http.StatusOK)
	}
	if f, ok := i.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (i *intercept) Unwrap() http.ResponseWriter { return i.w }

// recorder captures the answer to a synthetic request.
type recorder struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.h }
func (r *recorder) WriteHeader(s int) {
	if r.status == 0 {
		r.status = s
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}
func (r *recorder) Flush() {}
