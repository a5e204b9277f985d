package catalogue

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// ColdReason says why s needs a world of its own, with a proxy process
// started for it alone ("" when it may run in a warm world, on a proxy that
// served earlier scenarios): its fault strikes before the proxy starts
// (a failpoint in its environment), restarts or kills a process (the proxy,
// the upstream), or may leave the proxy's upstream connections or sessions
// broken for the rows after it (see spoils), or its world has LLM stages
// (a pipeline, the gate), sets knobs of its own, arms failpoints or keeps
// its own scratch directory. A row with other options (users, fakes) runs
// warm in a world kept for exactly those options (WarmKey).
func ColdReason(s Scenario) string {
	switch s.Fault.(type) {
	case harness.ProxyRestart, harness.ProxyKill:
		return "its fault restarts the proxy"
	case harness.UpstreamRestart:
		return "its fault restarts the upstream"
	}
	if spoils(s.Fault) {
		return "its fault may leave the proxy's upstream connections or sessions broken"
	}
	if _, restarts := s.Fault.(harness.Midway); restarts {
		return "its fault strikes midway: a restart"
	}
	if s.Fault.Strikes() == harness.StrikeBeforeStart {
		return "its fault strikes before the proxy starts"
	}
	if len(s.Env.Pipeline) > 0 || s.Env.Gate {
		// mcplocal keeps what its LLM stages answered (the page titles of
		// a page already seen): a row after a good answer would never reach
		// the LLM its fault is on.
		return "its world has LLM stages, whose answers the proxy may keep"
	}
	if !s.Env.Bounds.IsZero() || len(s.Env.Override) > 0 {
		// A row about a knob drives the proxy to it (sessions up to a cap),
		// which a proxy whose sessions the harness cannot count (a process)
		// would carry into the next row of the same knobs.
		return "its world sets knobs of its own"
	}
	if s.Env.Failpoints != nil {
		return "its world arms failpoints"
	}
	if s.Env.Dir != "" {
		return "its world keeps its own scratch directory"
	}
	if _, err := WarmKey(s); err != nil {
		return err.Error()
	}
	return ""
}

// spoils reports whether f may leave a proxy unfit for the next row once
// healed: it cuts, resets, stalls or refuses a link's connections, or holds
// an upstream call or handshake until the proxy gives it up. A proxy's
// upstream client may close its session on a body cut short (the plain
// proxy's go-sdk client does, after limit-data), and a proxy may mark the
// upstream unhealthy for a while; a row after it would judge that, not its
// own fault.
func spoils(f harness.Fault) bool {
	switch f.(type) {
	case harness.Bandwidth, harness.Blackhole, harness.ResetPeer, harness.LimitData, harness.LinkDown,
		harness.IngressHairpin, harness.HandshakeStall, harness.ToolHang, harness.ToolSlow:
		return true
	}
	return false
}

// WarmKey names the world s runs in warm: its options, the fault and seed
// aside. Scenarios with the same key share one proxy process.
func WarmKey(s Scenario) (string, error) {
	o := s.Env
	o.Target, o.Fault, o.Seed, o.Failpoints = nil, nil, 0, nil
	b, err := json.Marshal(o)
	if err != nil {
		return "", fmt.Errorf("its world's options have no key: %w", err)
	}
	return string(b), nil
}

// Warm runs scenarios of one run, sharing a proxy process between those
// that need no fresh one (ColdReason): each such world is kept after its
// scenario, readied for the next with the same options (harness.Env.Reuse),
// and started again cold when it cannot be (the proxy died, it is not
// ready, a session is left open). Close stops every kept world.
type Warm struct {
	// NewTarget makes the target of one world.
	NewTarget func() harness.Target
	// Off runs every scenario cold, as Scenario.RunSeeded does.
	Off bool

	worlds map[string]*harness.Env
	// ahead counts, by key, the rows still to run warm (Plan); nil keeps
	// every world to the end.
	ahead map[string]int
	// WarmRows and ColdRows count the scenarios run on a proxy that served
	// an earlier one, and those that started their own.
	WarmRows, ColdRows int
}

// Plan tells w the scenarios the run will give Run, so that a world is
// closed after the last row that can use it instead of idling, its proxy
// running, to the end of the run.
func (w *Warm) Plan(todo []Scenario) {
	w.ahead = map[string]int{}
	target := w.NewTarget()
	for _, s := range todo {
		if ColdReason(s) == "" && s.NotApplicable(target) == "" {
			key, _ := WarmKey(s)
			w.ahead[key]++
		}
	}
}

// Run runs s with seed (as RunSeeded), in a kept world when it may.
func (w *Warm) Run(ctx context.Context, s Scenario, seed uint64) Result {
	target := w.NewTarget()
	if why := s.NotApplicable(target); why != "" {
		return Result{Scenario: s, NotApplicable: why}
	}
	key, _ := WarmKey(s)
	_, probes := target.(harness.Readier)
	if w.Off || !probes || ColdReason(s) != "" {
		w.ColdRows++
		return s.RunSeeded(ctx, target, seed)
	}
	worldSeed := harness.SeedFor(seed, s.Name())
	env := w.worlds[key]
	if env != nil {
		if err := env.Reuse(ctx, worldSeed); err != nil {
			_ = env.Close(context.Background())
			delete(w.worlds, key)
			env = nil
		}
	}
	reused := env != nil
	if env == nil {
		o := s.Env
		o.Target, o.Seed = target, worldSeed
		var err error
		if env, err = harness.NewEnv(ctx, o); err != nil {
			w.ColdRows++
			return Result{Scenario: s, Pass: false, Reason: "setup: " + err.Error(), Log: proxyLog(target)}
		}
		if w.worlds == nil {
			w.worlds = map[string]*harness.Env{}
		}
		w.worlds[key] = env
	}
	if reused {
		w.WarmRows++
	} else {
		w.ColdRows++
	}
	if err := env.Arm(ctx, s.Fault); err != nil {
		r := Result{Scenario: s, Pass: false, Reason: fmt.Sprintf("setup: inject %s: %v", s.Fault.Name(), err), Log: proxyLog(env.Target)}
		_ = env.Close(context.Background())
		delete(w.worlds, key)
		return r
	}
	r := s.runIn(ctx, env)
	r.Warm = reused
	if w.ahead != nil {
		if w.ahead[key]--; w.ahead[key] <= 0 {
			_ = env.Close(context.Background())
			delete(w.worlds, key)
		}
	}
	return r
}

// Close stops every kept world.
func (w *Warm) Close() {
	for k, env := range w.worlds {
		_ = env.Close(context.Background())
		delete(w.worlds, k)
	}
}
