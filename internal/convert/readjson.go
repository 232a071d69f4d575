package convert

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ReadJSON reads at most limit bytes of a JSON document from r into v.
// what names the document in errors ("HAR", "collection"): a document
// larger than limit is refused, and a syntax error names its line.
func ReadJSON(r io.Reader, what string, limit int, v any) error {
	data, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return fmt.Errorf("reading %s: %w", what, err)
	}
	if len(data) > limit {
		return fmt.Errorf("%s larger than %d MiB", what, limit>>20)
	}
	if err := json.Unmarshal(data, v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line := 1 + strings.Count(string(data[:min(int(se.Offset), len(data))]), "\n")
			return fmt.Errorf("%s line %d: %w", what, line, err)
		}
		return fmt.Errorf("%s is not valid: %w", what, err)
	}
	return nil
}
