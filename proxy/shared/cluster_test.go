package shared_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy"
	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
)

// The tokens of the replicas' two users; alice is an admin.
const (
	aliceToken = "alice-token"
	bobToken   = "bob-token"
)

// testPoll is MCPCTL_SHARED_POLL_MS in these tests, and slack what a
// loaded two-core machine may add to one poll and its read.
const (
	testPoll = 100 * time.Millisecond
	slack    = 2 * time.Second
)

// countingStore is a replica's PostgreSQL store, counting its reads and
// writes of session records.
type countingStore struct {
	*audit.Postgres
	lookups, claims, closes atomic.Int64
}

func (c *countingStore) LookupSession(ctx context.Context, id string) ([]audit.SessionRecord, error) {
	c.lookups.Add(1)
	return c.Postgres.LookupSession(ctx, id)
}

func (c *countingStore) ClaimSession(ctx context.Context, rec audit.SessionRecord) (audit.SessionRecord, error) {
	c.claims.Add(1)
	return c.Postgres.ClaimSession(ctx, rec)
}

func (c *countingStore) CloseSession(ctx context.Context, rec audit.SessionRecord) error {
	c.closes.Add(1)
	return c.Postgres.CloseSession(ctx, rec)
}

// sessionCalls is how many session record reads and writes the store saw.
func (c *countingStore) sessionCalls() int64 {
	return c.lookups.Load() + c.claims.Load() + c.closes.Load()
}

// replica is one mcplocal of a cluster.
type replica struct {
	p     *proxy.Proxy
	base  string
	store *countingStore
}

// newReplica starts one mcplocal on the store at dsn, serving project
// docmost (server docmost at upURL) to alice and bob.
func newReplica(t *testing.T, dsn, upURL string, k knobs.Values) *replica {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	pg, err := audit.OpenPostgres(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	st := &countingStore{Postgres: pg}
	cfg := &config.Config{
		Listen: "127.0.0.1:0", Audit: dsn,
		Users: map[string]config.User{"alice": {Token: aliceToken, Admin: true}, "bob": {Token: bobToken}},
		Projects: map[string]*config.Project{
			"docmost": {Servers: map[string]*config.Server{"docmost": {URL: upURL}}},
		},
	}
	p, err := proxy.New(ctx, cfg, proxy.Options{Knobs: &k, AuditStore: st})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return &replica{p: p, base: "http://" + p.Addr(), store: st}
}

func testKnobs() knobs.Values {
	k := knobs.Defaults()
	k.SharedPoll = testPoll
	k.UpstreamConnect, k.ShutdownGrace = 2*time.Second, 300*time.Millisecond
	return k
}

// newCluster starts two replicas on one fresh database.
func newCluster(t *testing.T, k knobs.Values) (a, b *replica) {
	t.Helper()
	dsn := sharedDSN(t)
	up := newUpstream(t, "search")
	return newReplica(t, dsn, up, k), newReplica(t, dsn, up, k)
}

// balancer is the load balancer of these tests: every request goes to the
// replica it points at now, with a user's token.
type balancer struct {
	target atomic.Pointer[string]
	token  string
}

func newBalancer(to *replica, token string) *balancer {
	b := &balancer{token: token}
	b.to(to)
	return b
}

func (b *balancer) to(r *replica) { u := r.base; b.target.Store(&u) }

func (b *balancer) RoundTrip(r *http.Request) (*http.Response, error) {
	u, err := url.Parse(*b.target.Load())
	if err != nil {
		return nil, err
	}
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host, r.Host = u.Scheme, u.Host, u.Host
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// endpoint is project docmost's MCP endpoint behind any balancer.
const endpoint = "http://balancer.invalid/projects/docmost/mcp"

// rawCall posts one tools/call on session id to replica r as the user of
// token, and returns the status and body.
func rawCall(t *testing.T, r *replica, token, id string) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"docmost_search","arguments":{}}}`
	req, err := http.NewRequest(http.MethodPost, r.base+"/projects/docmost/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// api calls an admin API of replica r as alice.
func api(t *testing.T, r *replica, method, path string, body any) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, r.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+aliceToken)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// within waits until cond holds, at most one poll plus slack.
func within(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testPoll + slack)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within MCPCTL_SHARED_POLL_MS (%v) plus %v", what, testPoll, slack)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// cut is a TCP forwarder to PostgreSQL that a test can cut and heal: one
// replica's link to the shared store.
type cut struct {
	t      *testing.T
	addr   string
	target string
	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]struct{}
}

// newCut forwards a local port to dsn's server and returns dsn through it.
func newCut(t *testing.T, dsn string) (*cut, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	c := &cut{t: t, target: u.Host, conns: map[net.Conn]struct{}{}}
	c.listen("127.0.0.1:0")
	u.Host = c.addr
	t.Cleanup(c.cut)
	return c, u.String()
}

func (c *cut) listen(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		c.t.Fatal(err)
	}
	c.mu.Lock()
	c.ln, c.addr = ln, ln.Addr().String()
	c.mu.Unlock()
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.DialTimeout("tcp", c.target, 5*time.Second)
			if err != nil {
				_ = in.Close()
				continue
			}
			c.mu.Lock()
			c.conns[in], c.conns[out] = struct{}{}, struct{}{}
			c.mu.Unlock()
			go func() { _, _ = io.Copy(out, in); _ = out.Close() }()
			go func() { _, _ = io.Copy(in, out); _ = in.Close() }()
		}
	}()
}

// cut closes the link: open connections and new ones fail.
func (c *cut) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ln != nil {
		_ = c.ln.Close()
		c.ln = nil
	}
	for conn := range c.conns {
		_ = conn.Close()
	}
	clear(c.conns)
}

// heal opens the link again, on the same address.
func (c *cut) heal() { c.listen(c.addr) }
