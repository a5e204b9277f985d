package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy"
	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/bundle"
	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/llm"
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
