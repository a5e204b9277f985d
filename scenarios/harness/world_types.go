package harness

import "github.com/mcpchaos/mcpchaos/scenarios/world"

// The harness speaks of what a target runs in the terms of package world;
// these are its names here, so that a scenario needs one import.
type (
	World        = world.World
	WorldProject = world.WorldProject
	WorldServer  = world.WorldServer
	LLMProvider  = world.LLMProvider
	User         = world.User
	Stage        = world.Stage
	Prompt       = world.Prompt
	HealthCheck  = world.HealthCheck
	Bounds       = world.Bounds
	Failpoints   = world.Failpoints
)

// The wire formats an LLMProvider speaks.
const (
	LLMOpenAI    = world.LLMOpenAI
	LLMAnthropic = world.LLMAnthropic
)

// The bounds the core reads by name (world.Bounds).
const (
	BoundRequest        = world.BoundRequest
	BoundUpstreamCall   = world.BoundUpstreamCall
	BoundPagination     = world.BoundPagination
	BoundStage          = world.BoundStage
	BoundGate           = world.BoundGate
	BoundChat           = world.BoundChat
	BoundReady          = world.BoundReady
	BoundReadTimeout    = world.BoundReadTimeout
	BoundIdleConn       = world.BoundIdleConn
	BoundStopDrain      = world.BoundStopDrain
	BoundShutdownGrace  = world.BoundShutdownGrace
	BoundSessionIdle    = world.BoundSessionIdle
	BoundSessionTTL     = world.BoundSessionTTL
	BoundSessions       = world.BoundSessions
	BoundSessionsUser   = world.BoundSessionsUser
	BoundConns          = world.BoundConns
	BoundBatch          = world.BoundBatch
	BoundHeaderBytes    = world.BoundHeaderBytes
	BoundNameBytes      = world.BoundNameBytes
	BoundUpstreamAnswer = world.BoundUpstreamAnswer
)

// NewBounds holds raw, by name (copied).
func NewBounds(raw map[string]int64) Bounds { return world.NewBounds(raw) }

// NewFailpoints is an empty set of failpoints.
func NewFailpoints() *Failpoints { return world.NewFailpoints() }
