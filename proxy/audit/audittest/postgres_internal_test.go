package audittest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestFindPostgresWithoutBinariesSaysToInstall(t *testing.T) {
	saved := systemPgDirs
	t.Cleanup(func() { systemPgDirs = saved })
	systemPgDirs = func() []string { return []string{t.TempDir()} }
	t.Setenv("PATH", t.TempDir())
	t.Setenv(PgBinEnv, "")

	_, _, err := StartPostgres(context.Background())
	if !errors.Is(err, ErrNoPostgres) {
		t.Fatalf("StartPostgres without binaries: %v, want ErrNoPostgres", err)
	}
	if !strings.Contains(err.Error(), "apt-get install -y postgresql") {
		t.Errorf("error does not say how to install PostgreSQL: %v", err)
	}
}

func TestFindPostgresPrefersEnvDir(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"initdb", "postgres"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(PgBinEnv, dir)
	got, err := FindPostgres()
	if err != nil || got != dir {
		t.Fatalf("FindPostgres() = %q, %v; want %q", got, err, dir)
	}
	// A directory with only one of the two does not count.
	if err := os.Remove(filepath.Join(dir, "postgres")); err != nil {
		t.Fatal(err)
	}
	if got, _ := FindPostgres(); got == dir {
		t.Errorf("FindPostgres() picked %q without a postgres binary", dir)
	}
}

func TestCompareVersionSortsNumerically(t *testing.T) {
	vs := []string{"10", "9.6", "15", "16", "9.5"}
	slices.SortFunc(vs, compareVersion)
	if want := []string{"9.5", "9.6", "10", "15", "16"}; !slices.Equal(vs, want) {
		t.Errorf("sorted %q, want %q", vs, want)
	}
}
