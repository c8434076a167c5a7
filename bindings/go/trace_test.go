package cupel

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/cgo"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// traced runs the fixture's pipeline once at level and returns the events.
func traced(t *testing.T, level TraceLevel) []TraceEvent {
	t.Helper()
	it := fixtureItems(t)
	defer it.Close()
	b := budget(t, 300, 250)
	defer b.Close()
	p := fixturePipeline(t)
	defer p.Close()
	var events []TraceEvent
	if err := p.SetTrace(level, func(e TraceEvent) { events = append(events, e) }); err != nil {
		t.Fatal(err)
	}
	expect(t, must(p.Run(it, b, nil)), nil, 1, 2)
	return events
}

func names(events []TraceEvent) string {
	var s []string
	for _, e := range events {
		s = append(s, e.Name)
	}
	return strings.Join(s, " ")
}

func TestTraceLevels(t *testing.T) {
	const stages = "cupel.stage.classify cupel.stage.score cupel.stage.deduplicate cupel.stage.slice " +
		"cupel.stage.place"
	for _, c := range []struct {
		level TraceLevel
		want  string
	}{
		{TraceStages, stages + " cupel.pipeline"},
		{TraceExclusions, strings.Replace(stages, "slice", "slice cupel.exclusion", 1) + " cupel.pipeline"},
		{TraceFull, stages + " cupel.item.included cupel.item.included cupel.pipeline"},
	} {
		events := traced(t, c.level)
		got := names(events)
		if c.level == TraceFull {
			got = strings.Replace(got, "slice cupel.exclusion", "slice", 1)
		}
		if got != c.want {
			t.Fatalf("%v: %s", c.level, got)
		}
		if n := map[TraceLevel]int{TraceStages: 6, TraceExclusions: 7, TraceFull: 9}[c.level]; len(events) != n {
			t.Fatalf("%v: %d events, want %d", c.level, len(events), n)
		}
		verbosity := map[TraceLevel]string{TraceStages: "StageOnly", TraceExclusions: "StageAndExclusions",
			TraceFull: "Full"}[c.level]
		for _, e := range events {
			if e.Verbosity != verbosity {
				t.Fatalf("%v: verbosity %q", c.level, e.Verbosity)
			}
		}
	}
	if TraceFull.String() != "TraceFull" || TraceLevel(7).String() != "TraceLevel(7)" ||
		TraceExclusion.String() != "exclusion" || TraceKind(9).String() != "TraceKind(9)" {
		t.Fatal("names")
	}
}

func TestTraceEventFields(t *testing.T) {
	before := time.Now()
	events := traced(t, TraceFull)
	after := time.Now()
	if len(events) != 9 {
		t.Fatalf("%d events", len(events))
	}
	for i, stage := range []string{"classify", "score", "deduplicate", "slice"} {
		e := events[i]
		if e.Kind != TraceStage || e.Stage != stage || e.Name != "cupel.stage."+stage || e.Item != -1 ||
			e.Reason != -1 || e.ReasonName != "" || e.ItemKind != "" {
			t.Fatalf("event %d: %+v", i, e)
		}
		if e.Start.Before(before.Add(-time.Second)) || e.Start.After(after) || e.Duration < 0 {
			t.Fatalf("event %d: start %v, duration %v", i, e.Start, e.Duration)
		}
	}
	if e := events[0]; e.ItemCountIn != 3 || e.ItemCountOut != 3 || e.ExclusionCount != 0 {
		t.Fatalf("classify %+v", e)
	}
	slice := events[3]
	if slice.ItemCountIn != 3 || slice.ItemCountOut != 2 || slice.ExclusionCount != 1 {
		t.Fatalf("slice %+v", slice)
	}
	// The exclusion follows its stage: item 0 (the oldest) did not fit.
	ex := events[4]
	if ex.Kind != TraceExclusion || ex.Name != "cupel.exclusion" || ex.Stage != "slice" || ex.Item != 0 ||
		ex.Reason != ReasonBudgetExceeded || ex.ReasonName != "BudgetExceeded" || ex.ItemKind != "Message" ||
		ex.Tokens != 100 || ex.Duration != 0 {
		t.Fatalf("exclusion %+v", ex)
	}
	place := events[5]
	if place.Kind != TraceStage || place.Stage != "place" || place.ItemCountOut != 2 {
		t.Fatalf("place %+v", place)
	}
	inc1, inc2 := events[6], events[7]
	if inc1.Kind != TraceIncluded || inc1.Name != "cupel.item.included" || inc1.Item != 1 ||
		inc1.ItemKind != "Document" || inc1.Tokens != 200 || inc2.Item != 2 || inc2.ItemKind != "ToolOutput" ||
		inc2.Tokens != 50 || inc1.Score <= 0 || inc2.Score <= inc1.Score || inc1.Reason != -1 {
		t.Fatalf("included %+v %+v", inc1, inc2)
	}
	pipe := events[8]
	if pipe.Kind != TracePipeline || pipe.Name != "cupel.pipeline" || pipe.Stage != "" || pipe.MaxTokens != 300 ||
		pipe.ItemCountIn != 3 || pipe.ItemCountOut != 2 || pipe.ExclusionCount != 1 || pipe.Item != -1 ||
		pipe.Start.After(events[0].Start) || pipe.Duration <= 0 {
		t.Fatalf("pipeline %+v", pipe)
	}
}

func TestTraceOffAndErrors(t *testing.T) {
	it := fixtureItems(t)
	defer it.Close()
	b := budget(t, 300, 250)
	defer b.Close()
	p := fixturePipeline(t)
	n := 0
	if err := p.SetTrace(TraceStages, func(TraceEvent) { n++ }); err != nil {
		t.Fatal(err)
	}
	st := p.trace
	if err := p.SetTrace(TraceStages, nil); err != nil {
		t.Fatal(err)
	}
	if p.trace != nil || atomic.LoadInt32(&st.refs) != 0 {
		t.Fatal("turning the trace off keeps the callback")
	}
	expect(t, must(p.Run(it, b, nil)), nil, 1, 2)
	if n != 0 {
		t.Fatalf("%d events after turning the trace off", n)
	}
	err := p.SetTrace(TraceLevel(3), func(TraceEvent) {})
	expectErr(t, err, ErrInvalidArgument, "level is TraceLevel(3); it must be TraceStages")
	err = p.SetTrace(-1, nil)
	expectErr(t, err, ErrInvalidArgument, "level is TraceLevel(-1)")
	var nilPipe *Pipeline
	expectErr(t, nilPipe.SetTrace(TraceStages, func(TraceEvent) {}), ErrNullPointer, "pipeline is nil")
	if err := p.SetTrace(TraceFull, func(TraceEvent) { n++ }); err != nil {
		t.Fatal(err)
	}
	st = p.trace
	p.Close()
	if atomic.LoadInt32(&st.refs) != 0 {
		t.Fatal("closing the pipeline keeps the callback")
	}
	expectErr(t, p.SetTrace(TraceStages, nil), ErrClosed, "pipeline is closed")
}

func TestTracePanicIsAnError(t *testing.T) {
	it := fixtureItems(t)
	defer it.Close()
	b := budget(t, 300, 250)
	defer b.Close()
	p := fixturePipeline(t)
	defer p.Close()
	boom := errors.New("boom")
	calls, panics := 0, true
	if err := p.SetTrace(TraceStages, func(e TraceEvent) {
		calls++
		if panics && e.Stage == "score" {
			panic(boom)
		}
	}); err != nil {
		t.Fatal(err)
	}
	placed, err := p.Run(it, b, nil)
	var pe *TracePanicError
	if placed != nil || !errors.As(err, &pe) || pe.Value != boom || !errors.Is(err, boom) ||
		!strings.Contains(string(pe.Stack), "trace_test.go") || err.Error() != "the trace callback panicked: boom" {
		t.Fatalf("%v, %v", placed, err)
	}
	// The events after the panic were dropped.
	if calls != 2 {
		t.Fatalf("%d calls", calls)
	}
	// The pipeline works on: the next run is traced again.
	panics, calls = false, 0
	expect(t, must(p.Run(it, b, nil)), nil, 1, 2)
	if calls != 6 {
		t.Fatalf("%d calls", calls)
	}
	// A panic with something else than an error.
	if err := p.SetTrace(TraceStages, func(TraceEvent) { panic(fmt.Sprint("no ", 42)) }); err != nil {
		t.Fatal(err)
	}
	_, err = p.Run(it, b, nil)
	if !errors.As(err, &pe) || pe.Value != "no 42" || errors.Unwrap(err) != nil {
		t.Fatalf("%v", err)
	}
	// A session's run, and a failed run (no events, no panic: the run's
	// own error).
	s := must(NewSession(p))
	defer s.Close()
	_, err = s.Run(it, b, nil)
	if !errors.As(err, &pe) {
		t.Fatalf("session: %v", err)
	}
	tiny := budget(t, 10, 10)
	defer tiny.Close()
	if err := it.SetPinned(1, true); err != nil {
		t.Fatal(err)
	}
	_, err = p.Run(it, tiny, nil)
	if errors.As(err, &pe) || err == nil {
		t.Fatalf("a failed run: %v", err)
	}
}

// Goroutines running one traced pipeline at once: each run's panic is its
// own (the run's context is found by the thread it runs on).
func TestTraceConcurrentRuns(t *testing.T) {
	p := fixturePipeline(t)
	defer p.Close()
	var delivered int64
	if err := p.SetTrace(TraceStages, func(e TraceEvent) {
		atomic.AddInt64(&delivered, 1)
		if e.Kind == TracePipeline && e.ItemCountIn == 4 {
			panic("four items")
		}
	}); err != nil {
		t.Fatal(err)
	}
	b := budget(t, 300, 250)
	defer b.Close()
	three, four := fixtureItems(t), fixtureItems(t)
	defer three.Close()
	defer four.Close()
	if err := four.Push(10, 0.5, "Message"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for k := 0; k < 50; k++ {
				it := three
				if g%2 == 1 {
					it = four
				}
				_, err := p.Run(it, b, nil)
				var pe *TracePanicError
				if panicked := errors.As(err, &pe); panicked != (g%2 == 1) {
					errs <- fmt.Errorf("goroutine %d run %d: %v", g, k, err)
					return
				}
				runtime.Gosched()
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if d := atomic.LoadInt64(&delivered); d != 16*50*6 {
		t.Fatalf("%d events delivered", d)
	}
}

// A session copies the pipeline's trace: it keeps calling the callback
// after the pipeline changes its trace or is closed, and lets go of it when
// closed.
func TestTraceSessionKeepsCallback(t *testing.T) {
	it := fixtureItems(t)
	defer it.Close()
	b := budget(t, 300, 250)
	defer b.Close()
	p := fixturePipeline(t)
	first, second := 0, 0
	if err := p.SetTrace(TraceStages, func(TraceEvent) { first++ }); err != nil {
		t.Fatal(err)
	}
	st := p.trace
	s := must(NewSession(p))
	if err := p.SetTrace(TraceStages, func(TraceEvent) { second++ }); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if atomic.LoadInt32(&st.refs) != 1 {
		t.Fatalf("%d references", st.refs)
	}
	runtime.GC()
	if _, err := s.Run(it, b, nil); err != nil {
		t.Fatal(err)
	}
	if first != 6 || second != 0 {
		t.Fatalf("first %d, second %d", first, second)
	}
	h := st.h
	s.Close()
	if atomic.LoadInt32(&st.refs) != 0 {
		t.Fatal("the closed session keeps the callback")
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the trace's handle was not deleted")
			}
		}()
		cgo.Handle(h).Value()
	}()
}

// Sensitivity and Select run traced pipelines traced.
func TestTraceInSensitivityAndSelect(t *testing.T) {
	it := fixtureItems(t)
	defer it.Close()
	b := budget(t, 300, 250)
	defer b.Close()
	p := fixturePipeline(t)
	defer p.Close()
	q := must(Preset("Chat"))
	defer q.Close()
	var got []string
	if err := p.SetTrace(TraceStages, func(e TraceEvent) { got = append(got, "p") }); err != nil {
		t.Fatal(err)
	}
	if err := q.SetTrace(TraceStages, func(e TraceEvent) { got = append(got, "q") }); err != nil {
		t.Fatal(err)
	}
	if _, err := Sensitivity([]SensitivityVariant{{"p", p}, {"q", q}}, it, b); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "") != "pppppp"+"qqqqqq" {
		t.Fatalf("%v", got)
	}
	got = nil
	if _, err := Select([]Message{{Text: "hello"}, {Text: "world"}}, SelectOptions{MaxTokens: 10, Pipeline: q}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "") != "qqqqqq" {
		t.Fatalf("%v", got)
	}
	if err := q.SetTrace(TraceStages, func(TraceEvent) { panic("in select") }); err != nil {
		t.Fatal(err)
	}
	_, err := Select([]Message{{Text: "hello"}}, SelectOptions{MaxTokens: 10, Pipeline: q})
	var pe *TracePanicError
	if !errors.As(err, &pe) || pe.Value != "in select" {
		t.Fatalf("%v", err)
	}
	_, err = Sensitivity([]SensitivityVariant{{"p", p}, {"q", q}}, it, b)
	if !errors.As(err, &pe) {
		t.Fatalf("%v", err)
	}
}
