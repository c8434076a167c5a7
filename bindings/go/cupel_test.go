package cupel

import (
	"errors"
	"math"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// must unwraps a (value, error) pair; an error fails the test by panicking.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func items(t *testing.T, tokens []int64, scores []float64, kinds []string) *Items {
	t.Helper()
	it := must(NewItems())
	if err := it.PushMany(tokens, scores, kinds); err != nil {
		t.Fatal(err)
	}
	return it
}

func budget(t *testing.T, max, target int64) *Budget {
	t.Helper()
	return must(NewBudget(max, target))
}

func expect(t *testing.T, got []int, err error, want ...int) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if want == nil {
		want = []int{}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func expectErr(t *testing.T, err error, sentinel error, fragment string) {
	t.Helper()
	if err == nil {
		t.Fatalf("expected %v, got success", sentinel)
	}
	if !errors.Is(err, sentinel) {
		t.Fatalf("expected %v, got %v", sentinel, err)
	}
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(e.Message, fragment) {
		t.Fatalf("message %q does not contain %q", err.Error(), fragment)
	}
}

func TestVersion(t *testing.T) {
	if Version() == "" || ABIVersion() != 2 {
		t.Fatalf("version %q abi %d", Version(), ABIVersion())
	}
	if StatusInvalidArgument.String() != "CUPEL_ERROR_INVALID_ARGUMENT" {
		t.Fatal(StatusInvalidArgument.String())
	}
}

func TestGreedyDensity(t *testing.T) {
	it := items(t, []int64{400, 100, 100, 200}, []float64{0.9, 0.7, 0.5, 0.1}, nil)
	defer it.Close()
	g := must(NewGreedy())
	defer g.Close()
	b := budget(t, 300, 300)
	defer b.Close()
	r := must(NewReport())
	defer r.Close()
	got, err := Slice(g, it, b, 0, r)
	expect(t, got, err, 1, 2)
	if r.SelectedTokens() != 200 || r.EffectiveTargetTokens() != 300 || r.EffectiveMaxTokens() != 300 {
		t.Fatalf("report %d %d %d", r.SelectedTokens(), r.EffectiveTargetTokens(), r.EffectiveMaxTokens())
	}
}

func TestGroupsAreNeverSplit(t *testing.T) {
	// 0 a tool call (cheap, high score) and 1 its long result in group 7;
	// 2 a message. Alone, greedy would take the call without its result.
	it := items(t, []int64{10, 200, 60}, []float64{0.9, 0.1, 0.5}, nil)
	defer it.Close()
	if err := it.SetGroups(0, []uint64{7, 7}); err != nil {
		t.Fatal(err)
	}
	g := must(NewGreedy())
	defer g.Close()
	b := budget(t, 100, 100)
	defer b.Close()
	got, err := Slice(g, it, b, 0, nil)
	expect(t, got, err, 2)
	b2 := budget(t, 270, 270)
	defer b2.Close()
	got, err = Slice(g, it, b2, 0, nil)
	expect(t, got, err, 2, 0, 1)
	// SetGroup: ungroup the result; the call alone now fits.
	if err := it.SetGroup(1, 0); err != nil {
		t.Fatal(err)
	}
	got, err = Slice(g, it, b, 0, nil)
	expect(t, got, err, 0, 2)
	expectErr(t, it.SetGroup(3, 1), ErrInvalidArgument, "index 3 is out of range")
	expectErr(t, it.SetGroups(2, []uint64{1, 1}), ErrInvalidArgument, "first 2 + count 2 is past the end")
	// The stream: the pair is one candidate; a split group is refused.
	s := must(NewStream(100, 2))
	defer s.Close()
	for _, p := range []struct {
		tokens int64
		group  uint64
	}{{30, 5}, {30, 5}, {50, 0}, {40, 0}} {
		if _, err := s.PushGrouped(p.tokens, 0.5, p.group); err != nil {
			t.Fatal(err)
		}
	}
	_, err = s.PushGrouped(1, 0.1, 5)
	expectErr(t, err, ErrInvalidArgument, "group is 5, which ended before item 4")
	taken, err := s.Finish()
	expect(t, taken, err, 0, 1, 3)
}

func TestKnapsackBeatsGreedy(t *testing.T) {
	it := items(t, []int64{250, 150, 150}, []float64{0.7, 0.5, 0.45}, nil)
	k := must(NewKnapsack(100))
	got, err := Slice(k, it, budget(t, 300, 300), 0, nil)
	expect(t, got, err, 0)
	if k.MemoryLimit() != 1<<30 {
		t.Fatalf("default memory limit %d", k.MemoryLimit())
	}
	if err := k.SetMemoryLimit(1 << 20); err != nil {
		t.Fatal(err)
	}
	huge := must(NewKnapsack(1))
	if err := huge.SetMemoryLimit(1 << 20); err != nil {
		t.Fatal(err)
	}
	_, err = Slice(huge, it, budget(t, 1<<40, 1<<40), 0, nil)
	expectErr(t, err, ErrCapacity, "memory limit of 1048576 bytes")
}

func TestQuota(t *testing.T) {
	it := items(t, []int64{200, 200, 300, 300, 200}, []float64{0.9, 0.5, 0.8, 0.3, 0.7},
		[]string{"SystemPrompt", "SystemPrompt", "Message", "Message", "Document"})
	g := must(NewGreedy())
	q := must(NewQuota(g, []Quota{{"SystemPrompt", 30, 50}, {"Message", 0, 40}}))
	g.Close() // the quota slicer keeps its own copy
	r := must(NewReport())
	got, err := Slice(q, it, budget(t, 1000, 1000), 0, r)
	expect(t, got, err, 0, 1, 2)
	if r.SelectedTokens() != 700 {
		t.Fatal(r.SelectedTokens())
	}
	_, err = NewQuota(must(NewGreedy()), []Quota{{"A", 60, 100}, {"B", 60, 100}})
	expectErr(t, err, ErrInvalidArgument, "")
	_, err = NewQuota(nil, nil)
	expectErr(t, err, ErrNullPointer, "inner")
}

func TestCountQuota(t *testing.T) {
	it := items(t, []int64{100, 100, 100, 100}, []float64{0.9, 0.7, 0.5, 0.4}, []string{"tool", "tool", "tool", "tool"})
	g := must(NewGreedy())
	cq := must(NewCountQuota(g, []CountQuota{{"tool", 2, 2}}, Degrade))
	r := must(NewReport())
	got, err := Slice(cq, it, budget(t, 1000, 1000), 0, r)
	expect(t, got, err, 0, 1)
	ex, err := r.CapExcluded()
	expect(t, ex, err, 2, 3)

	one := items(t, []int64{100}, []float64{0.9}, []string{"tool"})
	deg := must(NewCountQuota(g, []CountQuota{{"TOOL", 3, 5}, {"Memory", 1, 2}}, Degrade))
	got, err = Slice(deg, one, budget(t, 1000, 1000), 0, r)
	expect(t, got, err, 0)
	sf, err := r.Shortfalls()
	if err != nil || !reflect.DeepEqual(sf, []Shortfall{{"TOOL", 3, 1}, {"Memory", 1, 0}}) {
		t.Fatalf("shortfalls %v %v", sf, err)
	}
	strict := must(NewCountQuota(g, []CountQuota{{"TOOL", 3, 5}}, Fail))
	_, err = Slice(strict, one, budget(t, 1000, 1000), 0, r)
	expectErr(t, err, ErrScarcity, `kind "TOOL": 1 items available, Require is 3`)

	k := must(NewKnapsack(1))
	_, err = NewCountQuota(k, nil, Degrade)
	expectErr(t, err, ErrUnsupported, "KnapsackSlice")
	_, err = NewCountQuota(g, nil, Scarcity(7))
	expectErr(t, err, ErrInvalidArgument, "scarcity")
}

func TestCountConstrainedKnapsack(t *testing.T) {
	it := items(t, []int64{100, 100, 50, 150, 200}, []float64{0.9, 0.7, 0.8, 0.6, 0.4},
		[]string{"tool", "tool", "msg", "msg", "msg"})
	cck := must(NewCountConstrainedKnapsack(1, []CountQuota{{"tool", 2, 2}}, Degrade))
	got, err := Slice(cck, it, budget(t, 1000, 1000), 0, nil)
	expect(t, got, err, 0, 1, 2, 3, 4)
	_, err = NewCountConstrainedKnapsack(0, nil, Degrade)
	expectErr(t, err, ErrInvalidArgument, "bucketSize is 0")
}

func TestBudgetRules(t *testing.T) {
	b := budget(t, 1000, 800)
	if err := b.SetOutputReserve(100); err != nil {
		t.Fatal(err)
	}
	if err := b.SetSafetyMargin(10); err != nil {
		t.Fatal(err)
	}
	if err := b.Reserve("System", 50); err != nil {
		t.Fatal(err)
	}
	mx, tg, err := b.Effective(0)
	if err != nil || mx <= 0 || tg > mx || tg > 800 {
		t.Fatalf("effective %d %d %v", mx, tg, err)
	}
	_, err = NewBudget(10, 20)
	expectErr(t, err, ErrInvalidArgument, "20")
	expectErr(t, b.SetSafetyMargin(math.NaN()), ErrInvalidArgument, "NaN")
	expectErr(t, b.SetSafetyMargin(100.0000001), ErrInvalidArgument, "100.0000001")
	expectErr(t, b.Reserve("  ", 5), ErrInvalidArgument, "kind")
}

func TestItemErrorsAreAtomic(t *testing.T) {
	it := must(NewItems())
	expectErr(t, it.Push(1, math.Inf(1), DefaultKind), ErrInvalidArgument, "score is inf")
	expectErr(t, it.Push(1, 0.5, ""), ErrInvalidArgument, `kind "" is empty`)
	expectErr(t, it.Push(1, 0.5, "Mess\x00age"), ErrInvalidArgument, "kind contains a NUL byte at offset 4")
	expectErr(t, it.PushMany([]int64{1, 2, 3}, []float64{0.1, 0.2, math.NaN()}, nil), ErrInvalidArgument, "scores[2]")
	expectErr(t, it.PushMany([]int64{1, 2}, []float64{0.1, 0.2}, []string{"a", " "}), ErrInvalidArgument, "kinds[1]")
	expectErr(t, it.PushMany([]int64{1}, []float64{0.1, 0.2}, nil), ErrInvalidArgument, "lengths 1, 2 and 0; they must agree")
	if it.Len() != 0 {
		t.Fatalf("failed pushes added %d items", it.Len())
	}
	if err := it.Push(5, 0.5, "Doc"); err != nil || it.Len() != 1 {
		t.Fatal(err)
	}
	// A negative token count is accepted (and never selected).
	if err := it.Push(-1, 0.5, DefaultKind); err != nil || it.Len() != 2 {
		t.Fatalf("negative tokens: %v", err)
	}
	it.Clear()
	if it.Len() != 0 {
		t.Fatal("clear")
	}
}

func TestClosedHandlesFailCleanly(t *testing.T) {
	it := items(t, []int64{1}, []float64{1}, nil)
	g := must(NewGreedy())
	b := budget(t, 10, 10)
	it.Close()
	it.Close() // idempotent
	_, err := Slice(g, it, b, 0, nil)
	expectErr(t, err, ErrClosed, "items is closed")
	expectErr(t, it.Push(1, 1, DefaultKind), ErrClosed, "items is closed")
	g.Close()
	_, err = Slice(g, items(t, nil, nil, nil), b, 0, nil)
	expectErr(t, err, ErrClosed, "slicer is closed")
	if errors.Is(err, ErrNullPointer) || errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a closed handle is ErrClosed only: %v", err)
	}
}

func TestSimulation(t *testing.T) {
	it := items(t, []int64{100, 100, 100}, []float64{0.9, 0.8, 0.7}, nil)
	g := must(NewGreedy())
	b := budget(t, 300, 300)
	got, err := MarginalItems(g, it, b, 0, 100)
	expect(t, got, err, 2)
	min, found, err := FindMinBudget(g, it, 0, 2, 1000)
	if err != nil || !found || min != 300 {
		t.Fatalf("min budget %d %v %v", min, found, err)
	}
	// Not reachable below the ceiling: found is false, no error.
	min, found, err = FindMinBudget(g, it, 0, 2, 250)
	if err != nil || found || min != 0 {
		t.Fatalf("unreachable: %d %v %v", min, found, err)
	}
	q := must(NewQuota(g, []Quota{{"Message", 0, 100}}))
	_, err = MarginalItems(q, it, b, 0, 10)
	expectErr(t, err, ErrUnsupported, "QuotaSlice")
	_, _, err = FindMinBudget(g, it, 0, 9, 1000)
	expectErr(t, err, ErrInvalidArgument, "9")
}

func TestStream(t *testing.T) {
	s := must(NewStream(250, 2))
	defer s.Close()
	var full bool
	var err error
	for _, x := range []struct {
		tokens int64
		score  float64
	}{{100, 0.2}, {100, 0.9}, {100, 0.5}, {100, 0.6}, {5, 1}} {
		full, err = s.Push(x.tokens, x.score)
		if err != nil {
			t.Fatal(err)
		}
	}
	// Batch 1 by score (1, 0) fills 200 of 250; batch 2 fits nowhere;
	// the last item (5 tokens) fits at finish.
	got, err := s.Finish()
	expect(t, got, err, 1, 0, 4)
	if full {
		t.Fatal("50 tokens were left, yet the stream said full")
	}
	exact := must(NewStream(100, 1))
	full, err = exact.Push(100, 0.5)
	if err != nil || !full {
		t.Fatalf("an exactly spent budget must report full: %v %v", full, err)
	}
	_, err = s.Push(1, 1)
	expectErr(t, err, ErrInvalidArgument, "finished")
	_, err = NewStream(10, -1)
	expectErr(t, err, ErrInvalidArgument, "batchSize")
}

// Many goroutines slice with the same Items, Budget and Slicers; every
// result must equal the single-threaded one.
func TestConcurrentSlicing(t *testing.T) {
	const n = 2000
	tokens := make([]int64, n)
	scores := make([]float64, n)
	kinds := make([]string, n)
	for i := range tokens {
		tokens[i] = int64(1 + (i*7919)%500)
		scores[i] = float64((i*104729)%1000) / 1000
		kinds[i] = []string{"Message", "Document", "tool"}[i%3]
	}
	it := items(t, tokens, scores, kinds)
	b := budget(t, 20000, 20000)
	g := must(NewGreedy())
	slicers := []*Slicer{
		g,
		must(NewKnapsack(10)),
		must(NewQuota(g, []Quota{{"Document", 20, 50}})),
		must(NewCountQuota(g, []CountQuota{{"tool", 5, 50}}, Degrade)),
		must(NewCountConstrainedKnapsack(10, []CountQuota{{"tool", 5, 50}}, Degrade)),
	}
	want := make([][]int, len(slicers))
	for i, s := range slicers {
		want[i] = must(Slice(s, it, b, 0, nil))
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r, _ := NewReport()
			defer r.Close()
			for round := 0; round < 10; round++ {
				i := (w + round) % len(slicers)
				got, err := Slice(slicers[i], it, b, 0, r)
				if err != nil || !reflect.DeepEqual(got, want[i]) {
					errs <- "slicer " + slicers[i].String() + " differs"
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// Handles left to the garbage collector are freed by their finalizers, and
// live ones survive collections between calls.
func TestForcedGC(t *testing.T) {
	before := LiveHandles()
	for i := 0; i < 200; i++ {
		it := items(t, []int64{10, 20}, []float64{0.5, 0.9}, []string{"a", "b"})
		g, _ := NewGreedy()
		b, _ := NewBudget(100, 100)
		runtime.GC()
		got, err := Slice(g, it, b, 0, nil)
		expect(t, got, err, 0, 1) // densities 0.05, 0.045
		if i%2 == 0 {
			it.Close()
		}
	}
	// Every handle above was dropped; the finalizers must free those never
	// closed. A missing finalizer leaves the count up.
	for tries := 0; LiveHandles() > before && tries < 100; tries++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if live := LiveHandles(); live > before {
		t.Fatalf("%d native handles still live after GC (were %d)", live, before)
	}
}

func TestNilHandlesAreErrors(t *testing.T) {
	var it *Items
	g := must(NewGreedy())
	defer g.Close()
	b := budget(t, 10, 10)
	_, err := Slice(g, it, b, 0, nil)
	expectErr(t, err, ErrNullPointer, "items")
	_, err = MarginalItems(g, it, b, 0, 1)
	expectErr(t, err, ErrNullPointer, "items")
	_, _, err = FindMinBudget(g, it, 0, 0, 10)
	expectErr(t, err, ErrNullPointer, "items")
	if it.Len() != 0 {
		t.Fatal("a nil *Items has no items")
	}
	it.Close()
	var r *Report
	r.Close()
	var s *Stream
	s.Close()
}
