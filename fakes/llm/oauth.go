package llm

import (
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"
)

// OAuth gating (Anthropic only). Anthropic serves Claude subscription OAuth
// tokens (sk-ant-oat…, what `claude setup-token` mints) to its own client
// only: probed directly, such a token is accepted as a bearer token but
// answers 404 on older model ids and 429 on current ones (the seed's
// reliability notes). With Options.OAuthGate set (or PUT /_fake/oauth-gate),
// the fake plays that pattern:
//
//   - an OAuth token sent as x-api-key is not an API key: 401;
//   - an OAuth token sent as Authorization: Bearer without the
//     "anthropic-beta: oauth-2025-04-20" header: 401 (the API requires it);
//   - with the header, a completion for a model the fake lists (/v1/models)
//     gets 429 rate_limit_error, any other model 404 not_found_error; the
//     models listing itself answers.
//
// API keys, and OAuth tokens while the gate is off, are unaffected.

// OAuthTokenPrefix starts a Claude subscription OAuth token.
const OAuthTokenPrefix = "sk-ant-oat"

// OAuthBeta is the anthropic-beta value OAuth bearer requests must carry.
const OAuthBeta = "oauth-2025-04-20"

// SetOAuthGate turns the OAuth gating on or off (see the package docs).
func (s *Server) SetOAuthGate(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oauthGate = on
}

// OAuthGate reports whether OAuth tokens are gated.
func (s *Server) OAuthGate() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.oauthGate
}

// oauthStep is the step the gate imposes on a request, if any: an
// Unauthorized step for a token sent the wrong way (any path), and for a
// completion of model the gating 404/429. ok is false when the gate lets the
// request through to its plan.
func (s *Server) oauthStep(c *gin.Context, completion bool, model string) (Step, bool) {
	if s.opts.Provider != Anthropic || !s.OAuthGate() {
		return Step{}, false
	}
	h := c.Request.Header
	if strings.HasPrefix(h.Get("x-api-key"), OAuthTokenPrefix) {
		return Step{Kind: Unauthorized, Text: "invalid x-api-key: an OAuth token is not an API key; send it as Authorization: Bearer"}, true
	}
	token, bearer := strings.CutPrefix(h.Get("Authorization"), "Bearer ")
	if !bearer || !strings.HasPrefix(token, OAuthTokenPrefix) {
		return Step{}, false
	}
	if !slices.Contains(strings.Split(strings.ReplaceAll(h.Get("anthropic-beta"), " ", ""), ","), OAuthBeta) {
		return Step{Kind: Unauthorized, Text: "OAuth authentication is currently not supported."}, true
	}
	if !completion {
		return Step{}, false
	}
	listed := slices.ContainsFunc(s.Models(), func(m Model) bool { return m.ID == model })
	if listed {
		return Step{Kind: RateLimited}, true // the API's usual wording: nothing says why
	}
	return Step{Kind: NotFound, Text: "model: " + model}, true
}

// putOAuthGate serves PUT /_fake/oauth-gate {"enabled": bool}.
func (s *Server) putOAuthGate(c *gin.Context) {
	var in struct {
		Enabled *bool `json:"enabled"`
	}
	if err := decodeControl(c, &in); err != nil || in.Enabled == nil {
		c.JSON(http.StatusBadRequest, gin.H{"error": `want {"enabled": true|false}`})
		return
	}
	s.SetOAuthGate(*in.Enabled)
	c.Status(http.StatusNoContent)
}
