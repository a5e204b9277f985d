package harness

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/smoke"
)

// A spec's cluster: block is checked when the spec is read, each mistake
// with its own error; a spec without one is unchanged.
func TestForeignClusterBlockIsCheckedAtParse(t *testing.T) {
	for name, c := range map[string]struct{ doc, want string }{
		"unknown key":         {"name: a\ncommand: [x]\ncluster: {replicas: 3}", "field replicas not found"},
		"check not a path":    {"name: a\ncommand: [x]\ncluster: {check: healthz}", `check "healthz": want /PATH`},
		"check with a space":  {"name: a\ncommand: [x]\ncluster: {check: '/a b'}", "want a plain path"},
		"check templated":     {"name: a\ncommand: [x]\ncluster: {check: '/{{.Port}}'}", "want a plain path"},
		"unknown store":       {"name: a\ncommand: [x]\ncluster: {store: redis}", `store "redis": want postgres`},
		"store never given":   {"name: a\ncommand: [x]\ncluster: {store: postgres}", "no template gives the proxy {{.StoreDSN}}"},
		"StoreDSN, no store":  {"name: a\ncommand: [x, '{{.StoreDSN}}']\ncluster: {check: tcp}", "declares no store"},
		"StoreDSN, no block":  {"name: a\ncommand: [x]\nenv: {DB: '{{.StoreDSN}}'}", "no cluster: block declares store: postgres"},
		"check and bad store": {"name: a\ncommand: [x]\ncluster: {check: x, store: mysql}", "want postgres"},
	} {
		_, err := ParseForeign([]byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error saying %q", name, err, c.want)
		}
	}
	s, err := ParseForeign([]byte("name: a\ncommand: [x, --db, '{{.StoreDSN}}']\ncluster: {check: /live, store: postgres}"))
	if err != nil {
		t.Fatal(err)
	}
	if s.SharedStore() != StorePostgres || s.clusterCheck() != "/live" {
		t.Errorf("store %q check %q", s.SharedStore(), s.clusterCheck())
	}
}

// HAProxy checks what the spec says: its cluster: check, else its ready
// path, else a TCP connect; mcplocal's cluster keeps the config's /readyz.
func TestAForeignClusterChecksWhatItsSpecSays(t *testing.T) {
	checkVars := func(c *Cluster) []string {
		var out []string
		for _, kv := range c.balancerEnv("127.0.0.1:1", "127.0.0.1:2") {
			if strings.HasPrefix(kv, "MCPLOCAL_LB_CHECK_PATH=") || strings.HasPrefix(kv, "MCPLOCAL_LB_CHECK_TCP=") {
				out = append(out, kv)
			}
		}
		return out
	}
	if got := checkVars(&Cluster{}); len(got) != 0 {
		t.Errorf("mcplocal's cluster: %v, want the config's own /readyz check", got)
	}
	for doc, want := range map[string]string{
		"name: a\ncommand: [x]":                                            "MCPLOCAL_LB_CHECK_TCP=1",
		"name: a\ncommand: [x]\nready: tcp":                                "MCPLOCAL_LB_CHECK_TCP=1",
		"name: a\ncommand: [x]\nready: /healthz":                           "MCPLOCAL_LB_CHECK_PATH=/healthz",
		"name: a\ncommand: [x]\nhealth: /up":                               "MCPLOCAL_LB_CHECK_PATH=/up",
		"name: a\ncommand: [x]\nready: /healthz\ncluster: {check: /ready}": "MCPLOCAL_LB_CHECK_PATH=/ready",
		"name: a\ncommand: [x]\nready: /healthz\ncluster: {check: tcp}":    "MCPLOCAL_LB_CHECK_TCP=1",
	} {
		s, err := ParseForeign([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if got := checkVars(NewForeignCluster(s, 2, nil).Cluster); !slices.Equal(got, []string{want}) {
			t.Errorf("%q: HAProxy gets %v, want %s", doc, got, want)
		}
	}
}

// A foreign cluster without a declared store says so, by name, for the
// scenarios that need one; mcplocal's cluster and one that declares a store
// do not.
func TestUnsharedNamesAClusterWithoutAStore(t *testing.T) {
	plain, err := ParseForeign([]byte("name: plain\ncommand: [x]"))
	if err != nil {
		t.Fatal(err)
	}
	if why := Unshared(NewForeignCluster(plain, 2, nil)); !strings.Contains(why, "cluster:2:foreign:plain declares no shared store") {
		t.Errorf("without a store: %q", why)
	}
	shared, err := ParseForeign([]byte("name: shared\ncommand: [x, '{{.StoreDSN}}']\ncluster: {store: postgres}"))
	if err != nil {
		t.Fatal(err)
	}
	if why := Unshared(NewForeignCluster(shared, 2, nil)); why != "" {
		t.Errorf("with a store: %q", why)
	}
	if why := Unshared(&Cluster{}); why != "" {
		t.Errorf("mcplocal's cluster: %q", why)
	}
}

// Only a cluster that claims session adoption and shares a store is held to
// recreating a lost session with one notice: mcplocal's is; a foreign one
// lacking either is held to the MCP spec's 404.
func TestAdoptionAcrossReplicasNeedsTheClaimAndTheStore(t *testing.T) {
	if !AdoptsAcrossReplicas(&Cluster{}) {
		t.Error("mcplocal's cluster is held to adoption across replicas")
	}
	for doc, want := range map[string]bool{
		"name: a\ncommand: [x]":                                                                               false,
		"name: a\ncommand: [x]\ncapabilities: [sessionAdoption]":                                              false,
		"name: a\ncommand: [x, '{{.StoreDSN}}']\ncluster: {store: postgres}":                                  false,
		"name: a\ncommand: [x, '{{.StoreDSN}}']\ncluster: {store: postgres}\ncapabilities: [sessionAdoption]": true,
	} {
		s, err := ParseForeign([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if got := AdoptsAcrossReplicas(NewForeignCluster(s, 2, nil)); got != want {
			t.Errorf("%q: held to adoption %v, want %v", doc, got, want)
		}
	}
}

// store: postgres: the replicas of a foreign proxy (mcplocal, run as one,
// its audit store given as {{.StoreDSN}}) share one throwaway PostgreSQL,
// each through its own link: a call through HAProxy leaves audit rows every
// replica reads, and cutting one replica's link cuts that replica alone.
func TestAForeignClusterSharesTheStoreItDeclares(t *testing.T) {
	if _, err := (&Cluster{}).haproxyPath(); err != nil {
		t.Fatal(err)
	}
	spec, err := ParseForeign([]byte(`name: shared
command: ["` + mcplocalBinary(t) + `", "serve", "--config", "{{.ConfigFile}}", "--listen", "{{.Listen}}", "--audit", "{{.StoreDSN}}"]
passKnobs: true
health: /healthz
capabilities: [auditAPI, sessionAdoption, traceCode]
cluster:
  check: /readyz
  store: postgres
`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out strings.Builder
	c := NewForeignCluster(spec, 2, &syncWriter{w: &out})
	env := startForAlice(t, ctx, c, &out)
	if got, want := c.Name(), "cluster:2:foreign:shared"; got != want {
		t.Errorf("name %q, want %q", got, want)
	}
	if !strings.HasPrefix(env.ProjectURL(), c.URL()+"/") {
		t.Errorf("endpoint %q is not on HAProxy's address %s", env.ProjectURL(), c.URL())
	}
	for i := range c.ReplicaCount() {
		cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(c.ReplicaPID(i)) + "/cmdline")
		if err != nil {
			t.Fatal(err)
		}
		if link := c.links[i].Addr(); !strings.Contains(string(cmdline), "@"+link+"/") {
			t.Errorf("replica %s reaches the store otherwise than through its link %s: %q", ReplicaName(i), link, cmdline)
		}
	}
	cs, err := SDKClient(ctx, env.ProjectURL(), env.Token("alice"))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "docmost_update_page", Arguments: map[string]any{"page_id": "p1", "content": "shared"}})
	if err != nil || res.IsError {
		t.Fatalf("err=%v result=%+v", err, res)
	}
	code, _ := res.Meta[smoke.TraceMetaKey].(string)
	for i := range c.ReplicaCount() {
		rows := 0
		for deadline := time.Now().Add(15 * time.Second); rows == 0 && time.Now().Before(deadline); {
			rows = auditRows(ctx, t, c.ReplicaURL(i)+"/api/v1/audit?trace="+code, env.Token("alice"))
			if rows == 0 {
				time.Sleep(50 * time.Millisecond)
			}
		}
		if rows == 0 {
			t.Errorf("replica %s reads no audit row of %s: the store is not shared", ReplicaName(i), code)
		}
	}
	if err := c.PartitionStore(0); err != nil {
		t.Fatal(err)
	}
	if err := c.HealStore(0); err != nil {
		t.Fatal(err)
	}
}

// auditRows is how many rows GET url answers with (0 on any failure).
func auditRows(ctx context.Context, t *testing.T, url, token string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Host = "localhost"
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var body struct {
		Rows []json.RawMessage `json:"rows"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&body) != nil {
		return 0
	}
	return len(body.Rows)
}
