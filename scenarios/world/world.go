// Package world is what a target runs, in the harness's own terms: the
// World its proxy serves (fakes, projects, users, LLMs), the Bounds it runs
// under and is judged against, by name, and the Failpoints armed in it. It
// imports nothing of any proxy: mcplocal's adapter (scenarios/evidence/mcplocal)
// turns it into mcplocal's configuration, knobs and failpoints, and a
// foreign target renders it into its spec's variables.
package world

import (
	"maps"
	"slices"
)

// What a world's project serves beyond its upstreams, in the harness's own
// terms: the LLM stages of its pipeline, the prompts its gate selects from,
// the health checks of its servers. mcplocal's targets translate them into
// the proxy's configuration.

// Stage is one LLM stage of the project's pipeline (harness.EnvOptions.Pipeline):
// its name ("paginate", "summarize-tree") and its options.
type Stage struct {
	Name    string
	Options map[string]any
}

// Prompt is one prompt the project's gate may select for a session
// (harness.EnvOptions.Prompts).
type Prompt struct {
	Name     string
	Text     string
	Priority int
	Keywords []string
}

// HealthCheck is how the proxy probes an upstream server: by a tool call
// (Tool with Arguments) or, without Tool, by its liveness; every
// IntervalSeconds, each probe bounded by TimeoutSeconds, down after
// FailureThreshold failures in a row. A zero field takes the proxy's
// default.
type HealthCheck struct {
	Tool             string
	Arguments        map[string]any
	IntervalSeconds  float64
	TimeoutSeconds   float64
	FailureThreshold int
}

// World is what the proxy under test is to serve, in the harness's terms:
// the fakes it fronts, who may call it, the LLMs it may ask. NewEnv
// (harness.NewEnv) describes its world so; a target that runs mcplocal turns it into
// mcplocal's configuration, and a foreign target renders it into its
// spec's variables.
type World struct {
	// Store names where the proxy keeps its record of requests and
	// sessions ("sqlite:PATH", a PostgreSQL DSN, "memory").
	Store string
	// Strict makes the proxy answer an unknown session id with a 404
	// instead of recreating the session.
	Strict bool
	// Relay forces the raw tools/call relay on or off; nil: the proxy's
	// default.
	Relay *bool
	// Projects are the proxy's projects by name (harness.Project, harness.OtherProject).
	Projects map[string]*WorldProject
	// LLMs are the providers the proxy may ask, the primary first and its
	// fallbacks after, in order; none: no LLM.
	LLMs []LLMProvider
	// Users are who may call the proxy, by name; none: no authentication.
	Users map[string]User
}

// WorldProject is one project of a World: its upstream servers and what
// the proxy does beyond forwarding to them.
type WorldProject struct {
	Servers map[string]*WorldServer
	// Open: the project takes calls without a token although the world has
	// users.
	Open     bool
	Pipeline []Stage
	Gate     bool
	Prompts  []Prompt
}

// WorldServer is one upstream server of a project.
type WorldServer struct {
	URL    string
	Health *HealthCheck
}

// The wire formats an LLMProvider speaks.
const (
	LLMOpenAI    = "openai"
	LLMAnthropic = "anthropic"
)

// LLMProvider is one LLM a world's proxy may ask: its name, wire format
// (LLMOpenAI, LLMAnthropic), base URL and model, and the environment
// variable its API key is read from ("" for none).
type LLMProvider struct {
	Name, Kind, URL, Model, KeyEnv string
}

// User is one user of a world's proxy: a bearer token, and whether the
// user is an admin (reads every user's audit rows).
type User struct {
	Token string
	Admin bool
}

// Clone is a copy of w for a twin proxy of the world's own, or a target's
// own changes: its store, projects, servers, LLM providers and users may be
// changed without changing w. Stages, prompts and health checks are shared;
// nothing changes them once the world is made.
func (w *World) Clone() *World {
	c := *w
	c.Projects = map[string]*WorldProject{}
	for name, p := range w.Projects {
		q := *p
		q.Servers = map[string]*WorldServer{}
		for s, srv := range p.Servers {
			v := *srv
			q.Servers[s] = &v
		}
		c.Projects[name] = &q
	}
	c.LLMs = slices.Clone(w.LLMs)
	c.Users = maps.Clone(w.Users)
	return &c
}

// ServerURLs are the URLs of project's servers, by name (nil when the world
// has no such project).
func (w *World) ServerURLs(project string) map[string]string {
	p := w.Projects[project]
	if p == nil {
		return nil
	}
	urls := map[string]string{}
	for name, s := range p.Servers {
		urls[name] = s.URL
	}
	return urls
}
