// Package cupel is the Go binding of libcupel: it decides which scored
// candidates (tokens, relevance score, kind) fit a language model's token
// budget, through the library's C ABI.
//
// Handles (Items, Budget, Slicer, Report, Stream) own native memory: call
// Close when done (idempotent; a finalizer frees a forgotten handle as a
// backstop). Items, Budget and Slicer are read-only while slicing, so many
// goroutines may slice with the same ones at once; a Report or Stream must
// be used by one goroutine at a time, and nothing may be used during or after
// its Close.
//
// Every failure is an *Error carrying the library's status and message; the
// message is read inside the same C call, so goroutines moving between OS
// threads cannot mix messages up. Compare with errors.Is(err, ErrInvalidArgument).
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
	"runtime"
	"sync"
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

// String is the status's fixed name, e.g. "CUPEL_ERROR_INVALID_ARGUMENT".
func (s Status) String() string {
	return C.GoString(C.cupel_status_str(C.int(s)))
}

// Error is a failed libcupel call: its status and the library's message,
// which names the argument and value at fault.
type Error struct {
	Status  Status
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%v: %s", e.Status, e.Message)
}

// Is makes errors.Is(err, ErrCapacity) etc. match on the status alone.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Status == e.Status
}

// Sentinels for errors.Is.
var (
	ErrNullPointer     = &Error{Status: StatusNullPointer}
	ErrInvalidArgument = &Error{Status: StatusInvalidArgument}
	ErrBufferTooSmall  = &Error{Status: StatusBufferTooSmall}
	ErrScarcity        = &Error{Status: StatusScarcity}
	ErrUnsupported     = &Error{Status: StatusUnsupported}
	ErrCapacity        = &Error{Status: StatusCapacity}
	ErrInternal        = &Error{Status: StatusInternal}
	ErrOverflow        = &Error{Status: StatusOverflow}
)

// errBuf receives the message of a failed call.
type errBuf [C.GO_ERR_LEN]C.char

func (b *errBuf) ptr() *C.char { return &b[0] }

func (b *errBuf) check(st C.cupel_status) error {
	if st == C.CUPEL_OK {
		return nil
	}
	return &Error{Status: Status(st), Message: C.GoString(b.ptr())}
}

func argError(msg string, args ...interface{}) error {
	return &Error{Status: StatusInvalidArgument, Message: fmt.Sprintf(msg, args...)}
}

// Version is the library's version string, e.g. "0.1.0".
func Version() string { return C.GoString(C.cupel_version()) }

// ABIVersion is the library's ABI version (CUPEL_ABI_VERSION).
func ABIVersion() uint32 { return uint32(C.cupel_abi_version()) }

// cStrings makes C copies of strings, one per distinct string, freed by free.
type cStrings map[string]*C.char

func (m cStrings) get(s string) *C.char {
	p, ok := m[s]
	if !ok {
		p = C.CString(s)
		m[s] = p
	}
	return p
}

func (m cStrings) free() {
	for _, p := range m {
		C.free(unsafe.Pointer(p))
	}
}

// optString is a C copy of s, or NULL for "" (the default kind).
func optString(m cStrings, s string) *C.char {
	if s == "" {
		return nil
	}
	return m.get(s)
}

// ---- Items ------------------------------------------------------------------

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

// Close frees the list. Calling it again is a no-op.
func (it *Items) Close() {
	if it != nil && it.p != nil {
		C.cupel_items_free(it.ptr())
		it.p = nil
		runtime.SetFinalizer(it, nil)
	}
}

// Push adds one item. An empty kind means the default kind, "Message".
func (it *Items) Push(tokens int64, score float64, kind string) error {
	m := cStrings{}
	defer m.free()
	var e errBuf
	err := e.check(C.go_items_push(it.p, C.int64_t(tokens), C.double(score), optString(m, kind), e.ptr()))
	runtime.KeepAlive(it)
	return err
}

// PushMany adds len(tokens) items at once, all or nothing. kinds may be nil
// (all default); otherwise it has one entry per item ("" = default).
func (it *Items) PushMany(tokens []int64, scores []float64, kinds []string) error {
	n := len(tokens)
	if len(scores) != n || (kinds != nil && len(kinds) != n) {
		return argError("PushMany: %d tokens, %d scores and %d kinds; the lengths must agree", n, len(scores), len(kinds))
	}
	if n == 0 {
		return nil
	}
	m := cStrings{}
	defer m.free()
	var kp **C.char
	if kinds != nil {
		// The pointer array in C memory (cgo need not check its elements),
		// zeroed: storing a pointer through a Go pointer type runs the write
		// barrier, which reads the slot's old value as a pointer.
		block := C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof((*C.char)(nil))))
		defer C.free(block)
		ptrs := unsafe.Slice((**C.char)(block), n)
		for i, k := range kinds {
			ptrs[i] = optString(m, k)
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
	if index < 0 {
		return argError("SetGroup: index %d is negative", index)
	}
	var e errBuf
	err := e.check(C.go_items_set_group(it.p, C.size_t(index), C.uint64_t(group), e.ptr()))
	runtime.KeepAlive(it)
	return err
}

// SetGroups sets the groups of items first .. first+len(groups)-1 in one
// call, all or nothing.
func (it *Items) SetGroups(first int, groups []uint64) error {
	if first < 0 {
		return argError("SetGroups: first %d is negative", first)
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

// Len is the number of items.
func (it *Items) Len() int {
	n := int(C.cupel_items_len(it.ptr()))
	runtime.KeepAlive(it)
	return n
}

// Clear removes every item.
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

// Close frees the budget. Calling it again is a no-op.
func (b *Budget) Close() {
	if b != nil && b.p != nil {
		C.cupel_budget_free(b.ptr())
		b.p = nil
		runtime.SetFinalizer(b, nil)
	}
}

// SetOutputReserve reserves tokens for the model's output.
func (b *Budget) SetOutputReserve(tokens int64) error {
	var e errBuf
	err := e.check(C.go_budget_set_output_reserve(b.p, C.int64_t(tokens), e.ptr()))
	runtime.KeepAlive(b)
	return err
}

// SetSafetyMargin keeps a percentage (0..100) of the budget unused.
func (b *Budget) SetSafetyMargin(percent float64) error {
	var e errBuf
	err := e.check(C.go_budget_set_safety_margin(b.p, C.double(percent), e.ptr()))
	runtime.KeepAlive(b)
	return err
}

// Reserve sets aside tokens for a kind (a reserved slot).
func (b *Budget) Reserve(kind string, tokens int64) error {
	m := cStrings{}
	defer m.free()
	var e errBuf
	err := e.check(C.go_budget_reserve(b.p, m.get(kind), C.int64_t(tokens), e.ptr()))
	runtime.KeepAlive(b)
	return err
}

// Effective is the (max, target) a slice call with pinnedTokens would use.
func (b *Budget) Effective(pinnedTokens int64) (maxTokens, targetTokens int64, err error) {
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

// Quota is one QuotaSlice entry: percentages of the target for a kind.
type Quota struct {
	Kind           string
	RequirePercent float64
	CapPercent     float64
}

// CountQuota is one count entry: at least Require and at most Cap items of
// Kind (Require <= Cap; a Cap of 0 excludes the kind).
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
// bucketSize (DefaultBucketSize is the spec's default).
func NewKnapsack(bucketSize int64) (*Slicer, error) {
	return newSlicer(func(out **C.cupel_slicer, err *C.char) C.cupel_status {
		return C.go_slicer_new_knapsack(C.int64_t(bucketSize), out, err)
	})
}

// DefaultBucketSize is the KnapsackSlice default of the spec.
const DefaultBucketSize = C.CUPEL_DEFAULT_BUCKET_SIZE

// NewQuota creates a QuotaSlice over inner (which it copies).
func NewQuota(inner *Slicer, quotas []Quota) (*Slicer, error) {
	m := cStrings{}
	defer m.free()
	q := make([]C.cupel_quota, len(quotas)+1) // +1: never a zero-length array
	for i, x := range quotas {
		q[i] = C.cupel_quota{kind: m.get(x.Kind), require_percent: C.double(x.RequirePercent), cap_percent: C.double(x.CapPercent)}
	}
	s, err := newSlicer(func(out **C.cupel_slicer, err *C.char) C.cupel_status {
		return C.go_slicer_new_quota(inner.ptr(), &q[0], C.size_t(len(quotas)), out, err)
	})
	runtime.KeepAlive(inner)
	return s, err
}

func countEntries(m cStrings, entries []CountQuota) []C.cupel_count_quota {
	e := make([]C.cupel_count_quota, len(entries)+1)
	for i, x := range entries {
		e[i] = C.cupel_count_quota{kind: m.get(x.Kind), require_count: C.uint32_t(x.Require), cap_count: C.uint32_t(x.Cap)}
	}
	return e
}

// NewCountQuota creates a CountQuotaSlice over inner (not a KnapsackSlice:
// use NewCountConstrainedKnapsack).
func NewCountQuota(inner *Slicer, entries []CountQuota, scarcity Scarcity) (*Slicer, error) {
	m := cStrings{}
	defer m.free()
	e := countEntries(m, entries)
	s, err := newSlicer(func(out **C.cupel_slicer, err *C.char) C.cupel_status {
		return C.go_slicer_new_count_quota(inner.ptr(), &e[0], C.size_t(len(entries)), C.int(scarcity), out, err)
	})
	runtime.KeepAlive(inner)
	return s, err
}

// NewCountConstrainedKnapsack creates a CountConstrainedKnapsackSlice.
func NewCountConstrainedKnapsack(bucketSize int64, entries []CountQuota, scarcity Scarcity) (*Slicer, error) {
	m := cStrings{}
	defer m.free()
	e := countEntries(m, entries)
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
	return fmt.Sprintf("Slicer(%p)", s.p)
}

// Close frees the slicer. Calling it again is a no-op.
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
	var e errBuf
	err := e.check(C.go_slicer_set_memory_limit(s.p, C.size_t(bytes), e.ptr()))
	runtime.KeepAlive(s)
	return err
}

// MemoryLimit is the slicer's memory limit in bytes.
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

// Close frees the report. Calling it again is a no-op.
func (r *Report) Close() {
	if r != nil && r.p != nil {
		C.cupel_report_free(r.ptr())
		r.p = nil
		runtime.SetFinalizer(r, nil)
	}
}

// EffectiveMaxTokens is the effective max of the last call.
func (r *Report) EffectiveMaxTokens() int64 {
	v := int64(C.cupel_report_effective_max_tokens(r.ptr()))
	runtime.KeepAlive(r)
	return v
}

// EffectiveTargetTokens is the effective target of the last call.
func (r *Report) EffectiveTargetTokens() int64 {
	v := int64(C.cupel_report_effective_target_tokens(r.ptr()))
	runtime.KeepAlive(r)
	return v
}

// SelectedTokens is the sum of the selected items' tokens.
func (r *Report) SelectedTokens() int64 {
	v := int64(C.cupel_report_selected_tokens(r.ptr()))
	runtime.KeepAlive(r)
	return v
}

// Shortfalls are the count requirements the last call could not meet.
func (r *Report) Shortfalls() ([]Shortfall, error) {
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
// in the slicer's order. report may be nil.
func Slice(s *Slicer, items *Items, budget *Budget, pinnedTokens int64, report *Report) ([]int, error) {
	pooled, buf := takeIndexBuf(items.Len())
	defer indexBufPool.Put(pooled)
	var n C.size_t
	var e errBuf
	err := e.check(C.go_slice(s.ptr(), items.ptr(), budget.ptr(), C.int64_t(pinnedTokens),
		buf.ptr(), C.size_t(len(buf)), &n, report.ptr(), e.ptr()))
	runtime.KeepAlive(s)
	runtime.KeepAlive(items)
	runtime.KeepAlive(budget)
	runtime.KeepAlive(report)
	if err != nil {
		return nil, err
	}
	return buf.ints(n), nil
}

// MarginalItems are the items selected with the full budget but not with
// the budget reduced by slackTokens (budget simulation).
func MarginalItems(s *Slicer, items *Items, budget *Budget, pinnedTokens, slackTokens int64) ([]int, error) {
	pooled, buf := takeIndexBuf(items.Len())
	defer indexBufPool.Put(pooled)
	var n C.size_t
	var e errBuf
	err := e.check(C.go_marginal_items(s.ptr(), items.ptr(), budget.ptr(), C.int64_t(pinnedTokens),
		C.int64_t(slackTokens), buf.ptr(), C.size_t(len(buf)), &n, e.ptr()))
	runtime.KeepAlive(s)
	runtime.KeepAlive(items)
	runtime.KeepAlive(budget)
	if err != nil {
		return nil, err
	}
	return buf.ints(n), nil
}

// FindMinBudget is the smallest target (up to searchCeiling) at which the
// slicer selects item targetIndex. found is false when the item is not
// selected even at searchCeiling (tokens is then 0).
func FindMinBudget(s *Slicer, items *Items, pinnedTokens int64, targetIndex int, searchCeiling int64) (tokens int64, found bool, err error) {
	if targetIndex < 0 {
		return 0, false, argError("FindMinBudget: targetIndex is %d; it must be >= 0", targetIndex)
	}
	var out C.int64_t
	var e errBuf
	err = e.check(C.go_find_min_budget(s.ptr(), items.ptr(), C.int64_t(pinnedTokens), C.size_t(targetIndex),
		C.int64_t(searchCeiling), &out, e.ptr()))
	runtime.KeepAlive(s)
	runtime.KeepAlive(items)
	if err != nil || out < 0 {
		return 0, false, err
	}
	return int64(out), true, nil
}

// LiveHandles is the number of native handles (items, budgets, slicers,
// reports, streams) created and not yet freed in this process: for leak
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
		return nil, argError("NewStream: batchSize is %d; it must be >= 0", batchSize)
	}
	var e errBuf
	s := &Stream{}
	if err := e.check(C.go_stream_new(C.int64_t(targetTokens), C.size_t(batchSize), &s.p, e.ptr())); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(s, (*Stream).Close)
	return s, nil
}

// Close frees the stream. Calling it again is a no-op.
func (s *Stream) Close() {
	if s != nil && s.p != nil {
		C.cupel_stream_free(s.ptr())
		s.p = nil
		runtime.SetFinalizer(s, nil)
	}
}

// Push offers the next item; full reports that the budget is spent.
func (s *Stream) Push(tokens int64, score float64) (full bool, err error) {
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
