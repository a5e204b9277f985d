// Package llm is a fake LLM server that misbehaves on cue, for chaos tests of
// MCP proxies.
//
// One [Server] speaks one provider's wire format, chosen by
// [Options.Provider]:
//
//   - [Anthropic]: POST /v1/messages (plain and "stream": true, with ping events),
//     GET /v1/models (paginated with limit, after_id and before_id, newest first)
//     and GET /v1/models/{id}. Errors are {"type":"error","error":{...},"request_id":...}.
//   - [OpenAI]: POST /v1/chat/completions (plain and streamed as data: chunks
//     ending in data: [DONE]), GET /v1/models and GET /v1/models/{id}. Errors are
//     {"error":{"message","type","param","code"}}.
//
// Anthropic SDKs take [Server.URL] as their base URL; OpenAI clients take
// [Server.URL] + "/v1", which [Server.BaseURL] returns for either provider.
//
// # Behaviours
//
// What the fake does with a request is a [Step]: a [Kind] from the catalogue
// ([Catalogue] lists them with descriptions) plus its parameters. Steps are
// chosen per model (the request's "model" field) by a [Plan]: a sequence
// consumed in order whose last step repeats ("fail twice, then ok"), or a seeded
// [Random] draw that is the same for the same seed. Models without a plan of their
// own follow the plan of [AnyModel] (see [Options.Default]); the models listing
// follows the plan of [ListModels] and otherwise always answers.
//
// Every request but those of the control API is recorded ([Server.Requests]):
// time, path, model, stream flag, the step applied, a prompt excerpt, the status
// sent, and whether the client or Close ended it. [Server.Expect] and
// [Server.Unmet] check that the expected completion requests came.
//
// Every blocking behaviour (hangs, stalls, slow answers) ends when the client
// goes away or when the fake is closed. [Server.Close] returns once every
// handler and connection is done, so a closed fake leaves no goroutine behind.
//
// # Control API
//
// The same listener serves a small control API under /_fake/, so a proxy in
// another process can be driven by a harness:
//
//	GET    /_fake/catalogue             the behaviour catalogue
//	GET    /_fake/behaviors             the plan of every scripted model
//	PUT    /_fake/behaviors/{model}     set a plan: a Plan, a list of steps or one step
//	DELETE /_fake/behaviors/{model}     back to the default plan
//	GET    /_fake/requests              the recorded requests
//	DELETE /_fake/requests              forget the recorded requests
//	PUT    /_fake/expectations/{model}  {"count": n}: expect n requests for model
//	GET    /_fake/unmet                 expectations not met so far
//	GET    /_fake/models                the served model list
//	PUT    /_fake/models                replace the served model list
//	PUT    /_fake/oauth-gate            {"enabled": bool}: gate OAuth tokens (see oauth.go)
//	POST   /_fake/reset                 plans, models, requests, expectations, gate as at New
//
// A step is written either as an object ({"kind":"slow","delay":"250ms"}) or in
// the short form that [ParseStep] reads ("slow:250ms"). {model} may be [AnyModel]
// ("*") or [ListModels] ("_models").
package llm
