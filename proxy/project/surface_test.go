package project

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/session"
)

// richUpstream serves one prompt, one resource and one resource template,
// each answering with the server's own name, and completions.
func richUpstream(t *testing.T, name string) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "0"}, &mcp.ServerOptions{
		CompletionHandler: func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{name}}}, nil
		},
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	s.AddPrompt(&mcp.Prompt{Name: "prompt"}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Description: name + ":" + req.Params.Name}, nil
	})
	read := func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: name}}}, nil
	}
	s.AddResource(&mcp.Resource{Name: "doc", URI: "mem://" + name + "/doc"}, read)
	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "item", URITemplate: "mem://" + name + "/items/{id}"}, read)
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Prompts, resources, templates and completions of two servers: listed
// together (renamed where names could clash, sorted), and each request
// routed back to the server its name, URI or template belongs to.
func TestTheNonToolSurfaceIsMergedAndRouted(t *testing.T) {
	p := New("p", Options{Servers: map[string]string{"a": richUpstream(t, "a"), "b": richUpstream(t, "b"), "down": "http://127.0.0.1:1/mcp"},
		Sessions: session.NewTable(), Audit: discardRows{}, Knobs: knobs.Defaults(), Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(p.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: serveProject(t, p), DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, pr := range prompts.Prompts {
		names = append(names, pr.Name)
	}
	if strings.Join(names, ",") != "a_prompt,b_prompt" {
		t.Errorf("prompts %v, want [a_prompt b_prompt]", names)
	}
	for _, n := range []string{"a_prompt", "b_prompt"} {
		got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: n})
		if want := n[:1] + ":prompt"; err != nil || got.Description != want {
			t.Errorf("get %s: %+v, %v; want the description %q", n, got, err, want)
		}
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "nosuch"}); err == nil || !strings.Contains(err.Error(), `unknown prompt "nosuch" in project p; call prompts/list [trace `) {
		t.Errorf("an unknown prompt: %v", err)
	}

	res, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
	}
	if strings.Join(uris, ",") != "mem://a/doc,mem://b/doc" {
		t.Errorf("resources %v", uris)
	}
	tmpls, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var tn []string
	for _, r := range tmpls.ResourceTemplates {
		tn = append(tn, r.Name+"="+r.URITemplate)
	}
	if strings.Join(tn, ",") != "a_item=mem://a/items/{id},b_item=mem://b/items/{id}" {
		t.Errorf("templates %v", tn)
	}
	for uri, from := range map[string]string{"mem://a/doc": "a", "mem://b/doc": "b", "mem://a/items/7": "a", "mem://b/items/7": "b"} {
		got, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(got.Contents) != 1 || got.Contents[0].Text != from {
			t.Errorf("read %s: %+v, %v; want it from %s", uri, got, err, from)
		}
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mem://c/doc"}); err == nil ||
		!strings.Contains(err.Error(), `no server of project p lists the resource "mem://c/doc"; call resources/list [trace `) {
		t.Errorf("an unlisted resource: %v", err)
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "mem://b/doc"}); err != nil {
		t.Errorf("subscribe: %v", err)
	}
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "mem://b/doc"}); err != nil {
		t.Errorf("unsubscribe: %v", err)
	}

	for ref, from := range map[*mcp.CompleteReference]string{
		{Type: "ref/prompt", Name: "b_prompt"}:            "b",
		{Type: "ref/prompt", Name: "a_prompt"}:            "a",
		{Type: "ref/resource", URI: "mem://b/items/{id}"}: "b",
		{Type: "ref/resource", URI: "mem://a/items/{id}"}: "a",
	} {
		got, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: "id", Value: ""}})
		if err != nil || len(got.Completion.Values) != 1 || got.Completion.Values[0] != from {
			t.Errorf("complete %+v: %+v, %v; want it from %s", ref, got, err, from)
		}
	}
	if _, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "zz"}, Argument: mcp.CompleteParamsArgument{Name: "x"}}); err == nil ||
		!strings.Contains(err.Error(), `unknown prompt "zz" in project p [trace `) {
		t.Errorf("completing an unknown prompt: %v", err)
	}
}
