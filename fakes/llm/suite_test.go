package llm_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestLLM(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(3 * time.Second)
	SetDefaultEventuallyPollingInterval(5 * time.Millisecond)
	RunSpecs(t, "fakes/llm")
}

// specTimeout bounds every spec that sets no tighter SpecTimeout of its own:
// far past what any fake's exchange takes, so only a spec that hangs meets it
// (every It has a SpecTimeout; scenarios/harness checks).
const specTimeout = 30 * time.Second
