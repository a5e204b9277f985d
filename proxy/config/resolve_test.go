package config

import "testing"

// TestResolveTakesTheEnvironmentFirst: a header's value and a user's token
// come from their environment variable when one is named, else inline.
func TestResolveTakesTheEnvironmentFirst(t *testing.T) {
	env := func(name string) string { return map[string]string{"H": "from-env", "T": "tok-env"}[name] }
	if got := (Header{Value: "inline", ValueEnv: "H"}).Resolve(env); got != "from-env" {
		t.Errorf("header with valueEnv: %q", got)
	}
	if got := (Header{Value: "inline"}).Resolve(env); got != "inline" {
		t.Errorf("inline header: %q", got)
	}
	if got := (User{Token: "inline", TokenEnv: "T"}).Resolve(env); got != "tok-env" {
		t.Errorf("user with tokenEnv: %q", got)
	}
	if got := (User{Token: "inline"}).Resolve(env); got != "inline" {
		t.Errorf("inline token: %q", got)
	}
}

// TestAuthIsRequiredWhenUsersAreConfiguredUnlessTheProjectSays: with no
// users and no requireAuth, requests go without a token; with users they
// need one; a project's requireAuth decides either way.
func TestAuthIsRequiredWhenUsersAreConfiguredUnlessTheProjectSays(t *testing.T) {
	no, yes := false, true
	none := &Config{}
	users := &Config{Users: map[string]User{"ann": {Token: "t"}}}
	for _, c := range []struct {
		c    *Config
		p    *Project
		want bool
	}{
		{none, &Project{}, false},
		{users, &Project{}, true},
		{users, &Project{RequireAuth: &no}, false},
		{none, &Project{RequireAuth: &yes}, true},
	} {
		if got := c.c.AuthRequired(c.p); got != c.want {
			t.Errorf("AuthRequired(users %d, requireAuth %v) = %v, want %v", len(c.c.Users), c.p.RequireAuth, got, c.want)
		}
	}
}
