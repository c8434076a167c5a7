package cupel

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// fixtureItems is the contract's fixture: 3 items of 100, 200 and 50
// tokens, kinds Message, Document, ToolOutput, timestamps 1000..3000.
func fixtureItems(t *testing.T) *Items {
	t.Helper()
	it := must(NewItems())
	err := it.PushItems([]Item{
		{Tokens: 100, Score: 0.9, Kind: "Message", Content: "alpha", Timestamp: i64(1000)},
		{Tokens: 200, Score: 0.5, Kind: "Document", Content: "beta", Timestamp: i64(2000)},
		{Tokens: 50, Score: 0.1, Kind: "ToolOutput", Content: "gamma", Timestamp: i64(3000)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return it
}

// fixturePipeline is recency, greedy, chronological.
func fixturePipeline(t *testing.T) *Pipeline {
	t.Helper()
	rec, greedy, chrono := must(NewRecencyScorer()), must(NewGreedy()), must(NewChronologicalPlacer())
	defer rec.Close()
	defer greedy.Close()
	defer chrono.Close()
	return must(NewPipeline(PipelineOptions{Scorer: rec, Slicer: greedy, Placer: chrono}))
}

// doc is a policy document as a map, to look at its settings.
func doc(t *testing.T, text string) map[string]interface{} {
	t.Helper()
	var m map[string]interface{}
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatalf("%v in %s", err, text)
	}
	return m
}

func TestPolicyJSONRoundTrip(t *testing.T) {
	it := fixtureItems(t)
	defer it.Close()
	b := budget(t, 300, 250)
	defer b.Close()
	tok := must(NewTokenizer(Cl100kBase))
	defer tok.Close()
	greedy := must(NewGreedy())
	defer greedy.Close()
	knap := must(NewKnapsack(10))
	defer knap.Close()
	quota := must(NewQuota(greedy, []Quota{{Kind: "Message", RequirePercent: 10, CapPercent: 60}}))
	defer quota.Close()
	counted := must(NewCountQuota(quota, []CountQuota{{Kind: "Document", Require: 0, Cap: 1}}, Fail))
	defer counted.Close()
	rec, prio := must(NewRecencyScorer()), must(NewPriorityScorer())
	defer rec.Close()
	defer prio.Close()
	comp := must(NewCompositeScorer([]WeightedScorer{{Scorer: rec, Weight: 3}, {Scorer: prio, Weight: 1}}))
	defer comp.Close()
	u := must(NewUShapedPlacer())
	defer u.Close()

	for name, opts := range map[string]PipelineOptions{
		"given greedy":          {Slicer: greedy},
		"composite knapsack":    {Scorer: comp, Slicer: knap, Placer: u, NoDeduplication: true, Overflow: OverflowProceed},
		"count quotas + quotas": {Scorer: rec, Slicer: counted, Tokenizer: tok, Overflow: OverflowTruncate},
	} {
		p := must(NewPipeline(opts))
		text, err := p.JSON()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		q, err := PipelineFromJSON([]byte(text))
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, text)
		}
		again, err := q.JSON()
		if err != nil || again != text {
			t.Fatalf("%s: written again %q (%v), first %q", name, again, err, text)
		}
		want, err1 := p.Run(it, b, nil)
		got, err2 := q.Run(it, b, nil)
		if !reflect.DeepEqual(got, want) || (err1 == nil) != (err2 == nil) {
			t.Fatalf("%s: read back selects %v (%v), the original %v (%v)", name, got, err2, want, err1)
		}
		// MarshalJSON: the document inside a host's settings.
		settings, err := json.Marshal(struct {
			Policy *Pipeline `json:"policy"`
			Budget *Budget   `json:"budget"`
		}{p, b})
		if err != nil {
			t.Fatal(err)
		}
		var back struct {
			Policy json.RawMessage `json:"policy"`
			Budget json.RawMessage `json:"budget"`
		}
		if err := json.Unmarshal(settings, &back); err != nil {
			t.Fatal(err)
		}
		r := must(PipelineFromJSON(back.Policy))
		if text2, _ := r.JSON(); text2 != text {
			t.Fatalf("%s: through MarshalJSON: %s", name, text2)
		}
		r.Close()
		q.Close()
		p.Close()
	}
	// The settings are visible in the document.
	p := must(NewPipeline(PipelineOptions{Scorer: comp, Slicer: counted, Tokenizer: tok}))
	defer p.Close()
	m := doc(t, must(p.JSON()))
	if m["tokenizer"] != "cl100k_base" || m["slicerType"] != "greedy" || m["deduplicationEnabled"] != true {
		t.Fatalf("%v", m)
	}
	if q := m["quotas"].([]interface{})[0].(map[string]interface{}); q["kind"] != "Message" || q["maxPercent"] != 60.0 {
		t.Fatalf("quotas %v", m["quotas"])
	}
	if s := m["scorers"].([]interface{}); len(s) != 2 || s[0].(map[string]interface{})["weight"] != 3.0 {
		t.Fatalf("scorers %v", s)
	}
}

func TestPolicyJSONErrors(t *testing.T) {
	_, err := PipelineFromJSON(nil)
	expectErr(t, err, ErrNullPointer, "json is nil")
	for text, want := range map[string]string{
		"":               "json is empty",
		"  ":             "json",
		"null":           "json $: expected a policy object",
		"[]":             "json $",
		"\xff\xfe":       "json: invalid UTF-8",
		`{"scorers":`:    "json: malformed JSON at line 1 column",
		`{}`:             "json $.scorers",
		`{"scorers":[]}`: "json $.scorers",
		`{"scorers":[{"type":"recency","weight":-1}]}`:                                                              "json $.scorers[0].weight: must be positive and finite (got -1)",
		`{"scorers":[{"type":"recency","weight":1},{"type":"nope","weight":1}]}`:                                    "json $.scorers[1].type: unknown scorer type \"nope\"; known types: recency",
		`{"scorers":[{"type":"recency","weight":1}],"knapsackBucketSize":5}`:                                        "json $.knapsackBucketSize: only valid when slicerType is \"knapsack\"",
		`{"scorers":[{"type":"recency","weight":1}],"quotas":[{"kind":"Message","minPercent":80,"maxPercent":20}]}`: "json $.quotas[0]: minPercent 80 exceeds maxPercent 20",
		`{"scorers":[{"type":"recency","weight":1}],"slicerType":"bogus"}`:                                          "json $.slicerType",
		`{"scorers":[{"type":"tag","weight":1}]}`:                                                                   "json $.scorers[0]",
		`{"scorers":[{"type":"recency","weight":1,"innerScorer":{"type":"recency"}}]}`:                              "json $.scorers[0]",
	} {
		_, err := PipelineFromJSON([]byte(text))
		expectErr(t, err, ErrInvalidArgument, want)
	}
	// Case-insensitive enum values, unknown keys ignored, null keys default.
	p, err := PipelineFromJSON([]byte(`{"scorers":[{"type":"RECENCY","weight":2}],"slicerType":"Knapsack",` +
		`"placerType":"USHAPED","whatever":[1,2],"overflowStrategy":null}`))
	if err != nil {
		t.Fatal(err)
	}
	m := doc(t, must(p.JSON()))
	if m["slicerType"] != "knapsack" || m["placerType"] != "uShaped" || m["overflowStrategy"] != "throw" ||
		m["knapsackBucketSize"] != 100.0 {
		t.Fatalf("%v", m)
	}
	p.Close()

	var nilPipe *Pipeline
	_, err = nilPipe.JSON()
	expectErr(t, err, ErrNullPointer, "pipeline is nil")
	_, err = p.JSON()
	expectErr(t, err, ErrClosed, "pipeline is closed")
	_, err = json.Marshal(p)
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("json.Marshal of a closed pipeline: %v", err)
	}

	// A QuotaSlice around a count quota cannot be written: ErrUnsupported.
	greedy := must(NewGreedy())
	defer greedy.Close()
	counted := must(NewCountQuota(greedy, []CountQuota{{Kind: "Message", Cap: 2}}, Degrade))
	defer counted.Close()
	outer := must(NewQuota(counted, []Quota{{Kind: "Message", CapPercent: 50}}))
	defer outer.Close()
	q := must(NewPipeline(PipelineOptions{Slicer: outer}))
	defer q.Close()
	_, err = q.JSON()
	expectErr(t, err, ErrUnsupported, "")
}

func TestBudgetJSON(t *testing.T) {
	b := budget(t, 1000, 800)
	defer b.Close()
	if err := b.SetOutputReserve(100); err != nil {
		t.Fatal(err)
	}
	if err := b.Reserve("SystemPrompt", 50); err != nil {
		t.Fatal(err)
	}
	if err := b.SetSafetyMargin(5); err != nil {
		t.Fatal(err)
	}
	text := must(b.JSON())
	m := doc(t, text)
	if m["maxTokens"] != 1000.0 || m["targetTokens"] != 800.0 || m["outputReserve"] != 100.0 ||
		m["estimationSafetyMarginPercent"] != 5.0 ||
		!reflect.DeepEqual(m["reservedSlots"], map[string]interface{}{"systemprompt": 50.0}) {
		t.Fatalf("%s", text)
	}
	c := must(BudgetFromJSON([]byte(text)))
	defer c.Close()
	if again := must(c.JSON()); again != text {
		t.Fatalf("%s\n%s", again, text)
	}
	for _, pinned := range []int64{0, 100} {
		m1, t1, _ := b.Effective(pinned)
		m2, t2, _ := c.Effective(pinned)
		if m1 != m2 || t1 != t2 {
			t.Fatalf("effective (%d, %d) vs (%d, %d)", m1, t1, m2, t2)
		}
	}
	_, err := BudgetFromJSON(nil)
	expectErr(t, err, ErrNullPointer, "json is nil")
	for text, want := range map[string]string{
		"":                                     "json is empty",
		`{"maxTokens":100,"targetTokens":250}`: "json $",
		`{"targetTokens":1}`:                   "json $.maxTokens: required",
		`{"maxTokens":-1,"targetTokens":0}`:    "json $",
		`{"maxTokens":10,"targetTokens":5,"reservedSlots":{"":1}}`: "json $.reservedSlots",
	} {
		_, err := BudgetFromJSON([]byte(text))
		expectErr(t, err, ErrInvalidArgument, want)
	}
	c.Close()
	_, err = c.JSON()
	expectErr(t, err, ErrClosed, "budget is closed")
}

// presetTable is docs/policies.md's table: scorers (type: weight), slicer,
// placer.
var presetTable = []struct {
	name, scorers, slicer, placer string
}{
	{"Chat", "recency:3 kind:1", "greedy", "chronological"},
	{"CodeReview", "kind:2 priority:2 recency:1", "greedy", "chronological"},
	{"Rag", "reflexive:3 kind:1", "greedy", "uShaped"},
	{"DocumentQa", "kind:2 reflexive:2 priority:1", "knapsack", "uShaped"},
	{"ToolUse", "kind:2 recency:2 priority:1", "greedy", "chronological"},
	{"LongRunning", "recency:3 frequency:1 kind:1", "greedy", "chronological"},
	{"Debugging", "priority:3 kind:2 recency:1", "greedy", "chronological"},
	{"AgentLoop", "recency:3 kind:2 reflexive:1", "greedy", "chronological"},
}

func TestPresets(t *testing.T) {
	var names []string
	for _, row := range presetTable {
		names = append(names, row.name)
	}
	if got := PresetNames(); !reflect.DeepEqual(got, names) {
		t.Fatalf("PresetNames %v", got)
	}
	for _, row := range presetTable {
		for _, spelling := range []string{row.name, strings.ToLower(row.name), strings.ToUpper(row.name)} {
			p, err := Preset(spelling)
			if err != nil {
				t.Fatalf("%s: %v", spelling, err)
			}
			m := doc(t, must(p.JSON()))
			p.Close()
			var scorers []string
			for _, s := range m["scorers"].([]interface{}) {
				e := s.(map[string]interface{})
				w := e["weight"].(float64)
				scorers = append(scorers, fmt.Sprintf("%s:%g", e["type"], w))
			}
			if got := strings.Join(scorers, " "); got != row.scorers {
				t.Fatalf("%s: scorers %s, want %s", row.name, got, row.scorers)
			}
			if m["slicerType"] != row.slicer || m["placerType"] != row.placer || m["name"] != row.name ||
				m["deduplicationEnabled"] != true || m["overflowStrategy"] != "throw" {
				t.Fatalf("%s: %v", row.name, m)
			}
			if row.slicer == "knapsack" && m["knapsackBucketSize"] != 100.0 {
				t.Fatalf("%s: bucket %v", row.name, m["knapsackBucketSize"])
			}
			if row.name == "AgentLoop" && (m["tokenizer"] != O200kBase || m["sessionSlack"] != 0.2) {
				t.Fatalf("AgentLoop: %v", m)
			}
		}
	}
	_, err := Preset("Nope")
	expectErr(t, err, ErrInvalidArgument, `name "Nope" is no preset; the presets are Chat, CodeReview`)
	_, err = Preset("")
	expectErr(t, err, ErrInvalidArgument, `name "" is no preset`)
	_, err = Preset("Chat\x00")
	expectErr(t, err, ErrInvalidArgument, "name contains a NUL byte")
}

func TestAnalytics(t *testing.T) {
	it := fixtureItems(t)
	defer it.Close()
	p := fixturePipeline(t)
	defer p.Close()
	r := must(NewReport())
	defer r.Close()

	// Before any run: 0 everywhere.
	if a, err := r.Analytics(it); err != nil || a.BudgetUtilization != 0 || a.KindDiversity != 0 ||
		a.TimestampCoverage != 0 || a.Quotas != nil {
		t.Fatalf("empty report: %+v, %v", a, err)
	}
	b := budget(t, 300, 250)
	defer b.Close()
	if _, err := p.Run(it, b, r); err != nil {
		t.Fatal(err)
	}
	a, err := r.Analytics(it)
	if err != nil || math.Abs(a.BudgetUtilization-250.0/300) > 1e-12 || a.KindDiversity != 2 ||
		a.TimestampCoverage != 1 {
		t.Fatalf("%+v, %v", a, err)
	}
	if u, err := r.BudgetUtilization(); err != nil || u != a.BudgetUtilization {
		t.Fatalf("%v %v", u, err)
	}
	if k, err := r.KindDiversity(it); err != nil || k != 2 {
		t.Fatalf("%v %v", k, err)
	}
	if c, err := r.TimestampCoverage(it); err != nil || c != 1 {
		t.Fatalf("%v %v", c, err)
	}
	sel := must(r.Selection(it))
	if !reflect.DeepEqual(sel.Analytics, a) || len(sel.Included) != 2 || len(sel.Excluded) != 1 ||
		sel.Excluded[0].Reason.Reason != "BudgetExceeded" || sel.Excluded[0].Item.Content != "alpha" ||
		sel.TotalCandidates != 3 || sel.Included[0].Item.Timestamp != "1970-01-01T00:00:02Z" {
		t.Fatalf("%+v", sel)
	}

	// A zero budget: utilization 0, not NaN; nothing included.
	zero := budget(t, 0, 0)
	defer zero.Close()
	if _, err := p.Run(it, zero, r); err != nil {
		t.Fatal(err)
	}
	if a, err := r.Analytics(it); err != nil || a.BudgetUtilization != 0 || a.KindDiversity != 0 ||
		a.TimestampCoverage != 0 {
		t.Fatalf("zero budget: %+v, %v", a, err)
	}

	// Items without timestamps: coverage by share; kinds compared as kinds are.
	mixed := must(NewItems())
	defer mixed.Close()
	if err := mixed.PushItems([]Item{
		{Tokens: 10, Score: 0.5, Kind: "Message", Timestamp: i64(1)},
		{Tokens: 10, Score: 0.5, Kind: "MESSAGE"},
		{Tokens: 10, Score: 0.5, Kind: "Document"},
		{Tokens: 10, Score: 0.5, Kind: "Document", Timestamp: i64(2)},
	}); err != nil {
		t.Fatal(err)
	}
	greedy := must(NewGreedy())
	defer greedy.Close()
	quota := must(NewQuota(greedy, []Quota{{Kind: "Document", RequirePercent: 0, CapPercent: 50}}))
	defer quota.Close()
	q := must(NewPipeline(PipelineOptions{Slicer: quota}))
	defer q.Close()
	big := budget(t, 100, 40)
	defer big.Close()
	if _, err := q.Run(mixed, big, r); err != nil {
		t.Fatal(err)
	}
	a, err = r.Analytics(mixed)
	if err != nil || a.KindDiversity != 2 || a.TimestampCoverage != 0.5 || len(a.Quotas) != 1 ||
		a.Quotas[0].Kind != "Document" || a.Quotas[0].Mode != "percentage" || a.Quotas[0].Cap != 50 ||
		a.BudgetUtilization != 0.4 {
		t.Fatalf("%+v, %v", a, err)
	}

	// Errors: a nil or closed report or items.
	_, err = r.KindDiversity(nil)
	expectErr(t, err, ErrNullPointer, "items is nil")
	_, err = r.Analytics(nil)
	expectErr(t, err, ErrNullPointer, "items is nil")
	var nilReport *Report
	_, err = nilReport.BudgetUtilization()
	expectErr(t, err, ErrNullPointer, "report is nil")
	r.Close()
	_, err = r.TimestampCoverage(it)
	expectErr(t, err, ErrClosed, "report is closed")
}

func TestSensitivity(t *testing.T) {
	it := must(NewItems())
	defer it.Close()
	// Items 1 and 2 have the same content: two items, two diffs.
	if err := it.PushItems([]Item{
		{Tokens: 100, Score: 0.9, Kind: "Message", Content: "alpha", Timestamp: i64(1000)},
		{Tokens: 100, Score: 0.2, Kind: "Document", Content: "same", Timestamp: i64(2000)},
		{Tokens: 100, Score: 0.1, Kind: "Document", Content: "same", Timestamp: i64(3000)},
		{Tokens: 100, Score: 0.8, Kind: "Message", Timestamp: i64(500)},
	}); err != nil {
		t.Fatal(err)
	}
	b := budget(t, 200, 200)
	defer b.Close()
	// Without deduplication (which would drop one of the two "same").
	rec, greedy, chrono := must(NewRecencyScorer()), must(NewGreedy()), must(NewChronologicalPlacer())
	defer rec.Close()
	defer greedy.Close()
	defer chrono.Close()
	recent := must(NewPipeline(PipelineOptions{Scorer: rec, Slicer: greedy, Placer: chrono, NoDeduplication: true}))
	defer recent.Close() // the newest two: 1 and 2
	given := must(NewPipeline(PipelineOptions{Slicer: greedy, NoDeduplication: true}))
	defer given.Close() // the best scored two: 0 and 3

	res, err := Sensitivity([]SensitivityVariant{{"recent", recent}, {"given", given}}, it, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Variants) != 2 || res.Variants[0].Label != "recent" || res.Variants[1].Label != "given" {
		t.Fatalf("%+v", res.Variants)
	}
	if len(res.Variants[0].Report.Included) != 2 || res.Variants[1].Report.TotalCandidates != 4 ||
		!json.Valid(res.Variants[0].ReportJSON) {
		t.Fatalf("%+v", res.Variants[0])
	}
	var idx []int
	for _, d := range res.Diffs {
		idx = append(idx, d.Index)
	}
	if !reflect.DeepEqual(idx, []int{0, 1, 2, 3}) {
		t.Fatalf("diffs %+v", res.Diffs)
	}
	d1, d2, d3 := res.Diffs[1], res.Diffs[2], res.Diffs[3]
	if d1.Content != "same" || d2.Content != "same" || d3.Content != "" ||
		d1.Status("recent") != "Included" || d1.Status("given") != "Excluded" ||
		d3.Status("given") != "Included" || d3.Status("nope") != "" || len(d2.Statuses) != 2 {
		t.Fatalf("%+v", res.Diffs)
	}
	// The result writes back as the library's JSON.
	out := must(json.Marshal(res))
	var back map[string]interface{}
	if err := json.Unmarshal(out, &back); err != nil || len(back["variants"].([]interface{})) != 2 {
		t.Fatalf("%s", out)
	}
	// The same pipeline twice: no diffs.
	res, err = Sensitivity([]SensitivityVariant{{"a", recent}, {"b", recent}}, it, b)
	if err != nil || len(res.Diffs) != 0 {
		t.Fatalf("%+v %v", res, err)
	}

	_, err = Sensitivity([]SensitivityVariant{{"a", recent}}, it, b)
	expectErr(t, err, ErrInvalidArgument, "variants holds 1; a sensitivity comparison needs at least two")
	_, err = Sensitivity(nil, it, b)
	expectErr(t, err, ErrInvalidArgument, "variants holds 0")
	_, err = Sensitivity([]SensitivityVariant{{"a", recent}, {"b", nil}}, it, b)
	expectErr(t, err, ErrNullPointer, "variants[1].Pipeline is nil")
	_, err = Sensitivity([]SensitivityVariant{{"a", recent}, {"b\x00", given}}, it, b)
	expectErr(t, err, ErrInvalidArgument, "variants[1].Label contains a NUL byte")
	_, err = Sensitivity([]SensitivityVariant{{"a", recent}, {"b", given}}, nil, b)
	expectErr(t, err, ErrNullPointer, "items is nil")
	_, err = Sensitivity([]SensitivityVariant{{"a", recent}, {"b", given}}, it, nil)
	expectErr(t, err, ErrNullPointer, "budget is nil")

	// A variant that fails names itself.
	strict := must(NewPipeline(PipelineOptions{Slicer: greedy}))
	defer strict.Close()
	if err := it.SetTruncatable(1, KeepHead, 1); err != nil {
		t.Fatal(err)
	}
	_, err = Sensitivity([]SensitivityVariant{{"a", recent}, {"strict", strict}}, it, b)
	expectErr(t, err, ErrInvalidArgument, `variants[0] ("a") failed: item 1 is truncatable`)

	closed := fixturePipeline(t)
	closed.Close()
	_, err = Sensitivity([]SensitivityVariant{{"a", recent}, {"b", closed}}, it, b)
	expectErr(t, err, ErrClosed, "variants[1].Pipeline is closed")
	it.Close()
	_, err = Sensitivity([]SensitivityVariant{{"a", recent}, {"b", given}}, it, b)
	expectErr(t, err, ErrClosed, "items is closed")
}

// Many items: the first guess at the JSON's size is too small and the
// library is asked again.
func TestSensitivityLargeReport(t *testing.T) {
	it := must(NewItems())
	defer it.Close()
	list := make([]Item, 300)
	for i := range list {
		list[i] = Item{Tokens: 10, Score: float64(i%7) / 7, Kind: "Message", Timestamp: i64(int64(i)),
			Content: strings.Repeat("long content ", 40) + fmt.Sprint(i),
			Tags:    []string{"t1", "t2"}, Metadata: map[string]string{"k": strings.Repeat("v", 50)}}
	}
	if err := it.PushItems(list); err != nil {
		t.Fatal(err)
	}
	b := budget(t, 1000, 1000)
	defer b.Close()
	recent := fixturePipeline(t)
	defer recent.Close()
	events := 0
	if err := recent.SetTrace(TraceStages, func(TraceEvent) { events++ }); err != nil {
		t.Fatal(err)
	}
	greedy := must(NewGreedy())
	defer greedy.Close()
	given := must(NewPipeline(PipelineOptions{Slicer: greedy}))
	defer given.Close()
	res, err := Sensitivity([]SensitivityVariant{{"recent", recent}, {"given", given}}, it, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Variants[0].Report.Excluded) != 200 || len(res.Variants[1].Report.Included) != 100 ||
		len(res.Diffs) == 0 {
		t.Fatalf("%d excluded, %d diffs", len(res.Variants[0].Report.Excluded), len(res.Diffs))
	}
	// One run's events, although the library ran the pipelines again.
	if events != 6 {
		t.Fatalf("%d events", events)
	}
}
