package jvm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// HotSpot performance-data file layout (hsperfdata, version 2), from
// src/hotspot/share/runtime/perfMemory.hpp and perfData.hpp:
//
//	prologue (32 bytes): magic u4 = 0xcafec0c0 (always big-endian),
//	  byte_order u1 (0 big, 1 little), major u1, minor u1, accessible u1,
//	  used i4, overflow i4, mod_time_stamp i8, entry_offset i4, num_entries i4
//	entry: entry_length i4, name_offset i4, vector_length i4, data_type u1
//	  ('J' long, 'B' byte vector = string), flags u1, data_units u1,
//	  data_variability u1, data_offset i4; then the NUL-terminated name and
//	  the data, at the offsets given from the start of the entry.
const (
	perfMagic        = 0xcafec0c0
	prologueSize     = 32
	entryHeaderSize  = 20
	supportedMajor   = 2
	maxPerfEntries   = 1 << 16
	maxPerfFileBytes = 16 << 20
)

// errNotReady means the JVM has not finished creating the file; try again.
var errNotReady = errors.New("hsperfdata not yet accessible")

type prologue struct {
	order       binary.ByteOrder
	major       byte
	accessible  byte
	used        int32
	entryOffset int32
	numEntries  int32
}

func parsePrologue(b []byte) (prologue, error) {
	var p prologue
	if len(b) < prologueSize {
		return p, fmt.Errorf("hsperfdata: %d bytes, shorter than the prologue", len(b))
	}
	if binary.BigEndian.Uint32(b) != perfMagic {
		return p, fmt.Errorf("hsperfdata: bad magic %#x", binary.BigEndian.Uint32(b))
	}
	switch b[4] {
	case 0:
		p.order = binary.BigEndian
	case 1:
		p.order = binary.LittleEndian
	default:
		return p, fmt.Errorf("hsperfdata: bad byte order %d", b[4])
	}
	p.major = b[5]
	if p.major != supportedMajor {
		return p, fmt.Errorf("hsperfdata: version %d.%d not supported", b[5], b[6])
	}
	p.accessible = b[7]
	p.used = int32(p.order.Uint32(b[8:]))
	p.entryOffset = int32(p.order.Uint32(b[24:]))
	p.numEntries = int32(p.order.Uint32(b[28:]))
	if p.accessible == 0 {
		return p, errNotReady
	}
	if p.numEntries < 0 || p.numEntries > maxPerfEntries || p.entryOffset < prologueSize {
		return p, fmt.Errorf("hsperfdata: implausible header (%d entries at %d)", p.numEntries, p.entryOffset)
	}
	return p, nil
}

// entry locates one counter's data in the file.
type entry struct {
	off  int  // absolute offset of the data
	typ  byte // 'J' or 'B'
	vlen int  // vector length (bytes for 'B'); 0 for a scalar
}

// perfIndex maps counter names to their data. The layout of a live file only
// grows (entries are appended), so an index stays valid while the entry
// count and used size are unchanged.
type perfIndex struct {
	order      binary.ByteOrder
	numEntries int32
	used       int32
	entries    map[string]entry
}

// buildIndex walks every entry. It fails on any offset out of bounds, which
// is also how a read racing with the JVM appending entries shows up.
func buildIndex(b []byte, p prologue) (*perfIndex, error) {
	ix := &perfIndex{order: p.order, numEntries: p.numEntries, used: p.used, entries: make(map[string]entry, p.numEntries)}
	off := int(p.entryOffset)
	for i := int32(0); i < p.numEntries; i++ {
		if off+entryHeaderSize > len(b) {
			return nil, fmt.Errorf("hsperfdata: entry %d at %d past the end (%d bytes)", i, off, len(b))
		}
		e := b[off:]
		length := int(int32(p.order.Uint32(e[0:])))
		nameOff := int(int32(p.order.Uint32(e[4:])))
		vlen := int(int32(p.order.Uint32(e[8:])))
		typ := e[12]
		dataOff := int(int32(p.order.Uint32(e[16:])))
		if length < entryHeaderSize || off+length > len(b) || nameOff < entryHeaderSize || nameOff >= length || dataOff >= length || dataOff < nameOff || vlen < 0 {
			return nil, fmt.Errorf("hsperfdata: entry %d at %d is malformed", i, off)
		}
		name := e[nameOff:length]
		if z := bytes.IndexByte(name, 0); z >= 0 {
			name = name[:z]
		}
		size := 8
		if vlen > 0 {
			size = vlen
			if typ == 'J' {
				size = vlen * 8
			}
		}
		if dataOff+size > length {
			return nil, fmt.Errorf("hsperfdata: entry %q data past its end", name)
		}
		ix.entries[string(name)] = entry{off: off + dataOff, typ: typ, vlen: vlen}
		off += length
	}
	return ix, nil
}

// long returns a scalar long counter.
func (ix *perfIndex) long(b []byte, name string) (int64, bool) {
	e, ok := ix.entries[name]
	if !ok || e.typ != 'J' || e.vlen != 0 || e.off+8 > len(b) {
		return 0, false
	}
	return int64(ix.order.Uint64(b[e.off:])), true
}

// str returns a byte-vector (string) counter.
func (ix *perfIndex) str(b []byte, name string) (string, bool) {
	e, ok := ix.entries[name]
	if !ok || e.typ != 'B' || e.off+e.vlen > len(b) {
		return "", false
	}
	s := b[e.off : e.off+e.vlen]
	if z := bytes.IndexByte(s, 0); z >= 0 {
		s = s[:z]
	}
	return string(s), true
}

// ParseAll returns every scalar long and string counter of an hsperfdata
// file, for diagnostics and tests.
func ParseAll(b []byte) (map[string]int64, map[string]string, error) {
	p, err := parsePrologue(b)
	if err != nil {
		return nil, nil, err
	}
	ix, err := buildIndex(b, p)
	if err != nil {
		return nil, nil, err
	}
	longs, strs := map[string]int64{}, map[string]string{}
	for name, e := range ix.entries {
		switch {
		case e.typ == 'J' && e.vlen == 0:
			longs[name], _ = ix.long(b, name)
		case e.typ == 'B':
			strs[name], _ = ix.str(b, name)
		}
	}
	return longs, strs, nil
}
