package cupel

/*
#include <stdlib.h>
#include <string.h>
#include "cupel.h"

// As in cupel.go: the message is copied in the failing C call.
static cupel_status keep6(cupel_status st, char *err) {
	if (st != CUPEL_OK) {
		const char *m = cupel_last_error();
		strncpy(err, m ? m : "", 1023);
		err[1023] = 0;
	}
	return st;
}
static cupel_status go_items_set_key(cupel_items *it, size_t i, uint64_t key, char *err) {
	return keep6(cupel_items_set_key(it, i, key), err);
}
static cupel_status go_items_set_volatile(cupel_items *it, size_t i, bool v, char *err) {
	return keep6(cupel_items_set_volatile(it, i, v), err);
}
static cupel_status go_items_set_keys(cupel_items *it, size_t first, size_t n, const uint64_t *keys, char *err) {
	return keep6(cupel_items_set_keys(it, first, n, keys), err);
}
static cupel_status go_items_set_volatile_many(cupel_items *it, size_t first, size_t n, const bool *v, char *err) {
	return keep6(cupel_items_set_volatile_many(it, first, n, v), err);
}
static cupel_status go_items_identity(const cupel_items *it, size_t i, uint64_t *key, bool *v, char *err) {
	cupel_status st = cupel_items_key(it, i, key);
	if (st == CUPEL_OK) st = cupel_items_volatile(it, i, v);
	return keep6(st, err);
}
static cupel_status go_session_new(const cupel_pipeline *p, cupel_session **out, char *err) {
	return keep6(cupel_session_new(p, out), err);
}
static cupel_status go_session_set_slack(cupel_session *s, double f, char *err) {
	return keep6(cupel_session_set_slack(s, f), err);
}
static cupel_status go_session_slack(const cupel_session *s, double *f, char *err) {
	return keep6(cupel_session_slack(s, f), err);
}
static cupel_status go_session_run(cupel_session *s, const cupel_items *it, const cupel_budget *b, size_t *out,
                                   size_t cap, size_t *len, cupel_report *r, char *err) {
	return keep6(cupel_session_run(s, it, b, out, cap, len, r), err);
}
static cupel_status go_session_stable_prefix(const cupel_session *s, size_t *items, int64_t *tokens, char *err) {
	return keep6(cupel_session_stable_prefix(s, items, tokens), err);
}
static cupel_status go_session_reset(cupel_session *s, char *err) {
	return keep6(cupel_session_reset(s), err);
}
static cupel_status go_session_last_action(const cupel_session *s, int *out, char *err) {
	cupel_session_action a = CUPEL_SESSION_FIRST;
	cupel_status st = cupel_session_last_action(s, &a);
	*out = (int)a;
	return keep6(st, err);
}
static cupel_status go_session_breakpoints(const cupel_session *s, cupel_breakpoint *out, size_t cap, size_t *len,
                                           char *err) {
	return keep6(cupel_session_breakpoints(s, out, cap, len), err);
}
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// ---- item identity ---------------------------------------------------------------

// SetKey gives item index an identity key for sessions: any non-zero number
// that names the same message, tool call or document from one turn's list
// to the next (0, the default, is no key). A keyed item is the same item as
// last turn when its key, tokens and content are the same; a keyless one
// when its kind, tokens and content are. Keys must be unique in a list for
// Session.Run (it fails with ErrInvalidArgument naming both indices);
// Pipeline.Run ignores them. Item.Key sets it on push.
func (it *Items) SetKey(index int, key uint64) error {
	return it.setOne(index, func(i C.size_t, e *errBuf) C.cupel_status {
		return C.go_items_set_key(it.p, i, C.uint64_t(key), e.ptr())
	})
}

// SetVolatile marks item index volatile (or not): expected to change every
// turn (the open file in an editor, this turn's retrieved documents). A
// session places every volatile item after every other item, so its
// changes never break the cached prefix. A group is volatile when any
// member is; an item with neither key nor content is treated as volatile.
// Pipeline.Run ignores it. Item.Volatile sets it on push.
func (it *Items) SetVolatile(index int, volatile bool) error {
	return it.setOne(index, func(i C.size_t, e *errBuf) C.cupel_status {
		return C.go_items_set_volatile(it.p, i, C.bool(volatile), e.ptr())
	})
}

// SetKeys sets the keys of items first .. first+len(keys)-1 in one call,
// all or nothing. Duplicate keys are refused by Session.Run, not here.
func (it *Items) SetKeys(first int, keys []uint64) error {
	if err := firstError(it.need("items"), it.indexError("first", first)); err != nil {
		return err
	}
	if len(keys) == 0 {
		return nil
	}
	var e errBuf
	err := e.check(C.go_items_set_keys(it.ptr(), C.size_t(first), C.size_t(len(keys)),
		(*C.uint64_t)(unsafe.Pointer(&keys[0])), e.ptr()))
	runtime.KeepAlive(it)
	runtime.KeepAlive(keys)
	return err
}

// SetVolatileMany sets the volatile flags of items first .. in one call,
// all or nothing.
func (it *Items) SetVolatileMany(first int, volatile []bool) error {
	if err := firstError(it.need("items"), it.indexError("first", first)); err != nil {
		return err
	}
	if len(volatile) == 0 {
		return nil
	}
	var e errBuf
	err := e.check(C.go_items_set_volatile_many(it.ptr(), C.size_t(first), C.size_t(len(volatile)),
		(*C.bool)(unsafe.Pointer(&volatile[0])), e.ptr()))
	runtime.KeepAlive(it)
	runtime.KeepAlive(volatile)
	return err
}

// identity reads item index's key and volatile flag.
func (it *Items) identity(index int) (key uint64, volatile bool, err error) {
	if err := firstError(it.need("items"), it.indexError("index", index)); err != nil {
		return 0, false, err
	}
	var e errBuf
	var k C.uint64_t
	var v C.bool
	err = e.check(C.go_items_identity(it.p, C.size_t(index), &k, &v, e.ptr()))
	runtime.KeepAlive(it)
	return uint64(k), bool(v), err
}

// Key is item index's identity key (0: none).
func (it *Items) Key(index int) (uint64, error) {
	k, _, err := it.identity(index)
	return k, err
}

// Volatile says whether item index was marked volatile (SetVolatile).
func (it *Items) Volatile(index int) (bool, error) {
	_, v, err := it.identity(index)
	return v, err
}

// ---- sessions --------------------------------------------------------------------

// Action is which rule a session run took (Session.LastAction).
type Action int

// The actions; the numbers are the C ABI's (cupel_session_action).
const (
	// ActionFirst: the first run, or the first after a reset (also before
	// any run): the pipeline's selection, volatile items last.
	ActionFirst Action = C.CUPEL_SESSION_FIRST
	// ActionAppend: the previous output kept in its order, new items added
	// at its end.
	ActionAppend Action = C.CUPEL_SESSION_APPEND
	// ActionCompact: a fresh selection with room to spare (the slack),
	// keeping what it could of the previous output's prefix.
	ActionCompact Action = C.CUPEL_SESSION_COMPACT
)

// String is the action as the JSON report spells it: "first", "append",
// "compact" ("unknown" for another number).
func (a Action) String() string {
	switch a {
	case ActionFirst:
		return "first"
	case ActionAppend:
		return "append"
	case ActionCompact:
		return "compact"
	}
	return "unknown"
}

// Mark is what a cache breakpoint marks (Breakpoint.Mark).
type Mark int

// The marks; the numbers are the C ABI's (cupel_breakpoint_mark).
const (
	// MarkPinned: after the leading pinned items (the system prompt, tool
	// definitions).
	MarkPinned Mark = 0
	// MarkCompaction: after the prefix the last compaction kept (it moves
	// only when a compaction cuts earlier).
	MarkCompaction Mark = 1
	// MarkStable: after this run's stable prefix (Session.StablePrefix).
	MarkStable Mark = 2
	// MarkEnd: after the last non-volatile item: the prefix the next turn
	// reuses when it appends, where a cache write pays off.
	MarkEnd Mark = 3
)

// String is the mark as the JSON report spells it: "pinned", "compaction",
// "stable", "end" ("unknown" for another number).
func (m Mark) String() string {
	switch m {
	case MarkPinned:
		return "pinned"
	case MarkCompaction:
		return "compaction"
	case MarkStable:
		return "stable"
	case MarkEnd:
		return "end"
	}
	return "unknown"
}

// Breakpoint is one cache breakpoint of a session run: after the first
// Items items of its output, which add Tokens tokens.
type Breakpoint struct {
	Items  int
	Tokens int64
	Mark   Mark
}

// MaxBreakpoints is the most breakpoints a run has (providers allow up to
// four per request).
const MaxBreakpoints = 4

// Session gives the context for each turn of a conversation, changing the
// previous turn's prompt only at its end whenever it can, so that a model
// provider's prefix cache keeps serving it (the C header's cupel_session_new
// and docs/sessions.md give the rules): the first run is the pipeline's
// selection (volatile items last); later runs append new items after the
// previous output while everything fits, and otherwise compact once, with
// room to spare (the slack), keeping the longest prefix of the previous
// output that costs little score. Items are told apart from one run to the
// next by Item.Key (or their kind, tokens and content), and volatile items
// (Item.Volatile) go last.
//
// A session keeps its own copy of the pipeline. It is used by one
// goroutine at a time; any number of sessions may run at once.
type Session struct {
	p     *C.cupel_session
	trace *traceState // the pipeline's trace when the session was made
}

// NewSession creates a session over a copy of pipeline (which may be closed
// right after: the session keeps working), with the default slack (0.2).
// The copy keeps the pipeline's trace (Pipeline.SetTrace) as it is now:
// the session's runs call that callback until the session is closed.
func NewSession(pipeline *Pipeline) (*Session, error) {
	if err := pipeline.need("pipeline"); err != nil {
		return nil, err
	}
	var e errBuf
	s := &Session{}
	err := e.check(C.go_session_new(pipeline.p, &s.p, e.ptr()))
	runtime.KeepAlive(pipeline)
	if err != nil {
		return nil, err
	}
	s.trace = pipeline.trace.acquire()
	runtime.SetFinalizer(s, (*Session).Close)
	return s, nil
}

func (s *Session) ptr() *C.cupel_session {
	if s == nil {
		return nil
	}
	return s.p
}

// Close frees the session. Calling it again is a no-op; any other method
// of a closed session fails with ErrClosed.
func (s *Session) Close() {
	if s != nil && s.p != nil {
		C.cupel_session_free(s.p)
		s.p = nil
		s.trace.release()
		s.trace = nil
		runtime.SetFinalizer(s, nil)
	}
}

// SetSlack sets the share of the effective target a compaction leaves free
// for the turns after it: its non-pinned, non-volatile items total at most
// floor((1 - fraction) x target). fraction is in [0, 1) (NaN is refused,
// ErrInvalidArgument; the session is unchanged); the default is 0.2.
func (s *Session) SetSlack(fraction float64) error {
	if err := s.need("session"); err != nil {
		return err
	}
	var e errBuf
	err := e.check(C.go_session_set_slack(s.p, C.double(fraction), e.ptr()))
	runtime.KeepAlive(s)
	return err
}

// Slack is the session's slack (SetSlack).
func (s *Session) Slack() (float64, error) {
	if err := s.need("session"); err != nil {
		return 0, err
	}
	var e errBuf
	var f C.double
	err := e.check(C.go_session_slack(s.p, &f, e.ptr()))
	runtime.KeepAlive(s)
	return float64(f), err
}

// Run is one turn: the context's item indices in prompt order, as
// Pipeline.Run gives them (report may be nil), with every rule of the
// pipeline kept (budget, pinned items, groups, variants and truncation,
// overflow). The rule it took is LastAction, the prefix unchanged since the
// last run StablePrefix, where to put cache breakpoints Breakpoints. The
// report lists the output as included (in its order) and every other item
// with the pipeline's reason, or ReasonDeferred where the pipeline takes an
// item the session left out; its JSON has a top-level "session" object
// (action, stablePrefixItems, stablePrefixTokens, breakpoints).
//
// Two items with the same non-zero key fail with ErrInvalidArgument
// naming both indices. A failed run changes nothing: the next run behaves
// as if it never happened.
func (s *Session) Run(items *Items, budget *Budget, report *Report) ([]int, error) {
	if err := firstError(s.need("session"), items.need("items"), budget.need("budget"),
		report.optional("report")); err != nil {
		return nil, err
	}
	pooled, buf := takeIndexBuf(items.Len())
	defer indexBufPool.Put(pooled)
	var n C.size_t
	if s.trace != nil {
		if err := runSession(s, items, budget, buf, &n, report); err != nil {
			return nil, err
		}
		return buf.ints(n), nil
	}
	var e errBuf
	err := e.check(C.go_session_run(s.p, items.p, budget.p, buf.ptr(), C.size_t(len(buf)), &n,
		report.ptr(), e.ptr()))
	runtime.KeepAlive(s)
	runtime.KeepAlive(items)
	runtime.KeepAlive(budget)
	runtime.KeepAlive(report)
	if err != nil {
		return nil, err
	}
	return buf.ints(n), nil
}

// StablePrefix is the last run's stable prefix: how many leading items of
// its output, and their tokens, are identical (by identity and option) to
// the leading items of the run before it; where a host puts its cache
// breakpoint. 0 and 0 before any run, after a first run and after the
// first run that follows a Reset.
func (s *Session) StablePrefix() (items int, tokens int64, err error) {
	if err := s.need("session"); err != nil {
		return 0, 0, err
	}
	var e errBuf
	var n C.size_t
	var t C.int64_t
	err = e.check(C.go_session_stable_prefix(s.p, &n, &t, e.ptr()))
	runtime.KeepAlive(s)
	return int(n), int64(t), err
}

// Reset forgets every run: the next run is a first run (its output is the
// pipeline's, its stable prefix 0). The slack stays.
func (s *Session) Reset() error {
	if err := s.need("session"); err != nil {
		return err
	}
	var e errBuf
	err := e.check(C.go_session_reset(s.p, e.ptr()))
	runtime.KeepAlive(s)
	return err
}

// LastAction is which rule the last successful run took (ActionFirst
// before any run and after a Reset).
func (s *Session) LastAction() (Action, error) {
	if err := s.need("session"); err != nil {
		return ActionFirst, err
	}
	var e errBuf
	var a C.int
	err := e.check(C.go_session_last_action(s.p, &a, e.ptr()))
	runtime.KeepAlive(s)
	return Action(a), err
}

// Breakpoints are the last run's cache breakpoints, ascending and distinct,
// at most MaxBreakpoints: after the leading pinned items (MarkPinned),
// after the prefix the last compaction kept (MarkCompaction), after the
// stable prefix (MarkStable) and after the last non-volatile item
// (MarkEnd); a position at 0 items is left out, and where two fall
// together one is given, with the later mark of that list. None (an empty
// slice) before any run.
func (s *Session) Breakpoints() ([]Breakpoint, error) {
	if err := s.need("session"); err != nil {
		return nil, err
	}
	// A buffer of MaxBreakpoints always suffices; should a library ever
	// need more, it says how many and the call is made again.
	buf := make([]C.cupel_breakpoint, MaxBreakpoints)
	var n C.size_t
	var e errBuf
	st := C.go_session_breakpoints(s.p, &buf[0], C.size_t(len(buf)), &n, e.ptr())
	if st == C.CUPEL_ERROR_BUFFER_TOO_SMALL && int(n) > len(buf) {
		buf = make([]C.cupel_breakpoint, int(n))
		st = C.go_session_breakpoints(s.p, &buf[0], C.size_t(len(buf)), &n, e.ptr())
	}
	runtime.KeepAlive(s)
	if err := e.check(st); err != nil {
		return nil, err
	}
	out := make([]Breakpoint, int(n))
	for i := range out {
		out[i] = Breakpoint{Items: int(buf[i].items), Tokens: int64(buf[i].tokens), Mark: Mark(buf[i].mark)}
	}
	return out, nil
}
