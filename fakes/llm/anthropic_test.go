package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	. "github.com/onsi/gomega/gstruct"

	"github.com/mcpchaos/mcpchaos/fakes/llm"
)

var _ = Describe("Anthropic wire format, seen through anthropic-sdk-go", func() {
	const (
		model  = "claude-opus-5"
		prompt = "Summarize the onboarding page for new engineers please"
	)
	var (
		srv    *llm.Server
		hc     *http.Client
		client anthropic.Client
	)

	BeforeEach(func() {
		srv = newFake(llm.Options{Provider: llm.Anthropic})
		hc = newHTTPClient()
		client = anthropicClient(srv, hc)
	})

	set := func(steps ...llm.Step) {
		GinkgoHelper()
		Expect(srv.Set(model, steps...)).To(Succeed())
	}

	It("answers ok with the deterministic reply and records the request", func(ctx SpecContext) {
		msg, err := client.Messages.New(ctx, anthropicParams(model, prompt))
		Expect(err).NotTo(HaveOccurred())
		Expect(msg.Content).To(HaveLen(1))
		Expect(msg.Content[0].Type).To(Equal("text"))
		Expect(msg.Content[0].Text).To(Equal(llm.Reply(prompt)))
		Expect(msg.Content[0].Text).To(MatchRegexp(`^Summary [0-9a-f]{8}: Summarize the onboarding page`))
		Expect(string(msg.Model)).To(Equal(model))
		Expect(string(msg.StopReason)).To(Equal("end_turn"))
		Expect(msg.ID).To(HavePrefix("msg_"))
		Expect(msg.Usage.OutputTokens).To(BeNumerically(">", 0))

		r := lastRequest(srv)
		Expect(r).To(MatchFields(IgnoreExtras, Fields{
			"Method": Equal(http.MethodPost), "Path": Equal("/v1/messages"), "Model": Equal(model),
			"Stream": BeFalse(), "Prompt": Equal(prompt), "Status": Equal(http.StatusOK), "Done": BeTrue(),
			"ClientGone": BeFalse(),
		}))
		Expect(r.Step.Kind).To(Equal(llm.OK))
	}, SpecTimeout(specTimeout))

	It("uses a step's text instead of the reply", func(ctx SpecContext) {
		set(llm.Step{Kind: llm.OK, Text: `{"title":"fixed"}`})
		msg, err := client.Messages.New(ctx, anthropicParams(model, prompt))
		Expect(err).NotTo(HaveOccurred())
		Expect(msg.Content[0].Text).To(Equal(`{"title":"fixed"}`))
	}, SpecTimeout(specTimeout))

	It("streams the reply as message_start … message_stop", func(ctx SpecContext) {
		got := readAnthropicStream(ctx, client, anthropicParams(model, prompt))
		Expect(got.Err).NotTo(HaveOccurred())
		Expect(got.Text).To(Equal(llm.Reply(prompt)))
		Expect(got.Message.Content[0].Text).To(Equal(llm.Reply(prompt)))
		Expect(string(got.Message.StopReason)).To(Equal("end_turn"))
		Expect(got.Types[:2]).To(Equal([]string{"message_start", "content_block_start"}))
		Expect(got.Types[len(got.Types)-3:]).To(Equal([]string{"content_block_stop", "message_delta", "message_stop"}))
		Expect(got.Types[2 : len(got.Types)-3]).To(HaveEach("content_block_delta"))
		Expect(len(got.Types)).To(BeNumerically(">", 6), "the text comes in several deltas")
		Expect(lastRequest(srv).Stream).To(BeTrue())
	}, SpecTimeout(specTimeout))

	It("interleaves ping events in the stream", func(ctx SpecContext) {
		status, header, body := rawPost(ctx, hc, srv.URL()+"/v1/messages", http.Header{"X-Api-Key": {"k"}}, map[string]any{
			"model": model, "max_tokens": 64, "stream": true,
			"messages": []map[string]any{{"role": "user", "content": "one two three four five six seven eight nine"}},
		})
		Expect(status).To(Equal(http.StatusOK))
		Expect(header.Get("Content-Type")).To(HavePrefix("text/event-stream"))
		Expect(header.Get("request-id")).To(HavePrefix("req_"))
		names := sseEventNames(body)
		Expect(names[0]).To(Equal("message_start"))
		Expect(names[len(names)-1]).To(Equal("message_stop"))
		pings := 0
		for i, n := range names {
			if n == "ping" {
				pings++
				Expect(i).To(BeNumerically(">", 0))
				Expect(i).To(BeNumerically("<", len(names)-1))
			}
		}
		Expect(pings).To(BeNumerically(">=", 2), "a ping after the block start and one amid the deltas")
	}, SpecTimeout(specTimeout))

	DescribeTable("error behaviours surface as *anthropic.Error with the real status and type",
		func(ctx SpecContext, kind llm.Kind, status int, errType string) {
			set(llm.Do(kind))
			_, err := client.Messages.New(ctx, anthropicParams(model, prompt))
			var apiErr *anthropic.Error
			Expect(errors.As(err, &apiErr)).To(BeTrue(), "got %v", err)
			Expect(apiErr.StatusCode).To(Equal(status))
			Expect(string(apiErr.Type())).To(Equal(errType))
			Expect(apiErr.Message).NotTo(BeEmpty())
			Expect(apiErr.RequestID).To(HavePrefix("req_"))
			Expect(apiErr.RawJSON()).To(ContainSubstring(`"request_id":"` + apiErr.RequestID + `"`))
			Expect(lastRequest(srv).Status).To(Equal(status))
		},
		Entry("not_found", llm.NotFound, 404, "not_found_error"),
		Entry("bad_request", llm.BadRequest, 400, "invalid_request_error"),
		Entry("unauthorized", llm.Unauthorized, 401, "authentication_error"),
		Entry("rate_limited", llm.RateLimited, 429, "rate_limit_error"),
		Entry("server_error", llm.ServerError, 500, "api_error"),
		Entry("overloaded", llm.Overloaded, 529, "overloaded_error"),
		Entry("stream_error on a plain request", llm.StreamError, 529, "overloaded_error"),
	)

	It("names the missing model in not_found", func(ctx SpecContext) {
		set(llm.Do(llm.NotFound))
		_, err := client.Messages.New(ctx, anthropicParams(model, prompt))
		var apiErr *anthropic.Error
		Expect(errors.As(err, &apiErr)).To(BeTrue())
		Expect(apiErr.Message).To(Equal("model: " + model))
	}, SpecTimeout(specTimeout))

	It("advertises retry-after on rate_limited", func(ctx SpecContext) {
		set(llm.Step{Kind: llm.RateLimited, Delay: 2500 * time.Millisecond})
		_, err := client.Messages.New(ctx, anthropicParams(model, prompt))
		var apiErr *anthropic.Error
		Expect(errors.As(err, &apiErr)).To(BeTrue())
		Expect(apiErr.Response.Header.Get("retry-after")).To(Equal("3"))
		Expect(apiErr.Response.Header.Get("retry-after-ms")).To(Equal("2500"))
	}, SpecTimeout(specTimeout))

	It("ends hang_before_headers with the client's deadline", func(ctx SpecContext) {
		set(llm.Do(llm.HangBeforeHeaders))
		cctx, cancel := context.WithTimeout(ctx, hangBudget)
		defer cancel()
		_, err := client.Messages.New(cctx, anthropicParams(model, prompt))
		Expect(err).To(MatchError(context.DeadlineExceeded))
		Eventually(srv.Requests).Should(ConsistOf(And(
			HaveField("Done", true), HaveField("ClientGone", true), HaveField("Status", 0))))
	}, SpecTimeout(5*time.Second))

	It("ends hang_after_headers with the client's deadline, plain and streamed", func(ctx SpecContext) {
		set(llm.Do(llm.HangAfterHeaders))
		cctx, cancel := context.WithTimeout(ctx, hangBudget)
		defer cancel()
		_, err := client.Messages.New(cctx, anthropicParams(model, prompt))
		Expect(err).To(MatchError(context.DeadlineExceeded))

		sctx, cancel := context.WithTimeout(ctx, hangBudget)
		defer cancel()
		got := readAnthropicStream(sctx, client, anthropicParams(model, prompt))
		Expect(got.Types).To(BeEmpty())
		Expect(got.Err).To(MatchError(context.DeadlineExceeded))
		Eventually(srv.Requests).Should(HaveEach(And(
			HaveField("Status", http.StatusOK), HaveField("Done", true), HaveField("ClientGone", true))))
	}, SpecTimeout(5*time.Second))

	It("stalls mid-stream: partial text, then the client's deadline", func(ctx SpecContext) {
		set(llm.Do(llm.StallMidStream))
		cctx, cancel := context.WithTimeout(ctx, hangBudget)
		defer cancel()
		got := readAnthropicStream(cctx, client, anthropicParams(model, prompt))
		Expect(got.Err).To(MatchError(context.DeadlineExceeded))
		Expect(got.Text).NotTo(BeEmpty())
		Expect(llm.Reply(prompt)).To(HavePrefix(got.Text))
		Expect(len(got.Text)).To(BeNumerically("<", len(llm.Reply(prompt))))
		Expect(got.Types).NotTo(ContainElement("message_stop"))
	}, SpecTimeout(5*time.Second))

	It("truncates a stream: partial text, no message_stop, and no error from the SDK", func(ctx SpecContext) {
		set(llm.Do(llm.TruncatedStream))
		got := readAnthropicStream(ctx, client, anthropicParams(model, prompt))
		Expect(got.Err).NotTo(HaveOccurred(), "the SDK takes a clean EOF for the end")
		Expect(got.Types).To(ContainElement("content_block_delta"))
		Expect(got.Types).NotTo(ContainElements("content_block_stop", "message_delta", "message_stop"))
		Expect(got.Text).NotTo(BeEmpty())
		Expect(len(got.Text)).To(BeNumerically("<", len(llm.Reply(prompt))))
		Expect(string(got.Message.StopReason)).To(BeEmpty())
	}, SpecTimeout(specTimeout))

	It("turns stream_error into an *anthropic.Error after partial text", func(ctx SpecContext) {
		set(llm.Do(llm.StreamError))
		got := readAnthropicStream(ctx, client, anthropicParams(model, prompt))
		var apiErr *anthropic.Error
		Expect(errors.As(got.Err, &apiErr)).To(BeTrue(), "got %v", got.Err)
		Expect(apiErr.StatusCode).To(Equal(http.StatusOK), "the error came after the 200")
		Expect(string(apiErr.Type())).To(Equal("overloaded_error"))
		Expect(got.Text).NotTo(BeEmpty())
		Expect(got.Types).NotTo(ContainElement("message_stop"))
	}, SpecTimeout(specTimeout))

	It("answers empty with empty text, plain and streamed", func(ctx SpecContext) {
		set(llm.Do(llm.Empty))
		msg, err := client.Messages.New(ctx, anthropicParams(model, prompt))
		Expect(err).NotTo(HaveOccurred())
		Expect(msg.Content).To(HaveLen(1))
		Expect(msg.Content[0].Text).To(BeEmpty())

		got := readAnthropicStream(ctx, client, anthropicParams(model, prompt))
		Expect(got.Err).NotTo(HaveOccurred())
		Expect(got.Types).To(ContainElement("message_stop"))
		Expect(got.Types).NotTo(ContainElement("content_block_delta"))
		Expect(got.Message.Content[0].Text).To(BeEmpty())
	}, SpecTimeout(specTimeout))

	It("answers malformed with a 200 the SDK cannot decode, plain and streamed", func(ctx SpecContext) {
		set(llm.Do(llm.Malformed))
		_, err := client.Messages.New(ctx, anthropicParams(model, prompt))
		Expect(err).To(HaveOccurred())
		var apiErr *anthropic.Error
		Expect(errors.As(err, &apiErr)).To(BeFalse(), "a decoding error, not an API error")
		Expect(lastRequest(srv).Status).To(Equal(http.StatusOK))

		got := readAnthropicStream(ctx, client, anthropicParams(model, prompt))
		Expect(got.Err).To(HaveOccurred())
		Expect(errors.As(got.Err, &apiErr)).To(BeFalse())
		Expect(got.Types).To(Equal([]string{"message_start", "content_block_start"}))
	}, SpecTimeout(specTimeout))

	It("resets the connection", func(ctx SpecContext) {
		set(llm.Do(llm.Reset))
		_, err := client.Messages.New(ctx, anthropicParams(model, prompt))
		Expect(err).To(HaveOccurred())
		var apiErr *anthropic.Error
		Expect(errors.As(err, &apiErr)).To(BeFalse(), "a transport error, not an API error")
		Expect(srv.Requests()).To(ConsistOf(And(HaveField("Status", 0), HaveField("Step.Kind", llm.Reset), HaveField("Done", true))),
			"a POST without an idempotency key is not replayed by net/http")
	}, SpecTimeout(specTimeout))

	It("answers slow only after the delay", func(ctx SpecContext) {
		set(llm.SlowFor(80 * time.Millisecond))
		start := time.Now()
		msg, err := client.Messages.New(ctx, anthropicParams(model, prompt))
		Expect(err).NotTo(HaveOccurred())
		Expect(time.Since(start)).To(BeNumerically(">=", 80*time.Millisecond))
		Expect(msg.Content[0].Text).To(Equal(llm.Reply(prompt)))
	}, SpecTimeout(specTimeout))

	It("rejects a request without max_tokens with 400 invalid_request_error", func(ctx SpecContext) {
		status, _, body := rawPost(ctx, hc, srv.URL()+"/v1/messages", nil, map[string]any{
			"model": model, "messages": []map[string]any{{"role": "user", "content": "hi"}},
		})
		Expect(status).To(Equal(http.StatusBadRequest))
		var got map[string]any
		Expect(json.Unmarshal([]byte(body), &got)).To(Succeed())
		Expect(got).To(HaveKeyWithValue("type", "error"))
		Expect(got).To(HaveKeyWithValue("request_id", HavePrefix("req_")))
		Expect(got).To(HaveKeyWithValue("error", Equal(map[string]any{
			"type": "invalid_request_error", "message": "max_tokens: Field required",
		})))
		Expect(lastRequest(srv).Step.Kind).To(Equal(llm.BadRequest))
	}, SpecTimeout(specTimeout))

	It("checks the API key when one is configured", func(ctx SpecContext) {
		keyed := newFake(llm.Options{Provider: llm.Anthropic, APIKey: "right"})
		keyedClient := anthropicClient(keyed, hc)
		_, err := keyedClient.Messages.New(ctx, anthropicParams(model, prompt))
		var apiErr *anthropic.Error
		Expect(errors.As(err, &apiErr)).To(BeTrue())
		Expect(apiErr.StatusCode).To(Equal(http.StatusUnauthorized))
		Expect(string(apiErr.Type())).To(Equal("authentication_error"))
		Expect(lastRequest(keyed).Step.Kind).To(Equal(llm.Unauthorized))
	}, SpecTimeout(specTimeout))

	Describe("GET /v1/models", func() {
		day := func(d int) time.Time { return time.Date(2026, time.January, d, 0, 0, 0, 0, time.UTC) }

		BeforeEach(func() {
			srv.SetModels([]llm.Model{
				{ID: "claude-opus-4-5", Created: day(1)},
				{ID: "claude-opus-5", Created: day(20)},
				{ID: "claude-haiku-4-5", Created: day(2)},
				{ID: "claude-sonnet-5", Created: day(15), DisplayName: "Sonnet Five"},
				{ID: "claude-sonnet-4-5", Created: day(3)},
			})
		})

		It("walks every page with the SDK's auto-pager, newest first", func(ctx SpecContext) {
			pager := client.Models.ListAutoPaging(ctx, anthropic.ModelListParams{Limit: anthropic.Int(2)})
			var ids []string
			for pager.Next() {
				m := pager.Current()
				ids = append(ids, m.ID)
				Expect(string(m.Type)).To(Equal("model"))
				Expect(m.CreatedAt.IsZero()).To(BeFalse())
			}
			Expect(pager.Err()).NotTo(HaveOccurred())
			Expect(ids).To(Equal([]string{"claude-opus-5", "claude-sonnet-5", "claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-5"}))

			Expect(srv.Requests()).To(HaveLen(3), "3 pages of 2, 2 and 1; has_more false ends the walk")
			Expect(srv.Requests()).To(HaveEach(HaveField("Path", "/v1/models")))
		}, SpecTimeout(specTimeout))

		It("serves created_at and display_name for auto-follow resolution", func(ctx SpecContext) {
			page, err := client.Models.List(ctx, anthropic.ModelListParams{})
			Expect(err).NotTo(HaveOccurred())
			Expect(page.HasMore).To(BeFalse())
			Expect(page.FirstID).To(Equal("claude-opus-5"))
			Expect(page.LastID).To(Equal("claude-opus-4-5"))
			newest := map[string]anthropic.ModelInfo{}
			for _, m := range page.Data {
				line := strings.Join(strings.Split(m.ID, "-")[:2], "-")
				if cur, ok := newest[line]; !ok || m.CreatedAt.After(cur.CreatedAt) {
					newest[line] = m
				}
			}
			Expect(newest["claude-opus"].ID).To(Equal("claude-opus-5"))
			Expect(newest["claude-opus"].CreatedAt).To(BeTemporally("==", day(20)))
			Expect(newest["claude-opus"].DisplayName).To(Equal("Claude Opus 5"))
			Expect(newest["claude-sonnet"].DisplayName).To(Equal("Sonnet Five"))
		}, SpecTimeout(specTimeout))

		It("pages backwards with before_id", func(ctx SpecContext) {
			page, err := client.Models.List(ctx, anthropic.ModelListParams{BeforeID: anthropic.String("claude-haiku-4-5"), Limit: anthropic.Int(2)})
			Expect(err).NotTo(HaveOccurred())
			Expect(page.Data).To(HaveLen(2))
			Expect(page.FirstID).To(Equal("claude-sonnet-5"))
			Expect(page.LastID).To(Equal("claude-sonnet-4-5"))
			Expect(page.HasMore).To(BeTrue())
		}, SpecTimeout(specTimeout))

		It("gets one model, and 404s an unknown one", func(ctx SpecContext) {
			m, err := client.Models.Get(ctx, "claude-opus-4-5", anthropic.ModelGetParams{})
			Expect(err).NotTo(HaveOccurred())
			Expect(m.DisplayName).To(Equal("Claude Opus 4.5"))
			Expect(m.CreatedAt).To(BeTemporally("==", day(1)))

			_, err = client.Models.Get(ctx, "claude-nope", anthropic.ModelGetParams{})
			var apiErr *anthropic.Error
			Expect(errors.As(err, &apiErr)).To(BeTrue())
			Expect(apiErr.StatusCode).To(Equal(http.StatusNotFound))
			Expect(string(apiErr.Type())).To(Equal("not_found_error"))
		}, SpecTimeout(specTimeout))

		It("rejects an out-of-range limit", func(ctx SpecContext) {
			_, err := client.Models.List(ctx, anthropic.ModelListParams{Limit: anthropic.Int(0)})
			var apiErr *anthropic.Error
			Expect(errors.As(err, &apiErr)).To(BeTrue(), "got %v", err)
			Expect(apiErr.StatusCode).To(Equal(http.StatusBadRequest))
		}, SpecTimeout(specTimeout))
	})
})
