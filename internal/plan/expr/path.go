package expr

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/ohler55/ojg/jp"
)

// Path is a compiled JSONPath (RFC 9535 style, with filters such as
// $.items[?(@.status=="open")].id), evaluated on a decoded JSON document
// (the any values encoding/json produces). It is safe for concurrent use.
type Path struct {
	src string
	x   jp.Expr
}

// ParsePath compiles a JSONPath. A path without the leading $ is taken as
// relative to the root ("data.id" is "$.data.id").
func ParsePath(s string) (*Path, error) {
	src := strings.TrimSpace(s)
	if src == "" {
		return nil, fmt.Errorf("empty JSON path; write e.g. $.data.id")
	}
	p := src
	if !strings.HasPrefix(p, "$") {
		if strings.HasPrefix(p, "[") {
			p = "$" + p
		} else {
			p = "$." + p
		}
	}
	x, err := parsePath(p)
	if err != nil {
		return nil, fmt.Errorf("bad JSON path %q: %v", src, err)
	}
	return &Path{src: src, x: x}, nil
}

// parsePath calls the JSONPath library, turning its panics on odd input
// into errors.
func parsePath(p string) (x jp.Expr, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return jp.ParseString(p)
}

// String returns the path as written.
func (p *Path) String() string { return p.src }

// First returns the first value the path selects.
func (p *Path) First(doc any) (any, bool) {
	if doc == nil {
		return nil, false
	}
	if p.isSimple() {
		// Fast path: no filters or wildcards, at most one result.
		if !p.x.Has(doc) {
			return nil, false
		}
		return p.x.First(doc), true
	}
	all := p.x.Get(doc)
	if len(all) == 0 {
		return nil, false
	}
	return all[0], true
}

// All returns every value the path selects.
func (p *Path) All(doc any) []any {
	if doc == nil {
		return nil
	}
	return p.x.Get(doc)
}

func (p *Path) isSimple() bool {
	for _, f := range p.x {
		switch f.(type) {
		case jp.Root, jp.Child, jp.Nth:
		default:
			return false
		}
	}
	return true
}

// Text is a JSON value as text: strings as they are, numbers without
// exponent where possible, null as "null", objects and arrays as JSON.
func Text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return "null"
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		return strconv.FormatBool(x)
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}
