// Package demo runs plateau's bundled system under test: a two-tier service
// modelled on reference 000 (front "lar" → back "cave" with an SQLite store,
// plus the external "MSB" services), each instance its own child process so
// that per-process monitoring is real, behind a round-robin load balancer.
package demo

import (
	_ "embed"
)

// PlanYAML is the demo study's plan; examples/lar-cave/plan.yaml is the same
// file (a test keeps them equal).
//
//go:embed plan.yaml
var PlanYAML []byte
