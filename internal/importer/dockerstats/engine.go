package dockerstats

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/plateau-perf/plateau/internal/importer"
)

// engineStats is the part of an Engine API stats object (moby's
// container.StatsResponse) the import uses. Counters are cumulative:
// CPU in ns, memory, network and block I/O in bytes.
type engineStats struct {
	Read     string   `json:"read"`
	Name     string   `json:"name"`
	ID       string   `json:"id"`
	CPU      cpuStats `json:"cpu_stats"`
	PreCPU   cpuStats `json:"precpu_stats"`
	Memory   memStats `json:"memory_stats"`
	Networks map[string]struct {
		RxBytes uint64 `json:"rx_bytes"`
		TxBytes uint64 `json:"tx_bytes"`
	} `json:"networks"`
	Blkio struct {
		ServiceBytes []struct {
			Op    string `json:"op"`
			Value uint64 `json:"value"`
		} `json:"io_service_bytes_recursive"`
	} `json:"blkio_stats"`
	Pids struct {
		Current *uint64 `json:"current"`
	} `json:"pids_stats"`
}

type cpuStats struct {
	Usage struct {
		Total  uint64   `json:"total_usage"`
		PerCPU []uint64 `json:"percpu_usage"`
		Kernel uint64   `json:"usage_in_kernelmode"`
		User   uint64   `json:"usage_in_usermode"`
	} `json:"cpu_usage"`
	System uint64 `json:"system_cpu_usage"`
	Online uint32 `json:"online_cpus"`
}

type memStats struct {
	Usage uint64            `json:"usage"`
	Limit uint64            `json:"limit"`
	Stats map[string]uint64 `json:"stats"`
}

// engineReading computes the CLI's figures from one stats object. It
// reports false for the CPU figure when the object has no previous CPU
// reading to take a difference against.
func engineReading(e *engineStats, tp *importer.TimeParser) (reading, bool, error) {
	r := newReading()
	if e.Read == "" {
		return r, false, errors.New("no read time")
	}
	t, err := tp.Parse([]byte(e.Read))
	if err != nil {
		return r, false, fmt.Errorf("read: %w", err)
	}
	if t <= 0 {
		return r, false, fmt.Errorf("read time %q before 1970", e.Read)
	}
	r.t = t
	r.container = strings.TrimPrefix(e.Name, "/")
	if r.container == "" {
		r.container = e.ID
		if len(r.container) > 12 {
			r.container = r.container[:12] // as the CLI shortens ids
		}
	}
	// CPU: docker CLI calculateCPUPercentUnix, against the object's own
	// precpu_stats (the daemon's previous reading).
	hasCPU := e.PreCPU.System > 0
	if hasCPU {
		online := float64(e.CPU.Online)
		if online == 0 {
			online = float64(len(e.CPU.Usage.PerCPU))
		}
		sysDelta := float64(e.CPU.System) - float64(e.PreCPU.System)
		pct := func(cur, prev uint64) float64 {
			d := float64(cur) - float64(prev)
			if sysDelta > 0 && d > 0 {
				return d / sysDelta * online * 100
			}
			return 0
		}
		r.cpu = pct(e.CPU.Usage.Total, e.PreCPU.Usage.Total)
		if e.CPU.Usage.User > 0 || e.CPU.Usage.Kernel > 0 {
			r.cpuUser = pct(e.CPU.Usage.User, e.PreCPU.Usage.User)
			r.cpuSys = pct(e.CPU.Usage.Kernel, e.PreCPU.Usage.Kernel)
		}
	}
	// Memory: calculateMemUsageUnixNoCache.
	if m := e.Memory; m.Usage > 0 || m.Limit > 0 {
		used := m.Usage
		if v, v1 := m.Stats["total_inactive_file"]; v1 && v < m.Usage {
			used = m.Usage - v
		} else if v := m.Stats["inactive_file"]; v < m.Usage {
			used = m.Usage - v
		}
		r.memRaw, r.memUsed = float64(m.Usage), float64(used)
		if m.Limit > 0 {
			r.memLimit = float64(m.Limit)
			r.memPct = float64(used) / float64(m.Limit) * 100
		}
	}
	// Network: calculateNetwork sums every interface.
	if e.Networks != nil {
		var rx, tx uint64
		for _, n := range e.Networks {
			rx += n.RxBytes
			tx += n.TxBytes
		}
		r.netRx, r.netTx = float64(rx), float64(tx)
	}
	// Block I/O: calculateBlockIO sums by the operation's first letter.
	if e.Blkio.ServiceBytes != nil {
		var rd, wr uint64
		for _, b := range e.Blkio.ServiceBytes {
			if b.Op == "" {
				continue
			}
			switch b.Op[0] {
			case 'r', 'R':
				rd += b.Value
			case 'w', 'W':
				wr += b.Value
			}
		}
		r.blkRead, r.blkWrite = float64(rd), float64(wr)
	}
	if e.Pids.Current != nil {
		r.pids = float64(*e.Pids.Current)
	}
	return r, hasCPU, nil
}

// readEngine reads a stream of stats objects: one per line as the daemon
// writes them (malformed lines are counted with their line numbers and
// skipped), or pretty-printed (`curl … | jq .`), read as a JSON stream that
// stops at the first syntax error.
func (s *Source) readEngine(ctx context.Context, run *importer.Run, br *bufio.Reader, k *sink) error {
	probs := &importer.ChunkProblems{File: s.cfg.Path}
	defer run.Problems().Merge(probs)
	tp, _ := importer.NewTimeParser("iso8601", run.Clock())
	add := func(e *engineStats, line int64, text []byte) error {
		r, hasCPU, err := engineReading(e, &tp)
		if err != nil {
			probs.Add(line, err.Error(), text)
			return nil
		}
		if !hasCPU {
			k.noCPU++
		}
		return k.add(&r)
	}
	head, _ := br.Peek(64 << 10)
	first, _, _ := bytes.Cut(bytes.TrimLeft(head, " \t\r\n"), []byte{'\n'})
	if json.Valid(bytes.TrimSpace(first)) {
		var raw []byte
		for lineNo := int64(1); ; lineNo++ {
			if lineNo%1024 == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			chunk, err := br.ReadSlice('\n')
			raw = append(raw[:0], chunk...)
			for errors.Is(err, bufio.ErrBufferFull) {
				chunk, err = br.ReadSlice('\n')
				raw = append(raw, chunk...)
			}
			if line := bytes.TrimSpace(raw); len(line) > 0 {
				var e engineStats
				if jerr := json.Unmarshal(line, &e); jerr != nil {
					probs.Add(lineNo, "not a stats object: "+jerr.Error(), line)
				} else if err := add(&e, lineNo, line); err != nil {
					return err
				}
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return fmt.Errorf("reading: %w", err)
			}
		}
	}
	dec := json.NewDecoder(br)
	for n := 0; ; n++ {
		if n%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		var e engineStats
		err := dec.Decode(&e)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			probs.Add(0, fmt.Sprintf("object %d (byte %d): %v; the rest of the file is skipped", n+1, dec.InputOffset(), err), nil)
			return nil
		}
		if err := add(&e, 0, nil); err != nil {
			return err
		}
	}
}
