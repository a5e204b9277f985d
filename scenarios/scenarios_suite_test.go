package scenarios_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestScenarios(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Scenarios")
}

// specTimeout bounds every spec that sets no tighter SpecTimeout of its own:
// far past what any of them takes on two shared cores under -race, so only a
// spec that hangs meets it (every It has a SpecTimeout; a harness test checks).
// longFirst schedules the specs that each run a whole catalogue against a
// foreign proxy (two to four minutes) before the rest: in random order one
// of them could start last and leave the other processes idle to its end.
var longFirst = SpecPriority(1)

const specTimeout = 2 * time.Minute
