package world

import (
	"maps"
	"testing"
)

func twoProjects() *World {
	return &World{
		Store: "memory",
		Projects: map[string]*WorldProject{
			"docmost": {Servers: map[string]*WorldServer{
				"docmost": {URL: "http://127.0.0.1:1/mcp"},
				"wiki":    {URL: "http://127.0.0.1:2/mcp"},
			}},
			"other": {Servers: map[string]*WorldServer{"unifi": {URL: "http://127.0.0.1:3/mcp"}}},
		},
		LLMs:  []LLMProvider{{Name: "primary", Kind: LLMOpenAI}},
		Users: map[string]User{"alice": {Token: "a"}},
	}
}

// ServerURLs are one project's server URLs by name; a project the world
// does not have has none (nil), not an empty set of some other project.
func TestServerURLsAreOneProjectsServers(t *testing.T) {
	w := twoProjects()
	want := map[string]string{"docmost": "http://127.0.0.1:1/mcp", "wiki": "http://127.0.0.1:2/mcp"}
	if got := w.ServerURLs("docmost"); !maps.Equal(got, want) {
		t.Errorf("docmost's servers %v, want %v", got, want)
	}
	if got := w.ServerURLs("nowhere"); got != nil {
		t.Errorf("a project the world lacks has servers %v, want nil", got)
	}
}

// A clone's store, projects, servers, LLMs and users change without
// changing the world it was cloned from.
func TestACloneChangesAlone(t *testing.T) {
	w := twoProjects()
	c := w.Clone()
	c.Store = "sqlite:/tmp/x.db"
	c.Projects["docmost"].Servers["docmost"].URL = "http://127.0.0.1:9/mcp"
	c.Projects["docmost"].Open = true
	delete(c.Projects["docmost"].Servers, "wiki")
	c.Projects["added"] = &WorldProject{}
	c.LLMs[0].Name = "changed"
	c.Users["bob"] = User{Token: "b"}
	if w.Store != "memory" || w.ServerURLs("docmost")["docmost"] != "http://127.0.0.1:1/mcp" || len(w.ServerURLs("docmost")) != 2 ||
		w.Projects["docmost"].Open || len(w.Projects) != 2 || w.LLMs[0].Name != "primary" || len(w.Users) != 1 {
		t.Errorf("changing the clone changed the world: %+v", w)
	}
	if c.ServerURLs("docmost")["docmost"] != "http://127.0.0.1:9/mcp" || len(c.Users) != 2 {
		t.Errorf("the clone did not keep its own changes: %+v", c)
	}
}
