package plan

// MaxYAMLDepth bounds the nesting of a plan (and of every YAML file the
// plan loader reads): block collections, flow collections and compact
// sequences ("- - - x") together. A hand-written plan nests a dozen levels;
// yaml.v3 stops at 10,000, but goccy/go-yaml (which finds a syntax error's
// column) has no limit and spent 640 MB on a 40 KB file nested 20,000
// deep before the error. The limit is checked by yamlTooDeep before either
// parser sees the file.
const MaxYAMLDepth = 1000

// level is an open block collection of yamlTooDeep: its column, and seq
// when it is a sequence at its parent key's own column.
type level struct {
	col int
	seq bool
}

// yamlTooDeep scans src once, without building anything, and returns the
// position of the first collection nested deeper than limit, if any.
//
// It follows YAML's structure as far as nesting goes: indentation opens
// and closes block collections, "- " and "? " open one at their column,
// [ and { open a flow collection where a value starts (inside a flow
// collection, everywhere), ] and } close one. Quoted scalars (over several
// lines too), comments and block scalars (| and >) are skipped, so
// brackets in text do not count. Where it is unsure it counts a level
// more, never less: a real bomb is always caught, and a plan a dozen
// levels deep is far from the limit.
func yamlTooDeep(src []byte, limit int) (Pos, bool) {
	var stack []level // the open block collections
	flow := 0         // open flow collections
	blockScalar := -1 // ≥ 0 inside a block scalar: the indent its content must exceed
	openKey := false  // the last token was a key\'s ":" (its value may follow on the next lines)
	line, i := 1, 0   // line of src[i]
	col := func(j, start int) int { return j - start + 1 }
	next := func(end int) int { // the start of the line after the one ending at end (\n, \r\n or \r, as YAML breaks lines)
		if end+1 < len(src) && src[end] == '\r' && src[end+1] == '\n' {
			return end + 2
		}
		return end + 1
	}
	for i < len(src) {
		start := i
		end := i
		for end < len(src) && src[end] != '\n' && src[end] != '\r' {
			end++
		}
		indent := 0
		for start+indent < end && src[start+indent] == ' ' {
			indent++
		}
		blank := start+indent == end || src[start+indent] == '#' || (start+indent+1 == end && src[start+indent] == '\r')
		if blockScalar >= 0 {
			if blank || indent > blockScalar {
				i, line = next(end), line+1
				continue
			}
			blockScalar = -1
		}
		if blank {
			i, line = next(end), line+1
			continue
		}
		if flow == 0 {
			dash := start+indent+1 < end && src[start+indent] == '-' && (src[start+indent+1] == ' ' || src[start+indent+1] == '\t') ||
				start+indent+1 == end && src[start+indent] == '-'
			for len(stack) > 0 && (stack[len(stack)-1].col > indent || stack[len(stack)-1].col == indent && stack[len(stack)-1].seq && !dash) {
				stack = stack[:len(stack)-1]
			}
			switch {
			case len(stack) == 0 || stack[len(stack)-1].col < indent:
				stack = append(stack, level{col: indent})
			case dash && openKey && !stack[len(stack)-1].seq:
				// "key:" then "- item" at the key's own column: the
				// sequence is the key's value, one level down.
				stack = append(stack, level{col: indent, seq: true})
			}
			if len(stack) > limit {
				return Pos{line, indent + 1}, true
			}
		}
		openKey = false
		// Scan the line's tokens.
		tok := true // at the start of a token (a value may start here)
		j := start + indent
		for j < end {
			c := src[j]
			switch {
			case c == ' ' || c == '\t' || c == '\r':
				j++
				continue
			case (c == '-' || c == '.') && j == start && j+2 < end+1 && j+3 <= end && src[j+1] == c && src[j+2] == c && (j+3 == end || src[j+3] == ' ' || src[j+3] == '\t'):
				// "---" or "...": a document marker; a value may follow.
				j += 3
				tok = true
				continue
			case c == '#' && (j == start || src[j-1] == ' ' || src[j-1] == '\t'):
				j = end
				continue
			case (c == '-' || c == '?') && tok && flow == 0 && (j+1 == end || src[j+1] == ' ' || src[j+1] == '\t'):
				// A block sequence entry (or complex key) at this column;
				// what follows it on the line is nested one level deeper.
				k := j + 1
				for k < end && (src[k] == ' ' || src[k] == '\t') {
					k++
				}
				if k < end && src[k] != '#' {
					stack = append(stack, level{col: k - start})
					if len(stack)+flow > limit {
						return Pos{line, col(k, start)}, true
					}
				}
				j = k
				tok = true
				openKey = c == '?' && (k == end || src[k] == '#') // its key may follow on the next lines
				continue
			case (c == '[' || c == '{') && (tok || flow > 0):
				flow++
				if len(stack)+flow > limit {
					return Pos{line, col(j, start)}, true
				}
				j++
				tok = true
				continue
			case (c == ']' || c == '}') && flow > 0:
				flow--
				j++
				tok = false
				continue
			case c == ',' && flow > 0:
				j++
				tok = true
				continue
			case c == ':' && (j+1 == end || src[j+1] == ' ' || src[j+1] == '\t' || (flow > 0 && j+1 < end && (src[j+1] == ',' || src[j+1] == ']' || src[j+1] == '}'))):
				if flow > 0 && len(stack)+flow+1 > limit {
					// "[a: b]" is a sequence holding a one-pair mapping: a
					// level more inside a flow sequence (counted inside a
					// flow mapping too, where it is not one).
					return Pos{line, col(j, start)}, true
				}
				j++
				tok = true
				openKey = flow == 0
				continue
			case (c == '"' || c == '\'') && tok:
				// A quoted scalar, possibly over several lines.
				k := j + 1
				for k < len(src) {
					if c == '"' && src[k] == '\\' {
						k += 2
						continue
					}
					if src[k] == c {
						if c == '\'' && k+1 < len(src) && src[k+1] == '\'' {
							k += 2
							continue
						}
						break
					}
					if src[k] == '\n' {
						line++
					}
					k++
				}
				if k >= len(src) {
					return Pos{}, false // unclosed: the parser reports it
				}
				if k > end { // it ended on a later line
					start = k
					for start > 0 && src[start-1] != '\n' {
						start--
					}
					end = k
					for end < len(src) && src[end] != '\n' {
						end++
					}
				}
				j = k + 1
				tok = false
				continue
			case (c == '|' || c == '>') && tok && flow == 0:
				blockScalar = indent
				j = end
				continue
			case (c == '&' || c == '!') && tok:
				// An anchor or tag before a value: the value still starts a token.
				for j < end && src[j] != ' ' && src[j] != '\t' {
					j++
				}
				continue
			}
			j++
			tok = false
			openKey = false
		}
		i, line = next(end), line+1
	}
	return Pos{}, false
}
