package mcplocal

import (
	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/llm"
	"github.com/mcpchaos/mcpchaos/scenarios/world"
)

// mcplocal's configuration, made from a World: what the targets that run
// mcplocal (in process, binary, container, cluster) serve, and the config
// file a foreign spec may hand the proxy it starts ({{.ConfigFile}}).

// Config is w as mcplocal's configuration, listening on a free
// loopback port. Each call makes a new one: a target may change its copy.
func Config(w *world.World) *config.Config {
	cfg := &config.Config{
		Listen:   "127.0.0.1:0",
		Audit:    w.Store,
		Sessions: config.Sessions{Strict: w.Strict},
		Relay:    w.Relay,
		Projects: map[string]*config.Project{},
	}
	for name, p := range w.Projects {
		pc := &config.Project{Servers: map[string]*config.Server{}, Pipeline: PipelineConfig(p.Pipeline), Prompts: PromptsConfig(p.Prompts)}
		pc.Gate.Enabled = p.Gate
		for s, srv := range p.Servers {
			pc.Servers[s] = &config.Server{URL: srv.URL, HealthCheck: healthCheckOf(srv.Health)}
		}
		if p.Open {
			open := false
			pc.RequireAuth = &open
		}
		cfg.Projects[name] = pc
	}
	if len(w.LLMs) > 0 {
		cfg.LLM = &llm.Config{Primary: w.LLMs[0].Name, Providers: map[string]llm.ProviderConfig{}}
		for i, p := range w.LLMs {
			pc := llm.ProviderConfig{Kind: llm.KindOpenAI, URL: p.URL, Model: p.Model, APIKeyEnv: p.KeyEnv}
			if p.Kind == world.LLMAnthropic {
				pc.Kind = llm.KindAnthropic
			}
			if i == 0 {
				for _, fb := range w.LLMs[1:] {
					pc.Fallbacks = append(pc.Fallbacks, fb.Name)
				}
			}
			cfg.LLM.Providers[p.Name] = pc
		}
	}
	if len(w.Users) > 0 {
		cfg.Users = map[string]config.User{}
		for name, u := range w.Users {
			cfg.Users[name] = config.User{Token: u.Token, Admin: u.Admin}
		}
	}
	return cfg
}

// ConfigYAML is w as mcplocal's configuration file.
func ConfigYAML(w *world.World) ([]byte, error) { return config.Marshal(Config(w)) }

// PipelineConfig is a world's pipeline as mcplocal's configuration names it.
func PipelineConfig(stages []world.Stage) []config.Stage {
	var out []config.Stage
	for _, st := range stages {
		out = append(out, config.Stage{Name: st.Name, Options: st.Options})
	}
	return out
}

// PipelineOf is mcplocal's configured pipeline as a world's (a replay's).
func PipelineOf(stages []config.Stage) []world.Stage {
	var out []world.Stage
	for _, st := range stages {
		out = append(out, world.Stage{Name: st.Name, Options: st.Options})
	}
	return out
}

// PromptsConfig are a world's gate prompts as mcplocal's configuration
// names them.
func PromptsConfig(prompts []world.Prompt) []config.Prompt {
	var out []config.Prompt
	for _, p := range prompts {
		out = append(out, config.Prompt{Name: p.Name, Text: p.Text, Priority: p.Priority, Keywords: p.Keywords})
	}
	return out
}

// PromptsOf are mcplocal's configured gate prompts as a world's.
func PromptsOf(prompts []config.Prompt) []world.Prompt {
	var out []world.Prompt
	for _, p := range prompts {
		out = append(out, world.Prompt{Name: p.Name, Text: p.Text, Priority: p.Priority, Keywords: p.Keywords})
	}
	return out
}

// healthCheckOf is a world's health check as mcplocal's configuration
// names it (nil: the proxy's default).
func healthCheckOf(h *world.HealthCheck) *config.HealthCheck {
	if h == nil {
		return nil
	}
	return &config.HealthCheck{Tool: h.Tool, Arguments: h.Arguments, IntervalSeconds: h.IntervalSeconds,
		TimeoutSeconds: h.TimeoutSeconds, FailureThreshold: h.FailureThreshold}
}
