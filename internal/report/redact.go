package report

import "github.com/plateau-perf/plateau/internal/secret"

// mask replaces every secret value.
const mask = secret.Mask

// Redactor removes secrets from text that came from a run: secret.Rule,
// the one rule every writer uses.
type Redactor = secret.Rule

// NewRedactor builds a redactor for the secret names (secret.IsName, plus
// names) and the literal values.
func NewRedactor(names, values []string) *Redactor { return secret.NewRule(names, values) }

// RedactPlan masks the values of secret headers, cookies and variables in
// a YAML plan and returns the masked text and the literal secret values
// found (for NewRedactor): secret.RedactYAML.
func RedactPlan(src []byte, names []string) (string, []string) { return secret.RedactYAML(src, names) }
