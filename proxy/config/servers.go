package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// ServerSpec is one upstream server as an operator manages it at run time
// (mcpctl create/get/apply server, /api/v1/servers): the config's Server
// with the names that place it.
type ServerSpec struct {
	Name        string       `yaml:"name" json:"name"`
	Project     string       `yaml:"project" json:"project"`
	URL         string       `yaml:"url" json:"url"`
	HealthCheck *HealthCheck `yaml:"healthCheck,omitempty" json:"healthCheck,omitempty"`
	// Headers are the server's credentials, by reference only: the
	// environment variable holding each value (never the value). A spec
	// that replaces a server's URL carries only the headers it names.
	Headers map[string]HeaderRef `yaml:"headers,omitempty" json:"headers,omitempty"`
}

// HeaderRef names the environment variable of a header's value.
type HeaderRef struct {
	ValueEnv string `yaml:"valueEnv" json:"valueEnv"`
}

// ParseServerSpecs reads what 'mcpctl get servers -o yaml' writes: a YAML
// sequence of specs, or one spec alone. Unknown fields are errors, named
// with the spec they are in.
func ParseServerSpecs(b []byte) ([]ServerSpec, error) {
	var n yaml.Node
	if err := yaml.Unmarshal(b, &n); err != nil {
		return nil, err
	}
	if len(n.Content) == 0 {
		return nil, errors.New("no server specs in the document")
	}
	root := n.Content[0]
	items := []*yaml.Node{root}
	if root.Kind == yaml.SequenceNode {
		items = root.Content
	}
	out := make([]ServerSpec, 0, len(items))
	for i, it := range items {
		var buf bytes.Buffer
		enc := yaml.NewEncoder(&buf)
		if err := enc.Encode(it); err != nil {
			return nil, fmt.Errorf("servers[%d]: %w", i, err)
		}
		dec := yaml.NewDecoder(&buf)
		dec.KnownFields(true)
		var s ServerSpec
		if err := dec.Decode(&s); err != nil {
			return nil, fmt.Errorf("servers[%d] (line %d): %w", i, it.Line, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// ServersFile is where an operator's server changes persist: beside the
// config file, in NAME.servers.yaml for NAME.yaml. It holds, for every
// project an operator changed, that project's whole server set, which
// replaces the config's at start (see OverlayServers).
func ServersFile(configPath string) string {
	return strings.TrimSuffix(configPath, filepath.Ext(configPath)) + ".servers.yaml"
}

// serversDoc is the servers file: project -> server name -> server.
type serversDoc struct {
	Projects map[string]map[string]*Server `yaml:"projects"`
}

// OverlayServers reads the servers file at path (a missing file is no
// change) and replaces the servers of each project it lists, then validates
// the result. It returns the projects it replaced; projects the file lists
// that the config does not have are returned as ignored.
func (c *Config) OverlayServers(path string) (replaced, ignored []string, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("servers file: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var doc serversDoc
	if err := dec.Decode(&doc); err != nil {
		return nil, nil, fmt.Errorf("servers file %s: %w", path, err)
	}
	for _, pn := range sortedKeys(doc.Projects) {
		p := c.Projects[pn]
		if p == nil {
			ignored = append(ignored, pn)
			continue
		}
		p.Servers = doc.Projects[pn]
		replaced = append(replaced, pn)
	}
	if err := c.Validate(); err != nil {
		return nil, nil, fmt.Errorf("servers file %s: %w", path, err)
	}
	return replaced, ignored, nil
}

// SaveServers writes every project's servers to path atomically (a
// temporary file renamed over it), so a crash leaves the old file or the
// new one, never half of one.
func (c *Config) SaveServers(path string) error {
	doc := serversDoc{Projects: map[string]map[string]*Server{}}
	for pn, p := range c.Projects {
		doc.Projects[pn] = p.Servers
	}
	b, err := yaml.Marshal(doc)
	if err != nil {
		return fmt.Errorf("servers file: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("servers file: %w", err)
	}
	header := "# Servers managed by mcpctl (create/apply/delete server). Written by mcplocal;\n# it replaces the servers of the projects below at start.\n"
	if _, err := tmp.WriteString(header + string(b)); err != nil {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("servers file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("servers file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("servers file: %w", err)
	}
	return nil
}

// Specs lists every server of c as specs, sorted by project and name.
func (c *Config) Specs(project string) []ServerSpec {
	out := []ServerSpec{}
	for _, pn := range sortedKeys(c.Projects) {
		if project != "" && pn != project {
			continue
		}
		for _, sn := range sortedKeys(c.Projects[pn].Servers) {
			s := c.Projects[pn].Servers[sn]
			out = append(out, ServerSpec{Name: sn, Project: pn, URL: s.URL, HealthCheck: s.HealthCheck, Headers: s.HeaderRefs()})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Project < out[j].Project })
	return out
}

// HeaderRefs are the server's headers given by reference (valueEnv), as a
// spec shows them; nil when it has none. Inline values are never shown.
func (s *Server) HeaderRefs() map[string]HeaderRef {
	var out map[string]HeaderRef
	for n, h := range s.Headers {
		if h.ValueEnv == "" {
			continue
		}
		if out == nil {
			out = map[string]HeaderRef{}
		}
		out[n] = HeaderRef{ValueEnv: h.ValueEnv}
	}
	return out
}
