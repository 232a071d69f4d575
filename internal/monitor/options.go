package monitor

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"
)

// DecodeOptions decodes a target's Options into dst (a pointer to the
// kind's own configuration struct with yaml tags), strictly: an unknown key
// is an error naming the key, so each kind parses its own fields instead of
// sharing one union of every kind's fields.
func DecodeOptions(opts map[string]any, dst any) error {
	if len(opts) == 0 {
		return nil
	}
	b, err := yaml.Marshal(opts)
	if err != nil {
		return fmt.Errorf("encoding options: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(dst); err != nil && !errors.Is(err, io.EOF) {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			// "line 3: field x not found in type promql.Config" speaks of
			// the re-encoded text; keep only what names the field.
			msgs := make([]string, 0, len(te.Errors))
			for _, m := range te.Errors {
				if _, after, ok := strings.Cut(m, ": "); ok && strings.HasPrefix(m, "line ") {
					m = after
				}
				if i := strings.Index(m, " not found in type"); i >= 0 {
					m = "unknown " + m[:i]
				}
				msgs = append(msgs, m)
			}
			return errors.New(strings.Join(msgs, "; "))
		}
		return err
	}
	return nil
}
