package rundir

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// NewID returns a fresh run id: 128 random bits in hex. Create gives every
// new run directory one (run.json "id").
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// RunID is the run's identity: run.json's id, or, for a run.json written
// before ids existed, one derived from what cannot change once the run
// started (tool, name, start, generating host, segment, imported files), so
// the same old directory always answers the same id. A derived id starts
// with "d-".
func (in *Info) RunID() string {
	if in.ID != "" {
		return in.ID
	}
	h := sha256.New()
	for _, s := range []string{in.Tool, in.Name, in.Start.UTC().Format(time.RFC3339Nano), in.Host.Hostname, in.Segment, strings.Join(in.Source, "\x00")} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return "d-" + hex.EncodeToString(h.Sum(nil)[:16])
}
