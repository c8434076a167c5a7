package cupel

// Errors in Go's terms: the checks the C library cannot make (a nil or a
// closed handle, a negative index, a NUL byte inside a Go string) and the
// translation of the C library's messages to the names a Go caller uses.

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// nilError is the error for a nil handle passed as argument name.
func nilError(name string) error {
	return &Error{Status: StatusNullPointer, Message: name + " is nil"}
}

// closedError is the error for a closed handle passed as argument name.
func closedError(name string) error {
	return &Error{Status: StatusClosed, Message: name + " is closed"}
}

// firstError is the first non-nil error of errs (the arguments' checks in
// their order).
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// handleError is the error for a required handle argument: nil, closed, or
// none when it is open.
func handleError(name string, isNil, closed bool) error {
	switch {
	case isNil:
		return nilError(name)
	case closed:
		return closedError(name)
	}
	return nil
}

// optionalError is the error for an optional handle argument: nil is
// allowed (it means "none"), a closed handle is not.
func optionalError(name string, isNil, closed bool) error {
	if !isNil && closed {
		return closedError(name)
	}
	return nil
}

func (it *Items) need(name string) error {
	return handleError(name, it == nil, it != nil && it.p == nil)
}
func (b *Budget) need(name string) error { return handleError(name, b == nil, b != nil && b.p == nil) }
func (s *Slicer) need(name string) error { return handleError(name, s == nil, s != nil && s.p == nil) }
func (r *Report) optional(name string) error {
	return optionalError(name, r == nil, r != nil && r.p == nil)
}
func (r *Report) need(name string) error { return handleError(name, r == nil, r != nil && r.p == nil) }
func (s *Stream) need(name string) error { return handleError(name, s == nil, s != nil && s.p == nil) }
func (s *Scorer) need(name string) error { return handleError(name, s == nil, s != nil && s.p == nil) }
func (s *Scorer) optional(name string) error {
	return optionalError(name, s == nil, s != nil && s.p == nil)
}
func (p *Placer) need(name string) error { return handleError(name, p == nil, p != nil && p.p == nil) }
func (p *Placer) optional(name string) error {
	return optionalError(name, p == nil, p != nil && p.p == nil)
}
func (p *Pipeline) need(name string) error {
	return handleError(name, p == nil, p != nil && p.p == nil)
}
func (s *Session) need(name string) error { return handleError(name, s == nil, s != nil && s.p == nil) }

// indexError refuses a negative index (a C size_t cannot hold it) with the
// index as the caller passed it; indices past the end are the library's to
// refuse, in the same words.
func indexError(name string, index, length int) error {
	if index >= 0 {
		return nil
	}
	return argError("%s %d is out of range: the list holds %d items", name, index, length)
}

// textError refuses a string the C library would read short: a Go string
// may hold a NUL byte, where a C string ends.
func textError(name, s string) error {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return argError("%s contains a NUL byte at offset %d; text must not contain NUL", name, i)
	}
	return nil
}

// textErrorAt is textError for element i of an array, named by format
// ("kinds[%d]"): the name is made only for an error, not per element.
func textErrorAt(format string, i int, s string) error {
	if strings.IndexByte(s, 0) < 0 {
		return nil
	}
	return textError(fmt.Sprintf(format, i), s)
}

// ---- the library's messages in Go's terms --------------------------------------

// rule rewrites one name of a C message (outside its quoted strings) to the
// name a Go caller knows.
type rule struct {
	re *regexp.Regexp
	to string
}

func rules(pairs ...string) []rule {
	out := make([]rule, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, rule{regexp.MustCompile(pairs[i]), pairs[i+1]})
	}
	return out
}

var (
	// A string the library quoted (Rust's {:?}: `"` and `\` escaped): its
	// text is the caller's data, never renamed.
	quotedRe = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	// A quoted string masked as \x00<n>\x00 while the names are rewritten.
	maskedRe = regexp.MustCompile("\x00([0-9]+)\x00")
	// A C argument name: snake_case, at least one underscore.
	snakeRe = regexp.MustCompile(`\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b`)

	// Names that differ in Go otherwise than by case style: struct fields
	// (Quota, CountQuota, WeightedScorer, DecayWindow) and the map keys of
	// NewKindScorer / NewTagScorer. Applied to every message.
	goRules = rules(
		// NewKindScorer / NewTagScorer take a map: weights["Message"].
		`\bweights\[[0-9]+\]\.weight \((?:kind|tag) (`+"\x00[0-9]+\x00"+`)\)`, `weights[$1]`,
		`\bweights\[[0-9]+\]\.(?:kind|tag)\b`, `weights key`,
		`\bweights\[[0-9]+\]: `, `weights: `,
		// NewCompositeScorer takes []WeightedScorer.
		`\bchildren\[([0-9]+)\]`, `parts[$1].Scorer`,
		`\bweights\[([0-9]+)\] is\b`, `parts[$1].Weight is`,
		// Quota, CountQuota and DecayWindow fields.
		`\.kind\b`, `.Kind`,
		`\brequire_percent\b`, `RequirePercent`,
		`\bcap_percent\b`, `CapPercent`,
		`\brequire_count\b`, `Require`,
		`\bcap_count\b`, `Cap`,
		`\bwindows\[([0-9]+)\]\.max_age\b`, `windows[$1].MaxAgeSecs`,
		`\b(?:half_life|max_age)\b`, `durationSecs`,
		// The C functions a message points to, by their Go names.
		`\bcupel_pipeline_set_tokenizer\b`, `Pipeline.SetTokenizer`,
		`\bcupel_items_set_content\b`, `Items.SetContent`,
	)
	// PushItems takes []Item: scores[3] is list[3].Score.
	pushItemsRules = rules(
		`\bscores\[([0-9]+)\]`, `list[$1].Score`,
		`\bkinds\[([0-9]+)\]`, `list[$1].Kind`,
		`\bcontents\[([0-9]+)\]`, `list[$1].Content`,
	)
)

// goMessage is the library's message msg with its argument names as a Go
// caller spells them: the extra rules, then goRules, then camelCase for
// every other snake_case name (max_tokens -> maxTokens). Quoted strings
// (kinds, contents) are left exactly as they are.
func goMessage(msg string, extra []rule) string {
	var quoted []string
	s := quotedRe.ReplaceAllStringFunc(msg, func(q string) string {
		quoted = append(quoted, q)
		return fmt.Sprintf("\x00%d\x00", len(quoted)-1)
	})
	for _, list := range [][]rule{extra, goRules} {
		for _, r := range list {
			s = r.re.ReplaceAllString(s, r.to)
		}
	}
	s = snakeRe.ReplaceAllStringFunc(s, camelCase)
	return maskedRe.ReplaceAllStringFunc(s, func(m string) string {
		i, err := strconv.Atoi(m[1 : len(m)-1])
		if err != nil || i >= len(quoted) {
			return m
		}
		return quoted[i]
	})
}

// camelCase spells a snake_case name the Go way: max_tokens -> maxTokens.
func camelCase(snake string) string {
	parts := strings.Split(snake, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}
