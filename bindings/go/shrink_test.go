package cupel

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// shrinkDoc is Scenario S's document: 200 lines, 10890 bytes, 2800
// o200k_base tokens.
func shrinkDoc() string {
	var b strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&b, "Line %d: the quick brown fox jumps over the lazy dog.\n", i)
	}
	return b.String()
}

// shrinkItems are Scenario S's items: a question, a tool output with a
// placeholder variant, and a document pushed from text, truncatable
// keeping its head (at least 50 tokens).
func shrinkItems(t *testing.T, tok *Tokenizer, doc string) *Items {
	t.Helper()
	it := must(NewItems())
	if err := it.PushItems([]Item{
		{Tokens: 40, Score: 0.9, Kind: "Message", Content: "What failed in the last build?"},
		{Tokens: 9000, Score: 0.8, Kind: "ToolOutput", Content: "(the build log)"},
	}); err != nil {
		t.Fatal(err)
	}
	if err := it.AddVariant(1, 12, 0.1, "[output cleared: 9,000 tokens]"); err != nil {
		t.Fatal(err)
	}
	if err := it.PushText(tok, doc, 0.6, "Document"); err != nil {
		t.Fatal(err)
	}
	if err := it.SetTruncatable(2, KeepHead, 50); err != nil {
		t.Fatal(err)
	}
	return it
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12 }

// Scenario S, through GreedySlice and KnapsackSlice (bucket size 1): the
// tool output goes in as its placeholder, the document cut to what is left.
func TestShrinkScenario(t *testing.T) {
	tok := tokenizer(t, O200kBase)
	defer tok.Close()
	doc := shrinkDoc()
	if len(doc) != 10890 || count(t, tok, doc) != 2800 {
		t.Fatalf("the document: %d bytes, %d tokens", len(doc), count(t, tok, doc))
	}
	it := shrinkItems(t, tok, doc)
	defer it.Close()
	b := budget(t, 1000, 1000)
	defer b.Close()
	greedy := must(NewGreedy())
	defer greedy.Close()
	knapsack := must(NewKnapsack(1))
	defer knapsack.Close()

	for _, c := range []struct {
		name   string
		slicer *Slicer
		order  []int
	}{{"greedy", greedy, []int{0, 1, 2}}, {"knapsack", knapsack, []int{1, 0, 2}}} {
		t.Run(c.name, func(t *testing.T) {
			p := must(NewPipeline(PipelineOptions{Slicer: c.slicer}))
			defer p.Close()
			r := must(NewReport())
			defer r.Close()

			// Without a tokenizer the truncatable item cannot be cut.
			_, err := p.Run(it, b, r)
			expectErr(t, err, ErrInvalidArgument, "item 2")
			expectErr(t, err, ErrInvalidArgument, "tokenizer")
			expectErr(t, err, ErrInvalidArgument, "item 2 is truncatable but the pipeline has no tokenizer "+
				"to cut it with (Pipeline.SetTokenizer)")

			if err := p.SetTokenizer(tok); err != nil {
				t.Fatal(err)
			}
			placed, err := p.Run(it, b, r)
			expect(t, placed, err, c.order...)
			want := map[int]struct {
				reason     Reason
				score      float64
				variant    int
				tokens     int64
				head, tail int
				text       string
			}{
				0: {ReasonScored, 0.9, 0, 40, 30, 30, "What failed in the last build?"},
				1: {ReasonVariant, 0.8 * 0.1, 1, 12, 15, 15, "[output cleared: 9,000 tokens]"},
				2: {ReasonTruncated, 0.6 * 948 / 2800, 0, 948, 3647, 10890, doc[:3647]},
			}
			inc := must(r.Included())
			if len(inc) != 3 {
				t.Fatalf("included %+v", inc)
			}
			for k, d := range inc {
				w := want[d.Index]
				if d.Index != c.order[k] || d.Reason != w.reason || !near(d.Score, w.score) ||
					d.Variant != w.variant || d.AddedTokens != w.tokens || d.HeadEnd != w.head ||
					d.TailStart != w.tail {
					t.Errorf("included[%d] = %+v, want item %d %+v", k, d, c.order[k], w)
				}
				if text := must(d.Text(it)); text != w.text {
					t.Errorf("item %d sends %d bytes %.40q..., want %d bytes", d.Index, len(text), text, len(w.text))
				}
			}
			if inc[2].Reason.String() != "Truncated" || inc[1].Reason.String() != "Variant" && c.name == "greedy" {
				t.Errorf("the cut item's reason is named %q", inc[2].Reason)
			}
			if ex := must(r.Excluded()); len(ex) != 0 || r.SelectedTokens() != 1000 {
				t.Errorf("excluded %+v, %d tokens selected", ex, r.SelectedTokens())
			}
			// The item's own decision keeps its own count.
			if inc[2].ItemTokens != 2800 {
				t.Errorf("the document's ItemTokens %d", inc[2].ItemTokens)
			}

			// Removing the tokenizer makes the run fail again.
			if err := p.SetTokenizer(nil); err != nil {
				t.Fatal(err)
			}
			_, err = p.Run(it, b, r)
			expectErr(t, err, ErrInvalidArgument, "tokenizer")
		})
	}

	// PipelineOptions.Tokenizer: the same run; the pipeline keeps its own
	// reference, so the tokenizer may be closed before it runs.
	own := tokenizer(t, O200kBase)
	p := must(NewPipeline(PipelineOptions{Slicer: greedy, Tokenizer: own}))
	defer p.Close()
	own.Close()
	r := must(NewReport())
	defer r.Close()
	placed, err := p.Run(it, b, r)
	expect(t, placed, err, 0, 1, 2)
	if inc := must(r.Included()); inc[2].HeadEnd != 3647 || must(inc[2].Text(it)) != doc[:3647] {
		t.Fatalf("included %+v", inc)
	}
	_, err = NewPipeline(PipelineOptions{Slicer: greedy, Tokenizer: own})
	expectErr(t, err, ErrClosed, "opts.Tokenizer is closed")
}

// The text a host sends, for cuts of text that is not ASCII: the offsets
// are byte offsets into the content, on character boundaries.
func TestShrinkTextOfCuts(t *testing.T) {
	tok := tokenizer(t, O200kBase)
	defer tok.Close()
	text := strings.Repeat("日本語のテキストを数えます。", 40) + "終わり"
	for _, keep := range []Keep{KeepHead, KeepTail, KeepBothEnds} {
		it := must(NewItems())
		if err := it.PushText(tok, text, 0.5, "Document"); err != nil {
			t.Fatal(err)
		}
		if err := it.AddVariant(0, 500, 0.01, "unused"); err != nil { // too small a value to be taken
			t.Fatal(err)
		}
		if err := it.Push(0, 0.1, DefaultKind); err != nil { // a zero-token item without content
			t.Fatal(err)
		}
		if err := it.SetTruncatable(0, keep, 1); err != nil {
			t.Fatal(err)
		}
		p := must(NewPipeline(PipelineOptions{Slicer: must(NewGreedy()), Tokenizer: tok}))
		r := must(NewReport())
		b := budget(t, 30, 30)
		placed, err := p.Run(it, b, r)
		expect(t, placed, err, 1, 0) // the slicer's order: the zero-token item first
		inc := must(r.Included())
		cut := must(tok.Truncate(text, 30, keep))
		d := inc[1]
		if d.Reason != ReasonTruncated || d.Variant != 0 || d.HeadEnd != cut.HeadEnd || d.TailStart != cut.TailStart ||
			d.AddedTokens != cut.Tokens {
			t.Errorf("%v: %+v, want the cut %+v", keep, d, cut)
		}
		if got := must(d.Text(it)); got != cut.Text || got != text[:d.HeadEnd]+text[d.TailStart:] {
			t.Errorf("%v: sends %q, want %q", keep, got, cut.Text)
		}
		// An item without content: no cut, both 0, nothing to send.
		if z := inc[0]; z.Reason != ReasonZeroToken || z.HeadEnd != 0 || z.TailStart != 0 || must(z.Text(it)) != "" {
			t.Errorf("the zero-token item: %+v", z)
		}
		// A decision that does not fit the list is an error, not a panic.
		bad := d
		bad.HeadEnd = 1 // inside 日
		_, err = bad.Text(it)
		expectErr(t, err, ErrInvalidArgument, "d.HeadEnd 1")
		bad.Index = 9
		_, err = bad.Text(it)
		expectErr(t, err, ErrInvalidArgument, "index 9")
		bad.Index = -1
		_, err = bad.Text(it)
		expectErr(t, err, ErrInvalidArgument, "d.Index -1")
		_, err = d.Text(nil)
		expectErr(t, err, ErrNullPointer, "items is nil")
		// Excluded decisions have no choice: zero values.
		for _, x := range must(r.Excluded()) {
			if x.Variant != 0 || x.AddedTokens != 0 || x.HeadEnd != 0 || x.TailStart != 0 {
				t.Errorf("excluded %+v", x)
			}
		}
		b.Close()
		r.Close()
		p.Close()
		it.Close()
	}
}

// Variants and truncation read back through Items.Variants,
// Items.Truncatable and Items.Get, and round-trip through PushItems.
func TestShrinkReadBack(t *testing.T) {
	it := must(NewItems())
	defer it.Close()
	if err := it.PushMany([]int64{100, 200}, []float64{0.5, 0.7}, nil); err != nil {
		t.Fatal(err)
	}
	if got := must(it.Variants(0)); got != nil {
		t.Fatalf("no variants yet: %+v", got)
	}
	if got := must(it.Truncatable(0)); got != nil {
		t.Fatalf("not truncatable yet: %+v", got)
	}
	for _, v := range []Variant{{10, 0.5, "a summary"}, {0, 1, "[gone]"}, {300, 0.25, "日本語 ✓"}} {
		if err := it.AddVariant(1, v.Tokens, v.Value, v.Content); err != nil {
			t.Fatal(err)
		}
	}
	want := []Variant{{10, 0.5, "a summary"}, {0, 1, "[gone]"}, {300, 0.25, "日本語 ✓"}}
	if got := must(it.Variants(1)); !reflect.DeepEqual(got, want) {
		t.Fatalf("variants %+v", got)
	}
	for _, keep := range []Keep{KeepTail, KeepBothEnds, KeepHead} {
		if err := it.SetTruncatable(0, keep, 7); err != nil {
			t.Fatal(err)
		}
		if got := must(it.Truncatable(0)); got == nil || *got != (Truncatable{keep, 7}) {
			t.Fatalf("truncatable %+v, want %v", got, keep)
		}
	}
	x := must(it.Get(1))
	if !reflect.DeepEqual(x.Variants, want) || x.Truncatable != nil {
		t.Fatalf("item 1 %+v", x)
	}
	if y := must(it.Get(0)); y.Variants != nil || y.Truncatable == nil || *y.Truncatable != (Truncatable{KeepHead, 7}) {
		t.Fatalf("item 0 %+v", y)
	}
	if err := it.ClearTruncatable(0); err != nil {
		t.Fatal(err)
	}
	if err := it.ClearTruncatable(0); err != nil { // a no-op
		t.Fatal(err)
	}
	if got := must(it.Truncatable(0)); got != nil {
		t.Fatalf("cleared, still %+v", got)
	}

	// PushItems takes both; Get reads an item back as PushItems pushes it,
	// a variant without content too (Content "").
	list := []Item{
		{Tokens: 50, Score: 0.3, Kind: "Document", Content: "a long document", Source: "Chat",
			Variants:    []Variant{{5, 0.2, "its abstract"}, {1, 0.05, ""}},
			Truncatable: &Truncatable{KeepBothEnds, 3}},
		{Tokens: 9, Score: 0.4, Kind: "Message", Source: "Chat"},
		{Tokens: 60, Score: 0.2, Kind: "ToolOutput", Source: "Chat", Truncatable: &Truncatable{KeepTail, 0}},
	}
	if err := it.PushItems(list); err != nil {
		t.Fatal(err)
	}
	for k, w := range list {
		if got := must(it.Get(2 + k)); !reflect.DeepEqual(got, w) {
			t.Errorf("item %d: %+v, want %+v", 2+k, got, w)
		}
	}
	if v := must(it.Variants(2)); len(v) != 2 || v[1].Content != "" {
		t.Fatalf("variants of item 2: %+v", v)
	}

	// Variants count in a plain Slice too: the item as pushed does not fit,
	// its variant does.
	small := must(NewItems())
	defer small.Close()
	if err := small.Push(500, 0.9, DefaultKind); err != nil {
		t.Fatal(err)
	}
	if err := small.AddVariant(0, 40, 0.5, "short"); err != nil {
		t.Fatal(err)
	}
	g := must(NewGreedy())
	defer g.Close()
	r := must(NewReport())
	defer r.Close()
	b := budget(t, 100, 100)
	defer b.Close()
	expect(t, must(Slice(g, small, b, 0, r)), nil, 0)
	if r.SelectedTokens() != 40 {
		t.Fatalf("selected %d tokens", r.SelectedTokens())
	}
}

// Every bad argument is an error of the package's mapping, naming the
// argument in Go's spelling; nothing changes on error.
func TestShrinkErrors(t *testing.T) {
	it := must(NewItems())
	defer it.Close()
	if err := it.PushMany([]int64{10, 20, 30}, []float64{0.1, 0.2, 0.3}, nil); err != nil {
		t.Fatal(err)
	}
	if err := it.AddVariant(0, 1, 0.5, "kept"); err != nil {
		t.Fatal(err)
	}
	if err := it.SetTruncatable(1, KeepTail, 2); err != nil {
		t.Fatal(err)
	}
	snapshot := func() []Item {
		out := make([]Item, it.Len())
		for i := range out {
			out[i] = must(it.Get(i))
		}
		return out
	}
	before := snapshot()
	for _, c := range []struct {
		err      error
		sentinel error
		fragment string
	}{
		{it.AddVariant(0, 5, 0, "x"), ErrInvalidArgument, "value is 0 for a variant of item 0; it must be in (0, 1]"},
		{it.AddVariant(0, 5, 1.5, "x"), ErrInvalidArgument, "value is 1.5"},
		{it.AddVariant(0, 5, -0.5, "x"), ErrInvalidArgument, "value is -0.5"},
		{it.AddVariant(0, 5, math.NaN(), "x"), ErrInvalidArgument, "value is NaN"},
		{it.AddVariant(0, 5, math.Inf(1), "x"), ErrInvalidArgument, "value is inf"},
		{it.AddVariant(0, -1, 0.5, "x"), ErrInvalidArgument, "tokens is -1"},
		{it.AddVariant(3, 5, 0.5, "x"), ErrInvalidArgument, "index 3 is out of range"},
		{it.AddVariant(-1, 5, 0.5, "x"), ErrInvalidArgument, "index -1 is out of range"},
		{it.AddVariant(0, 5, 0.5, ""), ErrInvalidArgument, "content of a variant of item 0 is empty; push a variant without content with Item.Variants"},
		{it.AddVariant(0, 5, 0.5, "\xff\xfe"), ErrInvalidArgument, "content"},
		{it.AddVariant(0, 5, 0.5, "a\x00b"), ErrInvalidArgument, "content contains a NUL byte at offset 1"},
		{it.SetTruncatable(0, Keep(7), 1), ErrInvalidArgument, "keep is Keep(7)"},
		{it.SetTruncatable(0, Keep(-1), 1), ErrInvalidArgument, "keep is Keep(-1)"},
		{it.SetTruncatable(0, KeepHead, -1), ErrInvalidArgument, "minTokens"},
		{it.SetTruncatable(3, KeepHead, 1), ErrInvalidArgument, "index 3 is out of range"},
		{it.SetTruncatable(-2, KeepHead, 1), ErrInvalidArgument, "index -2 is out of range"},
		{it.ClearTruncatable(3), ErrInvalidArgument, "index 3"},
		{it.ClearTruncatable(-1), ErrInvalidArgument, "index -1"},
		{second(it.Variants(3)), ErrInvalidArgument, "index 3"},
		{second(it.Variants(-1)), ErrInvalidArgument, "index -1"},
		{second(it.Truncatable(3)), ErrInvalidArgument, "index 3"},
		{it.Truncate(4), ErrInvalidArgument, "n 4 is more than the 3 items the list holds"},
		{it.Truncate(-1), ErrInvalidArgument, "n -1 is negative"},
		// PushItems names the field and pushes nothing.
		{it.PushItems([]Item{{Tokens: 1, Kind: "A"}, {Tokens: 1, Kind: "A", Variants: []Variant{{1, 0.5, "ok"}, {1, 0, "z"}}}}),
			ErrInvalidArgument, "list[1].Variants[1].Value is 0"},
		{it.PushItems([]Item{{Tokens: 1, Kind: "A", Variants: []Variant{{-2, 0.5, ""}}}}),
			ErrInvalidArgument, "list[0].Variants[0].Tokens is -2"},
		{it.PushItems([]Item{{Tokens: 1, Kind: "A", Variants: []Variant{{2, 0.5, "\xff"}}}}),
			ErrInvalidArgument, "list[0].Variants[0].Content is not valid UTF-8"},
		{it.PushItems([]Item{{Tokens: 1, Kind: "A", Variants: make([]Variant, 256)}}),
			ErrInvalidArgument, "list[0].Variants has 256 variants"},
		{it.PushItems([]Item{{Tokens: 1, Kind: "A", Truncatable: &Truncatable{Keep(3), 0}}}),
			ErrInvalidArgument, "list[0].Truncatable.Keep is Keep(3)"},
		{it.PushItems([]Item{{Tokens: 1, Kind: "A", Truncatable: &Truncatable{KeepHead, -5}}}),
			ErrInvalidArgument, "list[0].Truncatable.MinTokens is -5"},
	} {
		expectErr(t, c.err, c.sentinel, c.fragment)
	}
	if after := snapshot(); !reflect.DeepEqual(after, before) {
		t.Fatalf("a failed call changed the items:\n%+v\n%+v", before, after)
	}

	// The 256th variant is refused; the 255 stay.
	for k := 0; k < MaxVariants; k++ {
		if err := it.AddVariant(2, int64(k), 0.5, fmt.Sprintf("v%d", k)); err != nil {
			t.Fatal(err)
		}
	}
	expectErr(t, it.AddVariant(2, 1, 0.5, "one too many"), ErrInvalidArgument, "item 2 has 255 variants already")
	if n := len(must(it.Variants(2))); n != MaxVariants {
		t.Fatalf("%d variants", n)
	}

	// nil and closed handles.
	var none *Items
	expectErr(t, none.AddVariant(0, 1, 0.5, "x"), ErrNullPointer, "items is nil")
	expectErr(t, none.SetTruncatable(0, KeepHead, 1), ErrNullPointer, "items is nil")
	expectErr(t, none.ClearTruncatable(0), ErrNullPointer, "items is nil")
	expectErr(t, second(none.Variants(0)), ErrNullPointer, "items is nil")
	expectErr(t, second(none.Truncatable(0)), ErrNullPointer, "items is nil")
	expectErr(t, none.Truncate(0), ErrNullPointer, "items is nil")
	closed := must(NewItems())
	closed.Close()
	expectErr(t, closed.AddVariant(0, 1, 0.5, "x"), ErrClosed, "items is closed")
	expectErr(t, closed.SetTruncatable(0, KeepHead, 1), ErrClosed, "items is closed")
	expectErr(t, closed.ClearTruncatable(0), ErrClosed, "items is closed")
	expectErr(t, second(closed.Variants(0)), ErrClosed, "items is closed")
	expectErr(t, second(closed.Truncatable(0)), ErrClosed, "items is closed")
	expectErr(t, closed.Truncate(0), ErrClosed, "items is closed")

	g := must(NewGreedy())
	defer g.Close()
	p := must(NewPipeline(PipelineOptions{Slicer: g}))
	tok := tokenizer(t, O200kBase)
	tok.Close()
	expectErr(t, p.SetTokenizer(tok), ErrClosed, "tokenizer is closed")
	p.Close()
	live := tokenizer(t, O200kBase)
	defer live.Close()
	expectErr(t, p.SetTokenizer(live), ErrClosed, "pipeline is closed")
	var nilPipe *Pipeline
	expectErr(t, nilPipe.SetTokenizer(live), ErrNullPointer, "pipeline is nil")

	// A run over a truncatable item without content fails naming it.
	q := must(NewPipeline(PipelineOptions{Slicer: g, Tokenizer: live}))
	defer q.Close()
	b := budget(t, 100, 100)
	defer b.Close()
	_, err := q.Run(it, b, nil)
	expectErr(t, err, ErrInvalidArgument, "item 1 is truncatable but has no content to cut (Items.SetContent)")
}

func second[T any](_ T, err error) error { return err }

// Truncate undoes pushes: the items from n on go with every attribute,
// and kinds only they used are forgotten.
func TestItemsTruncate(t *testing.T) {
	it := must(NewItems())
	defer it.Close()
	if err := it.PushItems([]Item{
		{Tokens: 10, Score: 0.5, Kind: "Message", Content: "one"},
		{Tokens: 20, Score: 0.6, Kind: "ToolOutput", Content: "two", Tags: []string{"t"},
			Variants: []Variant{{2, 0.5, "2"}}, Truncatable: &Truncatable{KeepHead, 1}},
		{Tokens: 30, Score: 0.7, Kind: "Document", Content: "three"},
	}); err != nil {
		t.Fatal(err)
	}
	keep := must(it.Get(0))
	if err := it.Truncate(3); err != nil { // a no-op
		t.Fatal(err)
	}
	if err := it.Truncate(1); err != nil {
		t.Fatal(err)
	}
	if it.Len() != 1 || !reflect.DeepEqual(must(it.Get(0)), keep) {
		t.Fatalf("after Truncate(1): %d items, item 0 %+v", it.Len(), must(it.Get(0)))
	}
	_, err := it.Get(1)
	expectErr(t, err, ErrInvalidArgument, "index 1 is out of range")
	// Pushed again, index 1 is a new item: nothing of the old one is left,
	// and its kind is spelled as this push spells it.
	if err := it.Push(5, 0.1, "TOOLOUTPUT"); err != nil {
		t.Fatal(err)
	}
	x := must(it.Get(1))
	if x.Kind != "TOOLOUTPUT" || x.Content != "" || x.Tags != nil || x.Variants != nil || x.Truncatable != nil {
		t.Fatalf("item 1 after a new push: %+v", x)
	}
	if err := it.Truncate(0); err != nil || it.Len() != 0 {
		t.Fatalf("Truncate(0): %v, %d items", err, it.Len())
	}
	var e *Error
	if err := it.Truncate(1); !errors.As(err, &e) || strings.Contains(e.Message, "len") {
		t.Fatalf("Truncate(1) on an empty list: %v", err)
	}
}
