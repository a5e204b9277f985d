package smoke_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/smoke"
)

// The smoke checks as specs, in order, on one client: fewer than 20
// requests in all, read-only tools only, no faults. Every check runs and
// reports, whatever the ones before it found.
var _ = Describe("A running proxy", Label("smoke"), Ordered, ContinueOnFailure, func() {
	var client *smoke.Client

	BeforeAll(func() {
		Expect(cfg.Validate()).To(Succeed())
		client = smoke.NewClient(cfg)
		DeferCleanup(func(ctx context.Context) {
			Expect(client.Close(ctx)).To(Succeed())
			AddReportEntry("requests", client.Requests())
			Expect(client.Requests()).To(BeNumerically("<", 20), "a smoke run stays under 20 requests")
		})
	})

	for _, check := range smoke.Checks() {
		It(check.Name, func(ctx SpecContext) {
			if check.Skip != nil {
				if why := check.Skip(cfg); why != "" {
					Skip(why)
				}
			}
			Expect(check.Do(ctx, client)).To(Succeed())
		}, SpecTimeout(checkTimeout))
	}
})

// The checks must be able to fail: against a proxy that accepts every
// request and never answers, each fails within its budget, with a report
// that says so.
var _ = Describe("The smoke checks", Label("smoke-self-test"), func() {
	It("fail with a clear report against a proxy that never answers", func(ctx SpecContext) {
		release := make(chan struct{})
		hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}))
		DeferCleanup(hang.Close)
		DeferCleanup(func() { close(release) })

		const budget = 300 * time.Millisecond
		start := time.Now()
		report := smoke.Run(ctx, smoke.Config{URL: hang.URL, Project: "docmost", Budget: budget,
			ReadTool: "docmost_search", ReadArgs: map[string]any{"query": "x"},
			LargeTool: "docmost_search", LargeArgs: map[string]any{"query": "y"}})
		took := time.Since(start)
		text := report.String()
		AddReportEntry("report", text)

		Expect(report.Failed()).To(HaveLen(len(report.Results)), "every check must fail against a hanging proxy:\n%s", text)
		Expect(report.Requests).To(BeNumerically("<", 20))
		// Each request waited its budget at most: the run is bounded.
		Expect(took).To(BeNumerically("<", time.Duration(report.Requests+1)*(budget+200*time.Millisecond)), text)
		for _, check := range smoke.Checks() {
			Expect(text).To(ContainSubstring("FAIL  " + check.Name))
		}
		Expect(text).To(ContainSubstring("no answer within the 300ms budget"))
		Expect(strings.Count(text, "FAIL")).To(Equal(len(report.Results)))
	}, SpecTimeout(30*time.Second))
})
