package cupel

// The one-call path (docs/policies.md, "The one-call path"): messages, a
// budget and a policy in, the messages to send out, built from the
// long-hand calls with the rules every binding follows.

import (
	"errors"
	"strings"
	"time"
)

// Message is one message of a conversation for Select. Only Text is
// required; every other field's zero value means "not given".
type Message struct {
	// Text is the message's text (not empty, UTF-8): its tokens are
	// counted and it is the item's content.
	Text string
	// Kind is the message's kind ("SystemPrompt", "ToolOutput", ...; ""
	// is DefaultKind, "Message"); kinds compare ASCII case-insensitively.
	Kind string
	// Pinned messages are always kept, their tokens taken off the budget
	// first (a system prompt).
	Pinned bool
	// Group: messages with the same non-empty Group are kept or dropped
	// together ("": none).
	Group string
	// ToolCallID is a tool result's id, or a single tool call's ("": none).
	ToolCallID string
	// ToolCallIDs are the ids of a message that makes several tool calls
	// ("" elements are none).
	ToolCallIDs []string
	// Key is the message's identity for sessions (0: none).
	Key uint64
	// Timestamp is when the message was written (zero: none).
	Timestamp time.Time
	// Priority, for the priority scorer (nil: none).
	Priority *int64
	// Relevance is the future-relevance hint, for the reflexive scorer
	// (nil: none).
	Relevance *float64
	// Score is the pushed score, for the given scorer (nil: 1.0).
	Score *float64
}

// SelectOptions are Select's budget, policy and the rest. The budget is
// MaxTokens (the target is the same) or Budget; the policy is Policy or
// Pipeline.
type SelectOptions struct {
	// MaxTokens is the budget in tokens, target and maximum (>= 0), when
	// Budget is nil. 0 with no Budget is a budget of 0: nothing but pinned
	// messages fit.
	MaxTokens int64
	// Budget is the budget as a Budget object (MaxTokens must then be 0).
	Budget *Budget
	// Policy is a preset name ("Chat", "AgentLoop": PresetNames) or a
	// policy document's text (a string whose first non-blank character is
	// '{'), when Pipeline is nil; "" (and no Pipeline) is the "Chat"
	// preset.
	Policy string
	// Pipeline is the policy as a pipeline object (Policy must then be "").
	// Its trace, if set, traces the run.
	Pipeline *Pipeline
	// Tokenizer names the encoding the texts are counted with
	// (O200kBase, Cl100kBase). "": the policy's tokenizer (the pipeline's
	// SetTokenizer, or its built-in encoding as its document's "tokenizer"
	// names it), else O200kBase.
	Tokenizer string
	// Report, if not nil, receives the run's decisions; its item indices
	// are the messages' indices.
	Report *Report
}

// Select keeps the messages that fit the budget under the policy and
// returns them in the order the policy's placer gives (the elements of
// messages themselves, unchanged). It is the long-hand path in one call:
// each message's text is counted with the tokenizer and pushed as an item
// of its kind, pinned flag, key (0: none), priority, relevance hint and
// score; the messages that share a non-empty Group, ToolCallID or one of
// their ToolCallIDs are one keep-together group, transitively (a call with
// two ids and both results are one group; group names and call ids are
// separate; every message with one is in a group, numbered 1, 2, ... in
// the order of their first message); when no message has a Timestamp,
// message i gets
// timestamp i (later messages are more recent), otherwise the timestamps
// are used as given (Unix milliseconds); and the pipeline runs on them.
//
// Errors are the long-hand calls', naming the message in Go's terms
// ("messages[3].Text is empty", "messages[1].Score is NaN",
// "opts.MaxTokens is -1"): nil messages is ErrNullPointer (an empty,
// non-nil slice selects nothing); an unknown preset or a policy document
// that breaks a rule is ErrInvalidArgument naming opts.Policy; a closed
// Budget, Pipeline or Report is ErrClosed; a panic of the pipeline's trace
// callback is a *TracePanicError.
func Select(messages []Message, opts SelectOptions) ([]Message, error) {
	order, err := SelectIndices(messages, opts)
	if err != nil {
		return nil, err
	}
	out := make([]Message, len(order))
	for i, k := range order {
		out[i] = messages[k]
	}
	return out, nil
}

// SelectIndices is Select's choice as indices into messages, in placed
// order: for a host that keeps richer message objects of its own.
func SelectIndices(messages []Message, opts SelectOptions) ([]int, error) {
	if messages == nil {
		return nil, nilError("messages")
	}
	if err := firstError(opts.Budget.optional("opts.Budget"), opts.Pipeline.optional("opts.Pipeline"),
		opts.Report.optional("opts.Report")); err != nil {
		return nil, err
	}
	if opts.Budget != nil && opts.MaxTokens != 0 {
		return nil, argError("opts.MaxTokens is %d and opts.Budget is set; give one of them", opts.MaxTokens)
	}
	if opts.Pipeline != nil && opts.Policy != "" {
		return nil, argError("opts.Policy is %q and opts.Pipeline is set; give one of them", opts.Policy)
	}

	budget := opts.Budget
	if budget == nil {
		b, err := NewBudget(opts.MaxTokens, opts.MaxTokens)
		if err != nil {
			return nil, renamed(err, maxTokensRules)
		}
		defer b.Close()
		budget = b
	}
	pipeline := opts.Pipeline
	if pipeline == nil {
		p, err := policyPipeline(opts.Policy)
		if err != nil {
			return nil, err
		}
		defer p.Close()
		pipeline = p
	}
	tok, owned, err := selectTokenizer(opts.Tokenizer, pipeline)
	if err != nil {
		return nil, err
	}
	if owned {
		defer tok.Close()
	}
	items, err := NewItems()
	if err != nil {
		return nil, err
	}
	defer items.Close()
	if err := pushMessages(items, tok, messages); err != nil {
		return nil, err
	}
	return pipeline.Run(items, budget, opts.Report)
}

var (
	// messageRules name the columns' entries as the messages' fields.
	messageRules = rules(`\btexts\[([0-9]+)\]`, `messages[$1].Text`,
		`\bscores\[([0-9]+)\]`, `messages[$1].Score`,
		`\bkinds\[([0-9]+)\]`, `messages[$1].Kind`)
	maxTokensRules = rules(`\bmaxTokens\b`, `opts.MaxTokens`, `\btargetTokens\b`, `opts.MaxTokens`)
	policyRules    = rules(`^(?:json|name)\b`, `opts.Policy`)
	tokenizerName  = rules(`^name\b`, `opts.Tokenizer`)
)

// renamed is err with its message's names rewritten by list.
func renamed(err error, list []rule) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	msg := e.Message
	for _, r := range list {
		msg = r.re.ReplaceAllString(msg, r.to)
	}
	return &Error{Status: e.Status, Message: msg}
}

// isDocument says whether policy is a policy document's text: its first
// non-blank character is '{'.
func isDocument(policy string) bool {
	return strings.HasPrefix(strings.TrimLeft(policy, " \t\r\n"), "{")
}

// policyPipeline is the pipeline of a preset name or a policy document
// ("": the Chat preset).
func policyPipeline(policy string) (*Pipeline, error) {
	var p *Pipeline
	var err error
	switch {
	case policy == "":
		p, err = Preset("Chat")
	case strings.TrimSpace(policy) == "":
		return nil, argError("opts.Policy %q is blank; give a preset name (PresetNames), a policy document, "+
			"opts.Pipeline, or \"\" for the Chat preset", policy)
	case isDocument(policy):
		p, err = PipelineFromJSON([]byte(policy))
	default:
		p, err = Preset(policy)
	}
	if err != nil {
		return nil, renamed(err, policyRules)
	}
	return p, nil
}

// selectTokenizer is the tokenizer the texts are counted with: the named
// one, else the pipeline's (SetTokenizer's while it is open, else its
// built-in encoding's name), else O200kBase. owned: Select closes it.
func selectTokenizer(name string, p *Pipeline) (tok *Tokenizer, owned bool, err error) {
	if name != "" {
		t, err := NewTokenizer(name)
		if err != nil {
			return nil, false, renamed(err, tokenizerName)
		}
		return t, true, nil
	}
	if p.tok != nil && p.tok.p != nil {
		return p.tok, false, nil // SetTokenizer's, maybe a vocabulary file's
	}
	name = p.tokenizerName()
	if name == "" && p.tok != nil {
		return nil, false, argError("opts.Pipeline's tokenizer (from a vocabulary file) was closed and has " +
			"no name; give opts.Tokenizer")
	}
	if name == "" {
		name = O200kBase
	}
	t, err := NewTokenizer(name)
	if err != nil {
		return nil, false, err
	}
	return t, true, nil
}

// pushMessages pushes the messages as items with every attribute the rules
// give them.
func pushMessages(items *Items, tok *Tokenizer, messages []Message) error {
	n := len(messages)
	texts := make([]string, n)
	scores := make([]float64, n)
	kinds := make([]string, n)
	pinned := make([]bool, n)
	keys := make([]uint64, n)
	anyPinned, anyKey, anyTime := false, false, false
	timed, prioritized, hinted := 0, 0, 0
	for i := range messages {
		m := &messages[i]
		texts[i], scores[i], kinds[i] = m.Text, 1.0, m.Kind
		if m.Score != nil {
			scores[i] = *m.Score
		}
		if m.Kind == "" {
			kinds[i] = DefaultKind
		}
		pinned[i], keys[i] = m.Pinned, m.Key
		anyPinned = anyPinned || m.Pinned
		anyKey = anyKey || m.Key != 0
		if !m.Timestamp.IsZero() {
			anyTime = true
			timed++
		}
		if m.Priority != nil {
			prioritized++
		}
		if m.Relevance != nil {
			hinted++
		}
	}
	if err := items.pushTexts(tok, texts, scores, kinds, messageRules, "messages[%d].Kind"); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	if groups := messageGroups(messages); groups != nil {
		if err := items.SetGroups(0, groups); err != nil {
			return err
		}
	}
	if anyPinned {
		if err := items.SetPinnedMany(0, pinned); err != nil {
			return err
		}
	}
	if anyKey {
		if err := items.SetKeys(0, keys); err != nil {
			return err
		}
	}
	// Timestamps: the messages' own, or their positions when none has one.
	switch {
	case !anyTime:
		ts := make([]int64, n)
		for i := range ts {
			ts[i] = int64(i)
		}
		if err := items.SetTimestamps(0, ts); err != nil {
			return err
		}
	case timed == n:
		ts := make([]int64, n)
		for i := range messages {
			ts[i] = messages[i].Timestamp.UnixMilli()
		}
		if err := items.SetTimestamps(0, ts); err != nil {
			return err
		}
	default:
		for i := range messages {
			if t := messages[i].Timestamp; !t.IsZero() {
				if err := items.SetTimestamp(i, t.UnixMilli()); err != nil {
					return err
				}
			}
		}
	}
	if err := setColumn(messages, prioritized, func(m *Message) (int64, bool) {
		if m.Priority == nil {
			return 0, false
		}
		return *m.Priority, true
	}, items.SetPriorities, items.SetPriority); err != nil {
		return err
	}
	return setColumn(messages, hinted, func(m *Message) (float64, bool) {
		if m.Relevance == nil {
			return 0, false
		}
		return *m.Relevance, true
	}, items.SetRelevanceHints, items.SetRelevanceHint)
}

// setColumn sets an optional attribute: in one call when every message
// has it (given), one call per message that has it otherwise.
func setColumn[T any](messages []Message, given int, get func(*Message) (T, bool),
	all func(int, []T) error, one func(int, T) error) error {
	if given == 0 {
		return nil
	}
	if given == len(messages) {
		col := make([]T, len(messages))
		for i := range messages {
			col[i], _ = get(&messages[i])
		}
		return all(0, col)
	}
	for i := range messages {
		if v, ok := get(&messages[i]); ok {
			if err := one(i, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// messageGroups are the messages' keep-together groups (nil when no
// message has a group or a tool call id): the messages sharing a Group, a
// ToolCallID or one of their ToolCallIDs, transitively, numbered 1, 2, ...
// in the order of their first message. A Group and a tool call id are
// names of different things: a Group "a" and a ToolCallID "a" are not
// shared.
func messageGroups(messages []Message) []uint64 {
	parent := make([]int, len(messages))
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	first := map[string]int{} // a group or id -> the first message that has it
	member := make([]bool, len(messages))
	grouped := false
	join := func(i int, key string) {
		member[i], grouped = true, true
		if j, ok := first[key]; ok {
			a, b := find(i), find(j)
			if a != b {
				if a < b {
					parent[b] = a
				} else {
					parent[a] = b
				}
			}
			return
		}
		first[key] = i
	}
	for i := range messages {
		parent[i] = i
		m := &messages[i]
		if m.Group != "" {
			join(i, "group\x00"+m.Group)
		}
		if m.ToolCallID != "" {
			join(i, "call\x00"+m.ToolCallID)
		}
		for _, id := range m.ToolCallIDs {
			if id != "" {
				join(i, "call\x00"+id)
			}
		}
	}
	if !grouped {
		return nil
	}
	groups := make([]uint64, len(messages))
	number := map[int]uint64{}
	for i := range messages {
		if !member[i] {
			continue
		}
		root := find(i)
		g, ok := number[root]
		if !ok {
			g = uint64(len(number) + 1)
			number[root] = g
		}
		groups[i] = g
	}
	return groups
}

func (b *Budget) optional(name string) error {
	return optionalError(name, b == nil, b != nil && b.p == nil)
}

func (p *Pipeline) optional(name string) error {
	return optionalError(name, p == nil, p != nil && p.p == nil)
}
