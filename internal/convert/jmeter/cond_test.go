package jmeter

import "testing"

func TestCondition(t *testing.T) {
	t.Parallel()
	c := &conv{vars: map[string]string{"flag": "users.flag"}}
	for _, tc := range []struct {
		name, in string
		expr     bool
		want     string
		ok       bool
	}{
		{"jexl3 compare", `${__jexl3("${flag}" == "yes")}`, true, `${users.flag} == "yes"`, true},
		{"javascript", `"${a}" != "x" && "${b}" == "y"`, false, `${a} != "x" && ${b} == "y"`, true},
		{"variable", `${done}`, true, `${done} == "true"`, true},
		{"groovy not equals", `${__groovy(!"NOT_FOUND".equals(vars.get("invoice_id"));)}`, true, `!("NOT_FOUND" == ${invoice_id})`, true},
		{"groovy null and empty", `${__groovy( vars.get("u") != null && !vars.get("u").equals("") ;)}`, true, `${u} != "" && !(${u} == "")`, true},
		{"groovy toInteger", `${__groovy(vars.get("t").toInteger() > 1800000)}`, true, `${t} > 1800000`, true},
		{"script", `${__groovy(ctx.getPreviousResult().isSuccessful())}`, true, "", false},
		{"javascript method", `"${a}".indexOf("x") > 0`, false, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := c.condition(tc.in, tc.expr)
			if ok != tc.ok || got != tc.want {
				t.Errorf("condition(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}
