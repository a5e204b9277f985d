package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

// maxControlBody is the largest control request body read.
const maxControlBody = 1 << 20

// controlRoutes mounts the control API (see the package documentation).
func (s *Server) controlRoutes(g *gin.RouterGroup) {
	g.GET("/catalogue", func(c *gin.Context) { c.JSON(http.StatusOK, Catalogue()) })
	g.GET("/behaviors", func(c *gin.Context) { c.JSON(http.StatusOK, s.Plans()) })
	g.PUT("/behaviors/*model", s.putBehavior)
	g.DELETE("/behaviors/*model", func(c *gin.Context) {
		model, ok := modelParam(c)
		if !ok {
			return
		}
		s.Unset(model)
		c.Status(http.StatusNoContent)
	})
	g.GET("/requests", func(c *gin.Context) {
		reqs := s.Requests()
		if reqs == nil {
			reqs = []Request{}
		}
		c.JSON(http.StatusOK, reqs)
	})
	g.DELETE("/requests", func(c *gin.Context) {
		s.ClearRequests()
		c.Status(http.StatusNoContent)
	})
	g.PUT("/expectations/*model", s.putExpectation)
	g.GET("/unmet", func(c *gin.Context) {
		unmet := s.Unmet()
		if unmet == nil {
			unmet = []string{}
		}
		c.JSON(http.StatusOK, unmet)
	})
	g.GET("/models", func(c *gin.Context) { c.JSON(http.StatusOK, s.Models()) })
	g.PUT("/models", func(c *gin.Context) {
		var models []Model
		if err := decodeControl(c, &models); err != nil {
			controlError(c, err)
			return
		}
		s.SetModels(models)
		c.Status(http.StatusNoContent)
	})
	g.PUT("/oauth-gate", s.putOAuthGate)
	g.POST("/reset", func(c *gin.Context) {
		s.Reset()
		c.Status(http.StatusNoContent)
	})
}

// putBehavior serves PUT /_fake/behaviors/{model}.
func (s *Server) putBehavior(c *gin.Context) {
	model, ok := modelParam(c)
	if !ok {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, maxControlBody))
	if err != nil {
		controlError(c, err)
		return
	}
	plan, err := ParsePlan(body)
	if err == nil {
		err = s.SetPlan(model, plan)
	}
	if err != nil {
		controlError(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// putExpectation serves PUT /_fake/expectations/{model}.
func (s *Server) putExpectation(c *gin.Context) {
	model, ok := modelParam(c)
	if !ok {
		return
	}
	var body struct {
		Count *int `json:"count"`
	}
	if err := decodeControl(c, &body); err != nil {
		controlError(c, err)
		return
	}
	if body.Count == nil {
		controlError(c, errors.New(`want {"count": n}`))
		return
	}
	s.Expect(model, *body.Count)
	c.Status(http.StatusNoContent)
}

// ParsePlan reads a plan in any of the forms the control API accepts: a Plan
// object ({"steps": [...]} or {"random": {...}}), a list of steps, or a single
// step (an object with "kind", or the short form "slow:250ms").
func ParsePlan(data []byte) (Plan, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return Plan{}, errors.New("llm: empty plan")
	}
	var plan Plan
	switch data[0] {
	case '[':
		if err := json.Unmarshal(data, &plan.Steps); err != nil {
			return Plan{}, err
		}
	case '"':
		var step Step
		if err := json.Unmarshal(data, &step); err != nil {
			return Plan{}, err
		}
		plan.Steps = []Step{step}
	default:
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(data, &probe); err != nil {
			return Plan{}, err
		}
		if _, isStep := probe["kind"]; isStep {
			var step Step
			if err := json.Unmarshal(data, &step); err != nil {
				return Plan{}, err
			}
			plan.Steps = []Step{step}
			break
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&plan); err != nil {
			return Plan{}, err
		}
	}
	return plan, plan.Validate()
}

// modelParam returns the {model} of a control path, or answers 400.
func modelParam(c *gin.Context) (string, bool) {
	model := strings.TrimPrefix(c.Param("model"), "/")
	if model == "" {
		controlError(c, errors.New("missing model in path"))
		return "", false
	}
	return model, true
}

// decodeControl decodes the JSON body of a control request into v.
func decodeControl(c *gin.Context, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(c.Writer, c.Request.Body, maxControlBody))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// controlError answers a control request with 400 and {"error": ...}.
func controlError(c *gin.Context, err error) {
	c.JSON(http.StatusBadRequest, gin.H{"error": err.Error()})
}
