package cupel

import (
	"encoding/json"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

// turnItems is a conversation of n messages of 100 tokens, keyed 1..n,
// oldest first, every one scored 0.5.
func turnItems(t *testing.T, n int) *Items {
	t.Helper()
	it := must(NewItems())
	list := make([]Item, n)
	for i := range list {
		list[i] = Item{Tokens: 100, Score: 0.5, Kind: DefaultKind, Content: "message " + string(rune('a'+i)),
			Timestamp: i64(int64(i + 1)), Key: uint64(i + 1)}
	}
	if err := it.PushItems(list); err != nil {
		t.Fatal(err)
	}
	return it
}

// sessionPipeline is GreedySlice with the pushed scores, placed oldest first.
func sessionPipeline(t *testing.T) *Pipeline {
	t.Helper()
	g := must(NewGreedy())
	defer g.Close()
	chrono := must(NewChronologicalPlacer())
	defer chrono.Close()
	return must(NewPipeline(PipelineOptions{Slicer: g, Placer: chrono}))
}

// state is what a session says about its last run.
type state struct {
	action      Action
	items       int
	tokens      int64
	breakpoints []Breakpoint
}

func stateOf(t *testing.T, s *Session) state {
	t.Helper()
	a := must(s.LastAction())
	n, tok, err := s.StablePrefix()
	if err != nil {
		t.Fatal(err)
	}
	return state{action: a, items: n, tokens: tok, breakpoints: must(s.Breakpoints())}
}

// expectTurn runs one turn and checks its output, action and stable prefix.
func expectTurn(t *testing.T, s *Session, it *Items, b *Budget, want []int, action Action, items int, tokens int64) {
	t.Helper()
	got, err := s.Run(it, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("output %v, want %v", got, want)
	}
	st := stateOf(t, s)
	if st.action != action || st.items != items || st.tokens != tokens {
		t.Fatalf("action %v, stable prefix (%d, %d); want %v, (%d, %d)", st.action, st.items, st.tokens,
			action, items, tokens)
	}
	checkBreakpoints(t, st.breakpoints, len(got))
}

// checkBreakpoints: at most 4, strictly ascending, none at 0, none past the output.
func checkBreakpoints(t *testing.T, bps []Breakpoint, outputLen int) {
	t.Helper()
	if len(bps) > MaxBreakpoints {
		t.Fatalf("%d breakpoints: %+v", len(bps), bps)
	}
	for i, bp := range bps {
		if bp.Items <= 0 || bp.Items > outputLen || bp.Tokens < 0 || bp.Mark < MarkPinned || bp.Mark > MarkEnd {
			t.Fatalf("breakpoint %d: %+v (output of %d items)", i, bp, outputLen)
		}
		if i > 0 && (bp.Items <= bps[i-1].Items || bp.Tokens < bps[i-1].Tokens) {
			t.Fatalf("breakpoints not ascending: %+v", bps)
		}
	}
}

// The turns of a conversation: first, the same list again, a new message,
// a volatile one; reset.
func TestSessionTurns(t *testing.T) {
	p := sessionPipeline(t)
	defer p.Close()
	s := must(NewSession(p))
	defer s.Close()
	b := budget(t, 1000, 1000)
	defer b.Close()

	// Before any run: first, (0, 0), no breakpoints.
	if st := stateOf(t, s); st.action != ActionFirst || st.items != 0 || st.tokens != 0 || len(st.breakpoints) != 0 {
		t.Fatalf("before any run: %+v", st)
	}
	if sl := must(s.Slack()); sl != 0.2 {
		t.Fatalf("default slack %v", sl)
	}

	it := turnItems(t, 4)
	defer it.Close()
	fresh := must(p.Run(it, b, nil))
	if !reflect.DeepEqual(fresh, []int{0, 1, 2, 3}) {
		t.Fatalf("the pipeline's own output %v", fresh)
	}
	// The first run is the pipeline's output; nothing is stable yet.
	expectTurn(t, s, it, b, fresh, ActionFirst, 0, 0)
	if bps := must(s.Breakpoints()); !reflect.DeepEqual(bps, []Breakpoint{{Items: 4, Tokens: 400, Mark: MarkEnd}}) {
		t.Fatalf("first run's breakpoints %+v", bps)
	}
	// The same list again: appended to nothing, the whole output stable.
	expectTurn(t, s, it, b, fresh, ActionAppend, 4, 400)

	// A new message that fits goes last; the old output is the prefix.
	if err := it.PushItems([]Item{{Tokens: 100, Score: 0.5, Kind: DefaultKind, Content: "message e",
		Timestamp: i64(5), Key: 5}}); err != nil {
		t.Fatal(err)
	}
	expectTurn(t, s, it, b, []int{0, 1, 2, 3, 4}, ActionAppend, 4, 400)

	// A volatile item is placed last, although it is the oldest.
	if err := it.PushItems([]Item{{Tokens: 50, Score: 0.5, Kind: "Document", Content: "open file",
		Timestamp: i64(0), Key: 6, Volatile: true}}); err != nil {
		t.Fatal(err)
	}
	if got := must(p.Run(it, b, nil)); got[0] != 5 {
		t.Fatalf("the pipeline places the oldest item first: %v", got)
	}
	expectTurn(t, s, it, b, []int{0, 1, 2, 3, 4, 5}, ActionAppend, 5, 500)
	bps := must(s.Breakpoints())
	if last := bps[len(bps)-1]; last != (Breakpoint{Items: 5, Tokens: 500, Mark: MarkEnd}) {
		t.Fatalf("the end mark is after the last non-volatile item: %+v", bps)
	}

	// Reset: the next run is a first run again (the volatile item still last).
	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	if st := stateOf(t, s); st.action != ActionFirst || st.items != 0 || st.tokens != 0 || len(st.breakpoints) != 0 {
		t.Fatalf("after a reset: %+v", st)
	}
	expectTurn(t, s, it, b, []int{0, 1, 2, 3, 4, 5}, ActionFirst, 0, 0)
	// The same list again: the volatile item is unchanged, so it is stable too.
	expectTurn(t, s, it, b, []int{0, 1, 2, 3, 4, 5}, ActionAppend, 6, 550)
	if sl := must(s.Slack()); sl != 0.2 {
		t.Fatalf("the slack after a reset %v", sl)
	}
}

// A volatile item goes last in a first run too, and a first run is the
// pipeline's selection otherwise.
func TestSessionVolatileFirstRun(t *testing.T) {
	p := sessionPipeline(t)
	defer p.Close()
	s := must(NewSession(p))
	defer s.Close()
	b := budget(t, 1000, 1000)
	defer b.Close()
	it := turnItems(t, 3)
	defer it.Close()
	if err := it.SetVolatile(0, true); err != nil {
		t.Fatal(err)
	}
	expectTurn(t, s, it, b, []int{1, 2, 0}, ActionFirst, 0, 0)
}

// Items that grow past the budget make the session compact: a fresh
// selection within (1 - slack) of the target, keeping a prefix of the
// previous output.
func TestSessionCompacts(t *testing.T) {
	p := sessionPipeline(t)
	defer p.Close()
	s := must(NewSession(p))
	defer s.Close()
	b := budget(t, 1000, 1000)
	defer b.Close()
	it := turnItems(t, 10)
	defer it.Close()
	expectTurn(t, s, it, b, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, ActionFirst, 0, 0)
	if err := it.PushItems([]Item{{Tokens: 100, Score: 0.9, Kind: DefaultKind, Content: "message k",
		Timestamp: i64(11), Key: 11}}); err != nil {
		t.Fatal(err)
	}
	r := must(NewReport())
	defer r.Close()
	got := must(s.Run(it, b, r))
	if a := must(s.LastAction()); a != ActionCompact {
		t.Fatalf("action %v after the list outgrew the budget", a)
	}
	if r.SelectedTokens() > 800 {
		t.Fatalf("a compaction at slack 0.2 keeps at most 800 of 1000 tokens: %d (%v)", r.SelectedTokens(), got)
	}
	n, tok := must2(s.StablePrefix())
	if n > len(got) || tok != int64(n)*100 || !reflect.DeepEqual(got[:n], []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}[:n]) {
		t.Fatalf("stable prefix (%d, %d) of %v", n, tok, got)
	}
	if !containsInt(got, 10) {
		t.Fatalf("the new, best-scored message is left out: %v", got)
	}
	checkBreakpoints(t, must(s.Breakpoints()), len(got))
}

func must2[A, B any](a A, b B, err error) (A, B) {
	if err != nil {
		panic(err)
	}
	return a, b
}

func containsInt(v []int, x int) bool {
	for _, y := range v {
		if y == x {
			return true
		}
	}
	return false
}

// Two items with the same key fail the run, naming both and the word key;
// the failed run changes nothing: a session that saw it goes on exactly as
// one that did not.
func TestSessionDuplicateKeysAndFailedRuns(t *testing.T) {
	p := sessionPipeline(t)
	defer p.Close()
	clean, failed := must(NewSession(p)), must(NewSession(p))
	defer clean.Close()
	defer failed.Close()
	b := budget(t, 1000, 1000)
	defer b.Close()
	it := turnItems(t, 3)
	defer it.Close()
	for _, s := range []*Session{clean, failed} {
		expectTurn(t, s, it, b, []int{0, 1, 2}, ActionFirst, 0, 0)
		expectTurn(t, s, it, b, []int{0, 1, 2}, ActionAppend, 3, 300)
	}
	before := stateOf(t, failed)

	dup := turnItems(t, 4)
	defer dup.Close()
	if err := dup.SetKey(3, 1); err != nil {
		t.Fatal(err)
	}
	r := must(NewReport())
	defer r.Close()
	_, err := failed.Run(dup, b, r)
	expectErr(t, err, ErrInvalidArgument, "key")
	expectErr(t, err, ErrInvalidArgument, "items 0 and 3")
	if after := stateOf(t, failed); !reflect.DeepEqual(after, before) {
		t.Fatalf("the failed run changed the session: %+v, was %+v", after, before)
	}
	// Pipeline.Run ignores keys.
	if got := must(p.Run(dup, b, nil)); len(got) != 4 {
		t.Fatalf("pipeline run with duplicate keys: %v", got)
	}

	if err := it.PushItems([]Item{{Tokens: 100, Score: 0.5, Kind: DefaultKind, Content: "message d",
		Timestamp: i64(4), Key: 4}}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Session{clean, failed} {
		expectTurn(t, s, it, b, []int{0, 1, 2, 3}, ActionAppend, 3, 300)
	}
	if a, b := stateOf(t, clean), stateOf(t, failed); !reflect.DeepEqual(a, b) {
		t.Fatalf("after the failed run: %+v, without it: %+v", b, a)
	}
}

// The slack is in [0, 1); a bad one is refused and changes nothing.
func TestSessionSlack(t *testing.T) {
	p := sessionPipeline(t)
	defer p.Close()
	s := must(NewSession(p))
	defer s.Close()
	for _, bad := range []float64{1, -0.1, math.NaN(), math.Inf(1), 1.5} {
		expectErr(t, s.SetSlack(bad), ErrInvalidArgument, "fraction")
		if sl := must(s.Slack()); sl != 0.2 {
			t.Fatalf("SetSlack(%v) failed but the slack is %v", bad, sl)
		}
	}
	for _, good := range []float64{0, 0.35, 0.999} {
		if err := s.SetSlack(good); err != nil {
			t.Fatal(err)
		}
		if sl := must(s.Slack()); sl != good {
			t.Fatalf("slack %v, set %v", sl, good)
		}
	}
}

// A session keeps its own copy of the pipeline: closing the pipeline right
// after NewSession changes nothing.
func TestSessionOutlivesItsPipeline(t *testing.T) {
	p := sessionPipeline(t)
	s := must(NewSession(p))
	defer s.Close()
	b := budget(t, 300, 250)
	defer b.Close()
	it := turnItems(t, 3)
	defer it.Close()
	want := must(p.Run(it, b, nil))
	if len(want) != 2 {
		t.Fatalf("the pipeline's output %v", want)
	}
	p.Close()
	if _, err := NewSession(p); err == nil {
		t.Fatal("NewSession over a closed pipeline")
	} else {
		expectErr(t, err, ErrClosed, "pipeline is closed")
	}
	expectTurn(t, s, it, b, want, ActionFirst, 0, 0)
	expectTurn(t, s, it, b, want, ActionAppend, 2, 200)
}

// The report of a session run: the "session" object of its JSON, the
// breakpoints as Breakpoints gives them, and ReasonDeferred for an item
// the pipeline takes but the session leaves out.
func TestSessionReport(t *testing.T) {
	p := sessionPipeline(t)
	defer p.Close()
	s := must(NewSession(p))
	defer s.Close()
	// 100 + 100 + 150 tokens: at target 250 item 2 (the least score) is
	// left out.
	it := must(NewItems())
	defer it.Close()
	if err := it.PushItems([]Item{
		{Tokens: 100, Score: 0.9, Kind: DefaultKind, Content: "a", Timestamp: i64(1), Key: 1},
		{Tokens: 100, Score: 0.8, Kind: DefaultKind, Content: "b", Timestamp: i64(2), Key: 2},
		{Tokens: 150, Score: 0.1, Kind: DefaultKind, Content: "c", Timestamp: i64(3), Key: 3},
	}); err != nil {
		t.Fatal(err)
	}
	small, large := budget(t, 300, 250), budget(t, 1000, 1000)
	defer small.Close()
	defer large.Close()
	r := must(NewReport())
	defer r.Close()
	expectTurn(t, s, it, small, []int{0, 1}, ActionFirst, 0, 0)

	// A larger budget: the pipeline would take item 2 now, but it was in
	// the last list and left out, so the session defers it and appends.
	if got := must(p.Run(it, large, nil)); len(got) != 3 {
		t.Fatalf("the pipeline at the larger budget: %v", got)
	}
	got := must(s.Run(it, large, r))
	if !reflect.DeepEqual(got, []int{0, 1}) || must(s.LastAction()) != ActionAppend {
		t.Fatalf("output %v, action %v", got, must(s.LastAction()))
	}
	ex := must(r.Excluded())
	if len(ex) != 1 || ex[0].Index != 2 || ex[0].Reason != ReasonDeferred || ex[0].Reason.String() != "Deferred" {
		t.Fatalf("excluded %+v", ex)
	}
	inc := must(r.Included())
	if len(inc) != 2 || inc[0].Index != 0 || inc[1].Index != 1 {
		t.Fatalf("included %+v", inc)
	}

	text := must(r.JSON(it))
	var doc struct {
		Session *struct {
			Action             string `json:"action"`
			StablePrefixItems  int    `json:"stablePrefixItems"`
			StablePrefixTokens int64  `json:"stablePrefixTokens"`
			Breakpoints        []struct {
				Items  int    `json:"items"`
				Tokens int64  `json:"tokens"`
				At     string `json:"at"`
			} `json:"breakpoints"`
		} `json:"session"`
	}
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatalf("%v: %s", err, text)
	}
	if doc.Session == nil {
		t.Fatalf("no session object: %s", text)
	}
	js := doc.Session
	if js.Action != "append" || js.Action != ActionAppend.String() || js.StablePrefixItems != 2 ||
		js.StablePrefixTokens != 200 {
		t.Fatalf("session object %+v", js)
	}
	bps := must(s.Breakpoints())
	if len(bps) == 0 || len(js.Breakpoints) != len(bps) {
		t.Fatalf("breakpoints %+v, JSON %+v", bps, js.Breakpoints)
	}
	for i, bp := range bps {
		j := js.Breakpoints[i]
		if j.Items != bp.Items || j.Tokens != bp.Tokens || j.At != bp.Mark.String() {
			t.Fatalf("breakpoint %d: %+v, JSON %+v", i, bp, j)
		}
	}
	if !strings.Contains(text, `"Deferred"`) {
		t.Fatalf("the JSON does not name the reason Deferred: %s", text)
	}

	// A pipeline run's report has no session object.
	must(p.Run(it, large, r))
	if strings.Contains(must(r.JSON(it)), `"session"`) {
		t.Fatalf("a pipeline run's JSON has a session object: %s", must(r.JSON(it)))
	}
}

// Keys and volatile flags: set one by one or by column or on push, and
// read back by Key, Volatile and Get.
func TestSessionItemIdentity(t *testing.T) {
	it := must(NewItems())
	defer it.Close()
	if err := it.PushItems([]Item{
		{Tokens: 1, Kind: DefaultKind, Key: math.MaxUint64, Volatile: true},
		{Tokens: 2, Kind: DefaultKind},
		{Tokens: 3, Kind: DefaultKind, Key: 7},
	}); err != nil {
		t.Fatal(err)
	}
	want := []Item{
		{Tokens: 1, Kind: "Message", Source: "Chat", Key: math.MaxUint64, Volatile: true},
		{Tokens: 2, Kind: "Message", Source: "Chat"},
		{Tokens: 3, Kind: "Message", Source: "Chat", Key: 7},
	}
	for i, w := range want {
		if got := must(it.Get(i)); !reflect.DeepEqual(got, w) {
			t.Fatalf("item %d: %+v, want %+v", i, got, w)
		}
		if k, v := must(it.Key(i)), must(it.Volatile(i)); k != w.Key || v != w.Volatile {
			t.Fatalf("item %d: key %d volatile %v", i, k, v)
		}
	}
	// A Get result pushes again as the same item.
	copied := must(NewItems())
	defer copied.Close()
	if err := copied.PushItems([]Item{must(it.Get(0))}); err != nil || !reflect.DeepEqual(must(copied.Get(0)), want[0]) {
		t.Fatalf("round trip: %v %+v", err, must(copied.Get(0)))
	}

	if err := firstError(it.SetKey(1, 9), it.SetVolatile(1, true), it.SetVolatile(0, false), it.SetKey(0, 0)); err != nil {
		t.Fatal(err)
	}
	if must(it.Key(1)) != 9 || !must(it.Volatile(1)) || must(it.Volatile(0)) || must(it.Key(0)) != 0 {
		t.Fatalf("after the setters: %+v %+v", must(it.Get(0)), must(it.Get(1)))
	}
	if err := firstError(it.SetKeys(1, []uint64{11, 12}), it.SetVolatileMany(0, []bool{true, false, true})); err != nil {
		t.Fatal(err)
	}
	if must(it.Key(1)) != 11 || must(it.Key(2)) != 12 || !must(it.Volatile(0)) || must(it.Volatile(1)) ||
		!must(it.Volatile(2)) {
		t.Fatalf("after the column setters: %+v", []Item{must(it.Get(0)), must(it.Get(1)), must(it.Get(2))})
	}
	if err := firstError(it.SetKeys(3, nil), it.SetVolatileMany(0, nil)); err != nil {
		t.Fatalf("empty columns: %v", err)
	}

	// Out of range: nothing is set.
	expectErr(t, it.SetKey(3, 1), ErrInvalidArgument, "index 3 is out of range")
	expectErr(t, it.SetVolatile(-1, true), ErrInvalidArgument, "index -1 is out of range")
	expectErr(t, it.SetKeys(2, []uint64{5, 6}), ErrInvalidArgument, "")
	expectErr(t, it.SetVolatileMany(-1, []bool{true}), ErrInvalidArgument, "first -1")
	_, err := it.Key(3)
	expectErr(t, err, ErrInvalidArgument, "3")
	if must(it.Key(2)) != 12 {
		t.Fatal("a failed SetKeys set a key")
	}
	it.Close()
	expectErr(t, it.SetKey(0, 1), ErrClosed, "items is closed")
	expectErr(t, it.SetVolatile(0, true), ErrClosed, "items is closed")
	var nilItems *Items
	expectErr(t, nilItems.SetKey(0, 1), ErrNullPointer, "items is nil")
}

// Closed and nil handles: ErrClosed naming the session, ErrNullPointer
// for nil; Close is idempotent.
func TestSessionClosedAndNil(t *testing.T) {
	p := sessionPipeline(t)
	defer p.Close()
	it := turnItems(t, 2)
	defer it.Close()
	b := budget(t, 1000, 1000)
	defer b.Close()
	closedReport := must(NewReport())
	closedReport.Close()
	s := must(NewSession(p))
	_, err := s.Run(it, b, closedReport)
	expectErr(t, err, ErrClosed, "report is closed")
	var nb *Budget
	_, err = s.Run(it, nb, nil)
	expectErr(t, err, ErrNullPointer, "budget is nil")
	s.Close()
	s.Close()
	_, err = s.Run(it, b, nil)
	expectErr(t, err, ErrClosed, "session is closed")
	expectErr(t, s.SetSlack(0.1), ErrClosed, "session is closed")
	expectErr(t, s.Reset(), ErrClosed, "session is closed")
	_, err = s.Slack()
	expectErr(t, err, ErrClosed, "session is closed")
	_, _, err = s.StablePrefix()
	expectErr(t, err, ErrClosed, "session is closed")
	_, err = s.LastAction()
	expectErr(t, err, ErrClosed, "session is closed")
	_, err = s.Breakpoints()
	expectErr(t, err, ErrClosed, "session is closed")
	var ns *Session
	_, err = ns.Run(it, b, nil)
	expectErr(t, err, ErrNullPointer, "session is nil")
	var np *Pipeline
	_, err = NewSession(np)
	expectErr(t, err, ErrNullPointer, "pipeline is nil")
}

// The names of actions and marks are the JSON report's.
func TestSessionNames(t *testing.T) {
	for a, name := range map[Action]string{ActionFirst: "first", ActionAppend: "append", ActionCompact: "compact",
		Action(7): "unknown"} {
		if a.String() != name {
			t.Errorf("Action(%d) is %q, want %q", int(a), a.String(), name)
		}
	}
	for m, name := range map[Mark]string{MarkPinned: "pinned", MarkCompaction: "compaction", MarkStable: "stable",
		MarkEnd: "end", Mark(-1): "unknown"} {
		if m.String() != name {
			t.Errorf("Mark(%d) is %q, want %q", int(m), m.String(), name)
		}
	}
	if int(ActionFirst) != 0 || int(ActionAppend) != 1 || int(ActionCompact) != 2 || int(MarkEnd) != 3 {
		t.Fatal("the C ABI's numbers")
	}
	if ReasonDeferred.String() != "Deferred" || int(ReasonDeferred) != 19 {
		t.Fatalf("ReasonDeferred %d %q", int(ReasonDeferred), ReasonDeferred.String())
	}
}

// Sessions left to the garbage collector are freed by their finalizers.
func TestSessionFinalizer(t *testing.T) {
	p := sessionPipeline(t)
	defer p.Close()
	it := turnItems(t, 2)
	defer it.Close()
	b := budget(t, 1000, 1000)
	defer b.Close()
	runtime.GC()
	before := LiveHandles()
	for i := 0; i < 50; i++ {
		s := must(NewSession(p))
		if _, err := s.Run(it, b, nil); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			s.Close()
		}
	}
	for tries := 0; LiveHandles() > before && tries < 100; tries++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if live := LiveHandles(); live > before {
		t.Fatalf("%d native handles still live after GC (were %d)", live, before)
	}
}
