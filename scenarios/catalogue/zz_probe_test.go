package catalogue

import (
	"fmt"
	"testing"

	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

func TestZZProbe(t *testing.T) {
	spec, err := harness.ParseForeign([]byte("name: plain\ncommand: [x]\nendpoint: /mcp\ntoolName: \"{{.Tool}}\"\ncapabilities: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	tg := spec.Target(nil)
	n := 0
	for _, s := range All() {
		why := s.NotApplicable(tg)
		if why != "" {
			n++
		}
		fmt.Printf("%-70s | %s\n", s.Name(), why)
	}
	fmt.Println("total", len(All()), "na", n)
}
