package harness

// AdminToken is the bearer token of the world's admin user (Auditor, which
// has admin: true): what the admin APIs (pause, servers) want when the world
// has users. It is "" for a world without users, whose APIs are open.
func (e *Env) AdminToken() string {
	if len(e.Users) == 0 {
		return ""
	}
	return auditorToken
}
