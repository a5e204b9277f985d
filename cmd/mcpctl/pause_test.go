package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestPauseAndResumeCallTheAdminAPI: pause and resume POST to the project's
// admin endpoints with the token, and say what happened.
func TestPauseAndResumeCallTheAdminAPI(t *testing.T) {
	var calls []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls = append(calls, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		if r.Header.Get("Authorization") != "Bearer admin-token" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"pausing and resuming a project requires an admin bearer token"}`))
			return
		}
		paused := strings.HasSuffix(r.URL.Path, "/pause")
		if paused {
			_, _ = w.Write([]byte(`{"project":"docmost","paused":true,"since":"2026-12-01T04:00:00Z","waiting":0,"changed":true}`))
		} else {
			_, _ = w.Write([]byte(`{"project":"docmost","paused":false,"waiting":0,"changed":true}`))
		}
	}))
	defer srv.Close()

	r := cli(t, "pause", "docmost", "--url", srv.URL, "--token", "admin-token")
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "project docmost paused") {
		t.Errorf("pause output: %s", r.stdout)
	}
	r = cli(t, "resume", "docmost", "--url", srv.URL, "--token", "admin-token")
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "project docmost resumed") {
		t.Errorf("resume output: %s", r.stdout)
	}
	r = cli(t, "pause", "docmost", "--url", srv.URL)
	r.wantCode(t, 1)
	if !strings.Contains(r.stderr, "requires an admin bearer token") {
		t.Errorf("refusal not shown: %s", r.stderr)
	}
	want := []string{
		"POST /api/v1/projects/docmost/pause Bearer admin-token",
		"POST /api/v1/projects/docmost/resume Bearer admin-token",
		"POST /api/v1/projects/docmost/pause ",
	}
	if strings.Join(calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}
	cli(t, "pause").wantCode(t, 2)
}

// TestGetInstancesMarksAPausedProject: a paused project's servers read
// "(paused)" next to their health.
func TestGetInstancesMarksAPausedProject(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"instances":[{"project":"docmost","server":"docmost","status":"live","probe":"liveness: tools/list","paused":true,"checkedAt":"2026-12-01T04:00:00Z"}],
 "paused":[{"project":"docmost","paused":true,"since":"2026-12-01T04:00:00Z","waiting":2}]}`))
	}))
	defer srv.Close()
	r := cli(t, "get", "instances", "--url", srv.URL)
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "live (paused)") {
		t.Errorf("the paused project's server is not marked:\n%s", r.stdout)
	}
}
