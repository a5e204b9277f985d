package catalogue

import (
	"fmt"
	"strings"

	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// hairpinShape is how mcplocal names the ingress-hairpin's answer.
var hairpinShape = "upstream answered 403 text/plain `" + harness.HairpinBody + "`, not JSON-RPC: something between mcplocal and the server answered"

// shapeNamed: the call behind an L7 proxy's bare 403 is answered with a
// readable isError result that names the answer by its shape (status, type,
// first bytes), and the request's audit rows carry the same in detail.
func shapeNamed(o Observation) error {
	if err := answeredWithRecovery(o); err != nil {
		return err
	}
	if !strings.Contains(o.Text, hairpinShape) {
		return fmt.Errorf("isError text does not name the answer's shape (%q): %s", hairpinShape, excerpt(o.Text))
	}
	for _, kind := range []string{mcplocal.KindToolCall, mcplocal.KindUpstreamCall} {
		found := false
		for _, r := range o.Spans {
			if r.Kind == kind && strings.Contains(r.Detail, hairpinShape) {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("no %s audit row of trace %s names the answer's shape in its detail", kind, o.Trace)
		}
	}
	return nil
}
