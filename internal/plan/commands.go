package plan

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/plateau-perf/plateau/internal/secret"
)

// Command is one prepare or cleanup command: a program run outside the
// measurement, before the first request (prepare) or after the last
// (cleanup). Exactly one of Shell and Args is set.
type Command struct {
	// Name labels the command in the report and names its log file;
	// default "prepare N" / "cleanup N".
	Name string
	// Shell is run by "sh -c" (YAML: a plain string item, or run:).
	Shell string
	// Args is the program and its arguments, run without a shell (YAML:
	// args: [program, arg…]). A relative program path containing a
	// slash resolves against Dir.
	Args []string
	// Dir is the working directory, resolved against the plan file's
	// directory; default the plan file's directory.
	Dir string
	// Env is added to the environment plateau was started with (names
	// must be shell identifiers). Values whose names look secret, and
	// the plan's secret values, are masked in the saved output.
	Env map[string]string
	// Timeout bounds the command (its whole process group is killed when
	// it passes); default DefaultCommandTimeout.
	Timeout time.Duration
	Pos     Pos
}

// DefaultCommandTimeout bounds a prepare or cleanup command without a
// timeout of its own.
const DefaultCommandTimeout = 10 * time.Minute

// String is the command as a user would type it: the shell text, or the
// arguments joined with spaces (quoted where they need it).
func (c *Command) String() string {
	if c.Shell != "" {
		return c.Shell
	}
	parts := make([]string, len(c.Args))
	for i, a := range c.Args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`|&;<>()*?[]#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts[i] = a
	}
	return strings.Join(parts, " ")
}

// commandKeys are the keys of a command given as a mapping.
var commandKeys = []string{"name", "run", "args", "dir", "env", "timeout"}

// commands reads prepare: or cleanup:, a list whose items are a shell
// command line ("- ./load.sh data/") or a mapping {name, run | args, dir,
// env, timeout}.
func (d *decoder) commands(n *yaml.Node, key string) []Command {
	n = d.resolve(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.typeErr(n, key, "a list of commands (each item a command line, or {run: …} / {args: […]})")
		return nil
	}
	out := make([]Command, 0, len(n.Content))
	names := map[string]Pos{}
	for i, item := range n.Content {
		item = d.resolve(item)
		if isNull(item) {
			d.errorf(n, "%s: item %d is empty", key, i+1)
			continue
		}
		c := Command{Pos: d.pos(item), Timeout: DefaultCommandTimeout}
		var nameNode *yaml.Node
		switch item.Kind {
		case yaml.ScalarNode:
			if s, ok := d.str(item, key); ok {
				c.Shell = s
			}
			if strings.TrimSpace(c.Shell) == "" && !d.failed[item] {
				d.errorf(item, "%s: item %d is an empty command", key, i+1)
			}
		case yaml.MappingNode:
			nameNode = d.command(&c, item, key, i+1)
		default:
			d.typeErr(item, key, "a command line or a mapping {run: …} / {args: […]}")
			continue
		}
		if c.Name == "" {
			c.Name = fmt.Sprintf("%s %d", key, i+1)
		} else if first, dup := names[c.Name]; dup {
			d.errorf(nameNode, "%s: duplicate command name %q (first at %d:%d)", key, c.Name, first.Line, first.Col)
		}
		names[c.Name] = c.Pos
		if c.Dir == "" {
			c.Dir = d.dir
		} else if !filepath.IsAbs(c.Dir) {
			c.Dir = filepath.Join(d.dir, c.Dir)
		}
		out = append(out, c)
	}
	return out
}

// command decodes one command mapping into c and returns its name node.
func (d *decoder) command(c *Command, n *yaml.Node, key string, idx int) *yaml.Node {
	ctx := key + " command"
	k := keyset{}
	for _, p := range d.pairs(n) {
		name := p.key.Value
		k[name] = p
		switch name {
		case "name":
			if s, ok := d.str(p.val, "name"); ok {
				c.Name = strings.TrimSpace(s)
				if c.Name == "" || strings.ContainsAny(c.Name, "/\\\n") {
					d.errorf(p.val, "%s: name %q must be non-empty text without / \\ or newlines (it names the log file)", ctx, s)
				}
			}
		case "run":
			if s, ok := d.str(p.val, "run"); ok {
				c.Shell = s
			}
		case "args":
			v := d.resolve(p.val)
			if !isNull(v) {
				c.Args = d.strList(v, "args")
			}
		case "dir":
			if s, ok := d.str(p.val, "dir"); ok {
				c.Dir = s
			}
		case "env":
			c.Env = d.commandEnv(p.val)
		case "timeout":
			v := d.resolve(p.val)
			if isNull(v) {
				continue
			}
			if t, ok := d.duration(v, "timeout"); ok {
				if t <= 0 {
					d.errorf(v, "%s: timeout must be positive", ctx)
				} else {
					c.Timeout = t
				}
			}
		default:
			d.unknownKey(p.key, ctx, commandKeys)
			d.unknown[n] = true
		}
	}
	switch {
	case k.has("run") && k.has("args"):
		d.errorf(k["args"].key, "%s: give run (a shell command line) or args (a program and its arguments), not both", ctx)
	case k.has("run"):
		if strings.TrimSpace(c.Shell) == "" && !d.failed[d.resolve(k["run"].val)] {
			d.errorf(k["run"].val, "%s: run is empty", ctx)
		}
	case k.has("args"):
		if len(c.Args) == 0 && !d.failed[d.resolve(k["args"].val)] {
			d.errorf(k["args"].val, "%s: args is empty; the first item is the program", ctx)
		} else if len(c.Args) > 0 && strings.TrimSpace(c.Args[0]) == "" {
			d.errorf(k["args"].val, "%s: args: the first item (the program) is empty", ctx)
		}
	default:
		d.missing(n, "%s %d: missing run (a shell command line) or args (a program and its arguments)", key, idx)
	}
	if p, ok := k["name"]; ok {
		return p.val
	}
	return n
}

// commandEnv reads a command's env: a mapping NAME → value.
func (d *decoder) commandEnv(n *yaml.Node) map[string]string {
	n = d.resolve(n)
	if isNull(n) {
		return nil
	}
	ps, ok := d.mapping(n, "env", "a mapping of NAME → value")
	if !ok {
		return nil
	}
	out := make(map[string]string, len(ps))
	for _, p := range ps {
		name := p.key.Value
		if !isEnvName(name) {
			d.errorf(p.key, "env: bad variable name %q: use letters, digits and _, not starting with a digit", name)
			continue
		}
		if s, ok := d.str(p.val, "env."+name); ok {
			out[name] = s
		}
	}
	return out
}

func isEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return true
}

// hasPrepare reports whether the plan's root mapping has a non-empty
// prepare: list. Its commands may write the plan's data files, so a data
// file that does not exist yet is then not an error (Feeder.Pending).
func (d *decoder) hasPrepare(root *yaml.Node) bool {
	if root == nil || root.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := root.Content[i]; k.Kind == yaml.ScalarNode && k.Value == "prepare" {
			v := root.Content[i+1]
			return v.Kind == yaml.SequenceNode && len(v.Content) > 0
		}
	}
	return false
}

// commands masks, in a prepare: or cleanup: list, the values of secret
// env entries and the passwords of URLs and DSNs in command lines and
// arguments.
func (r *redactor) commands(n *yaml.Node) {
	if n.Kind != yaml.SequenceNode {
		return
	}
	url := func(s string) string { return secret.URL(s, r.isSecret) }
	for _, item := range n.Content {
		switch item.Kind {
		case yaml.ScalarNode, yaml.AliasNode:
			r.scalar(item, url)
		case yaml.MappingNode:
			for i := 0; i+1 < len(item.Content); i += 2 {
				k, v := item.Content[i], item.Content[i+1]
				switch k.Value {
				case "env":
					r.names(v, r.isSecret)
				case "run":
					r.scalar(v, url)
				case "args":
					if v.Kind == yaml.SequenceNode {
						for _, a := range v.Content {
							r.scalar(a, url)
						}
					}
				}
			}
		}
	}
}

// generateFeeder makes a generate: feeder's rows through Options.Generate.
func (d *decoder) generateFeeder(f *Feeder, n *yaml.Node) bool {
	g := f.Generate
	if g == nil {
		return false // a bad generate: value, already reported
	}
	ok := true
	if g.Spec == "" {
		d.missing(d.resolve(n), "data %q: generate: missing spec (a plateau datagen spec file)", f.Name)
		ok = false
	}
	if g.Entity == "" {
		d.missing(d.resolve(n), "data %q: generate: missing entity (the spec's entity whose rows feed the plan)", f.Name)
		ok = false
	}
	if g.Scale < 0 {
		d.errorf(n, "data %q: generate: scale must be positive", f.Name)
		ok = false
	}
	if g.Seed != nil && *g.Seed < 0 {
		d.errorf(n, "data %q: generate: seed must not be negative", f.Name)
		ok = false
	}
	if !ok {
		return false
	}
	if d.opt.Generate == nil {
		d.errorf(n, "data %q: generate: data generation is not available here", f.Name)
		return false
	}
	path := g.Spec
	if !filepath.IsAbs(path) {
		path = filepath.Join(d.dir, path)
	}
	var seed *uint64
	if g.Seed != nil {
		u := uint64(*g.Seed)
		seed = &u
	}
	cols, rows, err := d.opt.Generate(path, g.Entity, g.Scale, seed)
	if err != nil {
		d.errorf(n, "data %q: generate: %v", f.Name, err)
		return false
	}
	f.Columns, f.Rows = cols, rows
	return true
}
