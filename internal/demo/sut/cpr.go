package sut

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
)

// cprStream separates the CPR random stream from the allergy stream, so that
// changing how allergies are drawn never changes the CPR list.
const cprStream = 0xC0FFEE_C9B

// CPRs returns n distinct, valid-looking Danish CPR numbers (ddmmyy + 4
// digits) generated deterministically from seed: the same seed and n always
// give the same list in the same order, and the list for n is a prefix of the
// list for any larger n.
//
// None of them can belong to a living person: the seventh digit is 5–8 and
// the year 37–57, which under the CPR century rule means a birth in
// 2037–2057. Days are 01–28 so every date exists. Returns nil when n ≤ 0.
func CPRs(seed int64, n int) []string {
	if n <= 0 {
		return nil
	}
	r := rand.New(rand.NewPCG(uint64(seed), cprStream))
	out := make([]string, 0, n)
	seen := make(map[string]struct{}, n)
	var b [10]byte
	for len(out) < n {
		day := 1 + r.IntN(28)
		month := 1 + r.IntN(12)
		year := 37 + r.IntN(21)
		serial := 5000 + r.IntN(4000) // first serial digit 5–8
		put2(b[0:2], day)
		put2(b[2:4], month)
		put2(b[4:6], year)
		put2(b[6:8], serial/100)
		put2(b[8:10], serial%100)
		s := string(b[:])
		if _, dup := seen[s]; dup {
			continue
		}
		seen[s] = struct{}{}
		out = append(out, s)
	}
	return out
}

// put2 writes v (0–99) as two decimal digits.
func put2(b []byte, v int) {
	b[0] = byte('0' + v/10)
	b[1] = byte('0' + v%10)
}

// WriteCPRCSV writes the load-test feeder file: a header line "cpr" followed
// by the n numbers of CPRs(seed, n), one per line.
func WriteCPRCSV(w io.Writer, seed int64, n int) error {
	bw := bufio.NewWriter(w)
	if _, err := bw.WriteString("cpr\n"); err != nil {
		return fmt.Errorf("writing cpr csv: %w", err)
	}
	for _, c := range CPRs(seed, n) {
		// bufio.Writer keeps the first error and Flush returns it.
		bw.WriteString(c)
		bw.WriteByte('\n')
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing cpr csv: %w", err)
	}
	return nil
}

// validCPR reports whether s is exactly ten ASCII digits. It checks shape
// only; the back answers 404 for well-formed numbers it does not hold.
func validCPR(s string) bool {
	if len(s) != 10 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
