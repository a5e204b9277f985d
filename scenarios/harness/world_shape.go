package harness

// What a world's project serves beyond its upstreams, in the harness's own
// terms: the LLM stages of its pipeline, the prompts its gate selects from,
// the health checks of its servers. mcplocal's targets translate them into
// the proxy's configuration.

// Stage is one LLM stage of the project's pipeline (EnvOptions.Pipeline):
// its name ("paginate", "summarize-tree") and its options.
type Stage struct {
	Name    string
	Options map[string]any
}

// Prompt is one prompt the project's gate may select for a session
// (EnvOptions.Prompts).
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
