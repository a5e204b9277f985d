package llm

import (
	"net/http"
	"strings"
)

// OAuthTokenPrefix starts a Claude subscription OAuth token (what
// `claude setup-token` mints), as opposed to a Console API key (sk-ant-api…).
const OAuthTokenPrefix = "sk-ant-oat"

// oauthBeta is the anthropic-beta value the Messages API requires on requests
// authenticated with an OAuth bearer token. Source: anthropic-sdk-go v2.15.0,
// config/federation.go (OAuthAPIBetaHeader = "oauth-2025-04-20"), which
// internal/auth/middleware.go (applyBearerAuth) sets next to
// "Authorization: Bearer <token>".
const oauthBeta = "oauth-2025-04-20"

// IsOAuthToken reports whether key is a Claude subscription OAuth token rather
// than an API key. Such a token authenticates as Authorization: Bearer, not
// x-api-key.
func IsOAuthToken(key string) bool { return strings.HasPrefix(key, OAuthTokenPrefix) }

// OAuthGatedHint is what every error, notice reason and chat error says when
// a subscription token meets the gating pattern.
const OAuthGatedHint = oauthPrefix + ", which Anthropic gates to its own client (404 on older model ids, 429 on current ones)" + oauthWayOut

const (
	oauthPrefix = "the key is a Claude subscription OAuth token (sk-ant-oat…)"
	oauthWayOut = ": set an API key (sk-ant-api…) from the Anthropic Console"
)

// OAuthHint is the explanation for a subscription OAuth token that Anthropic
// answered with status: 401 (refused), 403 (denied), 404 and 429 (gated);
// "" for any other status.
func OAuthHint(status int) string {
	switch status {
	case http.StatusNotFound, http.StatusTooManyRequests:
		return OAuthGatedHint
	case http.StatusUnauthorized:
		return oauthPrefix + " and Anthropic refused it (401): it may have expired or been revoked (`claude setup-token` mints a new one), " +
			"and Anthropic gates such tokens to its own client" + oauthWayOut
	case http.StatusForbidden:
		return oauthPrefix + " and Anthropic denied the request (403): the token's account may lack access to this API or model, " +
			"and Anthropic gates such tokens to its own client" + oauthWayOut
	}
	return ""
}

// setAnthropicAuth puts key on h the way Anthropic takes it: an OAuth token as
// Authorization: Bearer with the oauth beta header (appended to any beta
// already set), anything else as x-api-key.
func setAnthropicAuth(h http.Header, key string) {
	switch {
	case key == "":
	case IsOAuthToken(key):
		h.Set("Authorization", "Bearer "+key)
		if beta := h.Get("anthropic-beta"); beta == "" {
			h.Set("anthropic-beta", oauthBeta)
		} else if !strings.Contains(beta, oauthBeta) {
			h.Set("anthropic-beta", beta+","+oauthBeta)
		}
	default:
		h.Set("x-api-key", key)
	}
}

// oauthGated marks r when an OAuth token met one of the answers Anthropic
// gives such tokens outside its own client: a 401 or 403 refusal, a 404 or a
// 429 on a request it authenticated. The status alone cannot tell a gated
// token from an expired one, a withdrawn model or a real rate limit, so the
// hint (OAuthHint) says what the pattern means rather than claiming certainty.
func (p *anthropicProvider) oauthGated(r *attemptResult) {
	hint := OAuthHint(r.status)
	if !IsOAuthToken(p.cfg.APIKey) || hint == "" {
		return
	}
	r.gated = true
	r.detail += "; " + hint
}
