package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/mcpchaos/mcpchaos/internal/syncbuf"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go"
	ooption "github.com/openai/openai-go/option"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/fakes/llm"
)

// hangBudget is how long a client waits on a hanging fake before giving up.
const hangBudget = 150 * time.Millisecond

// newFake starts a fake for the spec and closes it when the spec ends.
func newFake(opts llm.Options) *llm.Server {
	GinkgoHelper()
	srv, err := llm.New(opts)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(srv.Close)
	return srv
}

// newHTTPClient returns a client with a transport of its own, whose idle
// connections are closed when the spec ends.
func newHTTPClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	DeferCleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func anthropicClient(srv *llm.Server, hc *http.Client) anthropic.Client {
	return anthropic.NewClient(
		aoption.WithBaseURL(srv.URL()),
		aoption.WithAPIKey("test-key"),
		aoption.WithMaxRetries(0),
		aoption.WithHTTPClient(hc),
	)
}

func openAIClient(srv *llm.Server, hc *http.Client) openai.Client {
	return openai.NewClient(
		ooption.WithBaseURL(srv.URL()+"/v1"),
		ooption.WithAPIKey("test-key"),
		ooption.WithMaxRetries(0),
		ooption.WithHTTPClient(hc),
	)
}

func anthropicParams(model, prompt string) anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model:     anthropic.Model(model),
		MaxTokens: 64,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(prompt))},
	}
}

func openAIParams(model, prompt string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:    openai.ChatModel(model),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)},
	}
}

// anthropicStream is what a client observed of an Anthropic stream.
type anthropicStream struct {
	Types   []string // event types, in order (the SDK drops pings)
	Text    string   // the text deltas, concatenated
	Message anthropic.Message
	Err     error
}

func readAnthropicStream(ctx context.Context, c anthropic.Client, p anthropic.MessageNewParams) anthropicStream {
	var out anthropicStream
	st := c.Messages.NewStreaming(ctx, p)
	defer st.Close()
	for st.Next() {
		ev := st.Current()
		out.Types = append(out.Types, ev.Type)
		if ev.Type == "content_block_delta" {
			out.Text += ev.Delta.Text
		}
		Expect(out.Message.Accumulate(ev)).To(Succeed())
	}
	out.Err = st.Err()
	return out
}

// openAIStream is what a client observed of an OpenAI stream.
type openAIStream struct {
	Text          string
	FinishReasons []string
	Chunks        []openai.ChatCompletionChunk
	Err           error
}

func readOpenAIStream(ctx context.Context, c openai.Client, p openai.ChatCompletionNewParams) openAIStream {
	var out openAIStream
	st := c.Chat.Completions.NewStreaming(ctx, p)
	defer st.Close()
	for st.Next() {
		chunk := st.Current()
		out.Chunks = append(out.Chunks, chunk)
		for _, choice := range chunk.Choices {
			out.Text += choice.Delta.Content
			if choice.FinishReason != "" {
				out.FinishReasons = append(out.FinishReasons, choice.FinishReason)
			}
		}
	}
	out.Err = st.Err()
	return out
}

// rawPost sends body to url and returns the status, headers and whole body.
func rawPost(ctx context.Context, hc *http.Client, url string, header http.Header, body any) (int, http.Header, string) {
	GinkgoHelper()
	data, err := json.Marshal(body)
	Expect(err).NotTo(HaveOccurred())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	Expect(err).NotTo(HaveOccurred())
	req.Header = header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := hc.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer res.Body.Close()
	got, err := io.ReadAll(res.Body)
	Expect(err).NotTo(HaveOccurred())
	return res.StatusCode, res.Header, string(got)
}

// control sends a control API request and returns the status and body.
func control(hc *http.Client, method, url, body string) (int, string) {
	GinkgoHelper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	res, err := hc.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer res.Body.Close()
	got, err := io.ReadAll(res.Body)
	Expect(err).NotTo(HaveOccurred())
	return res.StatusCode, string(got)
}

// sseEventNames returns the event: names of a raw SSE body, in order.
func sseEventNames(body string) []string {
	var names []string
	for _, line := range strings.Split(body, "\n") {
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			names = append(names, name)
		}
	}
	return names
}

// lastRequest returns the newest record of srv.
func lastRequest(srv *llm.Server) llm.Request {
	GinkgoHelper()
	reqs := srv.Requests()
	Expect(reqs).NotTo(BeEmpty())
	return reqs[len(reqs)-1]
}

type syncBuffer = syncbuf.Buffer
