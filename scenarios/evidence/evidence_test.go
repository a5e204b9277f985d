package evidence

import "testing"

// A span failed when it ended with a status other than ok; a span with no
// status recorded did not fail.
func TestFailedIsAnyStatusButOK(t *testing.T) {
	for status, want := range map[string]bool{
		"": false, StatusOK: false,
		StatusError: true, StatusTimeout: true, StatusRefused: true, StatusCancelled: true, "shed": true,
	} {
		if got := (Span{Status: status}).Failed(); got != want {
			t.Errorf("status %q: Failed() = %v, want %v", status, got, want)
		}
	}
}
