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
		ms, _ := strconv.Atoi(r[2])
		if r[1] != k.Env || time.Duration(ms)*time.Millisecond != k.Default || r[3] != k.Bounds {
			t.Errorf("row %d: docs say %s=%sms (%s), code says %s=%v (%s)", i+1, r[1], r[2], r[3], k.Env, k.Default, k.Bounds)
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
	seen := map[*time.Duration]string{}
	for _, k := range Table {
		p := k.field(&v)
		if other, dup := seen[p]; dup {
			t.Errorf("%s and %s share a field", k.Env, other)
		}
		seen[p] = k.Env
		if got, ok := v.Get(k.Env); !ok || got != k.Default {
			t.Errorf("Get(%s) = %v, %v", k.Env, got, ok)
		}
	}
}
