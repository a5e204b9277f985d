package upstream

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestWithHeadersSendsTheConfiguredCredentials(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.Header.Get("X-Api-Key") }))
	defer srv.Close()
	c := &http.Client{Transport: WithHeaders(http.DefaultTransport, http.Header{"X-Api-Key": {"k3y"}})}
	req, _ := http.NewRequest(http.MethodPost, srv.URL, nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got != "k3y" {
		t.Errorf("X-Api-Key = %q, want the configured header", got)
	}
	if req.Header.Get("X-Api-Key") != "" {
		t.Error("the caller's request was changed")
	}
}
