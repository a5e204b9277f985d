package redact

import (
	"errors"
	"strings"
	"testing"
)

// A value the proxy holds is masked wherever it appears, in texts, errors
// and log lines, whatever its shape; one too short to be a secret is not
// held, and a secret containing another is masked whole.
func TestHeldValuesAreMaskedEverywhere(t *testing.T) {
	Hold("sk-held-0123456789", "sk-held-0123456789-longer", "short", "  ")
	if !Holding() {
		t.Fatal("Holding after Hold")
	}
	for in, want := range map[string]string{
		`{"error":"invalid credentials: Authorization=\"Bearer sk-held-0123456789\""}`: `{"error":"invalid credentials: Authorization=\"Bearer REDACTED\""}`,
		"key sk-held-0123456789-longer echoed":                                         "key REDACTED echoed",
		"a short word stays":                                                           "a short word stays",
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
	if err := Error(errors.New("401: sk-held-0123456789")); strings.Contains(err.Error(), "sk-held") {
		t.Errorf("Error kept the held value: %v", err)
	}
}

// SecretsOf finds the secrets of a URL or a DSN.
func TestSecretsOf(t *testing.T) {
	got := strings.Join(SecretsOf("postgres://u:pw-1234@h/db?sslkey=k-5678"), ",")
	if got != "pw-1234,k-5678" {
		t.Errorf("URL: %q", got)
	}
	if got := strings.Join(SecretsOf("host=h user=u password='p w 99'"), ","); got != "p w 99" {
		t.Errorf("keyword DSN: %q", got)
	}
}

// ValuesIn masks held values in an answer's bytes, and hands back the
// same bytes when there is none.
func TestValuesInMasksAnswers(t *testing.T) {
	Hold("sk-answer-98765")
	in := []byte(`{"content":[{"type":"text","text":"your key is sk-answer-98765"}]}`)
	if got := string(ValuesIn(in)); got != `{"content":[{"type":"text","text":"your key is REDACTED"}]}` {
		t.Errorf("ValuesIn = %s", got)
	}
	clean := []byte(`{"content":[]}`)
	if got := ValuesIn(clean); &got[0] != &clean[0] {
		t.Error("an answer without a held value was copied")
	}
}
