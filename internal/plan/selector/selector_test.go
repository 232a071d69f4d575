package selector

import (
	"reflect"
	"testing"
)

const page = `<html><body><form><input type="hidden" name="csrf" value="tok-1"></form>
<ul><li class="item">one</li><li class="item">two</li></ul></body></html>`

func TestCSS(t *testing.T) {
	t.Parallel()
	c, err := CompileCSS(`input[name=csrf]`, "value")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Find([]byte(page), false); !reflect.DeepEqual(got, []string{"tok-1"}) {
		t.Errorf("csrf = %v", got)
	}
	c, _ = CompileCSS(`li.item`, "")
	if got := c.Find([]byte(page), true); !reflect.DeepEqual(got, []string{"one", "two"}) {
		t.Errorf("items = %v", got)
	}
	if _, err := CompileCSS(`li[`, ""); err == nil {
		t.Error("bad selector accepted")
	}
}

func TestXPath(t *testing.T) {
	t.Parallel()
	x, err := CompileXPath(`//li[@class="item"]`)
	if err != nil {
		t.Fatal(err)
	}
	if got := x.Find([]byte(page), "text/html", true); !reflect.DeepEqual(got, []string{"one", "two"}) {
		t.Errorf("html = %v", got)
	}
	x, _ = CompileXPath(`//order/id`)
	xml := `<?xml version="1.0"?><orders><order><id>7</id></order><order><id>8</id></order></orders>`
	if got := x.Find([]byte(xml), "application/xml", false); !reflect.DeepEqual(got, []string{"7"}) {
		t.Errorf("xml = %v", got)
	}
	if _, err := CompileXPath(`//li[`); err == nil {
		t.Error("bad xpath accepted")
	}
}
