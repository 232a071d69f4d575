//go:build !linux

package wake

func newPrecise(chan struct{}) (source, bool) { return nil, false }
