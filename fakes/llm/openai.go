package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// openAIDialect is the OpenAI Chat Completions API.
type openAIDialect struct{}

func (openAIDialect) completionPath() string  { return "/v1/chat/completions" }
func (openAIDialect) requestIDHeader() string { return "x-request-id" }

func (openAIDialect) authorized(h http.Header, key string) bool {
	return h.Get("Authorization") == "Bearer "+key
}

func (openAIDialect) parse(body []byte) (chat, error) {
	var req struct {
		Model         string        `json:"model"`
		Stream        bool          `json:"stream"`
		Messages      []wireMessage `json:"messages"`
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return chat{}, fmt.Errorf("We could not parse the JSON body of your request: %v", err) //nolint:staticcheck // the API's wording
	}
	ch := chat{Model: req.Model, Stream: req.Stream}
	if req.StreamOptions != nil {
		ch.IncludeUsage = req.StreamOptions.IncludeUsage
	}
	prompt, err := lastUserText(req.Messages)
	ch.Prompt = prompt
	switch {
	case err != nil:
		return ch, fmt.Errorf("messages: %w", err)
	case req.Model == "":
		return ch, errors.New("you must provide a model parameter")
	case len(req.Messages) == 0:
		return ch, errors.New("'messages' is a required property")
	}
	return ch, nil
}

func (openAIDialect) errorFor(k Kind, model, text string) (apiError, bool) {
	var e apiError
	switch k {
	case NotFound:
		e = apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "model_not_found",
			Message: fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", model)}
	case BadRequest:
		e = apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: "Invalid request"}
	case Unauthorized:
		e = apiError{Status: http.StatusUnauthorized, Type: "invalid_request_error", Code: "invalid_api_key",
			Message: "Incorrect API key provided."}
	case RateLimited:
		e = apiError{Status: http.StatusTooManyRequests, Type: "requests", Code: "rate_limit_exceeded",
			Message: "Rate limit reached for requests. Please try again later."}
	case ServerError, StreamError:
		e = apiError{Status: http.StatusInternalServerError, Type: "server_error",
			Message: "The server had an error while processing your request. Sorry about that!"}
	case Overloaded:
		e = apiError{Status: http.StatusServiceUnavailable, Type: "server_error",
			Message: "The engine is currently overloaded, please try again later."}
	default:
		return apiError{}, false
	}
	if text != "" {
		e.Message = text
	}
	return e, true
}

type openAIError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func (openAIDialect) errorBody(e apiError, _ string) []byte {
	body := struct {
		Error openAIError `json:"error"`
	}{openAIError{Message: e.Message, Type: e.Type}}
	if e.Code != "" {
		body.Error.Code = &e.Code
	}
	return mustJSON(body)
}

type openAIUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func newOpenAIUsage(prompt, text string) openAIUsage {
	u := openAIUsage{PromptTokens: tokens(prompt), CompletionTokens: tokens(text)}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

type openAIMessage struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
	Refusal *string `json:"refusal,omitempty"`
}

type openAIChoice struct {
	Index        int            `json:"index"`
	Message      *openAIMessage `json:"message,omitempty"`
	Delta        *openAIMessage `json:"delta,omitempty"`
	Logprobs     any            `json:"logprobs"`
	FinishReason *string        `json:"finish_reason"`
}

type openAICompletion struct {
	ID      string         `json:"id"`
	Object  string         `json:"object"`
	Created int64          `json:"created"`
	Model   string         `json:"model"`
	Choices []openAIChoice `json:"choices"`
	Usage   *openAIUsage   `json:"usage,omitempty"`
}

func (openAIDialect) message(ch chat, id, text string) []byte {
	stop := "stop"
	usage := newOpenAIUsage(ch.Prompt, text)
	return mustJSON(openAICompletion{
		ID: "chatcmpl-fake" + id, Object: "chat.completion", Created: time.Now().Unix(), Model: ch.Model,
		Choices: []openAIChoice{{Message: &openAIMessage{Role: "assistant", Content: &text}, FinishReason: &stop}},
		Usage:   &usage,
	})
}

// dataEvent formats one data-only server-sent event.
func dataEvent(data []byte) []byte {
	out := make([]byte, 0, len(data)+8)
	out = append(out, "data: "...)
	out = append(out, data...)
	return append(out, "\n\n"...)
}

func (openAIDialect) stream(ch chat, id, text string) stream {
	created := time.Now().Unix()
	chunk := func(choices []openAIChoice, usage *openAIUsage) []byte {
		return dataEvent(mustJSON(openAICompletion{
			ID: "chatcmpl-fake" + id, Object: "chat.completion.chunk", Created: created, Model: ch.Model,
			Choices: choices, Usage: usage,
		}))
	}
	empty, stop := "", "stop"
	var st stream
	st.frames = append(st.frames, chunk([]openAIChoice{{Delta: &openAIMessage{Role: "assistant", Content: &empty}}}, nil))
	st.addText(text, func(part string) []byte {
		return chunk([]openAIChoice{{Delta: &openAIMessage{Content: &part}}}, nil)
	}, nil)
	st.frames = append(st.frames, chunk([]openAIChoice{{Delta: &openAIMessage{}, FinishReason: &stop}}, nil))
	if ch.IncludeUsage {
		usage := newOpenAIUsage(ch.Prompt, text)
		st.frames = append(st.frames, chunk([]openAIChoice{}, &usage))
	}
	st.frames = append(st.frames, dataEvent([]byte("[DONE]")))
	return st
}

func (d openAIDialect) streamError(e apiError, requestID string) []byte {
	return dataEvent(d.errorBody(e, requestID))
}

func (openAIDialect) malformedEvent() []byte {
	return dataEvent([]byte(`{"id":"chatcmpl-fake","object":"chat.completion.chunk","choices":[{"index":0,"delta":`))
}

type openAIModel struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

func toOpenAIModel(m Model) openAIModel {
	owner := m.OwnedBy
	if owner == "" {
		owner = "mcpchaos"
	}
	return openAIModel{ID: m.ID, Object: "model", Created: m.Created.Unix(), OwnedBy: owner}
}

func (openAIDialect) modelInfo(m Model) []byte { return mustJSON(toOpenAIModel(m)) }

// modelList lists every model in configured order; the API has no pages.
func (openAIDialect) modelList(models []Model, _ url.Values) ([]byte, *apiError) {
	list := struct {
		Object string        `json:"object"`
		Data   []openAIModel `json:"data"`
	}{Object: "list", Data: []openAIModel{}}
	for _, m := range models {
		list.Data = append(list.Data, toOpenAIModel(m))
	}
	return mustJSON(list), nil
}
