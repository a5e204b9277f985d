package knobs

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDocsMatchTable keeps docs/knobs.md and Table in step: same knobs, same
// order, same defaults, same description.
func TestDocsMatchTable(t *testing.T) {
	b, err := os.ReadFile("../../docs/knobs.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^\| (MCPCTL_[A-Z_]+) \| (\d+) \| (.+?) \|$`)
	rows := row.FindAllStringSubmatch(string(b), -1)
	if len(rows) != len(Table) {
		t.Fatalf("docs/knobs.md has %d knob rows, the table has %d", len(rows), len(Table))
	}
	for i, r := range rows {
		k := Table[i]
		n, _ := strconv.ParseInt(r[2], 10, 64)
		if r[1] != k.Env || n != k.DefaultRaw() || r[3] != k.Bounds {
			t.Errorf("row %d: docs say %s=%s (%s), code says %s=%d %s (%s)", i+1, r[1], r[2], r[3], k.Env, k.DefaultRaw(), k.Unit, k.Bounds)
		}
	}
}

func TestLoad(t *testing.T) {
	env := map[string]string{"MCPCTL_LLM_CALL_BUDGET_MS": "300", "MCPCTL_LLM_PROVIDER_TIMEOUT_MS": " 200 "}
	v, err := Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if v.LLMCallBudget != 300*time.Millisecond || v.LLMProviderTimeout != 200*time.Millisecond {
		t.Fatalf("overrides not applied: %+v", v)
	}
	if v.StageLLMBudget != 30*time.Second {
		t.Fatalf("unset knob lost its default: %v", v.StageLLMBudget)
	}
}

func TestLoadRejectsMalformedValuesNamingTheVariable(t *testing.T) {
	for _, bad := range []string{"abc", "-5", "0", "1.5", "20s"} {
		_, err := Load(func(k string) string {
			if k == "MCPCTL_GATE_LLM_TIMEOUT_MS" {
				return bad
			}
			return ""
		})
		if err == nil || !strings.Contains(err.Error(), "MCPCTL_GATE_LLM_TIMEOUT_MS") {
			t.Errorf("value %q: err = %v, want an error naming the variable", bad, err)
		}
	}
}

func TestLoadRejectsContradictions(t *testing.T) {
	_, err := Load(func(k string) string {
		if k == "MCPCTL_LLM_PROVIDER_TIMEOUT_MS" {
			return "30000"
		}
		return ""
	})
	if err == nil || !strings.Contains(err.Error(), "MCPCTL_LLM_CALL_BUDGET_MS") {
		t.Fatalf("a provider timeout above the call budget was accepted: %v", err)
	}
}

func TestEveryKnobHasAField(t *testing.T) {
	v := Defaults()
	seen := map[any]string{}
	for _, k := range Table {
		var p any
		if k.Unit == Millis {
			p = k.field(&v)
			if got, ok := v.Get(k.Env); !ok || got != k.Default {
				t.Errorf("Get(%s) = %v, %v", k.Env, got, ok)
			}
		} else {
			p = k.count(&v)
			if _, ok := v.Get(k.Env); ok {
				t.Errorf("Get(%s) answered for a knob that is not a duration", k.Env)
			}
		}
		if other, dup := seen[p]; dup {
			t.Errorf("%s and %s share a field", k.Env, other)
		}
		seen[p] = k.Env
		if got := k.Raw(v); got != k.DefaultRaw() {
			t.Errorf("Raw(%s) = %d, want the default %d", k.Env, got, k.DefaultRaw())
		}
	}
}

// TestEveryKnobNamesItsUnit: the variable's suffix says what its number counts.
func TestEveryKnobNamesItsUnit(t *testing.T) {
	suffix := map[Unit]string{Millis: "_MS", Count: "_MAX", Bytes: "_BYTES"}
	for _, k := range Table {
		if !strings.HasSuffix(k.Env, suffix[k.Unit]) {
			t.Errorf("%s counts %s: its name must end in %s", k.Env, k.Unit, suffix[k.Unit])
		}
	}
}

func TestCountKnobsLoadAndRoundTrip(t *testing.T) {
	v, err := Load(func(k string) string {
		if k == "MCPCTL_MAX_BODY_BYTES" {
			return "4096"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	if v.MaxBodyBytes != 4096 {
		t.Fatalf("MaxBodyBytes = %d, want 4096", v.MaxBodyBytes)
	}
	_, err = Load(func(k string) string {
		if k == "MCPCTL_MAX_BODY_BYTES" {
			return "8MB"
		}
		return ""
	})
	if err == nil || !strings.Contains(err.Error(), "bytes") {
		t.Fatalf("a malformed byte count was accepted or not explained: %v", err)
	}
	env := map[string]string{}
	for _, kv := range v.Environ() {
		k, val, _ := strings.Cut(kv, "=")
		env[k] = val
	}
	back, err := Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if back != v {
		t.Fatalf("Environ then Load changed the values:\n%+v\n%+v", v, back)
	}
}

// TestAZeroOKKnobTakesZeroAndNothingBelow: 0 turns an optional wait off; a
// negative number is still an error naming the variable, and every other
// knob still refuses 0.
func TestAZeroOKKnobTakesZeroAndNothingBelow(t *testing.T) {
	env := map[string]string{"MCPCTL_STOP_DRAIN_MS": "0"}
	v, err := Load(func(k string) string { return env[k] })
	if err != nil || v.StopDrain != 0 {
		t.Fatalf("MCPCTL_STOP_DRAIN_MS=0: %v, %v", v.StopDrain, err)
	}
	env["MCPCTL_STOP_DRAIN_MS"] = "250"
	if v, err = Load(func(k string) string { return env[k] }); err != nil || v.StopDrain != 250*time.Millisecond {
		t.Fatalf("MCPCTL_STOP_DRAIN_MS=250: %v, %v", v.StopDrain, err)
	}
	env["MCPCTL_STOP_DRAIN_MS"] = "-1"
	if _, err = Load(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "MCPCTL_STOP_DRAIN_MS") {
		t.Fatalf("MCPCTL_STOP_DRAIN_MS=-1 accepted or not named: %v", err)
	}
	for _, k := range Table {
		if k.ZeroOK {
			if k.DefaultRaw() != 0 {
				t.Errorf("%s: a knob whose 0 means off defaults to off, not %d", k.Env, k.DefaultRaw())
			}
			continue
		}
		if _, err := Load(func(e string) string {
			if e == k.Env {
				return "0"
			}
			return ""
		}); err == nil {
			t.Errorf("%s=0 accepted: only an optional wait may be 0", k.Env)
		}
	}
}
