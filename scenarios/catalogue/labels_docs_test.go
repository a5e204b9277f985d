package catalogue

import (
	"os"
	"strings"
	"testing"
)

// TestScenariosDocNamesEveryLabel keeps docs/scenarios.md's list of the
// catalogue's families in step with Labels: a label a reader cannot find
// there is one nobody will select.
func TestScenariosDocNamesEveryLabel(t *testing.T) {
	b, err := os.ReadFile("../../docs/scenarios.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "**Catalogue families**")
	if start < 0 {
		t.Fatal("docs/scenarios.md has no **Catalogue families** list")
	}
	end := strings.Index(doc[start:], "\n\n")
	if end < 0 {
		end = len(doc) - start
	}
	list := doc[start : start+end]
	for _, l := range Labels {
		if !strings.Contains(list, "`"+l+"`") {
			t.Errorf("docs/scenarios.md's catalogue families do not name `%s`", l)
		}
	}
}
