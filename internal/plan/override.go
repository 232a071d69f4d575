package plan

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// applyOverrides applies "--set key=value" items to the node tree before
// decoding, so an override is checked exactly like the file (a bad value is
// reported at the line it replaced, naming the override). It reports whether
// any override changed the tree.
func (d *decoder) applyOverrides(root *yaml.Node, sets []string) bool {
	changed := false
	for _, s := range sets {
		if err := d.applyOverride(root, s); err != "" {
			d.errs = append(d.errs, Error{File: d.file, Msg: "--set " + s + ": " + err})
			continue
		}
		changed = true
	}
	return changed
}

// loadShorthand are the keys "--set users=20" may name alone when the plan
// has a single workload (the product brief's short form).
var loadShorthand = map[string]bool{
	"users": true, "rate": true, "duration": true, "ramp_up": true, "iterations": true,
	"pace": true, "max_users": true, "stages": true, "steps": true, "stop_when": true, "graceful_stop": true,
	"search": true,
}

func (d *decoder) applyOverride(root *yaml.Node, s string) string {
	key, val, ok := strings.Cut(s, "=")
	key = strings.TrimSpace(key)
	if !ok || key == "" {
		return "expected key=value, e.g. workloads.read.load.users=20"
	}
	path := strings.Split(key, ".")
	for _, seg := range path {
		if seg == "" {
			return fmt.Sprintf("empty element in path %q", key)
		}
	}
	value, err := parseOverrideValue(val)
	if err != "" {
		return err
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return "the plan is not a YAML mapping"
	}
	cur := root.Content[0]
	if cur.Kind != yaml.MappingNode {
		return "the plan is not a YAML mapping"
	}
	if len(path) == 1 && loadShorthand[path[0]] && !isPlanKey(path[0]) {
		names := workloadNames(cur)
		if len(names) != 1 {
			return fmt.Sprintf("the plan has %d workloads; name one: workloads.NAME.load.%s", len(names), path[0])
		}
		path = []string{"workloads", names[0], "load", path[0]}
	}
	for i, seg := range path {
		last := i == len(path)-1
		for cur.Kind == yaml.AliasNode {
			cur = cur.Alias
		}
		switch cur.Kind {
		case yaml.MappingNode:
			vi := -1
			for j := 0; j+1 < len(cur.Content); j += 2 {
				if cur.Content[j].Value == seg {
					vi = j + 1
				}
			}
			if vi < 0 {
				// Create the key, positioned at its parent mapping.
				k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: seg, Line: cur.Line, Column: cur.Column}
				v := value
				if !last {
					v = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle}
				}
				if last {
					stamp(v, cur.Line, cur.Column)
				} else {
					v.Line, v.Column = cur.Line, cur.Column
				}
				d.origin[k], d.origin[v] = s, s
				markOrigin(d.origin, v, s)
				cur.Content = append(cur.Content, k, v)
				cur = v
				continue
			}
			if last {
				old := cur.Content[vi]
				stamp(value, old.Line, old.Column)
				markOrigin(d.origin, value, s)
				cur.Content[vi] = value
				continue
			}
			next := cur.Content[vi]
			if isNull(next) {
				// "http:" with nothing under it: make it a mapping.
				next.Kind, next.Tag, next.Value, next.Style = yaml.MappingNode, "!!map", "", 0
			}
			cur = next
		case yaml.SequenceNode:
			idx, err := strconv.Atoi(seg)
			if err != nil || idx < 0 || idx > len(cur.Content) || (idx == len(cur.Content) && !last) {
				return fmt.Sprintf("%s is a list of %d items; %q is not an index in it", strings.Join(path[:i], "."), len(cur.Content), seg)
			}
			if last {
				if idx == len(cur.Content) {
					stamp(value, cur.Line, cur.Column)
					cur.Content = append(cur.Content, value)
				} else {
					old := cur.Content[idx]
					stamp(value, old.Line, old.Column)
					cur.Content[idx] = value
				}
				markOrigin(d.origin, value, s)
				continue
			}
			cur = cur.Content[idx]
		default:
			return fmt.Sprintf("%s is %s, not a mapping; cannot set %s inside it", strings.Join(path[:i], "."), describe(cur), seg)
		}
	}
	return ""
}

// parseOverrideValue reads an override's value as YAML: a scalar ("20",
// "5s") or a flow value ("{users: 5, duration: 10s}", "[200, 201]"). An
// empty value is the empty string.
func parseOverrideValue(val string) (*yaml.Node, string) {
	if strings.TrimSpace(val) == "" {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: val, Style: yaml.DoubleQuotedStyle}, ""
	}
	var doc yaml.Node
	var perr string
	func() {
		defer func() {
			if r := recover(); r != nil {
				perr = fmt.Sprintf("value is not valid YAML: %v", r)
			}
		}()
		if err := yaml.Unmarshal([]byte(val), &doc); err != nil {
			perr = "value is not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")
		}
	}()
	if perr != "" {
		return nil, perr
	}
	if len(doc.Content) == 0 {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: val}, ""
	}
	v := doc.Content[0]
	if v.Kind == yaml.MappingNode || v.Kind == yaml.SequenceNode {
		v.Style = yaml.FlowStyle // keep the re-encoded plan close to what was typed
	}
	return v, ""
}

// stamp gives every node of an override value the position of the node it
// replaces, so errors in it point at the line the user overrode.
func stamp(n *yaml.Node, line, col int) {
	n.Line, n.Column = line, col
	for _, c := range n.Content {
		stamp(c, line, col)
	}
}

func markOrigin(origin map[*yaml.Node]string, n *yaml.Node, s string) {
	origin[n] = s
	for _, c := range n.Content {
		markOrigin(origin, c, s)
	}
}

// isPlanKey reports whether key is a top-level plan key.
func isPlanKey(key string) bool {
	byKey, _, _ := fieldsOf(reflect.TypeOf(Plan{}))
	_, ok := byKey[key]
	return ok
}

// workloadNames lists the workload names of a plan mapping.
func workloadNames(m *yaml.Node) []string {
	var names []string
	for j := 0; j+1 < len(m.Content); j += 2 {
		if m.Content[j].Value != "workloads" {
			continue
		}
		w := m.Content[j+1]
		for w.Kind == yaml.AliasNode {
			w = w.Alias
		}
		if w.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(w.Content); i += 2 {
			names = append(names, w.Content[i].Value)
		}
	}
	return names
}
