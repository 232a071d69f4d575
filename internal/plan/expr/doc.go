// Package expr is the plan's small expression language: the conditions of
// if/loop while/until steps and the functions inside ${…} templates
// (${uuid()}, ${urlencode(name)}, ${now("2006-01-02", "+24h")}).
//
// One syntax serves both. An expression is compiled once, at load time,
// into a tree of closures; evaluating it does no parsing and no map lookup,
// and a plan that uses no expression pays nothing for the package.
//
// Operands are variables (${name} or a bare name, data columns as
// data.column), strings in single or double quotes, numbers, true, false,
// null, the last response's status, and function calls. Operators, from
// loosest to tightest: || , && , ! , and the comparisons == != < <= > >=
// =~ (matches a regex literal) and !~. Two operands compare as numbers when
// both read as numbers, else as text.
package expr
