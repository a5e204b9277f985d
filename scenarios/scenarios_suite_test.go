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
const specTimeout = 2 * time.Minute
