package bundle

import (
	"encoding/json"
	"fmt"
	"regexp"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/redact"
)

// Format is the version of the bundle's JSON layout.
const Format = 1

// Context is what the proxy itself contributes to a bundle (GET
// /api/v1/replay/context, admin only): everything but the rows.
type Context struct {
	// Version is the proxy's build: module version and VCS revision.
	Version string `json:"version"`
	// Knobs are the values in force, by environment variable, in the knob's
	// unit (milliseconds, count or bytes).
	Knobs map[string]int64 `json:"knobs"`
	// Config is the config in force as YAML, secrets removed (Scrub).
	Config string `json:"config"`
	// Private says whether Config keeps private texts.
	Private bool `json:"private"`
}

// NewContext builds the proxy's part of a bundle.
func NewContext(c *config.Config, kv knobs.Values, o Options) (Context, error) {
	sc, err := Scrub(c, o)
	if err != nil {
		return Context{}, err
	}
	y, err := config.Marshal(sc)
	if err != nil {
		return Context{}, fmt.Errorf("bundle: marshal the config: %w", err)
	}
	k := make(map[string]int64, len(knobs.Table))
	for _, kn := range knobs.Table {
		k[kn.Env] = kn.Raw(kv)
	}
	return Context{Version: Version(), Knobs: k, Config: string(y), Private: o.Private}, nil
}

// Version names the running build: the main module's version and, when the
// build recorded it, its VCS revision (with "+dirty" for local changes).
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Path + " " + bi.Main.Version
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev != "" {
		v += " " + rev + dirty
	}
	return v
}

// Bundle is everything a replay of one request needs.
type Bundle struct {
	Format  int       `json:"format"`
	Trace   string    `json:"trace"`
	Created time.Time `json:"created"`
	Context
	// Rows are the request's audit rows in start order, their texts
	// redacted once more.
	Rows []audit.Row `json:"rows"`
	// Answers are the shapes of what each upstream call and LLM attempt
	// answered, in start order.
	Answers []Answer `json:"answers"`
}

// Answer is the shape of one answer the request waited for: who answered,
// after how long, with which outcome, how big, of which content kinds, and
// the error text.
type Answer struct {
	SpanID   string     `json:"spanId"`
	Kind     audit.Kind `json:"kind"`
	Server   string     `json:"server,omitempty"`
	Tool     string     `json:"tool,omitempty"`
	Stage    string     `json:"stage,omitempty"`
	Status   string     `json:"status"`
	Duration float64    `json:"durationMs"`
	// Bytes is the answer's size when its row says it (an upstream call's
	// answer size, or "N bytes" in its text); -1 when it does not.
	Bytes int `json:"bytes"`
	// Content is an upstream call's answer's content kinds, as its row
	// keeps them (audit.Shape: "text:2,image:1,structured,isError"); never
	// the content.
	Content string `json:"content,omitempty"`
	// Provider and Model name an LLM attempt's target.
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	// Error is the error text of an answer that did not end ok.
	Error          string `json:"error,omitempty"`
	DegradedReason string `json:"degradedReason,omitempty"`
}

var (
	bytesRE    = regexp.MustCompile(`\b(\d+) bytes\b`)
	providerRE = regexp.MustCompile(`\bprovider=(\S+?)[;,]?(\s|$)`)
	modelRE    = regexp.MustCompile(`\bmodel=(\S+?)[;,]?(\s|$)`)
	attemptRE  = regexp.MustCompile(`^(\S+) \(([^)]*)\): `)
)

// urlRE finds URLs inside a text: scheme://, then up to white space or a quote.
var urlRE = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>]+`)

// Text removes a text's secrets more strictly than the proxy's own
// redaction: every URL loses its whole userinfo (a user name alone may be a
// token) and its query string; keyword secrets (password=, token=, ...)
// are masked.
func Text(s string) string {
	s = urlRE.ReplaceAllStringFunc(s, func(u string) string {
		// A URL quoted in an error text may end with the error's ':'.
		trail := ""
		for len(u) > 0 && strings.ContainsRune(":,;.)", rune(u[len(u)-1])) {
			trail = u[len(u)-1:] + trail
			u = u[:len(u)-1]
		}
		return scrubURL(u) + trail
	})
	return redact.Text(s)
}

// New assembles the bundle of trace from its rows and the proxy's context.
func New(trace string, rows []audit.Row, ctx Context, now time.Time) Bundle {
	rs := make([]audit.Row, len(rows))
	for i, r := range rows {
		r.Detail = Text(r.Detail)
		r.DegradedReason = Text(r.DegradedReason)
		rs[i] = r
	}
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Start.Before(rs[j].Start) })
	b := Bundle{Format: Format, Trace: trace, Created: now.UTC(), Context: ctx, Rows: rs, Answers: []Answer{}}
	for _, r := range rs {
		switch r.Kind {
		case audit.KindUpstreamCall, audit.KindLLMAttempt, audit.KindStageExecution:
		default:
			continue
		}
		a := Answer{SpanID: r.SpanID, Kind: r.Kind, Server: r.Server, Tool: r.Tool, Stage: r.Stage, Status: r.Status,
			Duration: float64(r.Duration) / float64(time.Millisecond), Bytes: -1, Content: r.Content, DegradedReason: r.DegradedReason}
		if m := bytesRE.FindStringSubmatch(r.Detail); m != nil {
			a.Bytes, _ = strconv.Atoi(m[1])
		}
		if r.Bytes > 0 {
			a.Bytes = int(r.Bytes)
		}
		if r.Kind == audit.KindLLMAttempt {
			// The proxy writes "provider (model): outcome after D: detail",
			// with the provider in Server; "provider=P model=M" is read too.
			a.Provider = r.Server
			if m := attemptRE.FindStringSubmatch(r.Detail); m != nil {
				a.Provider, a.Model = m[1], m[2]
			}
			if m := providerRE.FindStringSubmatch(r.Detail); m != nil && a.Provider == "" {
				a.Provider = m[1]
			}
			if m := modelRE.FindStringSubmatch(r.Detail); m != nil && a.Model == "" {
				a.Model = m[1]
			}
		}
		if r.Status != audit.StatusOK {
			a.Error = r.Detail
		}
		b.Answers = append(b.Answers, a)
	}
	return b
}

// Marshal writes b as indented JSON.
func Marshal(b Bundle) ([]byte, error) {
	out, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// Unmarshal reads a bundle and checks its format.
func Unmarshal(data []byte) (Bundle, error) {
	var b Bundle
	if err := json.Unmarshal(data, &b); err != nil {
		return Bundle{}, fmt.Errorf("not a replay bundle: %v", err)
	}
	if b.Format != Format {
		return Bundle{}, fmt.Errorf("replay bundle format %d, want %d", b.Format, Format)
	}
	return b, nil
}
