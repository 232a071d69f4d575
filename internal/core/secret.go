package core

import "github.com/plateau-perf/plateau/internal/secret"

// IsSecretName is secret.IsName, the one rule for secret names; it stays
// here for the packages that already ask core.
func IsSecretName(name string) bool { return secret.IsName(name) }

// IsSecretHeader is secret.IsName: headers, fields, parameters and
// variables share one rule.
func IsSecretHeader(name string) bool { return secret.IsName(name) }
