package cupel

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cupel.h"

// As in cupel.go: the message is copied in the failing C call.
static cupel_status keep8(cupel_status st, char *err) {
	if (st != CUPEL_OK) {
		const char *m = cupel_last_error();
		strncpy(err, m ? m : "", 1023);
		err[1023] = 0;
	}
	return st;
}

// The Go side of every trace (trace_export.go).
extern void cupelGoTrace(uintptr_t state, uintptr_t run, cupel_trace_event *event);

// The traced run in progress on this thread: a cgo.Handle of its Go
// context, 0 for none. Set and restored inside the one C call that runs
// (a goroutine may change OS thread between two cgo calls, never during
// one), so each event finds the run it belongs to even when goroutines
// run the same pipeline at once.
static _Thread_local uintptr_t go_trace_run;

// The callback every traced pipeline is given; user_data is the cgo.Handle
// of the trace's Go state.
static void go_trace_tramp(void *user, const cupel_trace_event *event) {
	cupelGoTrace((uintptr_t)user, go_trace_run, (cupel_trace_event *)event);
}

static cupel_status go_pipeline_set_trace(cupel_pipeline *p, int level, int on, uintptr_t state, char *err) {
	return keep8(cupel_pipeline_set_trace(p, level, on ? go_trace_tramp : NULL, (void *)state), err);
}
static cupel_status go_pipeline_run_traced(uintptr_t run, const cupel_pipeline *p, const cupel_items *it,
                                           const cupel_budget *b, size_t *out, size_t cap, size_t *len,
                                           cupel_report *r, char *err) {
	uintptr_t prev = go_trace_run;
	go_trace_run = run;
	cupel_status st = cupel_pipeline_run(p, it, b, out, cap, len, r);
	go_trace_run = prev;
	return keep8(st, err);
}
static cupel_status go_session_run_traced(uintptr_t run, cupel_session *s, const cupel_items *it,
                                          const cupel_budget *b, size_t *out, size_t cap, size_t *len,
                                          cupel_report *r, char *err) {
	uintptr_t prev = go_trace_run;
	go_trace_run = run;
	cupel_status st = cupel_session_run(s, it, b, out, cap, len, r);
	go_trace_run = prev;
	return keep8(st, err);
}
// labels: count NUL-terminated labels back to back; the pointer arrays
// are made here, in C memory.
static cupel_status go_policy_sensitivity(uintptr_t run, const cupel_pipeline *const *pipelines, const char *labels,
                                          size_t count, const cupel_items *it, const cupel_budget *b, char *buf,
                                          size_t cap, size_t *len, char *err) {
	const char **lp = malloc((count ? count : 1) * sizeof *lp);
	if (!lp) {
		strcpy(err, "out of memory for the labels' pointers");
		return CUPEL_ERROR_INTERNAL;
	}
	for (size_t i = 0; i < count; i++) {
		lp[i] = labels;
		labels += strlen(labels) + 1;
	}
	uintptr_t prev = go_trace_run;
	go_trace_run = run;
	cupel_status st = cupel_policy_sensitivity(pipelines, lp, count, it, b, buf, cap, len);
	go_trace_run = prev;
	free(lp);
	return keep8(st, err);
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"runtime/cgo"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// TraceLevel is how much a trace carries (Pipeline.SetTrace).
type TraceLevel int

// The trace levels; the numbers are the C ABI's (cupel_trace_level).
const (
	// TraceStages: one event per stage and the pipeline's (6 per run).
	TraceStages TraceLevel = C.CUPEL_TRACE_STAGES
	// TraceExclusions: and one per excluded item, after its stage's.
	TraceExclusions TraceLevel = C.CUPEL_TRACE_EXCLUSIONS
	// TraceFull: and one per included item, after the place stage's.
	TraceFull TraceLevel = C.CUPEL_TRACE_FULL
)

// String is the level's name ("TraceStages", ...), or "TraceLevel(7)".
func (l TraceLevel) String() string {
	switch l {
	case TraceStages:
		return "TraceStages"
	case TraceExclusions:
		return "TraceExclusions"
	case TraceFull:
		return "TraceFull"
	}
	return fmt.Sprintf("TraceLevel(%d)", int(l))
}

// TraceKind is what a trace event is about.
type TraceKind int

// The event kinds; the numbers are the C ABI's (cupel_trace_kind).
const (
	// TracePipeline: the cupel.pipeline span, sent last, spanning the run.
	TracePipeline TraceKind = C.CUPEL_TRACE_EVENT_PIPELINE
	// TraceStage: a cupel.stage.<stage> span, child of the pipeline's.
	TraceStage TraceKind = C.CUPEL_TRACE_EVENT_STAGE
	// TraceExclusion: a cupel.exclusion event on its stage's span.
	TraceExclusion TraceKind = C.CUPEL_TRACE_EVENT_EXCLUSION
	// TraceIncluded: a cupel.item.included event on the place stage's span.
	TraceIncluded TraceKind = C.CUPEL_TRACE_EVENT_INCLUDED
)

// String is the kind's name: "pipeline", "stage", "exclusion",
// "included" ("TraceKind(7)" for another number).
func (k TraceKind) String() string {
	switch k {
	case TracePipeline:
		return "pipeline"
	case TraceStage:
		return "stage"
	case TraceExclusion:
		return "exclusion"
	case TraceIncluded:
		return "included"
	}
	return fmt.Sprintf("TraceKind(%d)", int(k))
}

// TraceEvent is one span or event of a traced run, with what the
// specification's OpenTelemetry chapter puts on it (never content or
// metadata). Per run, in order: each stage's span (classify, score,
// deduplicate, slice, place) followed by its exclusions, the place
// stage's also by the included items, and the pipeline's span last. Spans
// carry their Start and Duration, so a host can build real spans from
// them after the fact.
type TraceEvent struct {
	Kind TraceKind
	// Name: "cupel.pipeline", "cupel.stage.classify" (.score,
	// .deduplicate, .slice, .place), "cupel.exclusion" or
	// "cupel.item.included".
	Name string
	// Stage: "classify", ... ("" for the pipeline's span).
	Stage string
	// Verbosity is cupel.verbosity: "StageOnly", "StageAndExclusions" or
	// "Full".
	Verbosity string
	// A stage's item counts in and out and its exclusions; the pipeline's:
	// the items in, the items included and all exclusions.
	ItemCountIn, ItemCountOut, ExclusionCount int
	// Item is an exclusion's or included item's push index; -1 for spans.
	Item int
	// Reason and ReasonName ("BudgetExceeded") are an exclusion's;
	// Reason -1 and ReasonName "" otherwise.
	Reason     Reason
	ReasonName string
	// ItemKind is an exclusion's or included item's kind ("" for spans).
	ItemKind string
	// Tokens: an exclusion's item tokens; an included item's tokens as
	// they go into the context.
	Tokens int64
	// Score is an included item's score.
	Score float64
	// MaxTokens is the pipeline span's cupel.budget.max_tokens.
	MaxTokens int64
	// Start (zero when the library has no clock) and Duration (0 for events).
	Start    time.Time
	Duration time.Duration
}

// TracePanicError is what Run (Pipeline.Run, Session.Run, Sensitivity,
// Select) returns when the trace callback panicked during the run: the
// panic never unwinds through the C library. The run itself completed;
// the events after the panic were not delivered, and the run's result is
// discarded. Unwrap gives the panic value when it is an error.
type TracePanicError struct {
	Value interface{} // what the callback panicked with
	Stack []byte      // the callback's stack at the panic
}

func (e *TracePanicError) Error() string {
	return fmt.Sprintf("the trace callback panicked: %v", e.Value)
}

// Unwrap is the panic value when it is an error, else nil.
func (e *TracePanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// traceState is one SetTrace's callback, shared by the pipeline and the
// sessions made from it while it was set (each holds a reference); its
// cgo.Handle, the C callback's user_data, is deleted when the last lets go.
type traceState struct {
	fn   func(TraceEvent)
	refs int32
	h    cgo.Handle
}

func newTraceState(fn func(TraceEvent)) *traceState {
	s := &traceState{fn: fn, refs: 1}
	s.h = cgo.NewHandle(s)
	return s
}

func (s *traceState) acquire() *traceState {
	if s != nil {
		atomic.AddInt32(&s.refs, 1)
	}
	return s
}

func (s *traceState) release() {
	if s != nil && atomic.AddInt32(&s.refs, -1) == 0 {
		s.h.Delete()
	}
}

// traceRun is one traced run's context: what the callback did.
type traceRun struct {
	panicked *TracePanicError
	mute     bool // a repeated call (a larger buffer): its events were delivered
}

// begin makes the context of a traced run (none when untraced: handle 0).
func beginRun(traced bool) (*traceRun, C.uintptr_t) {
	if !traced {
		return nil, 0
	}
	r := &traceRun{}
	return r, C.uintptr_t(cgo.NewHandle(r))
}

// end deletes the run's handle and is its callback's panic, if any.
func (r *traceRun) end(h C.uintptr_t) error {
	if r == nil {
		return nil
	}
	cgo.Handle(h).Delete()
	if r.panicked != nil {
		return r.panicked
	}
	return nil
}

// SetTrace traces the pipeline's runs: during each successful Run (and
// the runs of sessions made from it afterwards, of Sensitivity and of
// Select with it), fn is called on the running goroutine with every event
// of level, in the order TraceEvent gives. fn nil turns tracing off; a
// traced run costs a report's bookkeeping, an untraced one nothing. A
// failed run sends nothing. Setting a trace replaces the previous one.
//
// fn must not call into the same pipeline, must be safe to call from
// every goroutine that runs the pipeline at once, and must not call
// runtime.Goexit (t.FailNow, t.Fatal). A panic in fn is recovered: the
// run's later events are dropped and the run returns a *TracePanicError.
//
// The pipeline holds fn until the trace is replaced or turned off, or the
// pipeline is closed; a session made from it holds it until the session
// is closed. (A callback that refers to its own pipeline keeps it from
// the finalizer: Close it.) A level other than TraceStages,
// TraceExclusions or TraceFull is ErrInvalidArgument.
func (p *Pipeline) SetTrace(level TraceLevel, fn func(TraceEvent)) error {
	if err := p.need("pipeline"); err != nil {
		return err
	}
	if level != TraceStages && level != TraceExclusions && level != TraceFull {
		return argError("level is %v; it must be TraceStages, TraceExclusions or TraceFull", level)
	}
	var st *traceState
	var h C.uintptr_t
	on := 0
	if fn != nil {
		st = newTraceState(fn)
		h, on = C.uintptr_t(st.h), 1
	}
	var e errBuf
	err := e.check(C.go_pipeline_set_trace(p.p, C.int(level), C.int(on), h, e.ptr()))
	runtime.KeepAlive(p)
	if err != nil {
		st.release()
		return err
	}
	p.trace.release()
	p.trace = st
	return nil
}

// ---- the runs that may be traced -----------------------------------------------------

// runPipeline is Pipeline.Run's call, with the trace's run context when
// the pipeline is traced.
func runPipeline(p *Pipeline, items *Items, budget *Budget, buf indexBuf, n *C.size_t, report *Report) error {
	r, h := beginRun(p.trace != nil)
	var e errBuf
	st := C.go_pipeline_run_traced(h, p.p, items.p, budget.p, buf.ptr(), C.size_t(len(buf)), n, report.ptr(),
		e.ptr())
	runtime.KeepAlive(p)
	runtime.KeepAlive(items)
	runtime.KeepAlive(budget)
	runtime.KeepAlive(report)
	if err := r.end(h); err != nil {
		return err
	}
	return e.check(st)
}

// runSession is Session.Run's call, as runPipeline.
func runSession(s *Session, items *Items, budget *Budget, buf indexBuf, n *C.size_t, report *Report) error {
	r, h := beginRun(s.trace != nil)
	var e errBuf
	st := C.go_session_run_traced(h, s.p, items.p, budget.p, buf.ptr(), C.size_t(len(buf)), n, report.ptr(),
		e.ptr())
	runtime.KeepAlive(s)
	runtime.KeepAlive(items)
	runtime.KeepAlive(budget)
	runtime.KeepAlive(report)
	if err := r.end(h); err != nil {
		return err
	}
	return e.check(st)
}

// sensitivityRules name, in the library's messages, a variant as the
// caller's slice does.
var sensitivityRules = rules(`\bvariant ([0-9]+) \(`, `variants[$1] (`,
	`\bpipelines\[([0-9]+)\]`, `variants[$1].Pipeline`, `\blabels\[([0-9]+)\]`, `variants[$1].Label`)

// runSensitivity is cupel_policy_sensitivity's JSON for the variants
// (checked by the caller).
func runSensitivity(variants []SensitivityVariant, items *Items, budget *Budget) (string, error) {
	n := len(variants)
	traced := false
	pipes := make([]*C.cupel_pipeline, n) // C pointers only: cgo passes it as it is
	var labels []byte
	for i, v := range variants {
		pipes[i] = v.Pipeline.p
		traced = traced || v.Pipeline.trace != nil
		labels = append(append(labels, v.Label...), 0)
	}
	defer runtime.KeepAlive(variants)
	defer runtime.KeepAlive(items)
	defer runtime.KeepAlive(budget)
	r, h := beginRun(traced)
	// The report JSON of every variant, with every item: a first guess at
	// its size, so that the pipelines usually run once. A larger text
	// makes the library run them again, with the events muted (they were
	// delivered the first time).
	capacity := 4096 + n*(1024+items.Len()*384)
	var e errBuf
	for {
		buf := make([]byte, capacity)
		var got C.size_t
		st := C.go_policy_sensitivity(h, &pipes[0], (*C.char)(unsafe.Pointer(&labels[0])), C.size_t(n), items.p,
			budget.p, (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), &got, e.ptr())
		if r != nil && r.panicked != nil {
			return "", r.end(h)
		}
		if st == C.CUPEL_ERROR_BUFFER_TOO_SMALL && int(got) >= len(buf) {
			// Timings may print longer the next time: room to spare.
			capacity = int(got) + int(got)/8 + 1024
			if r != nil {
				r.mute = true
			}
			continue
		}
		if err := r.end(h); err != nil {
			return "", err
		}
		if err := e.checkWith(st, sensitivityRules); err != nil {
			return "", err
		}
		return string(buf[:int(got)]), nil
	}
}

// ---- the callback ------------------------------------------------------------------------

// staticStrings are the event's static C strings as Go strings, by
// address (the library's names never move): one allocation per name per
// process, not per event.
var staticStrings sync.Map

func staticString(p *C.char) string {
	if p == nil {
		return ""
	}
	key := uintptr(unsafe.Pointer(p))
	if s, ok := staticStrings.Load(key); ok {
		return s.(string)
	}
	s := C.GoString(p)
	staticStrings.Store(key, s)
	return s
}

// goEvent is the C event as a TraceEvent (copied: the C one lives for the
// callback only).
func goEvent(ev *C.cupel_trace_event) TraceEvent {
	e := TraceEvent{
		Kind:           TraceKind(ev.kind),
		Name:           staticString(ev.name),
		Stage:          staticString(ev.stage),
		Verbosity:      staticString(ev.verbosity),
		ItemCountIn:    int(ev.item_count_in),
		ItemCountOut:   int(ev.item_count_out),
		ExclusionCount: int(ev.exclusion_count),
		Item:           -1,
		Reason:         Reason(ev.reason),
		ReasonName:     staticString(ev.reason_name),
		Tokens:         int64(ev.tokens),
		Score:          float64(ev.score),
		MaxTokens:      int64(ev.max_tokens),
		Duration:       time.Duration(ev.duration_nanos),
	}
	if e.Kind == TraceExclusion || e.Kind == TraceIncluded {
		e.Item = int(ev.item)
		e.ItemKind = goText(ev.item_kind, ev.item_kind_len)
	}
	if ev.start_unix_nanos != 0 {
		e.Start = time.Unix(0, int64(ev.start_unix_nanos))
	}
	return e
}

// deliverTrace hands one event to the trace's callback. Nothing unwinds
// into C: a panic of the callback is kept in the run's context (Run
// returns it), and any other is dropped.
func deliverTrace(state, run uintptr, ev *C.cupel_trace_event) {
	defer func() { _ = recover() }()
	st, _ := cgo.Handle(state).Value().(*traceState)
	if st == nil || st.fn == nil {
		return
	}
	var r *traceRun
	if run != 0 {
		r, _ = cgo.Handle(run).Value().(*traceRun)
	}
	if r != nil && (r.mute || r.panicked != nil) {
		return
	}
	event := goEvent(ev)
	defer func() {
		if v := recover(); v != nil && r != nil {
			r.panicked = &TracePanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	st.fn(event)
}
