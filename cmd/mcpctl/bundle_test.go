package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy"
	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/bundle"
	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/llm"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
)

// plantedConfig holds a secret (S3CRET-...) in every field of the config a
// secret can live in: user tokens, the audit DSN's user, password and
// query, LLM URLs' credentials and query, the API key read from the
// environment, server URLs' userinfo, query and fragment, header values
// given inline and read from the environment; and private texts
// (P R I V-...) in prompts, health-check arguments and stage options.
const plantedConfig = `
listen: 127.0.0.1:0
audit: postgres://S3CRET-dsnuser:S3CRET-dsnpw@127.0.0.1:1/db?sslpassword=S3CRET-dsnq
llm:
  primary: vllm
  providers:
    vllm: {kind: openai, url: "http://127.0.0.1:1/v1", model: qwen3-32b, fallbacks: [claude]}
    claude: {kind: anthropic, url: "http://127.0.0.1:1", model: claude-sonnet-latest, apiKeyEnv: PLANTED_API_KEY}
users:
  alice: {token: S3CRET-tok-alice, admin: true}
  bob: {token: S3CRET-tok-bob}
  carol: {tokenEnv: PLANTED_CAROL_TOKEN}
projects:
  docmost:
    servers:
      docmost:
        url: "http://127.0.0.1:1/mcp?apikey=S3CRET-urlq#S3CRET-frag"
        headers:
          Authorization: {value: "Bearer S3CRET-hdr"}
          X-Api-Key: {valueEnv: PLANTED_HEADER}
        healthCheck: {tool: search, arguments: {query: PRIV-hcarg, nested: [PRIV-hcarg2]}, intervalSeconds: 3600}
      other:
        url: "http://127.0.0.1:1/mcp"
    pipeline: [{paginate: {thresholdBytes: 8192}}]
    gate: {enabled: true}
    prompts: [{name: onboarding, text: PRIV-prompt, priority: 1}]
`

// plantedEnv resolves every *Env field to a secret.
func plantedEnv(k string) string {
	return map[string]string{
		"PLANTED_API_KEY": "S3CRET-apikey", "PLANTED_CAROL_TOKEN": "S3CRET-tok-carol", "PLANTED_HEADER": "S3CRET-hdrenv",
	}[k]
}

func withURL(p llm.ProviderConfig, u string) llm.ProviderConfig {
	p.URL = u
	return p
}

// bundleProxy serves plantedConfig over a memory store holding one trace
// whose rows quote a credentialed URL in their texts.
func bundleProxy(t *testing.T) (*proxy.Proxy, string) {
	t.Helper()
	cfg, err := config.Parse([]byte(plantedConfig))
	if err != nil {
		t.Fatal(err)
	}
	// Validation refuses credentials in these URLs; the bundle must not
	// lean on it, so they are planted past it.
	cfg.LLM.Providers["vllm"] = withURL(cfg.LLM.Providers["vllm"], "http://S3CRET-llmuser:S3CRET-llmpw@127.0.0.1:1/v1")
	cfg.Projects["docmost"].Servers["docmost"].URL = "http://S3CRET-urluser@127.0.0.1:1/mcp?apikey=S3CRET-urlq#S3CRET-frag"
	cfg.Projects["docmost"].Servers["other"].URL = "http://u:S3CRET-pw2@127.0.0.1:1/mcp"
	cfg.AllowedOrigins = []string{"https://S3CRET-ouser:S3CRET-opw@app.example"}
	store := audit.NewMemory()
	const code = "7K3M9QXZ"
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, r := range []audit.Row{
		{Kind: audit.KindToolCallTrace, CorrelationID: code, SpanID: "a", User: "alice", Project: "docmost", Tool: "docmost_search", Start: t0, Duration: 30 * time.Second, Status: "ok", Degraded: true, DegradedReason: "LLM budget spent"},
		{Kind: audit.KindUpstreamCall, CorrelationID: code, SpanID: "b", ParentID: "a", Server: "docmost", Tool: "search", Start: t0, Duration: 120 * time.Millisecond, Status: "ok", Detail: "20480 bytes"},
		{Kind: audit.KindLLMAttempt, CorrelationID: code, SpanID: "c", ParentID: "a", Start: t0.Add(time.Second), Duration: 10 * time.Second, Status: "timeout",
			Detail: "provider=vllm model=qwen3-32b; error: Post http://S3CRET-rowuser:S3CRET-rowpw@127.0.0.1:1/v1?key=S3CRET-rowq: context deadline exceeded token=S3CRET-rowtok"},
	} {
		if err := store.Write(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	p, err := proxy.New(context.Background(), cfg, proxy.Options{Getenv: plantedEnv, AuditStore: store})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p, code
}

// A bundle holds no secret: with a secret planted in every config field and
// header a secret can live in, and in the rows' texts, the written bundle
// contains none of them, nor (without --private) the private texts; it
// still holds what a replay needs: rows, knobs, version, the names.
func TestBundleHoldsNoSecret(t *testing.T) {
	p, code := bundleProxy(t)
	for _, private := range []bool{false, true} {
		file := filepath.Join(t.TempDir(), "bundle.json")
		args := []string{"trace", code, "--bundle", file, "--url", "http://" + p.Addr(), "--token", "S3CRET-tok-alice"}
		if private {
			args = append(args, "--private")
		}
		var out, errOut bytes.Buffer
		if err := run(args, &out, &errOut); err != nil {
			t.Fatalf("private=%v: %v (%s)", private, err, errOut.String())
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if st, _ := os.Stat(file); st.Mode().Perm() != 0o600 {
			t.Errorf("bundle mode %v, want 0600", st.Mode().Perm())
		}
		if s := regexp.MustCompile(`S3CRET-[a-z0-9-]+`).FindAllString(string(data), -1); len(s) > 0 {
			t.Errorf("private=%v: the bundle holds secrets %v:\n%s", private, s, data)
		}
		privs := regexp.MustCompile(`PRIV-[a-z0-9]+`).FindAllString(string(data), -1)
		if !private && len(privs) > 0 {
			t.Errorf("the bundle holds private texts %v without --private", privs)
		}
		if private && len(privs) != 3 {
			t.Errorf("with --private the bundle holds private texts %v, want PRIV-hcarg, PRIV-hcarg2, PRIV-prompt", privs)
		}
		b, err := bundle.Unmarshal(data)
		if err != nil {
			t.Fatal(err)
		}
		if b.Trace != code || len(b.Rows) != 3 || b.Version == "" || b.Knobs["MCPCTL_LLM_CALL_BUDGET_MS"] != 20000 {
			t.Errorf("bundle lacks what a replay needs: trace %q, %d rows, version %q, knobs %v", b.Trace, len(b.Rows), b.Version, b.Knobs)
		}
		for _, name := range []string{"docmost", "other", "Authorization", "X-Api-Key", "PLANTED_HEADER", "PLANTED_API_KEY", "qwen3-32b", "alice", "thresholdBytes: 8192", "127.0.0.1:1/mcp"} {
			if !strings.Contains(b.Config, name) {
				t.Errorf("the bundle's config lost %q:\n%s", name, b.Config)
			}
		}
		if len(b.Answers) != 2 || b.Answers[0].Bytes != 20480 || b.Answers[1].Model != "qwen3-32b" || b.Answers[1].Provider != "vllm" || b.Answers[1].Status != "timeout" {
			t.Errorf("answers' shapes: %+v", b.Answers)
		}
		if !strings.Contains(out.String(), "mcpchaos replay "+file) {
			t.Errorf("output does not say how to replay: %s", out.String())
		}
	}
}

// Only an admin gets a bundle: a user's token is refused (403) and no file
// is written; --private without --bundle is a usage error.
func TestBundleIsAdminOnly(t *testing.T) {
	p, code := bundleProxy(t)
	file := filepath.Join(t.TempDir(), "bundle.json")
	var out, errOut bytes.Buffer
	err := run([]string{"trace", code, "--bundle", file, "--url", "http://" + p.Addr(), "--token", "S3CRET-tok-bob"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "403") || !strings.Contains(err.Error(), "admin") {
		t.Errorf("bob's bundle: err = %v, want a 403 naming admin", err)
	}
	if _, serr := os.Stat(file); serr == nil {
		t.Errorf("a refused bundle was written")
	}
	err = run([]string{"trace", code, "--private", "--url", "http://" + p.Addr()}, &out, &errOut)
	if report(err, &errOut) != exitUsage {
		t.Errorf("--private without --bundle: %v, want a usage error", err)
	}
}

// A bundle carries the shape of an upstream's answer, never its content:
// the proxy relays a result holding private texts in every kind of content
// block and in structuredContent; the bundle mcpctl writes of that call
// holds none of them, and says the answer's size in bytes and its content
// kinds, in its rows and its answers.
func TestABundleHoldsTheAnswersShapeNotItsContent(t *testing.T) {
	private := &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "PRIVATE-page-body " + strings.Repeat("PRIVATE-words ", 100)},
		&mcp.ImageContent{Data: []byte("PRIVATE-png"), MIMEType: "image/png"},
		&mcp.ResourceLink{URI: "wiki://PRIVATE-link", Name: "PRIVATE-name"},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "wiki://PRIVATE-res", MIMEType: "text/plain", Text: "PRIVATE-resource"}},
	}, StructuredContent: map[string]any{"owner": "PRIVATE-owner"}}
	body, _ := json.Marshal(private)
	up := mcp.NewServer(&mcp.Implementation{Name: "wiki", Version: "0"}, nil)
	up.AddTool(&mcp.Tool{Name: "get_page", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return private, nil
	})
	upSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	defer upSrv.Close()
	cfg, err := config.Parse([]byte("listen: 127.0.0.1:0\nprojects:\n  docs:\n    servers:\n      wiki: {url: \"" + upSrv.URL + "\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := proxy.New(context.Background(), cfg, proxy.Options{AuditStore: audit.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: "http://" + p.Addr() + "/projects/docs/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wiki_get_page", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("the call: %v %+v", err, res)
	}
	code, _ := res.Meta[trace.MetaKey].(string)
	file := filepath.Join(t.TempDir(), "bundle.json")
	var data []byte
	const want = "text:1,image:1,resource_link:1,resource:1,structured"
	for deadline := time.Now().Add(5 * time.Second); ; { // the rows are written a moment after the answer
		var out, errOut bytes.Buffer
		if err := run([]string{"trace", code, "--bundle", file, "--url", "http://" + p.Addr()}, &out, &errOut); err != nil {
			t.Fatalf("trace --bundle: %v (%s)", err, errOut.String())
		}
		if data, err = os.ReadFile(file); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if s := regexp.MustCompile(`PRIVATE-[a-z]+`).FindAllString(string(data), -1); len(s) > 0 {
		t.Errorf("the bundle holds the answer's content %v:\n%s", s, data)
	}
	b, err := bundle.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	var rowSeen, answerSeen bool
	for _, r := range b.Rows {
		if r.Kind == audit.KindUpstreamCall {
			rowSeen = r.Bytes == int64(len(body)) && r.Content == want
		}
	}
	for _, a := range b.Answers {
		if a.Kind == audit.KindUpstreamCall {
			answerSeen = a.Bytes == len(body) && a.Content == want
		}
	}
	if !rowSeen || !answerSeen {
		t.Errorf("the bundle does not say the answer's shape (%d bytes, %s) in its row (%v) and its answer (%v):\n%s", len(body), want, rowSeen, answerSeen, data)
	}
}
