package cupel

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"time"
)

// longHand is the one-call path written out by hand: the data as columns
// (the groups numbered by hand), the long-hand calls, the placed indices.
type longHand struct {
	texts      []string
	kinds      []string  // nil: DefaultKind
	scores     []float64 // nil: 1.0 each
	groups     []uint64  // nil: none
	pinned     []bool
	keys       []uint64
	timestamps []*int64 // nil: positions
	priorities []*int64
	hints      []*float64
	tokenizer  string
}

func (l longHand) run(t *testing.T, p *Pipeline, b *Budget, report *Report) []int {
	t.Helper()
	n := len(l.texts)
	tok := must(NewTokenizer(l.tokenizer))
	defer tok.Close()
	it := must(NewItems())
	defer it.Close()
	scores := l.scores
	if scores == nil {
		scores = make([]float64, n)
		for i := range scores {
			scores[i] = 1
		}
	}
	if err := it.PushTexts(tok, l.texts, scores, l.kinds); err != nil {
		t.Fatal(err)
	}
	if l.groups != nil {
		if err := it.SetGroups(0, l.groups); err != nil {
			t.Fatal(err)
		}
	}
	if l.pinned != nil {
		if err := it.SetPinnedMany(0, l.pinned); err != nil {
			t.Fatal(err)
		}
	}
	if l.keys != nil {
		if err := it.SetKeys(0, l.keys); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		ts := int64(i)
		if l.timestamps != nil {
			if l.timestamps[i] == nil {
				continue
			}
			ts = *l.timestamps[i]
		}
		if err := it.SetTimestamp(i, ts); err != nil {
			t.Fatal(err)
		}
	}
	for i, v := range l.priorities {
		if v != nil {
			if err := it.SetPriority(i, *v); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, v := range l.hints {
		if v != nil {
			if err := it.SetRelevanceHint(i, *v); err != nil {
				t.Fatal(err)
			}
		}
	}
	placed, err := p.Run(it, b, report)
	if err != nil {
		t.Fatal(err)
	}
	return placed
}

// selected is Select's choice as indices, checked against Select's own
// messages (the caller's, unchanged, in that order).
func selected(t *testing.T, messages []Message, opts SelectOptions) []int {
	t.Helper()
	order, err := SelectIndices(messages, opts)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := Select(messages, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != len(order) {
		t.Fatalf("Select kept %d, SelectIndices %d", len(kept), len(order))
	}
	for i, k := range order {
		if !reflect.DeepEqual(kept[i], messages[k]) {
			t.Fatalf("kept[%d] is %+v, not messages[%d]", i, kept[i], k)
		}
		if m := messages[k]; m.Priority != nil && kept[i].Priority != m.Priority {
			t.Fatalf("kept[%d] is a copy of the priority", i)
		}
	}
	return order
}

func ms(v int64) time.Time { return time.UnixMilli(v) }

// A conversation with a pinned system prompt, a tool call with its result
// and a message making two parallel calls with both results.
var agentMessages = []Message{
	{Text: "You are a careful assistant. Answer in one sentence.", Kind: "SystemPrompt", Pinned: true},
	{Text: "user: what is the weather in Paris and in Rome today, and what time is it there?"},
	{Text: "assistant: calling the weather tool", ToolCallID: "call_1"},
	{Text: "tool: Paris 18C, light rain, wind from the west at 20 km/h", Kind: "ToolOutput", ToolCallID: "call_1"},
	{Text: "assistant: calling the clock and the weather tool", ToolCallIDs: []string{"call_2", "call_3"}},
	{Text: "tool: Rome 24C, sunny", Kind: "ToolOutput", ToolCallID: "call_2"},
	{Text: "tool: 14:05 in Paris and in Rome", Kind: "ToolOutput", ToolCallID: "call_3"},
	{Text: "user: and tomorrow?", Key: 9},
	{Text: "note: the user prefers Celsius", Kind: "Memory", Group: "prefs"},
	{Text: "note: the user lives in Lyon", Kind: "Memory", Group: "prefs"},
}

var agentLongHand = longHand{
	texts: []string{agentMessages[0].Text, agentMessages[1].Text, agentMessages[2].Text, agentMessages[3].Text,
		agentMessages[4].Text, agentMessages[5].Text, agentMessages[6].Text, agentMessages[7].Text,
		agentMessages[8].Text, agentMessages[9].Text},
	kinds: []string{"SystemPrompt", "Message", "Message", "ToolOutput", "Message", "ToolOutput", "ToolOutput",
		"Message", "Memory", "Memory"},
	groups:    []uint64{0, 0, 1, 1, 2, 2, 2, 0, 3, 3},
	pinned:    []bool{true, false, false, false, false, false, false, false, false, false},
	keys:      []uint64{0, 0, 0, 0, 0, 0, 0, 9, 0, 0},
	tokenizer: O200kBase,
}

func TestSelectAgainstLongHand(t *testing.T) {
	tok := must(NewTokenizer(O200kBase))
	defer tok.Close()
	var total int64
	for _, m := range agentMessages {
		total += must(tok.Count(m.Text))
	}
	pinned := must(tok.Count(agentMessages[0].Text))
	for _, preset := range []string{"AgentLoop", "Chat", "ToolUse", "Rag"} {
		for _, max := range []int64{pinned, pinned + 12, pinned + 30, pinned + 45, total / 2, total - 5, total} {
			p := must(Preset(preset))
			b := budget(t, max, max)
			want := agentLongHand.run(t, p, b, nil)
			got := selected(t, agentMessages, SelectOptions{MaxTokens: max, Policy: preset})
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s, %d tokens: Select %v, long hand %v", preset, max, got, want)
			}
			// The same through a pipeline object and a budget object.
			got = selected(t, agentMessages, SelectOptions{Budget: b, Pipeline: p})
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s, %d tokens, objects: Select %v, long hand %v", preset, max, got, want)
			}
			b.Close()
			p.Close()
		}
	}
	// The groups as numbered: the report's decisions carry them.
	r := must(NewReport())
	defer r.Close()
	if _, err := SelectIndices(agentMessages, SelectOptions{MaxTokens: total, Policy: "AgentLoop", Report: r}); err != nil {
		t.Fatal(err)
	}
	groups := make([]uint64, len(agentMessages))
	for _, d := range append(must(r.Included()), must(r.Excluded())...) {
		groups[d.Index] = d.Group
	}
	if !reflect.DeepEqual(groups, agentLongHand.groups) {
		t.Fatalf("groups %v", groups)
	}
}

func TestSelectGroupsTransitively(t *testing.T) {
	cases := []struct {
		messages []Message
		want     []uint64
	}{
		{[]Message{{Text: "a"}, {Text: "b"}}, nil},
		// A group of one is a group.
		{[]Message{{Text: "a", ToolCallID: "x"}, {Text: "b"}}, []uint64{1, 0}},
		// Two calls joined by a message with both ids; groups in order of
		// their first message.
		{[]Message{{Text: "r2", ToolCallID: "b"}, {Text: "g", Group: "g"}, {Text: "r1", ToolCallID: "a"},
			{Text: "call", ToolCallIDs: []string{"a", "b"}}, {Text: "g2", Group: "g"}},
			[]uint64{1, 2, 1, 1, 2}},
		// A group and a tool call id of the same spelling are different names.
		{[]Message{{Text: "a", Group: "x"}, {Text: "b", ToolCallID: "x"}, {Text: "c", Group: "x", ToolCallID: "y"},
			{Text: "d", ToolCallIDs: []string{"", "y"}}},
			[]uint64{1, 2, 1, 1}},
	}
	for i, c := range cases {
		if got := messageGroups(c.messages); !reflect.DeepEqual(got, c.want) {
			t.Fatalf("case %d: %v, want %v", i, got, c.want)
		}
	}
}

func TestSelectPolicyJSONAndAttributes(t *testing.T) {
	// A policy document (read as the first non-blank character is '{')
	// with given and priority scorers, its tokenizer cl100k_base.
	policy := `
	  {"scorers":[{"type":"given","weight":2},{"type":"priority","weight":1},{"type":"reflexive","weight":1}],
	   "placerType":"uShaped","tokenizer":"cl100k_base"}`
	messages := []Message{
		{Text: "日本語のテキストです。短い。", Score: f64p(0.2), Priority: i64(5), Timestamp: ms(5000)},
		{Text: "second message, rather long, with a lot of words in it to count", Score: f64p(0.9),
			Relevance: f64p(0.7), Timestamp: ms(4000)},
		{Text: "third", Score: f64p(0.5), Priority: i64(1), Kind: "Document"},
		{Text: "fourth message", Score: f64p(0.4), Relevance: f64p(0.1), Timestamp: ms(1000), Pinned: true},
		{Text: "fifth message here", Priority: i64(-3), Timestamp: ms(2000)},
	}
	l := longHand{
		texts:      []string{messages[0].Text, messages[1].Text, messages[2].Text, messages[3].Text, messages[4].Text},
		kinds:      []string{"Message", "Message", "Document", "Message", "Message"},
		scores:     []float64{0.2, 0.9, 0.5, 0.4, 1},
		pinned:     []bool{false, false, false, true, false},
		timestamps: []*int64{i64(5000), i64(4000), nil, i64(1000), i64(2000)},
		priorities: []*int64{i64(5), nil, i64(1), nil, i64(-3)},
		hints:      []*float64{nil, f64p(0.7), nil, f64p(0.1), nil},
		tokenizer:  Cl100kBase,
	}
	p := must(PipelineFromJSON([]byte(policy)))
	defer p.Close()
	for _, max := range []int64{5, 10, 15, 20, 25, 30, 40, 100} {
		b := budget(t, max, max)
		r := must(NewReport())
		want := l.run(t, p, b, r)
		got := selected(t, messages, SelectOptions{MaxTokens: max, Policy: policy})
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%d tokens: Select %v, long hand %v", max, got, want)
		}
		r2 := must(NewReport())
		if _, err := SelectIndices(messages, SelectOptions{MaxTokens: max, Pipeline: p, Report: r2}); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(must(r2.Included()), must(r.Included())) {
			t.Fatalf("%d tokens: the reports differ", max)
		}
		r.Close()
		r2.Close()
		b.Close()
	}
	// The tokenizer: the argument's, else the policy's, else o200k_base.
	o200, cl100 := must(NewTokenizer(O200kBase)), must(NewTokenizer(Cl100kBase))
	defer o200.Close()
	defer cl100.Close()
	text := messages[0].Text
	if must(o200.Count(text)) == must(cl100.Count(text)) {
		t.Fatal("the text counts the same in both")
	}
	tokensOf := func(opts SelectOptions) int64 {
		r := must(NewReport())
		defer r.Close()
		opts.MaxTokens, opts.Report = 1000, r
		if _, err := SelectIndices(messages[:1], opts); err != nil {
			t.Fatal(err)
		}
		return must(r.Included())[0].ItemTokens
	}
	if n := tokensOf(SelectOptions{Policy: policy}); n != must(cl100.Count(text)) {
		t.Fatalf("the policy's tokenizer: %d", n)
	}
	if n := tokensOf(SelectOptions{Policy: policy, Tokenizer: O200kBase}); n != must(o200.Count(text)) {
		t.Fatalf("the argument's tokenizer: %d", n)
	}
	if n := tokensOf(SelectOptions{Policy: "Chat"}); n != must(o200.Count(text)) {
		t.Fatalf("the default tokenizer: %d", n)
	}
	// A pipeline object's tokenizer: SetTokenizer's.
	chat := must(Preset("Chat"))
	defer chat.Close()
	if err := chat.SetTokenizer(cl100); err != nil {
		t.Fatal(err)
	}
	if n := tokensOf(SelectOptions{Pipeline: chat}); n != must(cl100.Count(text)) {
		t.Fatalf("the pipeline's tokenizer: %d", n)
	}
	// A pipeline the format cannot write, its built-in tokenizer closed:
	// the pipeline's own reference has its name.
	g := must(NewGreedy())
	defer g.Close()
	cq := must(NewCountQuota(g, []CountQuota{{Kind: "Message", Cap: 5}}, Degrade))
	defer cq.Close()
	q := must(NewQuota(cq, []Quota{{Kind: "Message", CapPercent: 100}}))
	defer q.Close()
	cl2 := must(NewTokenizer(Cl100kBase))
	odd := must(NewPipeline(PipelineOptions{Slicer: q, Tokenizer: cl2}))
	defer odd.Close()
	if _, err := odd.JSON(); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("the pipeline can be written: %v", err)
	}
	cl2.Close()
	if n := tokensOf(SelectOptions{Pipeline: odd}); n != must(cl100.Count(text)) {
		t.Fatalf("an unwritable pipeline's tokenizer: %d", n)
	}
	// One from a vocabulary file: used while open; closed, it has no name.
	file := must(NewTokenizerFromTiktoken(tinyVocab("", -1), ""))
	if err := odd.SetTokenizer(file); err != nil {
		t.Fatal(err)
	}
	if n := tokensOf(SelectOptions{Pipeline: odd}); n != int64(len(text)) {
		t.Fatalf("the vocabulary file's count (a token a byte): %d", n)
	}
	file.Close()
	_, err := SelectIndices(messages, SelectOptions{MaxTokens: 10, Pipeline: odd})
	expectErr(t, err, ErrInvalidArgument, "opts.Pipeline's tokenizer (from a vocabulary file) was closed")
	if n := tokensOf(SelectOptions{Pipeline: odd, Tokenizer: Cl100kBase}); n != must(cl100.Count(text)) {
		t.Fatalf("the argument's tokenizer: %d", n)
	}
}

// No policy is the Chat preset; key 0 and empty group names and ids are
// none.
func TestSelectDefaultPolicyAndEmptyIDs(t *testing.T) {
	mixed := []Message{
		{Text: "a memory worth keeping", Kind: "Memory", Relevance: f64p(1)},
		{Text: "an older plain message", Relevance: f64p(0)},
		{Text: "a newer plain message", Relevance: f64p(0)},
	}
	if reflect.DeepEqual(selected(t, mixed, SelectOptions{MaxTokens: 8, Policy: "AgentLoop"}),
		selected(t, mixed, SelectOptions{MaxTokens: 8, Policy: "Chat"})) {
		t.Fatal("Chat and AgentLoop agree here")
	}
	for _, max := range []int64{0, 4, 8, 10, 14} {
		got := selected(t, mixed, SelectOptions{MaxTokens: max})
		if want := selected(t, mixed, SelectOptions{MaxTokens: max, Policy: "Chat"}); !reflect.DeepEqual(got, want) {
			t.Fatalf("%d tokens: no policy %v, Chat %v", max, got, want)
		}
	}
	messages := []Message{
		{Text: "a", Key: 0, Group: ""},
		{Text: "b", ToolCallIDs: []string{"", "t"}},
		{Text: "c", ToolCallID: "t", Key: 0},
		{Text: "d", ToolCallIDs: []string{""}},
		{Text: "e", ToolCallID: "lonely", Key: math.MaxUint64},
	}
	if got := messageGroups(messages); !reflect.DeepEqual(got, []uint64{0, 1, 1, 0, 2}) {
		t.Fatalf("groups %v", got)
	}
	if got := selected(t, messages, SelectOptions{MaxTokens: 100}); len(got) != 5 {
		t.Fatalf("kept %v", got)
	}
}

// The timestamps: positions when no message has one, the given ones
// (and none for the others) when any has one.
func TestSelectTimestamps(t *testing.T) {
	messages := []Message{{Text: "one"}, {Text: "two"}, {Text: "three"}, {Text: "four"}}
	l := longHand{texts: []string{"one", "two", "three", "four"}, tokenizer: O200kBase}
	p := must(Preset("Chat"))
	defer p.Close()
	b := budget(t, 2, 2)
	defer b.Close()
	order := selected(t, messages, SelectOptions{MaxTokens: 2, Policy: "Chat"})
	if want := l.run(t, p, b, nil); !reflect.DeepEqual(order, want) || !reflect.DeepEqual(order, []int{2, 3}) {
		t.Fatalf("the newest two by position: %v, long hand %v", order, want)
	}
	messages[0].Timestamp, messages[2].Timestamp = ms(9000), ms(-5)
	l.timestamps = []*int64{i64(9000), nil, i64(-5), nil}
	for _, max := range []int64{1, 2, 3, 4} {
		b := budget(t, max, max)
		order = selected(t, messages, SelectOptions{Budget: b, Policy: "Chat"})
		if want := l.run(t, p, b, nil); !reflect.DeepEqual(order, want) {
			t.Fatalf("%d tokens: %v, long hand %v", max, order, want)
		}
		b.Close()
	}
	if order[0] != 2 || order[1] != 0 {
		t.Fatalf("chronological by the given timestamps, untimed last: %v", order)
	}
}

func TestSelectErrors(t *testing.T) {
	ok := []Message{{Text: "hello"}, {Text: "world"}}
	_, err := Select(nil, SelectOptions{MaxTokens: 10, Policy: "Chat"})
	expectErr(t, err, ErrNullPointer, "messages is nil")
	got, err := Select([]Message{}, SelectOptions{MaxTokens: 10, Policy: "Chat"})
	if err != nil || len(got) != 0 {
		t.Fatalf("no messages: %v, %v", got, err)
	}
	for _, c := range []struct {
		messages []Message
		opts     SelectOptions
		want     string
	}{
		{[]Message{{Text: "a"}, {Text: ""}}, SelectOptions{MaxTokens: 10, Policy: "Chat"}, "messages[1].Text"},
		{[]Message{{Text: "a"}, {Text: "b"}, {Text: "\xff"}}, SelectOptions{MaxTokens: 10, Policy: "Chat"},
			"messages[2].Text is not valid UTF-8"},
		{[]Message{{Text: "a", Kind: "  "}}, SelectOptions{MaxTokens: 10, Policy: "Chat"}, "messages[0].Kind"},
		{[]Message{{Text: "a", Kind: "x\x00"}}, SelectOptions{MaxTokens: 10, Policy: "Chat"},
			"messages[0].Kind contains a NUL byte"},
		{[]Message{{Text: "a"}, {Text: "b", Score: f64p(math.NaN())}}, SelectOptions{MaxTokens: 10, Policy: "Chat"},
			"messages[1].Score is NaN"},
		{ok, SelectOptions{MaxTokens: -1, Policy: "Chat"}, "opts.MaxTokens is -1"},
		{ok, SelectOptions{MaxTokens: 10, Policy: "Nope"}, `opts.Policy "Nope" is no preset; the presets are Chat`},
		{ok, SelectOptions{MaxTokens: 10, Policy: "  "}, `opts.Policy "  " is blank`},
		{ok, SelectOptions{MaxTokens: 10, Policy: " {\"scorers\":[{\"type\":\"recency\",\"weight\":-1}]}"},
			"opts.Policy $.scorers[0].weight: must be positive and finite (got -1)"},
		{ok, SelectOptions{MaxTokens: 10, Policy: "{"}, "opts.Policy: malformed JSON"},
		{ok, SelectOptions{MaxTokens: 10, Policy: "Chat", Tokenizer: "gpt2"}, "opts.Tokenizer"},
	} {
		_, err := Select(c.messages, c.opts)
		expectErr(t, err, ErrInvalidArgument, c.want)
	}
	b := budget(t, 10, 10)
	p := must(Preset("Chat"))
	_, err = Select(ok, SelectOptions{MaxTokens: 10, Budget: b, Policy: "Chat"})
	expectErr(t, err, ErrInvalidArgument, "opts.MaxTokens is 10 and opts.Budget is set")
	_, err = Select(ok, SelectOptions{MaxTokens: 10, Pipeline: p, Policy: "Chat"})
	expectErr(t, err, ErrInvalidArgument, `opts.Policy is "Chat" and opts.Pipeline is set`)
	b.Close()
	p.Close()
	_, err = Select(ok, SelectOptions{Budget: b, Policy: "Chat"})
	expectErr(t, err, ErrClosed, "opts.Budget is closed")
	_, err = Select(ok, SelectOptions{MaxTokens: 10, Pipeline: p})
	expectErr(t, err, ErrClosed, "opts.Pipeline is closed")
	// A pinned message over the budget: the run's own error.
	_, err = Select([]Message{{Text: "a long pinned system prompt", Pinned: true}}, SelectOptions{MaxTokens: 1,
		Policy: "Chat"})
	if err == nil || errors.Is(err, ErrNullPointer) {
		t.Fatalf("%v", err)
	}
	// No handle is left behind, failed or not.
	before := LiveHandles()
	for i := 0; i < 3; i++ {
		_, _ = Select(ok, SelectOptions{MaxTokens: 10, Policy: "AgentLoop"})
		_, _ = Select(ok, SelectOptions{MaxTokens: 10, Policy: "Nope"})
		_, _ = Select([]Message{{Text: ""}}, SelectOptions{MaxTokens: 10, Policy: "Chat"})
	}
	if live := LiveHandles(); live > before {
		t.Fatalf("%d handles before, %d after", before, live)
	}
}
