// Package selector extracts values from HTML and XML response bodies with
// CSS selectors (andybalholm/cascadia, the engine behind goquery) and XPath
// (antchfx/xpath with htmlquery and xmlquery). Selectors are compiled once,
// when the plan loads; a body is parsed only for requests that use them.
package selector

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/andybalholm/cascadia"
	"github.com/antchfx/htmlquery"
	"github.com/antchfx/xmlquery"
	"github.com/antchfx/xpath"
	"golang.org/x/net/html"
)

// CSS is a compiled CSS selector. Attr, when set, names the attribute read
// from each match instead of its text.
type CSS struct {
	sel  cascadia.Sel
	Attr string
}

// CompileCSS compiles a CSS selector.
func CompileCSS(s, attr string) (c *CSS, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("bad CSS selector %q: %v", s, r)
		}
	}()
	sel, err := cascadia.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("bad CSS selector %q: %v", s, err)
	}
	return &CSS{sel: sel, Attr: attr}, nil
}

// Find returns the text (or attribute) of the matches in an HTML body; at
// most one unless all.
func (c *CSS) Find(body []byte, all bool) []string {
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		return nil
	}
	var out []string
	for _, n := range cascadia.QueryAll(doc, c.sel) {
		v, ok := "", true
		if c.Attr != "" {
			v, ok = attr(n, c.Attr)
		} else {
			v = strings.TrimSpace(text(n))
		}
		if ok {
			out = append(out, v)
			if !all {
				break
			}
		}
	}
	return out
}

func attr(n *html.Node, name string) (string, bool) {
	for _, a := range n.Attr {
		if strings.EqualFold(a.Key, name) {
			return a.Val, true
		}
	}
	return "", false
}

func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// XPath is a compiled XPath expression.
type XPath struct {
	x *xpath.Expr
}

// CompileXPath compiles an XPath expression.
func CompileXPath(s string) (x *XPath, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("bad XPath %q: %v", s, r)
		}
	}()
	e, err := xpath.Compile(s)
	if err != nil {
		return nil, fmt.Errorf("bad XPath %q: %v", s, err)
	}
	return &XPath{x: e}, nil
}

// Find evaluates the expression on a body, as XML when it starts with an
// XML declaration or the content type says XML, else as HTML.
func (x *XPath) Find(body []byte, contentType string, all bool) []string {
	var out []string
	trimmed := bytes.TrimSpace(body)
	if strings.Contains(contentType, "xml") || bytes.HasPrefix(trimmed, []byte("<?xml")) {
		doc, err := xmlquery.Parse(bytes.NewReader(body))
		if err != nil {
			return nil
		}
		for _, n := range xmlquery.QuerySelectorAll(doc, x.x) {
			out = append(out, strings.TrimSpace(n.InnerText()))
			if !all {
				break
			}
		}
		return out
	}
	doc, err := htmlquery.Parse(bytes.NewReader(body))
	if err != nil {
		return nil
	}
	for _, n := range htmlquery.QuerySelectorAll(doc, x.x) {
		out = append(out, strings.TrimSpace(htmlquery.InnerText(n)))
		if !all {
			break
		}
	}
	return out
}
