// Package cupel is the Go binding of libcupel: it decides which scored
// candidates (tokens, relevance score, kind) fit a language model's token
// budget, through the library's C ABI.
//
// Import it as
//
//	import cupel "github.com/libcupel/libcupel/bindings/go"
//
// The one-call path is Select: messages, a budget and a policy (a preset
// name, a policy document or a Pipeline) in, the messages to send out.
// Policies are data (PipelineFromJSON, Pipeline.JSON, BudgetFromJSON,
// Preset), Sensitivity compares them, Report.Analytics gives a run's
// figures and Pipeline.SetTrace traces runs through a callback.
//
// Handles (Items, Budget, Slicer, Scorer, Placer, Pipeline, Report, Stream,
// Tokenizer, Session) own native memory: call Close when done (idempotent; a
// finalizer frees a forgotten handle as a backstop). Items, Budget and
// Slicer are read-only while slicing, so many goroutines may slice with the
// same ones at once; a Report, Stream or Session must be used by one
// goroutine at a time, and nothing may be used during its Close.
//
// Every failure is an *Error carrying a status and a message that names the
// argument at fault as this package spells it (maxTokens, pinnedTokens,
// parts[2].Weight, quotas[0].Kind). Compare with errors.Is:
//
//   - ErrNullPointer: a nil handle where one is required;
//   - ErrClosed: a method on a closed handle, or a closed handle passed as
//     an argument (this binding's own status, StatusClosed);
//   - ErrInvalidArgument: a value outside its domain, an index out of range
//     (negative ones included), an empty kind, text that is not UTF-8.
//
// A failed call changes nothing. The library's message is read inside the
// same C call, so goroutines moving between OS threads cannot mix messages up.
package cupel

/*
#include <stdlib.h>
#include <string.h>
#include "cupel.h"

// Every fallible call goes through a shim that copies the thread-local
// message in the same C call (a goroutine may change OS thread between two
// cgo calls).
#define GO_ERR_LEN 1024
static cupel_status keep(cupel_status st, char *err) {
	if (st != CUPEL_OK) {
		const char *m = cupel_last_error();
		strncpy(err, m ? m : "", GO_ERR_LEN - 1);
		err[GO_ERR_LEN - 1] = 0;
	}
	return st;
}

static cupel_status go_items_new(cupel_items **out, char *err) { return keep(cupel_items_new(out), err); }
static cupel_status go_items_push(cupel_items *it, int64_t t, double s, const char *k, char *err) {
	return keep(cupel_items_push(it, t, s, k), err);
}
static cupel_status go_items_push_many(cupel_items *it, size_t n, const int64_t *t, const double *s,
                                       const char *const *k, char *err) {
	return keep(cupel_items_push_many(it, n, t, s, k), err);
}
static cupel_status go_items_set_group(cupel_items *it, size_t i, uint64_t g, char *err) {
	return keep(cupel_items_set_group(it, i, g), err);
}
static cupel_status go_items_set_groups(cupel_items *it, size_t first, size_t n, const uint64_t *g, char *err) {
	return keep(cupel_items_set_groups(it, first, n, g), err);
}
static cupel_status go_stream_push_grouped(cupel_stream *s, int64_t t, double sc, uint64_t g, bool *full, char *err) {
	return keep(cupel_stream_push_grouped(s, t, sc, g, full), err);
}
static cupel_status go_budget_new(int64_t max, int64_t target, cupel_budget **out, char *err) {
	return keep(cupel_budget_new(max, target, out), err);
}
static cupel_status go_budget_set_output_reserve(cupel_budget *b, int64_t t, char *err) {
	return keep(cupel_budget_set_output_reserve(b, t), err);
}
static cupel_status go_budget_set_safety_margin(cupel_budget *b, double p, char *err) {
	return keep(cupel_budget_set_safety_margin(b, p), err);
}
static cupel_status go_budget_reserve(cupel_budget *b, const char *k, int64_t t, char *err) {
	return keep(cupel_budget_reserve(b, k, t), err);
}
static cupel_status go_budget_effective(const cupel_budget *b, int64_t pinned, int64_t *max, int64_t *target, char *err) {
	return keep(cupel_budget_effective(b, pinned, max, target), err);
}
static cupel_status go_slicer_new_greedy(cupel_slicer **out, char *err) { return keep(cupel_slicer_new_greedy(out), err); }
static cupel_status go_slicer_new_knapsack(int64_t bucket, cupel_slicer **out, char *err) {
	return keep(cupel_slicer_new_knapsack(bucket, out), err);
}
static cupel_status go_slicer_new_quota(const cupel_slicer *inner, const cupel_quota *q, size_t n, cupel_slicer **out, char *err) {
	return keep(cupel_slicer_new_quota(inner, q, n, out), err);
}
static cupel_status go_slicer_new_count_quota(const cupel_slicer *inner, const cupel_count_quota *e, size_t n, int sc,
                                              cupel_slicer **out, char *err) {
	return keep(cupel_slicer_new_count_quota(inner, e, n, sc, out), err);
}
static cupel_status go_slicer_new_cck(int64_t bucket, const cupel_count_quota *e, size_t n, int sc, cupel_slicer **out, char *err) {
	return keep(cupel_slicer_new_count_constrained_knapsack(bucket, e, n, sc, out), err);
}
static cupel_status go_slicer_set_memory_limit(cupel_slicer *s, size_t bytes, char *err) {
	return keep(cupel_slicer_set_memory_limit(s, bytes), err);
}
static cupel_status go_report_new(cupel_report **out, char *err) { return keep(cupel_report_new(out), err); }
static cupel_status go_report_shortfall(const cupel_report *r, size_t i, const char **kind, uint32_t *req, uint32_t *sat, char *err) {
	return keep(cupel_report_shortfall(r, i, kind, req, sat), err);
}
static cupel_status go_report_cap_excluded(const cupel_report *r, size_t i, size_t *out, char *err) {
	return keep(cupel_report_cap_excluded(r, i, out), err);
}
static cupel_status go_slice(const cupel_slicer *s, const cupel_items *it, const cupel_budget *b, int64_t pinned,
                             size_t *out, size_t cap, size_t *len, cupel_report *r, char *err) {
	return keep(cupel_slice(s, it, b, pinned, out, cap, len, r), err);
}
static cupel_status go_marginal_items(const cupel_slicer *s, const cupel_items *it, const cupel_budget *b, int64_t pinned,
                                      int64_t slack, size_t *out, size_t cap, size_t *len, char *err) {
	return keep(cupel_marginal_items(s, it, b, pinned, slack, out, cap, len), err);
}
static cupel_status go_find_min_budget(const cupel_slicer *s, const cupel_items *it, int64_t pinned, size_t target,
                                       int64_t ceiling, int64_t *out, char *err) {
	return keep(cupel_find_min_budget(s, it, pinned, target, ceiling, out), err);
}
static cupel_status go_stream_new(int64_t target, size_t batch, cupel_stream **out, char *err) {
	return keep(cupel_stream_new(target, batch, out), err);
}
static cupel_status go_stream_push(cupel_stream *s, int64_t t, double sc, bool *full, char *err) {
	return keep(cupel_stream_push(s, t, sc, full), err);
}
static cupel_status go_stream_finish(cupel_stream *s, size_t *out, size_t cap, size_t *len, char *err) {
	return keep(cupel_stream_finish(s, out, cap, len), err);
}
*/
import "C"

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"
)

// Status is a libcupel status code.
type Status int

// The status codes of the C ABI; the numbers never change.
const (
	StatusOK              Status = C.CUPEL_OK
	StatusNullPointer     Status = C.CUPEL_ERROR_NULL_POINTER
	StatusInvalidArgument Status = C.CUPEL_ERROR_INVALID_ARGUMENT
	StatusBufferTooSmall  Status = C.CUPEL_ERROR_BUFFER_TOO_SMALL
	StatusScarcity        Status = C.CUPEL_ERROR_SCARCITY
	StatusUnsupported     Status = C.CUPEL_ERROR_UNSUPPORTED
	StatusCapacity        Status = C.CUPEL_ERROR_CAPACITY
	StatusInternal        Status = C.CUPEL_ERROR_INTERNAL
	StatusOverflow        Status = C.CUPEL_ERROR_OVERFLOW
)

// StatusClosed is this binding's own status: a call on a closed handle, or
// with a closed handle as an argument. The C library never returns it (it
// cannot tell a freed pointer from a live one); the Go handles know.
const StatusClosed Status = -1

// String is the status's fixed name, e.g. "CUPEL_ERROR_INVALID_ARGUMENT"
// ("CUPEL_GO_ERROR_CLOSED" for StatusClosed, "CUPEL_UNKNOWN_STATUS" for a
// number that is no status).
func (s Status) String() string {
	if s == StatusClosed {
		return "CUPEL_GO_ERROR_CLOSED"
	}
	if s < math.MinInt32 || s > math.MaxInt32 {
		return "CUPEL_UNKNOWN_STATUS" // as the library names any other number
	}
	return C.GoString(C.cupel_status_str(C.int(s)))
}

// Error is a failed call: its status and a message that names the argument
// and value at fault, in this package's spelling of the argument.
type Error struct {
	Status  Status
	Message string
}

// Error is the status's name and the message, e.g.
// "CUPEL_ERROR_INVALID_ARGUMENT: targetTokens 200 > maxTokens 100".
func (e *Error) Error() string {
	return fmt.Sprintf("%v: %s", e.Status, e.Message)
}

// Is makes errors.Is(err, ErrCapacity) etc. match on the status alone: a
// target *Error with an empty Message (the sentinels below) matches every
// *Error of its status.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Status == e.Status
}

// Sentinels for errors.Is, one per status.
var (
	// ErrNullPointer: a nil handle where one is required (a nil *Items, a
	// nil Scorer in a composite's parts, ...).
	ErrNullPointer = &Error{Status: StatusNullPointer}
	// ErrInvalidArgument: a value outside its domain, an index out of
	// range, an empty or blank kind, text that is not UTF-8.
	ErrInvalidArgument = &Error{Status: StatusInvalidArgument}
	// ErrBufferTooSmall: an output buffer was too small (this package sizes
	// its buffers itself; seen only if the library and binding disagree).
	ErrBufferTooSmall = &Error{Status: StatusBufferTooSmall}
	// ErrScarcity: a count requirement could not be met under Fail.
	ErrScarcity = &Error{Status: StatusScarcity}
	// ErrUnsupported: a combination the library does not support (e.g. a
	// count quota over a KnapsackSlice).
	ErrUnsupported = &Error{Status: StatusUnsupported}
	// ErrCapacity: the slicer's memory limit would be exceeded.
	ErrCapacity = &Error{Status: StatusCapacity}
	// ErrInternal: a bug in the library (a caught panic).
	ErrInternal = &Error{Status: StatusInternal}
	// ErrOverflow: the pipeline's selection exceeds the target under
	// OverflowThrow.
	ErrOverflow = &Error{Status: StatusOverflow}
	// ErrClosed: a method on a closed handle, or a closed handle passed as
	// an argument.
	ErrClosed = &Error{Status: StatusClosed}
)

// errBuf receives the message of a failed call.
type errBuf [C.GO_ERR_LEN]C.char

func (b *errBuf) ptr() *C.char { return &b[0] }

// check is nil for CUPEL_OK, else an *Error with the library's message in
// Go's names (goMessage).
func (b *errBuf) check(st C.cupel_status) error {
	return b.checkWith(st, nil)
}

// checkWith is check with extra renames for this call's arguments.
func (b *errBuf) checkWith(st C.cupel_status, extra []rule) error {
	if st == C.CUPEL_OK {
		return nil
	}
	return &Error{Status: Status(st), Message: goMessage(C.GoString(b.ptr()), extra)}
}

func argError(msg string, args ...interface{}) error {
	return &Error{Status: StatusInvalidArgument, Message: fmt.Sprintf(msg, args...)}
}

// Version is the library's version string, e.g. "0.2.0".
func Version() string { return C.GoString(C.cupel_version()) }

// ABIVersion is the library's ABI version (CUPEL_ABI_VERSION).
func ABIVersion() uint32 { return uint32(C.cupel_abi_version()) }

// cStrings makes C copies of strings, one per distinct string, freed by free.
type cStrings map[string]*C.char

// get is a C copy of s, which holds no NUL byte (checked by the caller
// with textError, or made by this package).
func (m cStrings) get(s string) *C.char {
	p, ok := m[s]
	if !ok {
		p = C.CString(s)
		m[s] = p
	}
	return p
}

// arg is a C copy of the string argument name, or an error if it holds a
// NUL byte (C would read it short).
func (m cStrings) arg(name, s string) (*C.char, error) {
	if err := textError(name, s); err != nil {
		return nil, err
	}
	return m.get(s), nil
}

func (m cStrings) free() {
	for _, p := range m {
		C.free(unsafe.Pointer(p))
	}
}

// ---- Items ------------------------------------------------------------------

// DefaultKind is the kind of an item pushed without one: "Message" (kinds
// compare with ASCII case folding). An empty or blank kind is an error
// everywhere; pass DefaultKind to mean "no particular kind".
const DefaultKind = "Message"

// Items is the list of scored candidates; an item's index is its push order.
type Items struct{ p *C.cupel_items }

// NewItems creates an empty item list.
func NewItems() (*Items, error) {
	var e errBuf
	it := &Items{}
	if err := e.check(C.go_items_new(&it.p, e.ptr())); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(it, (*Items).Close)
	return it, nil
}

// Close frees the list. Calling it again is a no-op; any other method of a
// closed list fails with ErrClosed.
func (it *Items) Close() {
	if it != nil && it.p != nil {
		C.cupel_items_free(it.ptr())
		it.p = nil
		runtime.SetFinalizer(it, nil)
	}
}

// Push adds one item: its token count (a negative one is accepted and never
// selected), its score (finite) and its kind (not empty or blank; use
// DefaultKind for the default). On error the list is unchanged.
func (it *Items) Push(tokens int64, score float64, kind string) error {
	if err := it.need("items"); err != nil {
		return err
	}
	m := cStrings{}
	defer m.free()
	k, err := m.arg("kind", kind)
	if err != nil {
		return err
	}
	var e errBuf
	err = e.check(C.go_items_push(it.p, C.int64_t(tokens), C.double(score), k, e.ptr()))
	runtime.KeepAlive(it)
	return err
}

// PushMany adds len(tokens) items at once, all or nothing. kinds may be nil
// (every item of DefaultKind); otherwise it has one entry per item, none
// empty or blank. A bad entry's error names it: "scores[11] is NaN".
func (it *Items) PushMany(tokens []int64, scores []float64, kinds []string) error {
	if err := it.need("items"); err != nil {
		return err
	}
	n := len(tokens)
	if len(scores) != n || (kinds != nil && len(kinds) != n) {
		return argError("tokens, scores and kinds have lengths %d, %d and %d; they must agree", n, len(scores), len(kinds))
	}
	if n == 0 {
		return nil
	}
	m := cStrings{}
	defer m.free()
	var kp **C.char
	if kinds != nil {
		for i, k := range kinds {
			if err := textErrorAt("kinds[%d]", i, k); err != nil {
				return err
			}
		}
		// The pointer array in C memory (cgo need not check its elements),
		// zeroed: storing a pointer through a Go pointer type runs the write
		// barrier, which reads the slot's old value as a pointer.
		block := C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof((*C.char)(nil))))
		defer C.free(block)
		ptrs := unsafe.Slice((**C.char)(block), n)
		for i, k := range kinds {
			ptrs[i] = m.get(k)
		}
		kp = &ptrs[0]
	}
	var e errBuf
	err := e.check(C.go_items_push_many(it.p, C.size_t(n),
		(*C.int64_t)(unsafe.Pointer(&tokens[0])), (*C.double)(unsafe.Pointer(&scores[0])), kp, e.ptr()))
	runtime.KeepAlive(it)
	return err
}

// SetGroup puts item index in keep-together group group (0: none). Items
// that share a non-zero group are selected all together or not at all, and
// placed next to each other in push order (a tool call and its result are
// never split); the rules are in the C header's cupel_items_set_group and
// the README's "Groups".
func (it *Items) SetGroup(index int, group uint64) error {
	if err := firstError(it.need("items"), it.indexError("index", index)); err != nil {
		return err
	}
	var e errBuf
	err := e.check(C.go_items_set_group(it.p, C.size_t(index), C.uint64_t(group), e.ptr()))
	runtime.KeepAlive(it)
	return err
}

// SetGroups sets the groups of items first .. first+len(groups)-1 in one
// call, all or nothing.
func (it *Items) SetGroups(first int, groups []uint64) error {
	if err := firstError(it.need("items"), it.indexError("first", first)); err != nil {
		return err
	}
	var p *C.uint64_t
	if len(groups) > 0 {
		p = (*C.uint64_t)(unsafe.Pointer(&groups[0]))
	}
	var e errBuf
	err := e.check(C.go_items_set_groups(it.p, C.size_t(first), C.size_t(len(groups)), p, e.ptr()))
	runtime.KeepAlive(it)
	runtime.KeepAlive(groups)
	return err
}

// indexError refuses a negative index argument of an open list.
func (it *Items) indexError(name string, index int) error {
	if index >= 0 {
		return nil
	}
	return indexError(name, index, it.Len())
}

// Len is the number of items (0 for a nil or closed list).
func (it *Items) Len() int {
	n := int(C.cupel_items_len(it.ptr()))
	runtime.KeepAlive(it)
	return n
}

// Clear removes every item (a no-op on a nil or closed list).
func (it *Items) Clear() {
	C.cupel_items_clear(it.ptr())
	runtime.KeepAlive(it)
}

// ---- Budget -----------------------------------------------------------------

// Budget is a token budget: a hard ceiling (max) and the slicers' goal (target).
type Budget struct{ p *C.cupel_budget }

// NewBudget creates a budget with maxTokens >= targetTokens >= 0.
func NewBudget(maxTokens, targetTokens int64) (*Budget, error) {
	var e errBuf
	b := &Budget{}
	if err := e.check(C.go_budget_new(C.int64_t(maxTokens), C.int64_t(targetTokens), &b.p, e.ptr())); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(b, (*Budget).Close)
	return b, nil
}

// Close frees the budget. Calling it again is a no-op; any other method of
// a closed budget fails with ErrClosed.
func (b *Budget) Close() {
	if b != nil && b.p != nil {
		C.cupel_budget_free(b.ptr())
		b.p = nil
		runtime.SetFinalizer(b, nil)
	}
}

// SetOutputReserve keeps outputReserve tokens (0 <= outputReserve <=
// max tokens) free for the model's output.
func (b *Budget) SetOutputReserve(outputReserve int64) error {
	if err := b.need("budget"); err != nil {
		return err
	}
	var e errBuf
	err := e.check(C.go_budget_set_output_reserve(b.p, C.int64_t(outputReserve), e.ptr()))
	runtime.KeepAlive(b)
	return err
}

// SetSafetyMargin keeps a percentage (finite, 0..100) of the budget unused.
func (b *Budget) SetSafetyMargin(percent float64) error {
	if err := b.need("budget"); err != nil {
		return err
	}
	var e errBuf
	err := e.check(C.go_budget_set_safety_margin(b.p, C.double(percent), e.ptr()))
	runtime.KeepAlive(b)
	return err
}

// Reserve sets aside tokens (>= 0) for a kind (a reserved slot; not empty
// or blank). Setting a kind again replaces its value.
func (b *Budget) Reserve(kind string, tokens int64) error {
	if err := b.need("budget"); err != nil {
		return err
	}
	m := cStrings{}
	defer m.free()
	k, err := m.arg("kind", kind)
	if err != nil {
		return err
	}
	var e errBuf
	err = e.check(C.go_budget_reserve(b.p, k, C.int64_t(tokens), e.ptr()))
	runtime.KeepAlive(b)
	return err
}

// Effective is the (max, target) a slice call with pinnedTokens (>= 0)
// would use.
func (b *Budget) Effective(pinnedTokens int64) (maxTokens, targetTokens int64, err error) {
	if err := b.need("budget"); err != nil {
		return 0, 0, err
	}
	var e errBuf
	var mx, tg C.int64_t
	err = e.check(C.go_budget_effective(b.p, C.int64_t(pinnedTokens), &mx, &tg, e.ptr()))
	runtime.KeepAlive(b)
	return int64(mx), int64(tg), err
}

// ---- Slicer -----------------------------------------------------------------

// Scarcity says what a count slicer does when too few items of a kind exist.
type Scarcity int

const (
	// Degrade takes what exists and records a shortfall in the Report.
	Degrade Scarcity = C.CUPEL_SCARCITY_DEGRADE
	// Fail makes the slice call fail with ErrScarcity.
	Fail Scarcity = C.CUPEL_SCARCITY_ERROR
)

// Quota is one QuotaSlice entry: percentages of the target for a kind
// (not empty or blank).
type Quota struct {
	Kind           string
	RequirePercent float64
	CapPercent     float64
}

// CountQuota is one count entry: at least Require and at most Cap items of
// Kind (not empty or blank; Require <= Cap; a Cap of 0 excludes the kind).
type CountQuota struct {
	Kind    string
	Require uint32
	Cap     uint32
}

// Slicer is a configured slicing strategy.
type Slicer struct{ p *C.cupel_slicer }

func newSlicer(create func(**C.cupel_slicer, *C.char) C.cupel_status) (*Slicer, error) {
	var e errBuf
	s := &Slicer{}
	if err := e.check(create(&s.p, e.ptr())); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(s, (*Slicer).Close)
	return s, nil
}

// NewGreedy creates a GreedySlice: value density order, greedy fill.
func NewGreedy() (*Slicer, error) {
	return newSlicer(func(out **C.cupel_slicer, err *C.char) C.cupel_status {
		return C.go_slicer_new_greedy(out, err)
	})
}

// NewKnapsack creates a KnapsackSlice with tokens discretised in buckets of
// bucketSize (> 0; DefaultBucketSize is the spec's default).
func NewKnapsack(bucketSize int64) (*Slicer, error) {
	return newSlicer(func(out **C.cupel_slicer, err *C.char) C.cupel_status {
		return C.go_slicer_new_knapsack(C.int64_t(bucketSize), out, err)
	})
}

// DefaultBucketSize is the KnapsackSlice default of the spec.
const DefaultBucketSize = C.CUPEL_DEFAULT_BUCKET_SIZE

// NewQuota creates a QuotaSlice over inner (which it copies: inner may be
// closed right after).
func NewQuota(inner *Slicer, quotas []Quota) (*Slicer, error) {
	if err := inner.need("inner"); err != nil {
		return nil, err
	}
	m := cStrings{}
	defer m.free()
	q := make([]C.cupel_quota, len(quotas)+1) // +1: never a zero-length array
	for i, x := range quotas {
		k, err := m.arg(fmt.Sprintf("quotas[%d].Kind", i), x.Kind)
		if err != nil {
			return nil, err
		}
		q[i] = C.cupel_quota{kind: k, require_percent: C.double(x.RequirePercent), cap_percent: C.double(x.CapPercent)}
	}
	s, err := newSlicer(func(out **C.cupel_slicer, err *C.char) C.cupel_status {
		return C.go_slicer_new_quota(inner.p, &q[0], C.size_t(len(quotas)), out, err)
	})
	runtime.KeepAlive(inner)
	return s, err
}

func countEntries(m cStrings, entries []CountQuota) ([]C.cupel_count_quota, error) {
	e := make([]C.cupel_count_quota, len(entries)+1)
	for i, x := range entries {
		k, err := m.arg(fmt.Sprintf("entries[%d].Kind", i), x.Kind)
		if err != nil {
			return nil, err
		}
		e[i] = C.cupel_count_quota{kind: k, require_count: C.uint32_t(x.Require), cap_count: C.uint32_t(x.Cap)}
	}
	return e, nil
}

// NewCountQuota creates a CountQuotaSlice over inner (which it copies; not
// a KnapsackSlice: use NewCountConstrainedKnapsack).
func NewCountQuota(inner *Slicer, entries []CountQuota, scarcity Scarcity) (*Slicer, error) {
	if err := inner.need("inner"); err != nil {
		return nil, err
	}
	m := cStrings{}
	defer m.free()
	e, err := countEntries(m, entries)
	if err != nil {
		return nil, err
	}
	s, err := newSlicer(func(out **C.cupel_slicer, err *C.char) C.cupel_status {
		return C.go_slicer_new_count_quota(inner.p, &e[0], C.size_t(len(entries)), C.int(scarcity), out, err)
	})
	runtime.KeepAlive(inner)
	return s, err
}

// NewCountConstrainedKnapsack creates a CountConstrainedKnapsackSlice.
func NewCountConstrainedKnapsack(bucketSize int64, entries []CountQuota, scarcity Scarcity) (*Slicer, error) {
	m := cStrings{}
	defer m.free()
	e, err := countEntries(m, entries)
	if err != nil {
		return nil, err
	}
	return newSlicer(func(out **C.cupel_slicer, err *C.char) C.cupel_status {
		return C.go_slicer_new_cck(C.int64_t(bucketSize), &e[0], C.size_t(len(entries)), C.int(scarcity), out, err)
	})
}

func (s *Slicer) ptr() *C.cupel_slicer {
	if s == nil {
		return nil
	}
	return s.p
}

// String names the slicer's handle for messages.
func (s *Slicer) String() string {
	return fmt.Sprintf("Slicer(%p)", s.ptr())
}

// Close frees the slicer. Calling it again is a no-op; any other method of
// a closed slicer fails with ErrClosed.
func (s *Slicer) Close() {
	if s != nil && s.p != nil {
		C.cupel_slicer_free(s.ptr())
		s.p = nil
		runtime.SetFinalizer(s, nil)
	}
}

// SetMemoryLimit bounds the working memory of one slice call (the knapsack
// table); over it a call fails with ErrCapacity. The default is 1 GiB.
func (s *Slicer) SetMemoryLimit(bytes uint64) error {
	if err := s.need("slicer"); err != nil {
		return err
	}
	if uint64(C.size_t(bytes)) != bytes {
		return argError("bytes is %d; it must fit this platform's size_t", bytes)
	}
	var e errBuf
	err := e.check(C.go_slicer_set_memory_limit(s.p, C.size_t(bytes), e.ptr()))
	runtime.KeepAlive(s)
	return err
}

// MemoryLimit is the slicer's memory limit in bytes (0 for a nil or closed
// slicer).
func (s *Slicer) MemoryLimit() uint64 {
	n := uint64(C.cupel_slicer_memory_limit(s.ptr()))
	runtime.KeepAlive(s)
	return n
}

// ---- Report -----------------------------------------------------------------

// Report receives what a slice call did besides the selection.
type Report struct{ p *C.cupel_report }

// Shortfall is a count requirement that could not be met (Degrade).
type Shortfall struct {
	Kind      string
	Required  uint32
	Satisfied uint32
}

// NewReport creates an empty report.
func NewReport() (*Report, error) {
	var e errBuf
	r := &Report{}
	if err := e.check(C.go_report_new(&r.p, e.ptr())); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(r, (*Report).Close)
	return r, nil
}

// Close frees the report. Calling it again is a no-op; passing a closed
// report to a call, or a method that returns an error, fails with ErrClosed.
func (r *Report) Close() {
	if r != nil && r.p != nil {
		C.cupel_report_free(r.ptr())
		r.p = nil
		runtime.SetFinalizer(r, nil)
	}
}

// EffectiveMaxTokens is the effective max of the last call (0 for a nil or
// closed report).
func (r *Report) EffectiveMaxTokens() int64 {
	v := int64(C.cupel_report_effective_max_tokens(r.ptr()))
	runtime.KeepAlive(r)
	return v
}

// EffectiveTargetTokens is the effective target of the last call (0 for a
// nil or closed report).
func (r *Report) EffectiveTargetTokens() int64 {
	v := int64(C.cupel_report_effective_target_tokens(r.ptr()))
	runtime.KeepAlive(r)
	return v
}

// SelectedTokens is the sum of the selected items' tokens (0 for a nil or
// closed report).
func (r *Report) SelectedTokens() int64 {
	v := int64(C.cupel_report_selected_tokens(r.ptr()))
	runtime.KeepAlive(r)
	return v
}

// Shortfalls are the count requirements the last call could not meet.
func (r *Report) Shortfalls() ([]Shortfall, error) {
	if err := r.need("report"); err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(r)
	n := int(C.cupel_report_shortfall_count(r.ptr()))
	out := make([]Shortfall, 0, n)
	for i := 0; i < n; i++ {
		var e errBuf
		var kind *C.char
		var req, sat C.uint32_t
		if err := e.check(C.go_report_shortfall(r.p, C.size_t(i), &kind, &req, &sat, e.ptr())); err != nil {
			return nil, err
		}
		out = append(out, Shortfall{Kind: C.GoString(kind), Required: uint32(req), Satisfied: uint32(sat)})
	}
	return out, nil
}

// CapExcluded are the items a count cap excluded in the last call.
func (r *Report) CapExcluded() ([]int, error) {
	if err := r.need("report"); err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(r)
	n := int(C.cupel_report_cap_excluded_count(r.ptr()))
	out := make([]int, n)
	for i := range out {
		var e errBuf
		var idx C.size_t
		if err := e.check(C.go_report_cap_excluded(r.p, C.size_t(i), &idx, e.ptr())); err != nil {
			return nil, err
		}
		out[i] = int(idx)
	}
	return out, nil
}

// ---- slicing ----------------------------------------------------------------

// indexBuf is an output buffer for up to n indices (nil pointer when empty).
type indexBuf []C.size_t

// indexBufPool keeps the buffers the library writes indices into between
// calls; ints copies out what the caller keeps.
var indexBufPool = sync.Pool{New: func() any { return new(column[C.size_t]) }}

// takeIndexBuf is a pooled buffer of n indices; put the column back with
// indexBufPool.Put once the indices are copied out.
func takeIndexBuf(n int) (*column[C.size_t], indexBuf) {
	c := indexBufPool.Get().(*column[C.size_t])
	return c, indexBuf(c.take(n))
}

func (b indexBuf) ptr() *C.size_t {
	if len(b) == 0 {
		return nil
	}
	return &b[0]
}

func (b indexBuf) ints(n C.size_t) []int {
	out := make([]int, int(n))
	for i := range out {
		out[i] = int(b[i])
	}
	return out
}

func (r *Report) ptr() *C.cupel_report {
	if r == nil {
		return nil
	}
	return r.p
}

func (s *Stream) ptr() *C.cupel_stream {
	if s == nil {
		return nil
	}
	return s.p
}

func (it *Items) ptr() *C.cupel_items {
	if it == nil {
		return nil
	}
	return it.p
}

func (b *Budget) ptr() *C.cupel_budget {
	if b == nil {
		return nil
	}
	return b.p
}

// Slice runs the Sort and Slice stages and returns the chosen item indices
// in the slicer's order. pinnedTokens (>= 0) are taken off the budget
// first; report may be nil.
func Slice(slicer *Slicer, items *Items, budget *Budget, pinnedTokens int64, report *Report) ([]int, error) {
	if err := firstError(slicer.need("slicer"), items.need("items"), budget.need("budget"),
		report.optional("report")); err != nil {
		return nil, err
	}
	pooled, buf := takeIndexBuf(items.Len())
	defer indexBufPool.Put(pooled)
	var n C.size_t
	var e errBuf
	err := e.check(C.go_slice(slicer.p, items.p, budget.p, C.int64_t(pinnedTokens),
		buf.ptr(), C.size_t(len(buf)), &n, report.ptr(), e.ptr()))
	runtime.KeepAlive(slicer)
	runtime.KeepAlive(items)
	runtime.KeepAlive(budget)
	runtime.KeepAlive(report)
	if err != nil {
		return nil, err
	}
	return buf.ints(n), nil
}

// MarginalItems are the items selected with the full budget but not with
// the budget reduced by slackTokens (budget simulation). The arguments are
// in the C ABI's order: slicer, items, budget, pinnedTokens, slackTokens.
func MarginalItems(slicer *Slicer, items *Items, budget *Budget, pinnedTokens, slackTokens int64) ([]int, error) {
	if err := firstError(slicer.need("slicer"), items.need("items"), budget.need("budget")); err != nil {
		return nil, err
	}
	pooled, buf := takeIndexBuf(items.Len())
	defer indexBufPool.Put(pooled)
	var n C.size_t
	var e errBuf
	err := e.check(C.go_marginal_items(slicer.p, items.p, budget.p, C.int64_t(pinnedTokens),
		C.int64_t(slackTokens), buf.ptr(), C.size_t(len(buf)), &n, e.ptr()))
	runtime.KeepAlive(slicer)
	runtime.KeepAlive(items)
	runtime.KeepAlive(budget)
	if err != nil {
		return nil, err
	}
	return buf.ints(n), nil
}

// FindMinBudget is the smallest target (up to searchCeiling) at which the
// slicer selects item targetIndex. found is false when the item is not
// selected even at searchCeiling (tokens is then 0). The arguments are in
// the C ABI's order: slicer, items, pinnedTokens, targetIndex, searchCeiling.
func FindMinBudget(slicer *Slicer, items *Items, pinnedTokens int64, targetIndex int, searchCeiling int64) (tokens int64, found bool, err error) {
	if err := firstError(slicer.need("slicer"), items.need("items")); err != nil {
		return 0, false, err
	}
	if targetIndex < 0 {
		return 0, false, argError("targetIndex %d is out of range: there are %d items", targetIndex, items.Len())
	}
	var out C.int64_t
	var e errBuf
	err = e.check(C.go_find_min_budget(slicer.p, items.p, C.int64_t(pinnedTokens), C.size_t(targetIndex),
		C.int64_t(searchCeiling), &out, e.ptr()))
	runtime.KeepAlive(slicer)
	runtime.KeepAlive(items)
	if err != nil || out < 0 {
		return 0, false, err
	}
	return int64(out), true, nil
}

// LiveHandles is the number of native handles (items, budgets, slicers,
// reports, streams, tokenizers, ...) created and not yet freed in this process: for leak
// checks, e.g. that finalizers free what was never closed.
func LiveHandles() int {
	return int(C.cupel_live_handles())
}

// ---- Stream -----------------------------------------------------------------

// Stream selects items as they arrive, batch by batch, up to a target.
type Stream struct {
	p      *C.cupel_stream
	pushed int
}

// NewStream creates a stream; batchSize 0 means the default (32).
func NewStream(targetTokens int64, batchSize int) (*Stream, error) {
	if batchSize < 0 {
		return nil, argError("batchSize is %d; it must be >= 0", batchSize)
	}
	var e errBuf
	s := &Stream{}
	if err := e.check(C.go_stream_new(C.int64_t(targetTokens), C.size_t(batchSize), &s.p, e.ptr())); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(s, (*Stream).Close)
	return s, nil
}

// Close frees the stream. Calling it again is a no-op; any other method of
// a closed stream fails with ErrClosed.
func (s *Stream) Close() {
	if s != nil && s.p != nil {
		C.cupel_stream_free(s.ptr())
		s.p = nil
		runtime.SetFinalizer(s, nil)
	}
}

// Push offers the next item (tokens >= 0, a finite score); full reports
// that the budget is spent.
func (s *Stream) Push(tokens int64, score float64) (full bool, err error) {
	if err := s.need("stream"); err != nil {
		return false, err
	}
	var e errBuf
	var f C.bool
	err = e.check(C.go_stream_push(s.p, C.int64_t(tokens), C.double(score), &f, e.ptr()))
	runtime.KeepAlive(s)
	if err == nil {
		s.pushed++
	}
	return bool(f), err
}

// PushGrouped offers the next item as a member of keep-together group
// group (0: none, as Push). A group's members are pushed one after another;
// the stream takes all of them or none. Pushing to a group that already
// ended is an error and leaves the stream unchanged.
func (s *Stream) PushGrouped(tokens int64, score float64, group uint64) (full bool, err error) {
	if err := s.need("stream"); err != nil {
		return false, err
	}
	var e errBuf
	var f C.bool
	err = e.check(C.go_stream_push_grouped(s.p, C.int64_t(tokens), C.double(score), C.uint64_t(group), &f, e.ptr()))
	runtime.KeepAlive(s)
	if err == nil {
		s.pushed++
	}
	return bool(f), err
}

// Finish decides the last batch and returns the taken indices (push order
// numbers) in the order they were taken.
func (s *Stream) Finish() ([]int, error) {
	if err := s.need("stream"); err != nil {
		return nil, err
	}
	pooled, buf := takeIndexBuf(s.pushed)
	defer indexBufPool.Put(pooled)
	var n C.size_t
	var e errBuf
	err := e.check(C.go_stream_finish(s.p, buf.ptr(), C.size_t(len(buf)), &n, e.ptr()))
	runtime.KeepAlive(s)
	if err != nil {
		return nil, err
	}
	return buf.ints(n), nil
}

// validText refuses, before anything changes, a string PushItems would
// hand the library after the items are pushed: the library would refuse it
// only then, with the items already in the list. blank: an empty or
// whitespace-only string is refused too.
func validText(name, s string, blank bool) error {
	if err := textError(name, s); err != nil {
		return err
	}
	if !utf8.ValidString(s) {
		return argError("%s is not valid UTF-8", name)
	}
	if blank && strings.TrimSpace(s) == "" {
		return argError("%s %q is empty or only whitespace; it needs a visible name", name, s)
	}
	return nil
}
