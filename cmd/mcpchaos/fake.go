package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/mcpchaos/mcpchaos/fakes/floor"
	fakellm "github.com/mcpchaos/mcpchaos/fakes/llm"
	"github.com/mcpchaos/mcpchaos/fakes/plainproxy"
	"github.com/mcpchaos/mcpchaos/fakes/upstream"
)

const fakeUsage = `usage:
  mcpchaos fake upstream docmost [--listen ADDR]
        a docmost-like MCP server at http://ADDR/mcp (tools: search, update_page);
        switch a tool's behaviour with PUT /_fake/tools/{tool} {"kind":"hang|slow|error|ok"}
  mcpchaos fake upstream everything [--listen ADDR]
        an MCP server with one of every feature a proxy must forward, at
        http://ADDR/mcp: resources (text, binary, a template, subscriptions),
        prompts (arguments, an embedded resource), completion, logging, and
        tools echo, whoami, progress, sample, elicit, roots, log, touch and
        announce (sends every session tools, prompts and resources
        list_changed and one log message, outside any request)
  mcpchaos fake llm --provider anthropic|openai [--listen ADDR] [--default STEP] [--oauth-gate]
        a fake LLM serving the provider's own paths (/v1/messages or
        /v1/chat/completions, /v1/models); drive it over /_fake/ (see fakes/llm);
        --oauth-gate: sk-ant-oat… tokens get 404 on unlisted models, 429 on listed ones
  mcpchaos fake proxy --upstream URL [--listen ADDR] [--timeout D] [--api-key K]
        a second, plain MCP proxy (fakes/plainproxy) at http://ADDR/mcp: the
        upstream's tools under their own names, no health path, no trace codes,
        no session adoption, protocol errors on upstream failures; a foreign
        target for the harness (docs/targets.md); --api-key: 401 without X-Api-Key: K
  mcpchaos fake proxy --server NAME=URL... [--path P] [--aggregate SEP] [--stateless] [...]
        the same proxy forwarding every MCP method of each server to the client
        session that caused it, tool failures as isError results: each server on
        its own path (--path /{server}/mcp) or all on one, named SERVER+SEP+NAME
        (--aggregate SEP); --stateless: no Mcp-Session-Id (docs/targets.md, Proxy shapes)
  mcpchaos fake floor --upstream URL [--listen ADDR]
        the floor of the benchmark (fakes/floor): a plain reverse proxy (Go's
        httputil) forwarding every path to the upstream's host, streams flushed,
        understanding nothing of MCP
`

func runFake(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	switch {
	case len(args) >= 2 && args[0] == "upstream" && (args[1] == "docmost" || args[1] == "everything"):
		return fakeUpstream(ctx, args[1], args[2:], stdout, stderr)
	case len(args) >= 1 && args[0] == "llm":
		return fakeLLM(ctx, args[1:], stdout, stderr)
	case len(args) >= 1 && args[0] == "proxy":
		return plainproxy.Main(ctx, args[1:], stdout, stderr)
	case len(args) >= 1 && args[0] == "floor":
		return floor.Main(ctx, args[1:], stdout, stderr)
	}
	fmt.Fprint(stderr, fakeUsage)
	return exitError(2)
}

func fakeUpstream(ctx context.Context, kind string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fake upstream "+kind, flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	fs.Usage = func() {
		fmt.Fprint(stderr, fakeUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("fake upstream: unexpected argument %q", fs.Arg(0))
	}
	if err := checkFlags("fake upstream", fs); err != nil {
		return err
	}
	start := upstream.NewDocmost
	if kind == "everything" {
		start = upstream.NewEverything
	}
	s, err := start(upstream.Options{Addr: *listen})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "fake upstream %s serving MCP at %s\n", kind, s.URL())
	<-ctx.Done()
	return s.Close()
}

func fakeLLM(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fake llm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	provider := fs.String("provider", "", "wire format: anthropic or openai (required)")
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	def := fs.String("default", "ok", "behaviour for every model, e.g. ok, hang_before_headers, slow:2s, not_found")
	oauthGate := fs.Bool("oauth-gate", false, "anthropic: gate subscription OAuth tokens (sk-ant-oat…) as Anthropic does outside Claude Code: 404 on unlisted models, 429 on listed ones")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprint(stderr, fakeUsage)
		return fmt.Errorf("fake llm: unexpected argument %q", fs.Arg(0))
	}
	if err := checkFlags("fake llm", fs); err != nil {
		return err
	}
	p := fakellm.Provider(*provider)
	if p != fakellm.Anthropic && p != fakellm.OpenAI {
		fmt.Fprint(stderr, fakeUsage)
		return fmt.Errorf("--provider %q: want anthropic or openai", *provider)
	}
	step, err := fakellm.ParseStep(*def)
	if err != nil {
		return fmt.Errorf("--default: %w", err)
	}
	return fakellm.Serve(ctx, fakellm.Options{Provider: p, Addr: *listen, Default: step, OAuthGate: *oauthGate}, func(s *fakellm.Server) {
		fmt.Fprintf(stdout, "fake llm (%s) serving at %s\n", p, s.BaseURL())
	})
}
