package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The everything fake's fixed contents, for specs to compare against.
const (
	// ReadmeURI is a text resource.
	ReadmeURI  = "fake://docs/readme"
	ReadmeText = "The everything fake: one of each MCP feature."
	// LogoURI is a binary resource (LogoBlob).
	LogoURI = "fake://images/logo"
	// ItemTemplate is a resource template; fake://items/{id} reads as ItemText(id).
	ItemTemplate = "fake://items/{id}"
	// GreetPrompt takes an argument "name"; its completion offers GreetNames.
	GreetPrompt = "greet"
	// ContextPrompt embeds the readme resource in its message.
	ContextPrompt = "with_context"
	// ProgressSteps is how many progress notifications the progress tool sends.
	ProgressSteps = 3
)

// LogoBlob is the logo resource's bytes.
var LogoBlob = []byte{0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a}

// GreetNames are the completion values of greet's name argument.
var GreetNames = []string{"alice", "albert", "bob"}

// ItemText is what fake://items/ID reads as.
func ItemText(id string) string { return "item " + id }

// NewEverything starts a fake upstream that serves every MCP feature a proxy
// must forward: tools (echo; progress, which reports ProgressSteps steps
// before answering; sample, elicit and roots, which ask the calling client
// and answer with what it said; log, which sends one log message at each
// level; touch, which updates a resource for its subscribers), resources
// (text, binary, a template, subscriptions), prompts (with arguments, with an
// embedded resource), completion and logging. Its answers are SSE streams, so
// notifications and requests made during a call travel on the call's own
// stream.
func NewEverything(opts Options) (*Server, error) {
	s := &Server{name: "everything", done: make(chan struct{}), behaviors: map[string]Behavior{}, sse: true}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	so := &mcp.ServerOptions{
		Logger:             logger,
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		CompletionHandler:  complete,
		RootsListChangedHandler: func(context.Context, *mcp.RootsListChangedRequest) {
			s.mu.Lock()
			s.rootsChanged++
			s.mu.Unlock()
		},
		Capabilities: &mcp.ServerCapabilities{
			Logging:     &mcp.LoggingCapabilities{},
			Completions: &mcp.CompletionCapabilities{},
		},
	}
	if c := opts.Capabilities; c != nil {
		so.Capabilities = c
		if c.Resources == nil || !c.Resources.Subscribe {
			// The go-sdk advertises subscriptions whenever it has a handler.
			so.SubscribeHandler, so.UnsubscribeHandler = nil, nil
		}
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "fake-everything", Version: "1.0.0"}, so)
	s.everythingTools()
	s.mcp.AddResource(&mcp.Resource{URI: ReadmeURI, Name: "readme", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: ReadmeURI, MIMEType: "text/plain", Text: ReadmeText}}}, nil
		})
	s.mcp.AddResource(&mcp.Resource{URI: LogoURI, Name: "logo", MIMEType: "image/png"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: LogoURI, MIMEType: "image/png", Blob: LogoBlob}}}, nil
		})
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: ItemTemplate, Name: "item", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id := strings.TrimPrefix(req.Params.URI, "fake://items/")
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: ItemText(id)}}}, nil
		})
	s.mcp.AddPrompt(&mcp.Prompt{Name: GreetPrompt, Description: "Greets someone by name.",
		Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user",
				Content: &mcp.TextContent{Text: "Hello, " + req.Params.Arguments["name"] + "!"}}}}, nil
		})
	s.mcp.AddPrompt(&mcp.Prompt{Name: ContextPrompt, Description: "Carries the readme as an embedded resource."},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user",
				Content: &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: ReadmeURI, MIMEType: "text/plain", Text: ReadmeText}}}}}, nil
		})
	return s, s.start(opts.Addr)
}

// nameSchema is what the elicit tool asks the user for: one string, name.
var nameSchema = map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"}}

func complete(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	var vals []string
	if req.Params.Ref != nil && req.Params.Ref.Name == GreetPrompt && req.Params.Argument.Name == "name" {
		for _, n := range GreetNames {
			if strings.HasPrefix(n, req.Params.Argument.Value) {
				vals = append(vals, n)
			}
		}
	}
	if vals == nil {
		vals = []string{}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: vals, Total: len(vals)}}, nil
}

// RootsChanged is how many notifications/roots/list_changed the fake got.
func (s *Server) RootsChanged() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rootsChanged
}

// everythingTools adds the tools of the everything fake.
func (s *Server) everythingTools() {
	text := func(t string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: t}}}
	}
	args := func(req *mcp.CallToolRequest) map[string]any {
		var m map[string]any
		_ = json.Unmarshal(req.Params.Arguments, &m)
		return m
	}
	empty := map[string]any{"type": "object", "properties": map[string]any{}}
	s.mcp.AddTool(&mcp.Tool{Name: "echo", Description: "Answers with its text argument.",
		InputSchema: objectSchema(map[string]string{"text": "string"}, "text")},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return s.run(ctx, "echo", func() *mcp.CallToolResult { return text(str(args(req)["text"])) }), nil
		})
	s.mcp.AddTool(&mcp.Tool{Name: "whoami", Description: "Answers with the id of the MCP session that called it.", InputSchema: empty},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return s.run(ctx, "whoami", func() *mcp.CallToolResult { return text(req.Session.ID()) }), nil
		})
	s.mcp.AddTool(&mcp.Tool{Name: "progress", Description: fmt.Sprintf("Reports %d progress steps, then answers.", ProgressSteps), InputSchema: empty},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tok := req.Params.GetProgressToken()
			for i := 1; i <= ProgressSteps; i++ {
				if tok != nil {
					if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
						ProgressToken: tok, Progress: float64(i), Total: ProgressSteps, Message: fmt.Sprintf("step %d", i)}); err != nil {
						return nil, err
					}
				}
				select {
				case <-time.After(20 * time.Millisecond): // the result must come after every step
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return s.run(ctx, "progress", func() *mcp.CallToolResult { return text(fmt.Sprintf("done after %d steps", ProgressSteps)) }), nil
		})
	s.mcp.AddTool(&mcp.Tool{Name: "sample", Description: "Asks the client's LLM (sampling/createMessage) and answers with its reply.",
		InputSchema: objectSchema(map[string]string{"prompt": "string"}, "prompt")},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ctx, stop := s.asking(ctx)
			defer stop()
			res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 64,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: str(args(req)["prompt"])}}}})
			if err != nil {
				return errorResult("sampling failed: " + err.Error()), nil
			}
			t, _ := res.Content.(*mcp.TextContent)
			if t == nil {
				return errorResult("sampling answered no text"), nil
			}
			return text("sampled: " + t.Text), nil
		})
	s.mcp.AddTool(&mcp.Tool{Name: "elicit", Description: "Asks the user (elicitation/create) for a name and answers with it.",
		InputSchema: objectSchema(map[string]string{"question": "string"}, "question")},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ctx, stop := s.asking(ctx)
			defer stop()
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: str(args(req)["question"]),
				RequestedSchema: nameSchema})
			if err != nil {
				return errorResult("elicitation failed: " + err.Error()), nil
			}
			return text(fmt.Sprintf("elicited: %s %v", res.Action, res.Content["name"])), nil
		})
	s.mcp.AddTool(&mcp.Tool{Name: "roots", Description: "Lists the client's roots (roots/list).", InputSchema: empty},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ctx, stop := s.asking(ctx)
			defer stop()
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return errorResult("roots/list failed: " + err.Error()), nil
			}
			var uris []string
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
			return text("roots: " + strings.Join(uris, ", ")), nil
		})
	s.mcp.AddTool(&mcp.Tool{Name: "log", Description: "Sends one log message at each level (debug, info, warning, error).",
		InputSchema: objectSchema(map[string]string{"text": "string"}, "text")},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for _, l := range []mcp.LoggingLevel{"debug", "info", "warning", "error"} {
				if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: l, Logger: "everything", Data: fmt.Sprintf("%s: %v", l, args(req)["text"])}); err != nil {
					return nil, err
				}
			}
			return text("logged"), nil
		})
	s.mcp.AddTool(&mcp.Tool{Name: "announce", Description: "Sends every session, outside any request: notifications/tools, prompts and resources list_changed, and one log message (error) carrying its text.",
		InputSchema: objectSchema(map[string]string{"text": "string"}, "text")},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			const name = "fake-announced"
			// A feature added and removed at once: the SDK sends each session
			// one list_changed per kind, on its standalone stream.
			s.mcp.AddTool(&mcp.Tool{Name: name, InputSchema: empty}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text(""), nil })
			s.mcp.RemoveTools(name)
			s.mcp.AddPrompt(&mcp.Prompt{Name: name}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{}, nil
			})
			s.mcp.RemovePrompts(name)
			s.mcp.AddResource(&mcp.Resource{URI: "fake://" + name, Name: name}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{}, nil
			})
			s.mcp.RemoveResources("fake://" + name)
			for ss := range s.mcp.Sessions() {
				// context.Background: not related to this call, so the message
				// travels on each session's standalone stream.
				_ = ss.Log(context.Background(), &mcp.LoggingMessageParams{Level: "error", Logger: "everything", Data: fmt.Sprintf("announce: %v", args(req)["text"])})
			}
			return text("announced"), nil
		})
	s.mcp.AddTool(&mcp.Tool{Name: "touch", Description: "Updates a resource: its subscribers get notifications/resources/updated.",
		InputSchema: objectSchema(map[string]string{"uri": "string"}, "uri")},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			uri := str(args(req)["uri"])
			if err := s.mcp.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
				return nil, err
			}
			return text("touched " + uri), nil
		})
}

// asking is ctx for a request to the client, cancelled when the server
// closes too: a client (or a proxy) that never answers must not hold the
// tool, and with it the session's Close and the server's, for ever.
func (s *Server) asking(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-s.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
