package canary

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/mcpchaos/mcpchaos/internal/testtree"
)

// Ginkgo's JSON report becomes one record per spec that ran; skipped specs
// are left out, and a failed BeforeSuite (which skips everything) is a
// failed record of its own, never silence.
func TestGinkgoRecords(t *testing.T) {
	reports := []types.Report{{SpecReports: types.SpecReports{
		{LeafNodeType: types.NodeTypeIt, ContainerHierarchyTexts: []string{"Stale sessions"}, LeafNodeText: "recreates the session for the mark3labs client too",
			State: types.SpecStatePassed, RunTime: 61 * time.Millisecond},
		{LeafNodeType: types.NodeTypeIt, ContainerHierarchyTexts: []string{"Stale sessions"}, LeafNodeText: "answers unknown ids with a JSON-RPC 404 in strict mode",
			State: types.SpecStateFailed, RunTime: 28 * time.Millisecond, Failure: types.Failure{Message: "body is JSON: session not found"}},
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "skipped", State: types.SpecStateSkipped},
		{LeafNodeType: types.NodeTypeSynchronizedBeforeSuite, State: types.SpecStatePassed},
	}}}
	b, err := json.Marshal(reports)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := GinkgoRecords(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("records %+v, want the two specs that ran", recs)
	}
	if recs[0].Name != "Stale sessions recreates the session for the mark3labs client too" || recs[0].Verdict != "PASS" || recs[0].Latency != 61*time.Millisecond || recs[0].Source != "ginkgo" {
		t.Errorf("passed spec: %+v", recs[0])
	}
	if recs[1].Verdict != "FAIL" || recs[1].Reason != "failed: body is JSON: session not found" {
		t.Errorf("failed spec: %+v", recs[1])
	}

	reports[0].SpecReports = types.SpecReports{{LeafNodeType: types.NodeTypeSynchronizedBeforeSuite, State: types.SpecStateFailed, Failure: types.Failure{Message: "build failed"}}}
	b, _ = json.Marshal(reports)
	recs, err = GinkgoRecords(b)
	if err != nil || len(recs) != 1 || recs[0].Verdict != "FAIL" {
		t.Errorf("a failed BeforeSuite: %+v %v", recs, err)
	}
	if _, err := GinkgoRecords([]byte("not json")); err == nil {
		t.Error("a broken report must be an error")
	}
}

func TestSpecFilterAlwaysLeavesOutOtherTargets(t *testing.T) {
	if got, want := SpecFilter("sessions"), "(sessions) && !container && !foreign"; got != want {
		t.Errorf("SpecFilter = %q, want %q", got, want)
	}
}

// The canary runs every Ginkgo suite under scenarios/, so a suite that lands
// later (the conformance run) is in the next canary run by itself.
func TestGinkgoSuitesFindsEverySuiteUnderScenarios(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, body string) { testtree.Write(t, dir, map[string]string{rel: body}) }
	write("scenarios/suite_test.go", "package s\nimport . \"github.com/onsi/ginkgo/v2\"\nfunc TestS(t *testing.T) { RunSpecs(t, \"Scenarios\") }\n")
	write("scenarios/conformance/conformance_suite_test.go", "package c\nimport (\n\t\"testing\"\n\n\t. \"github.com/onsi/ginkgo/v2\"\n)\nfunc TestC(t *testing.T) { RunSpecs(t, \"Conformance\") }\n")
	// A test that only mentions RunSpecs (this very file does, in its
	// fixtures) is no suite: Ginkgo would run its plain tests on each side.
	write("scenarios/canary/ginkgo_test.go", "package canary\nimport \"testing\"\nfunc TestG(t *testing.T) { _ = \"RunSpecs(t, x)\" }\n")
	write("scenarios/report/report_test.go", "package r\nfunc TestR(t *testing.T) {}\n")
	write("proxy/x/x_test.go", "package x\nfunc TestX(t *testing.T) { RunSpecs(t, \"X\") }\n")
	// Fixtures, installed npm packages and hidden dirs hold no suite of
	// the tree's own.
	for _, d := range []string{"scenarios/testdata/fix", "scenarios/tools/node_modules/pkg", "scenarios/.cache/x"} {
		write(d+"/s_test.go", "package s\nimport . \"github.com/onsi/ginkgo/v2\"\nfunc TestS(t *testing.T) { RunSpecs(t, \"S\") }\n")
	}
	got, err := ginkgoSuites(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"./scenarios", "./scenarios/conformance"}; !reflect.DeepEqual(got, want) {
		t.Errorf("suites %v, want %v", got, want)
	}
}

// Specs of another suite than ./scenarios carry its name, so two suites'
// specs never share a row.
func TestGinkgoRecordsNameOtherSuites(t *testing.T) {
	b, _ := json.Marshal([]types.Report{{SuiteDescription: "Conformance", SuiteSucceeded: true, SpecReports: types.SpecReports{
		{LeafNodeType: types.NodeTypeIt, ContainerHierarchyTexts: []string{"The official MCP conformance suite"}, LeafNodeText: "passes through mcplocal", State: types.SpecStatePassed},
	}}})
	recs, err := GinkgoRecords(b)
	if err != nil || len(recs) != 1 || recs[0].Name != "Conformance: The official MCP conformance suite passes through mcplocal" {
		t.Errorf("records %+v %v", recs, err)
	}
}

// A suite that did not run at all (its test code does not compile against
// the candidate) is a failed row, with Ginkgo's reason.
func TestGinkgoRecordsASuiteThatDidNotRun(t *testing.T) {
	b, _ := json.Marshal([]types.Report{{SuitePath: "/src/scenarios/conformance", SuiteSucceeded: false, SpecialSuiteFailureReasons: []string{"Failed to compile conformance:"}}})
	recs, err := GinkgoRecords(b)
	if err != nil || len(recs) != 1 || recs[0].Verdict != "FAIL" || recs[0].Name != "conformance: the suite" || recs[0].Reason != "the suite did not run: Failed to compile conformance:" {
		t.Errorf("records %+v %v", recs, err)
	}
}

// The canary's verdict for every state Ginkgo can leave a spec in: only a
// passed spec reads as passed; every failure state (and a state the canary
// does not know) is a failure that names the state; a skipped or pending
// spec has no row, so a spec that passed on the baseline and is skipped on
// the candidate shows as having no result.
func TestGinkgoRecordsVerdictForEverySpecState(t *testing.T) {
	for _, tc := range []struct {
		state   types.SpecState
		verdict string // "" for no row
		reason  string
	}{
		{types.SpecStatePassed, "PASS", ""},
		{types.SpecStateFailed, "FAIL", "failed: boom"},
		{types.SpecStatePanicked, "FAIL", "panicked: boom"},
		{types.SpecStateTimedout, "FAIL", "timedout: boom"},
		{types.SpecStateInterrupted, "FAIL", "interrupted: boom"},
		{types.SpecStateAborted, "FAIL", "aborted: boom"},
		{types.SpecStateSkipped, "", ""},
		{types.SpecStatePending, "", ""},
		{types.SpecStateInvalid, "FAIL", "INVALID SPEC STATE: boom"},
	} {
		t.Run(tc.state.String(), func(t *testing.T) {
			sr := types.SpecReport{LeafNodeType: types.NodeTypeIt, ContainerHierarchyTexts: []string{"Relay"}, LeafNodeText: "relays",
				State: tc.state, RunTime: 5 * time.Millisecond}
			if tc.state != types.SpecStatePassed {
				sr.Failure = types.Failure{Message: "boom"}
			}
			b, err := json.Marshal([]types.Report{{SuiteDescription: "Scenarios", SuiteSucceeded: !tc.state.Is(types.SpecStateFailureStates), SpecReports: types.SpecReports{sr}}})
			if err != nil {
				t.Fatal(err)
			}
			recs, err := GinkgoRecords(b)
			if err != nil {
				t.Fatal(err)
			}
			if tc.verdict == "" {
				if len(recs) != 0 {
					t.Fatalf("a %s spec: records %+v, want none", tc.state, recs)
				}
				return
			}
			if len(recs) != 1 || recs[0].Name != "Relay relays" || recs[0].Verdict != tc.verdict || recs[0].Reason != tc.reason {
				t.Fatalf("a %s spec: records %+v, want one %s row with reason %q", tc.state, recs, tc.verdict, tc.reason)
			}
		})
	}
}

// A suite that did not succeed although none of its specs reads as failed
// (interrupted or timed out between specs, the rest skipped) is a failed
// row of its own: the passed specs before it must not make the run read as
// passed.
func TestGinkgoRecordsASuiteInterruptedBetweenSpecs(t *testing.T) {
	b, _ := json.Marshal([]types.Report{{SuiteDescription: "Scenarios", SuitePath: "/src/scenarios", SuiteSucceeded: false,
		SpecialSuiteFailureReasons: []string{"Interrupted by Timeout"}, SpecReports: types.SpecReports{
			{LeafNodeType: types.NodeTypeIt, LeafNodeText: "first", State: types.SpecStatePassed},
			{LeafNodeType: types.NodeTypeIt, LeafNodeText: "second", State: types.SpecStateSkipped},
		}}})
	recs, err := GinkgoRecords(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Verdict != "PASS" || recs[1].Verdict != "FAIL" || recs[1].Name != "Scenarios: the suite" ||
		recs[1].Reason != "the suite did not succeed: Interrupted by Timeout" {
		t.Fatalf("records %+v, want the passed spec and a failed suite row", recs)
	}
	// A suite whose failure is already a failed spec's row gets no second row.
	b, _ = json.Marshal([]types.Report{{SuiteDescription: "Scenarios", SuiteSucceeded: false, SpecReports: types.SpecReports{
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "first", State: types.SpecStatePanicked, Failure: types.Failure{Message: "Test Panicked"}},
	}}})
	if recs, err := GinkgoRecords(b); err != nil || len(recs) != 1 || recs[0].Verdict != "FAIL" {
		t.Fatalf("records %+v %v, want the panicked spec's row alone", recs, err)
	}
}
