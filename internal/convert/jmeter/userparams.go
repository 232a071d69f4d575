package jmeter

import (
	"encoding/csv"
	"fmt"
	"strings"

	"github.com/plateau-perf/plateau/internal/convert"
)

// userParams converts a User Parameters pre-processor whose values are
// literal: JMeter gives thread n (from 0) the value set n modulo the
// number of sets, once per thread. The sets become a CSV file the
// conversion writes beside the plan, read one row per user (per_user,
// recycled: the rows go to users in the order they start). Values that hold
// functions or variables are left to the generic not-converted path
// (false).
func (c *conv) userParams(path string, e *Element) bool {
	var names []string
	if p := e.props.prop("UserParameters.names"); p != nil {
		for _, k := range p.children {
			names = append(names, strings.TrimSpace(k.text.String()))
		}
	}
	var rows [][]string
	if p := e.props.prop("UserParameters.thread_values"); p != nil {
		for _, set := range p.children {
			var row []string
			for _, k := range set.children {
				row = append(row, k.text.String())
			}
			rows = append(rows, row)
		}
	}
	if len(names) == 0 || len(rows) == 0 {
		return false
	}
	for _, r := range rows {
		if len(r) != len(names) {
			return false
		}
		for _, v := range r {
			if strings.Contains(v, "${") {
				return false
			}
		}
	}
	c.feeders++
	name := fmt.Sprintf("user_parameters_%d", c.feeders)
	file := name + ".csv"
	cols := make([]string, len(names))
	for i, n := range names {
		cols[i] = convert.VarName(n)
	}
	var b strings.Builder
	w := csv.NewWriter(&b)
	_ = w.Write(cols)
	_ = w.WriteAll(rows)
	if c.plan.Files == nil {
		c.plan.Files = map[string][]byte{}
	}
	c.plan.Files[file] = []byte(b.String())
	c.plan.Data = append(c.plan.Data, convert.Feeder{Name: name, CSV: file, Order: "per_user", OnExhausted: "recycle", Columns: cols})
	for i, n := range names {
		c.vars[n] = name + "." + cols[i]
	}
	note := fmt.Sprintf("%d value %s, one per user for all its iterations, shared out in turn as JMeter does (written as %s beside the plan); JMeter gives thread n set n modulo %d, plateau the next set to each user as it starts, so user numbers and sets may pair differently", len(rows), map[bool]string{true: "set", false: "sets"}[len(rows) == 1], file, len(rows))
	c.add(path, e, convert.Converted, note, "")
	return true
}
