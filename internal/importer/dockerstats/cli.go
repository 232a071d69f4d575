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
	"time"

	"github.com/plateau-perf/plateau/internal/importer"
)

// Columns of the CLI's table, as its header names them (docker CLI
// cli/command/container/formatter_stats.go). Older CLIs have CONTAINER
// without NAME.
const (
	colContainer = "CONTAINER"
	colID        = "CONTAINER ID"
	colName      = "NAME"
	colCPU       = "CPU %"
	colMem       = "MEM USAGE / LIMIT"
	colMemPct    = "MEM %"
	colNet       = "NET I/O"
	colBlock     = "BLOCK I/O"
	colPIDs      = "PIDS"
)

// splitColumns splits a table line at runs of two or more blanks: the CLI's
// tabwriter pads columns with at least three spaces, and values hold single
// spaces ("5.629MiB / 1.952GiB").
func splitColumns(line string) []string {
	var out []string
	for {
		line = strings.TrimLeft(line, " \t")
		if line == "" {
			return out
		}
		i := strings.Index(line, "  ")
		if j := strings.IndexByte(line, '\t'); j >= 0 && (i < 0 || j < i) {
			i = j
		}
		if i < 0 {
			return append(out, line)
		}
		out = append(out, line[:i])
		line = line[i:]
	}
}

// cliJSON is one `docker stats --format '{{json .}}'` line.
type cliJSON struct {
	Name, Container, ID string
	CPUPerc             string
	MemUsage, MemPerc   string
	NetIO, BlockIO      string
	PIDs                string
}

// missing is what the CLI prints for a figure it does not have.
func missing(s string) bool {
	s = strings.TrimSpace(s)
	return s == "" || s == "--" || s == "-- / --"
}

// fill parses the CLI's human-readable figures into r; it reports the first
// figure that does not parse.
func fill(r *reading, cpu, mem, memPct, net, block, pids string) error {
	var err error
	if !missing(cpu) {
		if r.cpu, err = parsePercent(cpu); err != nil {
			return fmt.Errorf("CPU %%: %w", err)
		}
	}
	if !missing(mem) {
		if r.memUsed, r.memLimit, err = parsePair(mem); err != nil {
			return fmt.Errorf("MEM USAGE / LIMIT: %w", err)
		}
	}
	if !missing(memPct) {
		if r.memPct, err = parsePercent(memPct); err != nil {
			return fmt.Errorf("MEM %%: %w", err)
		}
	}
	if !missing(net) {
		if r.netRx, r.netTx, err = parsePair(net); err != nil {
			return fmt.Errorf("NET I/O: %w", err)
		}
	}
	if !missing(block) {
		if r.blkRead, r.blkWrite, err = parsePair(block); err != nil {
			return fmt.Errorf("BLOCK I/O: %w", err)
		}
	}
	if !missing(pids) {
		v, ok := importer.ParseInt([]byte(strings.TrimSpace(pids)))
		if !ok || v < 0 {
			return fmt.Errorf("PIDS %q is not a count", pids)
		}
		r.pids = float64(v)
	}
	return nil
}

// readLines reads the CLI's table or JSON lines.
func (s *Source) readLines(ctx context.Context, run *importer.Run, br *bufio.Reader, k *sink, f format) error {
	probs := &importer.ChunkProblems{File: s.cfg.Path}
	defer run.Problems().Merge(probs)
	tp, _ := importer.NewTimeParser("iso8601", run.Clock())
	var (
		hdr     map[string]int
		hdrLine string
		clean   []byte
		raw     []byte
	)
	for lineNo := int64(1); ; lineNo++ {
		if lineNo%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		chunk, err := br.ReadSlice('\n')
		raw = append(raw[:0], chunk...)
		for errors.Is(err, bufio.ErrBufferFull) {
			chunk, err = br.ReadSlice('\n')
			raw = append(raw, chunk...)
		}
		if len(raw) == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("reading: %w", err)
		}
		clean = stripANSI(bytes.TrimRight(raw, "\r\n"), clean[:0])
		line := strings.TrimRight(strings.ReplaceAll(string(clean), "\r", ""), " \t")
		switch {
		case strings.TrimSpace(line) == "":
		case f == formatTable:
			cols := splitColumns(line)
			if strings.Contains(line, colCPU) && (strings.Contains(line, colContainer) || strings.Contains(line, colName)) {
				k.tables++
				if line != hdrLine {
					hdr, hdrLine = map[string]int{}, line
					for i, c := range cols {
						hdr[c] = i
					}
				}
				break
			}
			if hdr == nil {
				probs.Add(lineNo, "a table row before any header", clean)
				break
			}
			if len(cols) != len(hdr) {
				probs.Add(lineNo, fmt.Sprintf("%d columns, the header has %d", len(cols), len(hdr)), clean)
				break
			}
			get := func(c string) string {
				if i, ok := hdr[c]; ok {
					return cols[i]
				}
				return ""
			}
			r := newReading()
			r.container = get(colName)
			if r.container == "" {
				r.container = get(colID)
			}
			if r.container == "" {
				r.container = get(colContainer)
			}
			if err := fill(&r, get(colCPU), get(colMem), get(colMemPct), get(colNet), get(colBlock), get(colPIDs)); err != nil {
				probs.Add(lineNo, err.Error(), clean)
				break
			}
			if s.cfg.Interval > 0 && !s.cfg.Start.IsZero() {
				// Screen k of a table written at a fixed interval.
				r.t = s.cfg.Start.Add(time.Duration(k.tables-1) * s.cfg.Interval).UnixNano()
			}
			if err := k.add(&r); err != nil {
				return err
			}
		default: // CLI JSON
			i := strings.IndexByte(line, '{')
			if i < 0 {
				probs.Add(lineNo, "not a JSON object", clean)
				break
			}
			r := newReading()
			if pre := strings.TrimSpace(line[:i]); pre != "" {
				t, err := tp.Parse([]byte(pre))
				if errors.Is(err, importer.ErrNoZone) {
					return fmt.Errorf("line %d: %w", lineNo, err)
				}
				if err != nil {
					probs.Add(lineNo, "time stamp: "+err.Error(), clean)
					break
				}
				r.t = t
			}
			var j cliJSON
			if err := json.Unmarshal([]byte(line[i:]), &j); err != nil {
				probs.Add(lineNo, "not a JSON object: "+err.Error(), clean)
				break
			}
			r.container = j.Name
			if r.container == "" {
				r.container = j.Container
			}
			if r.container == "" {
				r.container = j.ID
			}
			if err := fill(&r, j.CPUPerc, j.MemUsage, j.MemPerc, j.NetIO, j.BlockIO, j.PIDs); err != nil {
				probs.Add(lineNo, err.Error(), clean)
				break
			}
			if err := k.add(&r); err != nil {
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
