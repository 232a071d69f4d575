package plan

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// serverSources decodes server_side.sources: a list of items with one key,
// the source kind, whose value maps name, path and the kind's options,
// e.g. - accesslog: {name: lar-1, path: logs/access.log, format: plateau}.
func (d *decoder) serverSources(n *yaml.Node, key string) []ServerSource {
	const want = "a list of sources such as - accesslog: {path: logs/access.log, format: combined_rt}"
	if n.Kind != yaml.SequenceNode {
		d.typeErr(n, key, want)
		return nil
	}
	var out []ServerSource
	names := map[string]Pos{}
	for _, item := range n.Content {
		item = d.resolve(item)
		if item == nil {
			continue
		}
		if item.Kind != yaml.MappingNode || len(d.pairs(item)) != 1 {
			d.errorf(item, "server_side source: expected one kind (accesslog, vmstat, jstat, dockerstats) with its fields, e.g. - accesslog: {path: logs/access.log}")
			continue
		}
		p := d.pairs(item)[0]
		src := ServerSource{Kind: p.key.Value, Pos: d.pos(p.key), Options: map[string]string{}}
		body := d.resolve(p.val)
		if isNull(body) || body.Kind != yaml.MappingNode {
			d.errorf(p.key, "%s source: expected a mapping with at least path, e.g. {path: logs/access.log}", src.Kind)
			continue
		}
		ok := true
		for _, f := range d.pairs(body) {
			v, good := d.str(f.val, f.key.Value)
			if !good {
				ok = false
				continue
			}
			switch f.key.Value {
			case "name":
				src.Name = strings.TrimSpace(v)
			case "path":
				src.Path = v
			default:
				src.Options[f.key.Value] = v
			}
		}
		if !ok {
			continue
		}
		if strings.TrimSpace(src.Path) == "" {
			d.missing(body, "%s source: path is required (the file the server writes)", src.Kind)
			continue
		}
		if d.opt.CheckServerSource != nil {
			if err := d.opt.CheckServerSource(&src); err != nil {
				d.errorf(p.key, "%s source: %v", src.Kind, err)
				continue
			}
		}
		if src.Name != "" {
			if prev, dup := names[src.Kind+"\x00"+src.Name]; dup {
				d.errorf(p.key, "%s source name %q is used twice (first at %d:%d)", src.Kind, src.Name, prev.Line, prev.Col)
				continue
			}
			names[src.Kind+"\x00"+src.Name] = src.Pos
		}
		out = append(out, src)
	}
	return out
}
