package main

import (
	"fmt"
	"net"
)

// anonymousNetwork refuses a listen address other hosts can reach when no
// user is configured: every project would then serve anyone on the network
// without a token. allow (--allow-anonymous-network) says it is meant.
func anonymousNetwork(listen string, users int, allow bool) error {
	if users > 0 || allow || loopback(listen) {
		return nil
	}
	return fmt.Errorf("serve: --listen %s is reachable from other hosts and no users are configured, so anyone there could use every project without a token; configure users (users: in the config) or listen on 127.0.0.1, or pass --allow-anonymous-network if this is meant", listen)
}

// loopback reports whether addr (host:port) listens on loopback only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
