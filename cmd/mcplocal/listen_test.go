package main

import (
	"strings"
	"testing"
)

// A listen address other hosts can reach, with no users, refuses to start
// unless --allow-anonymous-network says it is meant.
func TestAnonymousNetworkListenRefusesToStart(t *testing.T) {
	for _, c := range []struct {
		listen string
		users  int
		allow  bool
		ok     bool
	}{
		{"127.0.0.1:8080", 0, false, true},
		{"[::1]:8080", 0, false, true},
		{"localhost:8080", 0, false, true},
		{"0.0.0.0:8080", 0, false, false},
		{":8080", 0, false, false},
		{"[::]:8080", 0, false, false},
		{"192.168.1.5:8080", 0, false, false},
		{"0.0.0.0:8080", 2, false, true},
		{"0.0.0.0:8080", 0, true, true},
	} {
		err := anonymousNetwork(c.listen, c.users, c.allow)
		if (err == nil) != c.ok {
			t.Errorf("listen %s, %d users, allow %v: %v, want ok %v", c.listen, c.users, c.allow, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "--allow-anonymous-network") {
			t.Errorf("the refusal does not name the flag that allows it: %v", err)
		}
	}
}
