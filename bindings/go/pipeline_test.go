package cupel

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func i64(v int64) *int64 { return &v }

func TestPipelineRunAndReport(t *testing.T) {
	const day = 86400000
	it := must(NewItems())
	defer it.Close()
	err := it.PushItems([]Item{
		{Tokens: 50, Kind: "SystemPrompt", Content: "You are helpful.", Pinned: true, Timestamp: i64(0)},
		{Kind: DefaultKind, Tokens: 100, Content: "hello", Timestamp: i64(day)},
		{Kind: DefaultKind, Tokens: 100, Content: "how are you", Timestamp: i64(2 * day)},
		{Tokens: 100, Kind: "ToolOutput", Content: "ls output", Timestamp: i64(3 * day), Tags: []string{"auth"},
			Metadata: map[string]string{"cupel:trust": "0.9"}, Priority: i64(4)},
		{Kind: DefaultKind, Tokens: 100, Content: "hello", Timestamp: i64(4 * day)},
		{Kind: DefaultKind, Tokens: -3, Content: "broken"},
		{Tokens: 5000, Kind: "Document", Content: "a huge file", Source: "Docs"},
	})
	if err != nil {
		t.Fatal(err)
	}
	recency := must(NewRecencyScorer())
	defer recency.Close()
	kind := must(NewKindScorer(nil))
	defer kind.Close()
	blend := must(NewCompositeScorer([]WeightedScorer{{Scorer: recency, Weight: 2}, {Scorer: kind, Weight: 1}}))
	defer blend.Close()
	g := must(NewGreedy())
	defer g.Close()
	chrono := must(NewChronologicalPlacer())
	defer chrono.Close()
	p := must(NewPipeline(PipelineOptions{Scorer: blend, Slicer: g, Placer: chrono}))
	defer p.Close()
	r := must(NewReport())
	defer r.Close()
	b := budget(t, 1000, 300)
	defer b.Close()
	placed, err := p.Run(it, b, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(placed) == 0 || placed[0] != 0 {
		t.Fatalf("placed %v: the pinned, oldest item first", placed)
	}
	inc := must(r.Included())
	if len(inc) != len(placed) || inc[0].Reason != ReasonPinned || inc[0].Reason.String() != "Pinned" {
		t.Fatalf("included %+v", inc)
	}
	why := map[int]Decision{}
	for _, d := range must(r.Excluded()) {
		why[d.Index] = d
	}
	if why[1].Reason != ReasonDeduplicated || why[1].Related != 4 {
		t.Fatalf("item 1: %+v", why[1])
	}
	if why[5].Reason != ReasonNegativeTokens || why[6].Reason != ReasonBudgetExceeded || why[6].ItemTokens != 5000 {
		t.Fatalf("items 5, 6: %+v %+v", why[5], why[6])
	}
	if r.TotalCandidates() != 7 {
		t.Fatalf("total %d", r.TotalCandidates())
	}
	var doc map[string]interface{}
	if err := json.Unmarshal([]byte(must(r.JSON(it))), &doc); err != nil || doc["total_candidates"].(float64) != 7 {
		t.Fatalf("json: %v %v", err, doc)
	}
	strict := must(NewPipeline(PipelineOptions{Slicer: g, Overflow: OverflowThrow, NoDeduplication: true}))
	defer strict.Close()
	small := budget(t, 40, 40)
	defer small.Close()
	_, err = strict.Run(it, small, nil)
	expectErr(t, err, ErrInvalidArgument, "pinned items need 50 tokens")
}

func TestScorersAndGroupsInThePipeline(t *testing.T) {
	it := must(NewItems())
	defer it.Close()
	if err := it.PushItems([]Item{
		{Tokens: 10, Score: 0.9, Kind: "ToolCall", Group: 7},
		{Tokens: 200, Score: 0.1, Kind: "ToolOutput", Group: 7},
		{Tokens: 60, Score: 0.5, Kind: DefaultKind, Tags: []string{"db"}},
	}); err != nil {
		t.Fatal(err)
	}
	makers := []func() (*Scorer, error){
		NewGivenScorer, NewRecencyScorer, NewPriorityScorer, NewFrequencyScorer, NewReflexiveScorer,
		func() (*Scorer, error) { return NewKindScorer(map[string]float64{"ToolCall": 2}) },
		func() (*Scorer, error) { return NewTagScorer(map[string]float64{"db": 1}) },
		func() (*Scorer, error) { return NewMetadataTrustScorer(0.5) },
		func() (*Scorer, error) { return NewMetadataKeyScorer("k", "v", 2) },
		func() (*Scorer, error) {
			return NewDecayScorer(DecayCurveStep, 0, []DecayWindow{{60, 0.9}, {3600, 0.1}}, 10000, 0.5)
		},
	}
	for i, mk := range makers {
		s := must(mk())
		scores := must(s.Score(it))
		if len(scores) != 3 {
			t.Fatalf("scorer %d: %v", i, scores)
		}
		scaled := must(NewScaledScorer(s))
		s.Close()
		must(scaled.Score(it))
		scaled.Close()
	}
	given := must(NewGivenScorer())
	defer given.Close()
	if got := must(given.Score(it)); !reflect.DeepEqual(got, []float64{0.9, 0.1, 0.5}) {
		t.Fatalf("given: %v", got)
	}
	_, err := NewMetadataKeyScorer("k", "v", 0)
	expectErr(t, err, ErrInvalidArgument, "boost")
	g := must(NewGreedy())
	defer g.Close()
	p := must(NewPipeline(PipelineOptions{Slicer: g}))
	defer p.Close()
	r := must(NewReport())
	defer r.Close()
	b := budget(t, 100, 100)
	defer b.Close()
	placed, err := p.Run(it, b, r)
	expect(t, placed, err, 2)
	for _, d := range must(r.Excluded()) {
		if d.Group != 7 || d.GroupTokens != 210 || d.Reason != ReasonBudgetExceeded {
			t.Fatalf("%+v", d)
		}
	}
}

// PushItems and Run reuse their buffers between calls (sync.Pool): a call
// must see nothing of an earlier, larger one.
func TestPushItemsAfterALargerPushSeesNoStaleColumns(t *testing.T) {
	g := must(NewGreedy())
	defer g.Close()
	p := must(NewPipeline(PipelineOptions{Slicer: g, NoDeduplication: true}))
	defer p.Close()
	b := budget(t, 1000, 1000)
	defer b.Close()
	for round := 0; round < 3; round++ {
		big := must(NewItems())
		list := make([]Item, 50)
		for i := range list {
			list[i] = Item{Tokens: 1, Score: 0.5, Kind: "Memory", Content: "old content", Pinned: true,
				Group: 9, Timestamp: i64(int64(i)), Priority: i64(3), Hint: new(float64)}
		}
		if err := big.PushItems(list); err != nil {
			t.Fatal(err)
		}
		if placed := must(p.Run(big, b, nil)); len(placed) != 50 {
			t.Fatalf("round %d: %d of 50 placed", round, len(placed))
		}
		big.Close()

		small := must(NewItems())
		// Item 1 pinned and grouped, so those columns are made again: item 0
		// must come out of them unpinned and ungrouped.
		err := small.PushItems([]Item{{Kind: DefaultKind, Tokens: 10, Score: 0.9}, {Kind: DefaultKind, Tokens: 20, Score: 0.1, Pinned: true, Group: 4}})
		if err != nil {
			t.Fatal(err)
		}
		r := must(NewReport())
		placed := must(p.Run(small, b, r))
		if len(placed) != 2 {
			t.Fatalf("round %d: placed %v, want both", round, placed)
		}
		for _, d := range must(r.Included()) {
			stale := d.Reason == ReasonPinned || d.Group != 0
			if d.Index == 1 {
				stale = d.Reason != ReasonPinned || d.Group != 4
			}
			if stale {
				t.Fatalf("round %d: item %d: %+v", round, d.Index, d)
			}
		}
		doc := must(r.JSON(small))
		// (As keys: the analytics object has a "timestampCoverage".)
		for _, stale := range []string{"Memory", "old content", `"priority":`, `"timestamp":`} {
			if strings.Contains(doc, stale) {
				t.Fatalf("round %d: %q in %s", round, stale, doc)
			}
		}
		r.Close()
		small.Close()
	}
}

func TestPlacerPlaceAndTokensOverBudget(t *testing.T) {
	const day = 86400000
	it := must(NewItems())
	defer it.Close()
	err := it.PushItems([]Item{
		{Kind: DefaultKind, Tokens: 50, Pinned: true, Timestamp: i64(0)},
		{Kind: DefaultKind, Tokens: 100, Timestamp: i64(day)},
		{Kind: DefaultKind, Tokens: 100, Timestamp: i64(2 * day)},
		{Kind: DefaultKind, Tokens: 100, Timestamp: i64(3 * day)},
	})
	if err != nil {
		t.Fatal(err)
	}
	chrono := must(NewChronologicalPlacer())
	defer chrono.Close()
	u := must(NewUShapedPlacer())
	defer u.Close()
	// Timestamps 3, 1 and 0 days; scores 0.1, 0.9, 0.5.
	if got := must(chrono.Place(it, []int{3, 1, 0}, []float64{0.1, 0.9, 0.5})); !reflect.DeepEqual(got, []int{0, 1, 3}) {
		t.Fatalf("chronological: %v", got)
	}
	if got := must(u.Place(it, []int{3, 1, 0}, []float64{0.1, 0.9, 0.5})); !reflect.DeepEqual(got, []int{1, 3, 0}) {
		t.Fatalf("u-shaped: %v", got)
	}
	if got := must(u.Place(it, nil, nil)); len(got) != 0 {
		t.Fatalf("nothing to place: %v", got)
	}
	_, err = u.Place(it, []int{1, 2}, []float64{0.5})
	expectErr(t, err, ErrInvalidArgument, "lengths 2 and 1")
	_, err = u.Place(it, []int{-1}, []float64{0.5})
	expectErr(t, err, ErrInvalidArgument, "indices[0] is -1")
	_, err = u.Place(it, []int{99}, []float64{0.5})
	expectErr(t, err, ErrInvalidArgument, "99")

	g := must(NewGreedy())
	defer g.Close()
	r := must(NewReport())
	defer r.Close()
	tight := budget(t, 1000, 40)
	defer tight.Close()
	p := must(NewPipeline(PipelineOptions{Slicer: g, Overflow: OverflowProceed}))
	defer p.Close()
	if placed := must(p.Run(it, tight, r)); !reflect.DeepEqual(placed, []int{0}) {
		t.Fatalf("placed %v", placed)
	}
	if r.TokensOverBudget() != 10 {
		t.Fatalf("the pinned 50 over a target of 40: %d over", r.TokensOverBudget())
	}
	roomy := budget(t, 1000, 1000)
	defer roomy.Close()
	must(p.Run(it, roomy, r))
	if r.TokensOverBudget() != 0 {
		t.Fatalf("within the target: %d over", r.TokensOverBudget())
	}
}
