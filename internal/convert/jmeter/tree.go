// Package jmeter converts an Apache JMeter test plan (.jmx) into a plateau
// plan and a conversion report that accounts for every enabled element of
// the plan's tree: converted, converted in part, not needed (listeners), or
// left as a YAML comment where it was (scripts, JDBC, JMS, plugins).
package jmeter

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Element is one test element of a .jmx tree with its children (the
// hashTree that follows it in the file).
type Element struct {
	Tag       string // XML element name: "HTTPSamplerProxy", "ThreadGroup"
	TestClass string
	GUIClass  string
	Name      string // testname
	Enabled   bool
	Line      int // line of the element in the .jmx file
	props     *xnode
	Children  []*Element
}

// xnode is a generic XML node: the properties of an element.
type xnode struct {
	name     string
	attrs    map[string]string
	children []*xnode
	text     strings.Builder
	line     int
}

func (n *xnode) attr(k string) string { return n.attrs[k] }

// maxDepth bounds the nesting of a .jmx file; real plans nest a few dozen
// levels, and a bound keeps a hostile file from exhausting the stack.
const maxDepth = 500

// Parse reads a .jmx file. Errors name the line.
func Parse(r io.Reader) (*Element, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading jmx: %w", err)
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	// lineAt counts newlines incrementally: offsets only grow.
	line, seen := 1, 0
	lineAt := func(off int64) int {
		end := min(int(off), len(data))
		if end > seen {
			line += bytes.Count(data[seen:end], []byte("\n"))
			seen = end
		}
		return line
	}
	var stack []*xnode
	var root *xnode
	for {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("jmx is not valid XML: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			n := &xnode{name: t.Name.Local, attrs: map[string]string{}, line: lineAt(off)}
			for _, a := range t.Attr {
				n.attrs[a.Name.Local] = a.Value
			}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.children = append(p.children, n)
			} else if root == nil {
				root = n
			}
			stack = append(stack, n)
			if len(stack) > maxDepth {
				return nil, fmt.Errorf("jmx line %d: nested more than %d levels", n.line, maxDepth)
			}
		case xml.EndElement:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text.Write(t)
			}
		}
	}
	if root == nil || root.name != "jmeterTestPlan" {
		return nil, errors.New("not a JMeter test plan: the root element is not <jmeterTestPlan>")
	}
	var top *xnode
	for _, c := range root.children {
		if c.name == "hashTree" {
			top = c
			break
		}
	}
	if top == nil {
		return nil, errors.New("jmx line 1: <jmeterTestPlan> has no <hashTree>")
	}
	els, err := elements(top)
	if err != nil {
		return nil, err
	}
	for _, e := range els {
		if e.Tag == "TestPlan" {
			return e, nil
		}
	}
	return nil, errors.New("jmx has no <TestPlan> element")
}

// elements reads the children of a hashTree: each element is followed by
// the hashTree of its own children.
func elements(tree *xnode) ([]*Element, error) {
	var out []*Element
	for i := 0; i < len(tree.children); i++ {
		c := tree.children[i]
		if c.name == "hashTree" {
			// A hashTree without an element before it: tolerated, its
			// elements are read as siblings (JMeter itself ignores it).
			sub, err := elements(c)
			if err != nil {
				return nil, err
			}
			out = append(out, sub...)
			continue
		}
		e := &Element{
			Tag:       c.name,
			TestClass: c.attr("testclass"),
			GUIClass:  c.attr("guiclass"),
			Name:      c.attr("testname"),
			Enabled:   c.attr("enabled") != "false",
			Line:      c.line,
			props:     c,
		}
		if e.TestClass == "" {
			e.TestClass = c.name
		}
		if i+1 < len(tree.children) && tree.children[i+1].name == "hashTree" {
			kids, err := elements(tree.children[i+1])
			if err != nil {
				return nil, err
			}
			e.Children = kids
			i++
		}
		out = append(out, e)
	}
	return out, nil
}

// prop finds a direct property by its name attribute.
func (n *xnode) prop(name string) *xnode {
	if n == nil {
		return nil
	}
	for _, c := range n.children {
		if c.attrs["name"] == name {
			return c
		}
	}
	return nil
}

// Str returns the text of the property name ("" when absent).
func (e *Element) Str(name string) string { return e.props.str(name) }

func (n *xnode) str(name string) string {
	p := n.prop(name)
	if p == nil {
		return ""
	}
	return p.text.String()
}

// Has reports whether the element has the property.
func (e *Element) Has(name string) bool { return e.props.prop(name) != nil }

// Bool reads a boolean property; def when absent.
func (e *Element) Bool(name string, def bool) bool {
	p := e.props.prop(name)
	if p == nil {
		return def
	}
	return strings.TrimSpace(p.text.String()) == "true"
}

// arguments reads an Arguments collection (HTTP arguments, User Defined
// Variables) from the element property name, or from the element itself
// when name is "".
type argument struct {
	Name, Value string
	Encode      bool
	UseEquals   bool
	Meta        string
}

func (n *xnode) arguments(name string) []argument {
	holder := n
	if name != "" {
		holder = n.prop(name)
	}
	if holder == nil {
		return nil
	}
	coll := holder.prop("Arguments.arguments")
	if coll == nil {
		return nil
	}
	var out []argument
	for _, a := range coll.children {
		if a.name != "elementProp" {
			continue
		}
		arg := argument{
			Name:      a.str("Argument.name"),
			Value:     a.str("Argument.value"),
			Meta:      a.str("Argument.metadata"),
			Encode:    a.str("HTTPArgument.always_encode") == "true",
			UseEquals: a.str("HTTPArgument.use_equals") != "false",
		}
		if arg.Name == "" && a.prop("Argument.name") == nil {
			arg.Name = a.attrs["name"]
		}
		out = append(out, arg)
	}
	return out
}

// collection reads the string items of a collectionProp.
func (e *Element) collection(name string) []string {
	p := e.props.prop(name)
	if p == nil {
		return nil
	}
	var out []string
	for _, c := range p.children {
		out = append(out, c.text.String())
	}
	return out
}

// sub returns a nested elementProp by name.
func (e *Element) sub(name string) *xnode { return e.props.prop(name) }
