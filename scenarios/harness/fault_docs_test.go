package harness

import (
	"os"
	"strings"
	"testing"

	fakellm "github.com/mcpchaos/mcpchaos/fakes/llm"
)

// TestDocsListEveryFault keeps docs/faults.md in step with the catalogue:
// a section per fault, a row per LLM behaviour.
func TestDocsListEveryFault(t *testing.T) {
	b, err := os.ReadFile("../../docs/faults.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.ReplaceAll(string(b), "&lt;", "<")
	doc = strings.ReplaceAll(doc, "&gt;", ">")
	for _, f := range Faults() {
		section := f.Name
		if f.Family != "" {
			section = f.Family
		}
		if !strings.Contains(doc, "\n## "+section+"\n") {
			t.Errorf("docs/faults.md has no section for fault %q", section)
		}
	}
	for _, k := range fakellm.Catalogue() {
		if !strings.Contains(doc, "\n| "+string(k.Kind)+" |") {
			t.Errorf("docs/faults.md has no row for LLM behaviour %q", k.Kind)
		}
	}
}
