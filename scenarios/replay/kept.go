package replay

import (
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/bundle"
)

// Kept is a replay kept as a scenario: a recording pinned to the verdict it
// showed when it was kept. A recording kept after its fix pins `fixed`, so
// the scenario fails the day the hang, the lost notice or the unanswered
// request comes back; one kept on the build that made it pins `same`, so a
// change of shape is noticed. `mcpchaos replay FILE --as-scenario OUT`
// writes one; the catalogue runs every kept file it embeds.
type Kept struct {
	Format int `json:"format"`
	// Name names the scenario: lower-case letters, digits and dashes.
	Name string `json:"name"`
	// Expect is the pinned verdict: same or fixed, never changed.
	Expect Verdict `json:"expect"`
	// Compress is the time compression the replay ran with (>= 1).
	Compress int `json:"compress"`
	// ClientTimeoutMs is how long the replay's client waited.
	ClientTimeoutMs int64         `json:"clientTimeoutMs"`
	Bundle          bundle.Bundle `json:"bundle"`
}

// KeptFormat is the version of the kept-scenario document.
const KeptFormat = 1

var keptName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// Keep pins a replay's verdict: it refuses a `changed` verdict, which says
// the replay differs from the recording in a way that is not a fix, and
// pinning it would keep whatever the build of the day does.
func Keep(name string, b bundle.Bundle, p Plan, v Verdict) (Kept, error) {
	if v != Same && v != Fixed {
		return Kept{}, fmt.Errorf("a kept scenario pins a verdict of same or fixed; this replay's is %s: look at its differences first", v)
	}
	k := Kept{Format: KeptFormat, Name: name, Expect: v, Compress: p.Compress, ClientTimeoutMs: p.ClientTimeout.Milliseconds(), Bundle: b}
	return k, k.check()
}

func (k Kept) check() error {
	switch {
	case k.Format != KeptFormat:
		return fmt.Errorf("kept scenario format %d, want %d", k.Format, KeptFormat)
	case !keptName.MatchString(k.Name):
		return fmt.Errorf("kept scenario name %q: want lower-case letters, digits and dashes, at most 63", k.Name)
	case k.Expect != Same && k.Expect != Fixed:
		return fmt.Errorf("kept scenario %s expects %q: want same or fixed", k.Name, k.Expect)
	case k.Compress < 1:
		return fmt.Errorf("kept scenario %s: compress %d, want >= 1", k.Name, k.Compress)
	case k.ClientTimeoutMs < 1:
		return fmt.Errorf("kept scenario %s: clientTimeoutMs %d, want >= 1", k.Name, k.ClientTimeoutMs)
	case k.Bundle.Format != bundle.Format:
		return fmt.Errorf("kept scenario %s: its bundle's format is %d, want %d", k.Name, k.Bundle.Format, bundle.Format)
	case k.Bundle.Trace == "" || len(k.Bundle.Rows) == 0:
		return fmt.Errorf("kept scenario %s: its bundle holds no recorded rows", k.Name)
	}
	return nil
}

// Plan is the kept recording's plan, with the pinned compression and
// client timeout.
func (k Kept) Plan() (Plan, error) {
	p, err := PlanOf(k.Bundle, k.Compress)
	if err != nil {
		return p, fmt.Errorf("kept scenario %s: %w", k.Name, err)
	}
	p.ClientTimeout = time.Duration(k.ClientTimeoutMs) * time.Millisecond
	return p, nil
}

// Judge compares a replay of k with its recording and says nil when it
// shows the pinned verdict, or what it showed instead, differences named.
func (k Kept) Judge(replayed []audit.Row) error {
	diffs := Compare(k.Bundle.Rows, replayed, k.Compress, DefaultTolerance)
	if v := Judge(k.Bundle.Rows, replayed, diffs); v != k.Expect {
		return fmt.Errorf("kept replay %s (trace %s) expects %s, the replay is %s: %v", k.Name, k.Bundle.Trace, k.Expect, v, diffs)
	}
	return nil
}

// MarshalKept writes k as an indented JSON document.
func MarshalKept(k Kept) ([]byte, error) {
	if err := k.check(); err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(k, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// UnmarshalKept reads a kept scenario and checks it whole: its fields, its
// bundle, and that a plan can be made of it.
func UnmarshalKept(data []byte) (Kept, error) {
	var k Kept
	if err := json.Unmarshal(data, &k); err != nil {
		return Kept{}, fmt.Errorf("not a kept scenario: %v", err)
	}
	if err := k.check(); err != nil {
		return Kept{}, err
	}
	if _, err := k.Plan(); err != nil {
		return Kept{}, err
	}
	return k, nil
}

// IsKept says whether data looks like a kept scenario rather than a bare
// bundle: it holds a "bundle" object.
func IsKept(data []byte) bool {
	var probe struct {
		Bundle json.RawMessage `json:"bundle"`
	}
	return json.Unmarshal(data, &probe) == nil && len(probe.Bundle) > 0
}
