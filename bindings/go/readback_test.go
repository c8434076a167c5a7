package cupel

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

func f64p(v float64) *float64 { return &v }

// Every attribute set through the API reads back; an absent one reads back
// as absent (nil, "", the defaults).
func TestGetReadsEveryAttributeBack(t *testing.T) {
	it := must(NewItems())
	defer it.Close()
	full := Item{Tokens: 120, Score: 0.75, Kind: "ToolOutput", Content: "ls -l", Timestamp: i64(-5),
		Priority: i64(3), Pinned: true, Hint: f64p(0.25), Source: "Tool", Tags: []string{"fs", "FS", "fs"},
		Metadata: map[string]string{"cupel:trust": "0.9", "k": ""}, Group: 42, Key: 77, Volatile: true}
	bare := Item{Tokens: -3, Score: 0, Kind: DefaultKind}
	if err := it.PushItems([]Item{full, bare}); err != nil {
		t.Fatal(err)
	}
	got := must(it.Get(0))
	if !reflect.DeepEqual(got, full) {
		t.Fatalf("item 0:\n got %+v\nwant %+v", got, full)
	}
	got = must(it.Get(1))
	want := Item{Tokens: -3, Score: 0, Kind: "Message", Source: "Chat"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("item 1 (nothing set):\n got %+v\nwant %+v", got, want)
	}
	if got.Timestamp != nil || got.Priority != nil || got.Hint != nil || got.Tags != nil || got.Metadata != nil {
		t.Fatalf("absent attributes read back as present: %+v", got)
	}

	// The single-item setters, on the bare item.
	for _, err := range []error{
		it.SetContent(1, "hello"), it.SetTimestamp(1, 7), it.SetPriority(1, -2), it.SetPinned(1, true),
		it.SetRelevanceHint(1, 2.5), it.SetSource(1, "Rag"), it.AddTag(1, "a"), it.AddTag(1, "b"),
		it.SetMetadata(1, "x", "1"), it.SetMetadata(1, "x", "2"), it.SetGroup(1, 9),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	got = must(it.Get(1))
	want = Item{Tokens: -3, Kind: "Message", Content: "hello", Timestamp: i64(7), Priority: i64(-2), Pinned: true,
		Hint: f64p(2.5), Source: "Rag", Tags: []string{"a", "b"}, Metadata: map[string]string{"x": "2"}, Group: 9}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("item 1 after the setters:\n got %+v\nwant %+v", got, want)
	}
	if err := it.SetPinned(1, false); err != nil || must(it.Get(1)).Pinned {
		t.Fatalf("unpinning: %v", err)
	}

	// A kind reads back as the list first spelled it (ASCII case folding).
	if err := it.Push(1, 0.5, "toolOUTPUT"); err != nil {
		t.Fatal(err)
	}
	if k := must(it.Get(2)).Kind; k != "ToolOutput" {
		t.Fatalf("kind %q, want the first spelling ToolOutput", k)
	}
	// A Get result pushes again as the same item.
	copied := must(NewItems())
	defer copied.Close()
	if err := copied.PushItems([]Item{must(it.Get(0))}); err != nil || !reflect.DeepEqual(must(copied.Get(0)), full) {
		t.Fatalf("round trip: %v %+v", err, must(copied.Get(0)))
	}
}

func TestGetOutOfRange(t *testing.T) {
	it := items(t, []int64{1, 2}, []float64{0.1, 0.2}, nil)
	_, err := it.Get(2)
	expectErr(t, err, ErrInvalidArgument, "index 2 is out of range: the list holds 2 items")
	_, err = it.Get(-1)
	expectErr(t, err, ErrInvalidArgument, "index -1 is out of range: the list holds 2 items")
	_, err = it.Get(math.MinInt)
	expectErr(t, err, ErrInvalidArgument, "is out of range")
	if strings.Contains(err.Error(), "18446744073709551615") {
		t.Fatalf("a raw C sentinel in %v", err)
	}
	for name, err := range map[string]error{
		"SetContent":  it.SetContent(-1, "x"),
		"SetPinned":   it.SetPinned(5, true),
		"AddTag":      it.AddTag(-3, "x"),
		"SetMetadata": it.SetMetadata(2, "k", "v"),
		"SetGroups":   it.SetGroups(-1, []uint64{1}),
		"SetContents": it.SetContents(-1, []string{"a"}),
	} {
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "out of range") &&
			!strings.Contains(err.Error(), "past the end") {
			t.Fatalf("%s: %v", name, err)
		}
	}
	it.Close()
	_, err = it.Get(0)
	expectErr(t, err, ErrClosed, "items is closed")
	var none *Items
	_, err = none.Get(0)
	expectErr(t, err, ErrNullPointer, "items is nil")
}

// Reason names come from the library (cupel_reason_str), spelled as the
// specification and the JSON report spell them.
func TestReasonNames(t *testing.T) {
	want := map[Reason]string{
		ReasonScored: "Scored", ReasonPinned: "Pinned", ReasonZeroToken: "ZeroToken",
		ReasonVariant: "Variant", ReasonTruncated: "Truncated",
		ReasonBudgetExceeded: "BudgetExceeded", ReasonScoredTooLow: "ScoredTooLow",
		ReasonDeduplicated: "Deduplicated", ReasonQuotaCapExceeded: "QuotaCapExceeded",
		ReasonQuotaRequireDisplaced: "QuotaRequireDisplaced", ReasonNegativeTokens: "NegativeTokens",
		ReasonPinnedOverride: "PinnedOverride", ReasonFiltered: "Filtered", ReasonCountCapExceeded: "CountCapExceeded",
		ReasonDeferred: "Deferred",
	}
	for r, name := range want {
		if r.String() != name {
			t.Errorf("Reason(%d) is %q, want %q", int(r), r.String(), name)
		}
	}
	for _, r := range []Reason{-1, 5, 9, 20, 1 << 20, 1 << 32, math.MaxInt, math.MinInt} {
		if r.String() != "Unknown" {
			t.Errorf("Reason(%d) is %q, want Unknown", int(r), r.String())
		}
	}
	// The JSON report names reasons the same way.
	it := items(t, []int64{100, 500}, []float64{0.9, 0.8}, nil)
	g := must(NewGreedy())
	p := must(NewPipeline(PipelineOptions{Slicer: g}))
	r := must(NewReport())
	must(p.Run(it, budget(t, 200, 200), r))
	ex := must(r.Excluded())
	if len(ex) != 1 || ex[0].Reason != ReasonBudgetExceeded ||
		!strings.Contains(must(r.JSON(it)), `"`+ex[0].Reason.String()+`"`) {
		t.Fatalf("excluded %+v; json %s", ex, must(r.JSON(it)))
	}
	if Status(1<<32+2).String() != "CUPEL_UNKNOWN_STATUS" || StatusClosed.String() != "CUPEL_GO_ERROR_CLOSED" {
		t.Fatal(Status(1<<32 + 2).String())
	}
}

// An empty kind is an error everywhere; DefaultKind spells the default.
func TestEmptyKindIsAnError(t *testing.T) {
	it := must(NewItems())
	defer it.Close()
	expectErr(t, it.Push(1, 0.5, ""), ErrInvalidArgument, `kind "" is empty`)
	expectErr(t, it.PushMany([]int64{1, 2}, []float64{0.5, 0.5}, []string{"Message", ""}), ErrInvalidArgument,
		`kinds[1] "" is empty`)
	expectErr(t, it.PushItems([]Item{{Tokens: 1, Kind: "Message"}, {Tokens: 2}}), ErrInvalidArgument,
		`list[1].Kind "" is empty; use DefaultKind`)
	expectErr(t, it.PushItems([]Item{{Tokens: 1, Kind: " \t"}}), ErrInvalidArgument, `list[0].Kind " \t" is empty`)
	if it.Len() != 0 {
		t.Fatalf("failed pushes added %d items", it.Len())
	}
	if err := it.Push(1, 0.5, DefaultKind); err != nil {
		t.Fatal(err)
	}
	if err := it.PushMany([]int64{2}, []float64{0.5}, nil); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if k := must(it.Get(i)).Kind; k != "Message" {
			t.Fatalf("item %d: kind %q", i, k)
		}
	}
	b := budget(t, 100, 100)
	defer b.Close()
	expectErr(t, b.Reserve("", 5), ErrInvalidArgument, `kind "" is empty`)
	g := must(NewGreedy())
	defer g.Close()
	_, err := NewQuota(g, []Quota{{Kind: "", RequirePercent: 0, CapPercent: 50}})
	expectErr(t, err, ErrInvalidArgument, `quotas[0].Kind "" is empty`)
	_, err = NewCountQuota(g, []CountQuota{{Kind: "Message", Cap: 1}, {Kind: "", Cap: 1}}, Degrade)
	expectErr(t, err, ErrInvalidArgument, `entries[1].Kind "" is empty`)
	_, err = NewKindScorer(map[string]float64{"": 1})
	expectErr(t, err, ErrInvalidArgument, `weights key "" is empty`)
}

// The library's messages name arguments as Go spells them; quoted text is
// the caller's and never renamed.
func TestMessagesUseGoNames(t *testing.T) {
	for msg, want := range map[string]string{
		"target_tokens 2000 > max_tokens 1000":                            "targetTokens 2000 > maxTokens 1000",
		`weights[0].weight (kind "my_kind") is NaN; weights must be >= 0`: `weights["my_kind"] is NaN; weights must be >= 0`,
		`weights[3].kind "" is empty or only whitespace`:                  `weights key "" is empty or only whitespace`,
		`weights[1]: kind "a_b" is configured twice`:                      `weights: kind "a_b" is configured twice`,
		"weights[2] is NaN; composite weights must be finite and > 0":     "parts[2].Weight is NaN; composite weights must be finite and > 0",
		`quotas[0].kind "x_y.kind" is empty`:                              `quotas[0].Kind "x_y.kind" is empty`,
		`require_count 3 > cap_count 2 for kind "max_tokens"`:             `Require 3 > Cap 2 for kind "max_tokens"`,
		`kind "a\"b_c" then slack_tokens`:                                 `kind "a\"b_c" then slackTokens`,
		"windows[1].max_age is 0 seconds":                                 "windows[1].MaxAgeSecs is 0 seconds",
		"half_life is -1 seconds":                                         "durationSecs is -1 seconds",
	} {
		if got := goMessage(msg, nil); got != want {
			t.Errorf("goMessage(%q)\n got %q\nwant %q", msg, got, want)
		}
	}
	if got := goMessage("scores[3] is NaN; kinds[1] x", pushItemsRules); got != "list[3].Score is NaN; list[1].Kind x" {
		t.Errorf("PushItems names: %q", got)
	}
	// Through the library.
	_, err := NewBudget(-1, 0)
	expectErr(t, err, ErrInvalidArgument, "maxTokens is -1")
	g := must(NewGreedy())
	defer g.Close()
	it := items(t, []int64{10}, []float64{0.5}, nil)
	_, err = Slice(g, it, budget(t, 10, 10), -1, nil)
	expectErr(t, err, ErrInvalidArgument, "pinnedTokens is -1")
	_, err = MarginalItems(g, it, budget(t, 10, 10), 0, -1)
	expectErr(t, err, ErrInvalidArgument, "slackTokens is -1")
	_, _, err = FindMinBudget(g, it, 0, -1, 10)
	expectErr(t, err, ErrInvalidArgument, "targetIndex -1 is out of range")
	r := must(NewRecencyScorer())
	_, err = NewCompositeScorer([]WeightedScorer{{r, 1}, {r, math.Inf(1)}})
	expectErr(t, err, ErrInvalidArgument, "parts[1].Weight is inf")
	_, err = NewCompositeScorer([]WeightedScorer{{r, 1}, {nil, 1}})
	expectErr(t, err, ErrNullPointer, "parts[1].Scorer is nil")
	_, err = NewKindScorer(map[string]float64{"Document": 1, "Memory": math.NaN()})
	expectErr(t, err, ErrInvalidArgument, `weights["Memory"] is NaN`)
	_, err = NewDecayScorer(DecayCurveStep, 0, []DecayWindow{{0, 0.5}}, 0, 0.5)
	expectErr(t, err, ErrInvalidArgument, "windows[0].MaxAgeSecs is 0")
}

// A closed handle is ErrClosed wherever it is passed, optional ones
// included (never taken for "none"); a nil required one is ErrNullPointer.
func TestClosedAndNilArguments(t *testing.T) {
	it := items(t, []int64{10, 20}, []float64{0.5, 0.9}, nil)
	b := budget(t, 100, 100)
	g := must(NewGreedy())
	rec := must(NewRecencyScorer())
	rec.Close()
	_, err := NewPipeline(PipelineOptions{Scorer: rec, Slicer: g})
	expectErr(t, err, ErrClosed, "opts.Scorer is closed")
	pl := must(NewChronologicalPlacer())
	pl.Close()
	_, err = NewPipeline(PipelineOptions{Slicer: g, Placer: pl})
	expectErr(t, err, ErrClosed, "opts.Placer is closed")
	_, err = pl.Place(it, []int{0}, []float64{0.5})
	expectErr(t, err, ErrClosed, "placer is closed")
	_, err = NewPipeline(PipelineOptions{})
	expectErr(t, err, ErrNullPointer, "opts.Slicer is nil")
	r := must(NewReport())
	r.Close()
	_, err = Slice(g, it, b, 0, r)
	expectErr(t, err, ErrClosed, "report is closed")
	_, err = r.Included()
	expectErr(t, err, ErrClosed, "report is closed")
	_, err = NewScaledScorer(rec)
	expectErr(t, err, ErrClosed, "inner is closed")
	_, err = rec.Score(it)
	expectErr(t, err, ErrClosed, "scorer is closed")
	b.Close()
	expectErr(t, b.SetSafetyMargin(5), ErrClosed, "budget is closed")
	_, _, err = b.Effective(0)
	expectErr(t, err, ErrClosed, "budget is closed")
	s := must(NewStream(10, 0))
	s.Close()
	_, err = s.Finish()
	expectErr(t, err, ErrClosed, "stream is closed")
	var nb *Budget
	_, err = MarginalItems(g, it, nb, 0, 1)
	expectErr(t, err, ErrNullPointer, "budget is nil")
	var ns *Slicer
	_, err = NewQuota(ns, nil)
	expectErr(t, err, ErrNullPointer, "inner is nil")
	if errors.Is(err, ErrClosed) {
		t.Fatal("nil is not closed")
	}
}

// PushItems is all or nothing: values the library checks only after the
// push are checked first.
func TestPushItemsIsAllOrNothing(t *testing.T) {
	it := items(t, []int64{5}, []float64{0.5}, nil)
	defer it.Close()
	ok := Item{Tokens: 1, Kind: DefaultKind}
	for _, bad := range []struct {
		item Item
		msg  string
	}{
		{Item{Tokens: 1, Kind: DefaultKind, Content: "\xff"}, "list[1].Content is not valid UTF-8"},
		{Item{Tokens: 1, Kind: DefaultKind, Content: "a\x00b"}, "list[1].Content contains a NUL byte at offset 1"},
		{Item{Tokens: 1, Kind: DefaultKind, Source: "  "}, `list[1].Source "  " is empty or only whitespace`},
		{Item{Tokens: 1, Kind: DefaultKind, Tags: []string{"ok", "\xfe"}}, "list[1].Tags[1] is not valid UTF-8"},
		{Item{Tokens: 1, Kind: DefaultKind, Metadata: map[string]string{"k": "\xff"}}, `list[1].Metadata["k"] is not valid UTF-8`},
		{Item{Tokens: 1, Kind: "Mes\x00sage"}, "list[1].Kind contains a NUL byte"},
		{Item{Tokens: 1, Kind: "\xff"}, "list[1].Kind is not valid UTF-8"},
		{Item{Tokens: 1, Kind: DefaultKind, Score: math.NaN()}, "list[1].Score is NaN"},
	} {
		expectErr(t, it.PushItems([]Item{ok, bad.item}), ErrInvalidArgument, bad.msg)
		if it.Len() != 1 {
			t.Fatalf("%s: the failed push left %d items", bad.msg, it.Len())
		}
	}
	expectErr(t, it.SetContent(0, ""), ErrInvalidArgument, "content of item 0 is empty")
	expectErr(t, it.SetContent(0, "a\x00"), ErrInvalidArgument, "content contains a NUL byte at offset 1")
	expectErr(t, it.SetContents(0, []string{"a\x00"}), ErrInvalidArgument, "contents[0] contains a NUL byte")
	expectErr(t, it.SetSource(0, " "), ErrInvalidArgument, "source")
	expectErr(t, it.AddTag(0, "\xff\xfe"), ErrInvalidArgument, "tag is not valid UTF-8")
	expectErr(t, it.SetMetadata(0, "k\x00", "v"), ErrInvalidArgument, "key contains a NUL byte")
	if got := must(it.Get(0)); !reflect.DeepEqual(got, Item{Tokens: 5, Score: 0.5, Kind: "Message", Source: "Chat"}) {
		t.Fatalf("failed setters changed the item: %+v", got)
	}
}

// NewKindScorer(nil) is the spec's defaults; an empty map weights no kind.
func TestKindScorerDefaultsAndEmpty(t *testing.T) {
	it := items(t, []int64{1, 1}, []float64{0.5, 0.5}, []string{"SystemPrompt", "Message"})
	defaults := must(NewKindScorer(nil))
	if got := must(defaults.Score(it)); !reflect.DeepEqual(got, []float64{1, 0.2}) {
		t.Fatalf("defaults: %v", got)
	}
	none := must(NewKindScorer(map[string]float64{}))
	if got := must(none.Score(it)); !reflect.DeepEqual(got, []float64{0, 0}) {
		t.Fatalf("no kind weighted: %v", got)
	}
}
