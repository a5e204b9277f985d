package llm

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestReplyIsDeterministicAndQuotesThePrompt(t *testing.T) {
	a, b := Reply("what is a quaternion?"), Reply("what is a quaternion?")
	if a != b {
		t.Fatalf("Reply differs for the same prompt: %q, %q", a, b)
	}
	if Reply("what is a quaternion!") == a {
		t.Fatal("Reply is the same for different prompts")
	}
	if !strings.HasPrefix(a, "Summary ") || !strings.HasSuffix(a, ": what is a quaternion?") || len(a) != len("Summary 12345678: what is a quaternion?") {
		t.Fatalf("Reply = %q", a)
	}
	long := Reply("one two three four five six seven eight nine ten")
	if !strings.HasSuffix(long, ": one two three four five six seven eight") {
		t.Fatalf("Reply of a long prompt = %q, want its first eight words", long)
	}
	if got := Reply("   "); strings.Contains(got, ":") {
		t.Fatalf("Reply of a blank prompt = %q, want no quote", got)
	}
}

func TestChunksKeepTheTextAndSplitIt(t *testing.T) {
	for text, want := range map[string][]string{
		"":                nil,
		"a":               {"a"},
		"ab":              {"a", "b"},
		"word":            {"wo", "rd"},
		"héllo wörld  ok": {"héllo", " wörld", "  ok"},
		" lead":           {" l", "ead"},
	} {
		got := chunks(text)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("chunks(%q) = %q, want %q", text, got, want)
		}
		if strings.Join(got, "") != text {
			t.Errorf("chunks(%q) lost text: %q", text, got)
		}
	}
}

func TestStreamCutsAfterAboutHalfOfTheText(t *testing.T) {
	for _, d := range []dialect{anthropicDialect{}, openAIDialect{}} {
		st := d.stream(chat{Model: "m", Prompt: "p"}, "1", "a b c d e f g h i j")
		if st.head <= 0 || st.cut <= st.head || st.cut >= len(st.frames) {
			t.Fatalf("%T: head %d, cut %d of %d frames", d, st.head, st.cut, len(st.frames))
		}
		sent := string(joinFrames(st.frames[:st.cut]))
		if !strings.Contains(sent, " e") || strings.Contains(sent, " f") {
			t.Errorf("%T: the part before the cut should end with the fifth of ten words:\n%s", d, sent)
		}
	}
}

func joinFrames(frames [][]byte) []byte {
	var out []byte
	for _, f := range frames {
		out = append(out, f...)
	}
	return out
}

func TestDisplayName(t *testing.T) {
	for id, want := range map[string]string{
		"claude-opus-4-5":           "Claude Opus 4.5",
		"claude-opus-5":             "Claude Opus 5",
		"claude-haiku-4-5-20251001": "Claude Haiku 4.5 20251001",
		"gpt-4.1-mini":              "Gpt 4.1 Mini",
	} {
		if got := displayName(id); got != want {
			t.Errorf("displayName(%q) = %q, want %q", id, got, want)
		}
	}
}

func TestParseStepRoundTrips(t *testing.T) {
	for _, s := range []string{"ok", "slow:250ms", "rate_limited:2s", "hang_before_headers"} {
		step, err := ParseStep(s)
		if err != nil {
			t.Fatalf("ParseStep(%q): %v", s, err)
		}
		if step.String() != s {
			t.Errorf("ParseStep(%q).String() = %q", s, step.String())
		}
	}
	for _, s := range []string{"", "explode", "slow:soon", "slow:-1s"} {
		if _, err := ParseStep(s); err == nil {
			t.Errorf("ParseStep(%q) succeeded", s)
		}
	}
}

func TestStepJSON(t *testing.T) {
	step := Step{Kind: Slow, Delay: 1500 * time.Millisecond, Text: "hi"}
	data, err := json.Marshal(step)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != `{"kind":"slow","delay":"1.5s","text":"hi"}` {
		t.Fatalf("Marshal = %s", data)
	}
	var back Step
	if err := json.Unmarshal(data, &back); err != nil || back != step {
		t.Fatalf("Unmarshal = %+v, %v", back, err)
	}
	if err := json.Unmarshal([]byte(`{"kind":"nope"}`), &back); err == nil {
		t.Fatal("an unknown kind was accepted")
	}
}

func TestParsePlanForms(t *testing.T) {
	steps := Plan{Steps: []Step{Do(ServerError), Do(OK)}}
	for body, want := range map[string]Plan{
		`["server_error","ok"]`:                    steps,
		`{"steps":[{"kind":"server_error"},"ok"]}`: steps,
		`"empty"`:          {Steps: []Step{Do(Empty)}},
		`{"kind":"reset"}`: {Steps: []Step{Do(Reset)}},
		`{"random":{"seed":1,"choices":[{"step":"ok","weight":1}]}}`: {Random: &Random{Seed: 1, Choices: []Choice{{Step: Do(OK), Weight: 1}}}},
	} {
		got, err := ParsePlan([]byte(body))
		if err != nil {
			t.Errorf("ParsePlan(%s): %v", body, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("ParsePlan(%s) = %+v, want %+v", body, got, want)
		}
	}
	if _, err := ParsePlan([]byte(`{"steps":["ok"],"random":{"seed":1,"choices":[{"step":"ok","weight":1}]}}`)); err == nil {
		t.Error("a plan with both forms was accepted")
	}
}

func TestScriptDraws(t *testing.T) {
	seq := newScript(Plan{Steps: []Step{Do(ServerError), Do(OK)}})
	var got []Kind
	for range 4 {
		got = append(got, seq.draw().Kind)
	}
	if want := []Kind{ServerError, OK, OK, OK}; !reflect.DeepEqual(got, want) {
		t.Errorf("sequence draws %v, want %v", got, want)
	}

	plan := Plan{Random: &Random{Seed: 9, Choices: []Choice{{Step: Do(OK), Weight: 3}, {Step: Do(Reset), Weight: 1}, {Step: Do(Empty), Weight: 0}}}}
	a, b := newScript(plan), newScript(plan)
	counts := map[Kind]int{}
	for i := range 2000 {
		x, y := a.draw(), b.draw()
		if x != y {
			t.Fatalf("draw %d differs for the same seed: %v, %v", i, x, y)
		}
		counts[x.Kind]++
	}
	if counts[Empty] != 0 {
		t.Errorf("a zero-weight choice was drawn %d times", counts[Empty])
	}
	if ok := counts[OK]; ok < 1350 || ok > 1650 {
		t.Errorf("OK drawn %d of 2000 times, want about 1500", ok)
	}
}

func TestCatalogueCoversEveryKindOnce(t *testing.T) {
	seen := map[Kind]bool{}
	for _, info := range Catalogue() {
		if seen[info.Kind] || info.Summary == "" {
			t.Errorf("catalogue entry %+v repeated or undescribed", info)
		}
		seen[info.Kind] = true
	}
	for _, k := range []Kind{OK, Slow, HangBeforeHeaders, HangAfterHeaders, StallMidStream, TruncatedStream, StreamError,
		NotFound, BadRequest, Unauthorized, EchoCredentials, AnswerEcho, RateLimited, ServerError, Overloaded, Empty, Malformed, Reset} {
		if !seen[k] {
			t.Errorf("%s missing from the catalogue", k)
		}
	}
	if len(seen) != 18 {
		t.Errorf("catalogue has %d kinds, want 18", len(seen))
	}
}

func TestAnswerEchoCutsEachCredentialAcrossTwoChunks(t *testing.T) {
	h := http.Header{}
	h.Set("Authorization", "Bearer sk-abcdef123456")
	h.Set("X-Api-Key", "key-0123456789")
	text := echoedAnswer(h)
	parts := chunks(text)
	whole := strings.Join(parts, "")
	if strings.Contains(whole, cutMark) || !strings.Contains(whole, `Authorization="Bearer sk-abcdef123456"`) || !strings.Contains(whole, `x-api-key="key-0123456789"`) {
		t.Fatalf("the chunks do not make the echoed answer: %q", whole)
	}
	for _, secret := range []string{"sk-abcdef123456", "key-0123456789"} {
		for _, p := range parts {
			if strings.Contains(p, secret) {
				t.Errorf("chunk %q holds %s whole: want it cut across two chunks", p, secret)
			}
		}
	}
}
