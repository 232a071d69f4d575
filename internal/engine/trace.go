package engine

// tracer writes a trace of a debugging run (plateau run --trace N). A nil
// tracer does nothing, so the user loop calls it unconditionally.
type tracer struct{}

func (t *tracer) iteration(_ *vu) {}

func (t *tracer) request(_ *vu, _ *request, _ any) {}

func (v *vu) traceBranch(_ string, _ bool) {}
