package importer

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"strings"
	"testing"
)

// TestParallelUncountedCSV: chunks of a CSV file with quoted line breaks
// are whole records in file order, unnumbered, and a chunk said to hold
// no quote holds none.
func TestParallelUncountedCSV(t *testing.T) {
	t.Parallel()
	var in strings.Builder
	for i := range 3000 {
		if i%250 == 7 {
			fmt.Fprintf(&in, "row%d,\"two\nlines, and \"\"quotes\"\"\",%d\n", i, i)
			continue
		}
		fmt.Fprintf(&in, "row%d,plain,%d\n", i, i)
	}
	data := []byte(in.String())
	var got bytes.Buffer
	records, noQuote, quoted := 0, 0, 0
	err := ParallelUncounted(context.Background(), bytes.NewReader(data), 2, 4096, '"',
		func(c *Chunk) (int, error) {
			if c.Line != 0 {
				return 0, fmt.Errorf("chunk %d numbered %d", c.Seq, c.Line)
			}
			if c.NoQuote && bytes.IndexByte(c.Data, '"') >= 0 {
				return 0, fmt.Errorf("chunk %d said to hold no quote holds one", c.Seq)
			}
			rows, err := csv.NewReader(bytes.NewReader(c.Data)).ReadAll()
			if err != nil {
				return 0, fmt.Errorf("chunk %d is not whole records: %w", c.Seq, err)
			}
			return len(rows), nil
		},
		func(c *Chunk, n int) error {
			got.Write(c.Data)
			records += n
			if c.NoQuote {
				noQuote++
			} else if bytes.IndexByte(c.Data, '"') >= 0 {
				quoted++
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), data) || records != 3000 {
		t.Fatalf("%d records, %d of %d bytes in order", records, got.Len(), len(data))
	}
	if noQuote == 0 || quoted == 0 {
		t.Errorf("%d chunks said to hold no quote, %d with quotes", noQuote, quoted)
	}
}
