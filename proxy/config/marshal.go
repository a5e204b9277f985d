package config

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// MarshalYAML writes a stage in the form UnmarshalYAML reads: the bare name
// when it has no options, else a one-key map {name: options}.
func (s Stage) MarshalYAML() (any, error) {
	if s.Options == nil {
		return s.Name, nil
	}
	return map[string]any{s.Name: s.Options}, nil
}

// Marshal renders c as a YAML document that Parse reads back to an equal
// Config (reflect.DeepEqual), so a harness can hand a config built in code to
// a proxy in another process.
//
// Plain yaml.Marshal does not round-trip: it writes a nil map as {} and a nil
// slice as [], which decode as empty, non-nil values. Marshal leaves out every
// struct field holding its zero value (nil maps, slices and pointers included)
// and writes the rest as is, so nil stays nil and empty stays empty.
//
// Two conditions hold for the round trip: c is valid as Parse leaves it (Parse
// validates, and Validate fills the listen and audit defaults), and free-form
// values (stage options, health-check arguments) use the types YAML decodes
// to: int, float64, string, bool, []any and map[string]any.
func Marshal(c *Config) ([]byte, error) {
	if c == nil {
		return nil, fmt.Errorf("config: marshal a nil config")
	}
	n, err := node(reflect.ValueOf(c))
	if err != nil {
		return nil, fmt.Errorf("config: marshal: %w", err)
	}
	return yaml.Marshal(n)
}

var marshalerType = reflect.TypeFor[yaml.Marshaler]()

// node builds the YAML node of v: structs field by field (zero fields left
// out), maps and slices of structs element by element, and everything else,
// including types with their own MarshalYAML, through the yaml encoder.
func node(v reflect.Value) (*yaml.Node, error) {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
		}
		if !v.Type().Implements(marshalerType) {
			return node(v.Elem())
		}
	}
	switch {
	case v.Type().Implements(marshalerType):
		return encode(v)
	case v.Kind() == reflect.Struct:
		return structNode(v)
	case v.Kind() == reflect.Map && v.Type().Key().Kind() == reflect.String && structured(v.Type().Elem()):
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		keys := make([]string, 0, v.Len())
		for _, k := range v.MapKeys() {
			keys = append(keys, k.String())
		}
		sort.Strings(keys)
		for _, k := range keys {
			val, err := node(v.MapIndex(reflect.ValueOf(k).Convert(v.Type().Key())))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, val)
		}
		return n, nil
	case v.Kind() == reflect.Slice && structured(v.Type().Elem()):
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for i := range v.Len() {
			el, err := node(v.Index(i))
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			n.Content = append(n.Content, el)
		}
		return n, nil
	}
	return encode(v)
}

// structured reports whether t (or what it points to) is a struct, whose
// zero fields node must leave out.
func structured(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct
}

func encode(v reflect.Value) (*yaml.Node, error) {
	var n yaml.Node
	if err := n.Encode(v.Interface()); err != nil {
		return nil, err
	}
	return &n, nil
}

func structNode(v reflect.Value) (*yaml.Node, error) {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		fv := v.Field(i)
		if fv.IsZero() {
			continue
		}
		if strings.Contains(opts, "inline") {
			in, err := node(fv)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.Name, err)
			}
			if in.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("%s: inline field is not a mapping", f.Name)
			}
			n.Content = append(n.Content, in.Content...)
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name) // yaml.v3's default key
		}
		val, err := node(fv)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name}, val)
	}
	return n, nil
}
