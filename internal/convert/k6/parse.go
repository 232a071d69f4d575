// Package k6 converts a k6 script (JavaScript) into a plateau plan. The
// script is parsed with goja's ECMAScript parser — never run — and its
// default function (or each scenario's exec function), setup, options and
// thresholds are read as the constructs k6 scripts use: http calls with
// their params, check, sleep, group, __ENV, template literals, SharedArray
// over JSON or CSV files, JSON.stringify bodies and setup() data. What is
// outside that subset is named in the conversion report with its
// file:line:col, and in the plan as a comment where it was.
package k6

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/parser"
)

// maxSource bounds a script (a k6 script is a few kilobytes; a bundle of
// megabytes is not the common subset).
const maxSource = 8 << 20

// Script is a parsed k6 script.
type Script struct {
	Name    string // file name, for positions
	Src     string // the source as given
	Program *ast.Program
	Imports map[string]Import // local name → what it imports
	// Exports maps an exported name to the local one (export { a as b }).
	Exports map[string]string
	lines   []int // byte offset of each line start
}

// Import is one imported binding: Module ("k6/http", or a jslib URL) and
// the name imported from it ("default", "*" for a namespace, or a name).
type Import struct {
	Module, Name string
}

var (
	importRe = regexp.MustCompile(`(?m)^[ \t]*import\s+(?:([\w$]+)\s*(?:,\s*)?)?(?:\{([^}]*)\}|\*\s*as\s+([\w$]+))?\s*from\s*(['"])([^'"\n]+)['"][ \t]*;?`)
	bareRe   = regexp.MustCompile(`(?m)^[ \t]*import\s*(['"])([^'"\n]+)['"][ \t]*;?`)
	exportRe = regexp.MustCompile(`(?m)^([ \t]*)export\s+(default\s+)?`)
	listRe   = regexp.MustCompile(`(?m)^[ \t]*export\s*\{([^}]*)\}[ \t]*;?`)
)

// Parse parses a k6 script. ES module syntax (import, export), which goja's
// parser does not take, is read here and blanked out in place — same
// length, newlines kept — so every position the parser reports is the
// position in the file.
func Parse(name string, src []byte) (*Script, error) {
	if len(src) > maxSource {
		return nil, fmt.Errorf("%s: %d bytes is larger than a k6 script's %d MiB limit here", name, len(src), maxSource>>20)
	}
	if !utf8.Valid(src) {
		return nil, fmt.Errorf("%s: not UTF-8 text", name)
	}
	s := &Script{Name: name, Src: string(src), Imports: map[string]Import{}, Exports: map[string]string{}}
	s.lines = []int{0}
	for i, b := range src {
		if b == '\n' {
			s.lines = append(s.lines, i+1)
		}
	}
	buf := []byte(string(src))
	blank := func(a, b int) {
		for i := a; i < b; i++ {
			if buf[i] != '\n' && buf[i] != '\r' {
				buf[i] = ' '
			}
		}
	}
	for _, m := range importRe.FindAllSubmatchIndex(buf, -1) {
		mod := string(buf[m[10]:m[11]])
		if m[2] >= 0 {
			s.Imports[string(buf[m[2]:m[3]])] = Import{mod, "default"}
		}
		if m[4] >= 0 {
			for _, part := range strings.Split(string(buf[m[4]:m[5]]), ",") {
				part = strings.TrimSpace(part)
				if part == "" {
					continue
				}
				orig, local, ok := strings.Cut(part, " as ")
				if !ok {
					local = orig
				}
				s.Imports[strings.TrimSpace(local)] = Import{mod, strings.TrimSpace(orig)}
			}
		}
		if m[6] >= 0 {
			s.Imports[string(buf[m[6]:m[7]])] = Import{mod, "*"}
		}
		blank(m[0], m[1])
	}
	for _, m := range bareRe.FindAllSubmatchIndex(buf, -1) {
		blank(m[0], m[1])
	}
	for _, m := range listRe.FindAllSubmatchIndex(buf, -1) {
		for _, part := range strings.Split(string(buf[m[2]:m[3]]), ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			local, exported, ok := strings.Cut(part, " as ")
			if !ok {
				exported = local
			}
			s.Exports[strings.TrimSpace(exported)] = strings.TrimSpace(local)
		}
		blank(m[0], m[1])
	}
	// export default X → __k6default = X (same length: "export default "
	// is 15 bytes at least); export const/function → const/function.
	out := exportRe.ReplaceAllFunc(buf, func(m []byte) []byte {
		sub := exportRe.FindSubmatch(m)
		indent := string(sub[1])
		rest := len(m) - len(indent)
		if len(sub[2]) > 0 {
			r := defaultName + "="
			return []byte(indent + r + strings.Repeat(" ", rest-len(r)))
		}
		return []byte(indent + strings.Repeat(" ", rest))
	})
	prog, err := parser.ParseFile(nil, name, string(out), 0)
	if err != nil {
		var list parser.ErrorList
		if errors.As(err, &list) && len(list) > 0 {
			e := list[0]
			hint := ""
			if strings.HasSuffix(strings.ToLower(name), ".ts") {
				hint = " (TypeScript is not read: convert the compiled JavaScript)"
			}
			return nil, fmt.Errorf("%s:%d:%d: %s%s", name, e.Position.Line, e.Position.Column, e.Message, hint)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s.Program = prog
	return s, nil
}

// defaultName is what `export default` is assigned to in the parsed text.
const defaultName = "__k6default"

// Pos is the file:line:col of a node's first character.
func (s *Script) Pos(idx file.Idx) string {
	off := int(idx) - 1
	if off < 0 || off > len(s.Src) {
		return s.Name
	}
	line := 0
	lo, hi := 0, len(s.lines)-1
	for lo <= hi {
		mid := (lo + hi) / 2
		if s.lines[mid] <= off {
			line, lo = mid, mid+1
		} else {
			hi = mid - 1
		}
	}
	col := utf8.RuneCountInString(s.Src[s.lines[line]:off]) + 1
	return fmt.Sprintf("%s:%d:%d", s.Name, line+1, col)
}

// start is a node's first index; the parser leaves a few statements'
// keyword positions unset, which their first expression stands in for.
func start(n ast.Node) file.Idx {
	switch x := n.(type) {
	case *ast.IfStatement:
		if x.If == 0 {
			return x.Test.Idx0() - 4
		}
	case *ast.WhileStatement:
		if x.While == 0 {
			return x.Test.Idx0()
		}
	}
	return n.Idx0()
}

// Text is the source text of a node, on one line, cut to n characters.
func (s *Script) Text(n ast.Node, max int) string {
	a, b := int(start(n))-1, int(n.Idx1())-1
	if a < 0 || b > len(s.Src) || a >= b {
		return ""
	}
	t := strings.Join(strings.Fields(s.Src[a:b]), " ")
	if utf8.RuneCountInString(t) > max {
		r := []rune(t)
		t = string(r[:max]) + "…"
	}
	return t
}
