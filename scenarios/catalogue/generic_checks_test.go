package catalogue

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// The generic security rows check their promise inside their operations
// (what a refused initialize or session id answered): each passes a front
// that keeps it and fails, row and all, a front that breaks it.
func TestGenericSecurityOperationsFailAProxyThatBreaksThem(t *testing.T) {
	foreign := func(r *http.Request) bool {
		return r.Header.Get("Origin") == "http://evil.example" || r.Host == "evil.example"
	}
	malformed := func(r *http.Request) bool {
		id := r.Header.Get("Mcp-Session-Id")
		return id != "" && (len(id) > 1<<10 || strings.ContainsAny(id, " \t") || strings.ContainsFunc(id, func(c rune) bool { return c > '~' }))
	}
	for _, c := range []struct {
		row            string
		keeps, breaks  func(w http.ResponseWriter, r *http.Request, b *[]byte) bool
		brokenMentions string
	}{
		{row: "none × " + ForeignOrigin.Name,
			keeps: func(w http.ResponseWriter, r *http.Request, _ *[]byte) bool {
				if foreign(r) {
					http.Error(w, "foreign origin or host", http.StatusForbidden)
					return true
				}
				return false
			},
			// A front that lets them through: the everything fake opens a session.
			breaks: func(_ http.ResponseWriter, r *http.Request, _ *[]byte) bool {
				if foreign(r) {
					r.Header.Del("Origin")
					r.Host = ""
				}
				return false
			},
			brokenMentions: "evil.example"},
		{row: "none × " + MalformedSessionIDs.Name,
			keeps: func(w http.ResponseWriter, r *http.Request, _ *[]byte) bool {
				if malformed(r) {
					http.Error(w, "malformed session id", http.StatusBadRequest)
					return true
				}
				return false
			},
			// A front that fails on the long id with a 5xx.
			breaks: func(w http.ResponseWriter, r *http.Request, _ *[]byte) bool {
				if len(r.Header.Get("Mcp-Session-Id")) > 1<<10 {
					http.Error(w, "header too large for us", http.StatusInternalServerError)
					return true
				}
				return false
			},
			brokenMentions: "answered 500"},
	} {
		t.Run(c.row, func(t *testing.T) {
			s := byName(t, c.row)
			kv := harness.DefaultBounds()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if r := s.Judge(kv, s.Operation.Do(ctx, inFront(t, c.keeps))); !r.Pass {
				t.Errorf("a front that keeps the promise failed: %s", r.Reason)
			}
			r := s.Judge(kv, s.Operation.Do(ctx, inFront(t, c.breaks)))
			if r.Pass || !hasBreach(r, Generic, s.Promise) || !strings.Contains(r.Reason, c.brokenMentions) {
				t.Errorf("a front that breaks the promise: want [mcp] %s naming %q, got %s", s.Promise, c.brokenMentions, r.Reason)
			}
		})
	}
}

// A surface result that carries no trace code in its _meta breaks
// mcplocal's trace code promise, on the rows that succeed and on those under
// a fault alike; a target that does not claim trace codes is not held to it.
// The everything fake, served as it is, stamps none.
func TestSurfaceResultsWithoutTheirTraceCodeBreakIt(t *testing.T) {
	kv := harness.DefaultBounds()
	for _, op := range []Operation{ReadResource, GetPrompt, Complete, Elicitation, Roots, LargeAnswer} {
		for _, fault := range []string{"none", "latency"} {
			s := byName(t, fault+" × "+op.Name)
			t.Run(s.Name(), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				o := op.Do(ctx, inFront(t, nil))
				if r := s.JudgeOn(nil, kv, o); r.Pass || !hasBreach(r, Own, PromiseTraceCode) {
					t.Errorf("a result without a trace code, judged for mcplocal: want [mcplocal] %s, got %s", PromiseTraceCode, r.Reason)
				}
				if r := s.JudgeOn(bare{}, kv, o); !r.Pass {
					t.Errorf("a target not claiming trace codes was held to one: %s", r.Reason)
				}
			})
		}
	}
}
