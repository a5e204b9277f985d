package llm

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

const (
	testOAuthToken = "sk-ant-oat01-test-subscription-token"
	testAPIKey     = "sk-ant-api03-test-console-key"
)

// TestAnthropicKeyHeaders: an API key goes out as x-api-key; a subscription
// OAuth token as Authorization: Bearer with the oauth beta header, never as
// x-api-key (the seed: "mcpd's anthropic adapter does send OAuth tokens via
// Authorization: Bearer (so auth passes)").
func TestAnthropicKeyHeaders(t *testing.T) {
	noLeaks(t)
	for _, tc := range []struct {
		key                     string
		wantXAPIKey, wantBearer bool
	}{
		{testAPIKey, true, false},
		{testOAuthToken, false, true},
	} {
		s := newStub(t, answer("hi"))
		cfg := anthropicCfg("claude", s, "claude-opus-5")
		cfg.APIKey = tc.key
		a := newAdapter(t, chainOf(cfg), knobsWith(2*time.Second, time.Second))
		if _, err := a.Complete(context.Background(), hello); err != nil {
			t.Fatalf("%s: %v", tc.key, err)
		}
		_, h, _ := s.last()
		if got := h.Get("x-api-key") == tc.key; got != tc.wantXAPIKey {
			t.Errorf("key %s: x-api-key %q, want it set=%v", tc.key, h.Get("x-api-key"), tc.wantXAPIKey)
		}
		if got := h.Get("Authorization") == "Bearer "+tc.key; got != tc.wantBearer {
			t.Errorf("key %s: Authorization %q, want Bearer=%v", tc.key, h.Get("Authorization"), tc.wantBearer)
		}
		if tc.wantBearer && !strings.Contains(h.Get("anthropic-beta"), oauthBeta) {
			t.Errorf("OAuth token sent without anthropic-beta %s (got %q)", oauthBeta, h.Get("anthropic-beta"))
		}
	}
}

// gatedFake is a stand-in Anthropic API that gates OAuth tokens the way the
// real one does outside Claude Code; claude-opus-5 is its current model
// (listed, and what claude-opus-latest follows).
func gatedFake(t *testing.T) *stub {
	t.Helper()
	s := newStub(t, gatedAnthropic("claude-opus-5"))
	s.models = (&pager{list: []listedModel{{"claude-opus-4-5-20251101", "2025-11-01T00:00:00Z"}, {"claude-opus-5", "2026-05-12T09:30:00Z"}}}).handler
	return s
}

func gatedAdapter(t *testing.T, f *stub, key, model string) *Adapter {
	t.Helper()
	return newAdapter(t, Config{Primary: "anthropic-fallback", Providers: map[string]ProviderConfig{
		"anthropic-fallback": {Kind: KindAnthropic, URL: f.srv.URL, Model: model, APIKey: key},
	}}, knobsWith(2*time.Second, time.Second))
}

// TestOAuthGatedTokenIsExplained: a subscription token meeting the gating
// pattern (404 on an older model id, 429 on a current one, also through
// auto-follow) fails with an error, an attempt and a notice reason that say
// the token is gated to another client and an API key is needed.
func TestOAuthGatedTokenIsExplained(t *testing.T) {
	noLeaks(t)
	f := gatedFake(t)
	for _, tc := range []struct {
		model  string
		status int
	}{
		{"claude-opus-4-20250514", http.StatusNotFound},    // older id: not listed
		{"claude-opus-5", http.StatusTooManyRequests},      // current id
		{"claude-opus-latest", http.StatusTooManyRequests}, // auto-follow resolves to claude-opus-5
	} {
		a := gatedAdapter(t, f, testOAuthToken, tc.model)
		_, err := a.Complete(context.Background(), hello)
		ce := chainErr(t, err)
		last := ce.Attempts[len(ce.Attempts)-1]
		if last.Status != tc.status {
			t.Fatalf("%s: status %d, want %d (the token must pass auth: Bearer + beta): %v", tc.model, last.Status, tc.status, err)
		}
		if !last.OAuthGated {
			t.Errorf("%s: attempt not marked OAuthGated: %v", tc.model, last)
		}
		for what, text := range map[string]string{"error": err.Error(), "notice reason": ce.Reason()} {
			for _, want := range []string{"subscription OAuth token", "gates to its own client", "API key"} {
				if !strings.Contains(text, want) {
					t.Errorf("%s: the %s does not say %q: %s", tc.model, what, want, text)
				}
			}
		}
	}
}

// TestAPIKeyIsNotCalledGated: the same 404 with an API key is a missing
// model, not a gated token: no hint that would send the operator astray.
func TestAPIKeyIsNotCalledGated(t *testing.T) {
	noLeaks(t)
	f := gatedFake(t) // claude-opus-4-20250514 is not listed: a 404 whatever the key
	a := gatedAdapter(t, f, testAPIKey, "claude-opus-4-20250514")
	_, err := a.Complete(context.Background(), hello)
	ce := chainErr(t, err)
	if last := ce.Attempts[len(ce.Attempts)-1]; last.Status != http.StatusNotFound || last.OAuthGated {
		t.Fatalf("want a plain 404, got %v", last)
	}
	if strings.Contains(ce.Reason(), "OAuth") || strings.Contains(err.Error(), "OAuth") {
		t.Errorf("an API key's 404 is explained as OAuth gating: %s", ce.Reason())
	}
	// And the API key works on a current model.
	if _, err := gatedAdapter(t, f, testAPIKey, "claude-opus-5").Complete(context.Background(), hello); err != nil {
		t.Errorf("API key on a current model: %v", err)
	}
}

// TestProviderAnswerOfAnotherShapeIsNamed: a plain-text 403 or an HTML page
// where the provider's JSON was expected is reported as such, with its status
// and first bytes, in the attempt, the error and the notice reason's detail.
func TestProviderAnswerOfAnotherShapeIsNamed(t *testing.T) {
	noLeaks(t)
	for _, tc := range []struct {
		status      int
		ctype, body string
		want        string
		stream      bool
	}{
		{403, "text/plain; charset=utf-8", "Access denied\n", "answered 403 text/plain `Access denied`, not the provider's JSON", false},
		{200, "text/html", "<html>Sign in</html>", "answered 200 text/html `<html>Sign in</html>`, not the provider's JSON", false},
		{200, "text/html", "<html>Sign in</html>", "answered 200 text/html `<html>Sign in</html>`, not the provider's JSON", true},
	} {
		s := newStub(t, func(_ *stub, w http.ResponseWriter, _ *http.Request, _ []byte) {
			w.Header().Set("Content-Type", tc.ctype)
			w.WriteHeader(tc.status)
			_, _ = w.Write([]byte(tc.body))
		})
		a := newAdapter(t, chainOf(anthropicCfg("claude", s, "claude-opus-5")), knobsWith(2*time.Second, time.Second))
		var err error
		if tc.stream {
			_, err = a.Stream(context.Background(), hello, func(string) {})
		} else {
			_, err = a.Complete(context.Background(), hello)
		}
		ce := chainErr(t, err)
		if d := ce.Attempts[0].Detail; !strings.Contains(d, tc.want) || !strings.Contains(err.Error(), "something between mcplocal and the provider answered") {
			t.Errorf("%d %s (stream %v): detail %q does not say %q", tc.status, tc.ctype, tc.stream, d, tc.want)
		}
	}
}

// TestOAuthTokenRefusalsAreExplained: whatever Anthropic answers a
// subscription OAuth token with (401 refused, 403 denied, 404 and 429 gated),
// the error and the notice reason say the key is such a token, what the
// status means for it, and that an API key from the Console is the way out;
// the provider's own body alone leaves the operator guessing.
func TestOAuthTokenRefusalsAreExplained(t *testing.T) {
	noLeaks(t)
	for _, tc := range []struct {
		status int
		body   string
		says   []string
	}{
		{http.StatusUnauthorized, `{"type":"error","error":{"type":"authentication_error","message":"OAuth authentication is currently not supported."}}`,
			[]string{"refused it (401)", "expired or been revoked", "claude setup-token", "gates such tokens to its own client"}},
		{http.StatusForbidden, `{"type":"error","error":{"type":"permission_error","message":"forbidden"}}`,
			[]string{"denied the request (403)", "gates such tokens to its own client"}},
		{http.StatusNotFound, `{"type":"error","error":{"type":"not_found_error","message":"model: m"}}`,
			[]string{"gates to its own client", "404 on older model ids"}},
		{http.StatusTooManyRequests, `{"type":"error","error":{"type":"rate_limit_error","message":"Error"}}`,
			[]string{"gates to its own client", "429 on current ones"}},
	} {
		s := newStub(t, raw(tc.status, tc.body))
		cfg := anthropicCfg("claude", s, "claude-opus-5")
		cfg.APIKey = testOAuthToken
		_, err := newAdapter(t, chainOf(cfg), knobsWith(2*time.Second, time.Second)).Complete(context.Background(), hello)
		ce := chainErr(t, err)
		if last := ce.Attempts[len(ce.Attempts)-1]; last.Status != tc.status || !last.OAuthGated {
			t.Errorf("%d: attempt %v, want that status marked OAuthGated", tc.status, last)
		}
		if got, want := OAuthHint(tc.status), OAuthGatedHint; (tc.status == 404 || tc.status == 429) != (got == want) {
			t.Errorf("%d: OAuthHint = %q", tc.status, got)
		}
		for what, text := range map[string]string{"error": err.Error(), "notice reason": ce.Reason()} {
			for _, want := range append([]string{"subscription OAuth token (sk-ant-oat…)", "set an API key (sk-ant-api…) from the Anthropic Console"}, tc.says...) {
				if !strings.Contains(text, want) {
					t.Errorf("%d: the %s does not say %q: %s", tc.status, what, want, text)
				}
			}
		}
		// An API key meeting the same status is not called a token problem.
		cfg.APIKey = testAPIKey
		_, err = newAdapter(t, chainOf(cfg), knobsWith(2*time.Second, time.Second)).Complete(context.Background(), hello)
		if ce := chainErr(t, err); strings.Contains(ce.Reason(), "OAuth") || ce.Attempts[len(ce.Attempts)-1].OAuthGated {
			t.Errorf("%d with an API key explained as OAuth: %s", tc.status, ce.Reason())
		}
	}
}
