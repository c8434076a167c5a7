package cupel

/*
#include <stdlib.h>
#include <string.h>
#include "cupel.h"

// As in cupel.go: the message is copied in the failing C call.
static cupel_status keep2(cupel_status st, char *err) {
	if (st != CUPEL_OK) {
		const char *m = cupel_last_error();
		strncpy(err, m ? m : "", 1023);
		err[1023] = 0;
	}
	return st;
}
static cupel_status go_items_set_contents(cupel_items *it, size_t first, size_t n, const char *const *c, char *err) {
	return keep2(cupel_items_set_contents(it, first, n, c), err);
}
// PushItems' strings arrive packed, NUL-terminated back to back in one Go
// buffer, with each one's offset in at (n entries, a Go buffer with no
// pointers in it as Go sees it): at[i] becomes string i's address in place
// (NULL for an empty one when empty_null), for the calls taking an array of
// strings. Those beat the packed calls: cupel_items_push_many skips the
// strlen and UTF-8 pass of a kind it saw just before, where the packed call
// scans and checks every string. Both read the array during the call only.
static const char *const *go_strings_at(const char *base, uintptr_t *at, size_t n, int empty_null) {
	const char **p = (const char **)at;
	for (size_t i = 0; i < n; i++) {
		const char *s = base + at[i];
		p[i] = empty_null && *s == 0 ? NULL : s;
	}
	return p;
}
static cupel_status go_items_push_many_at(cupel_items *it, size_t n, const int64_t *t, const double *s,
                                          const char *kinds, uintptr_t *at, char *err) {
	return keep2(cupel_items_push_many(it, n, t, s, go_strings_at(kinds, at, n, 0)), err);
}
static cupel_status go_items_set_contents_at(cupel_items *it, size_t first, size_t n, const char *c, uintptr_t *at,
                                             char *err) {
	return keep2(cupel_items_set_contents(it, first, n, go_strings_at(c, at, n, 1)), err);
}
static cupel_status go_items_set_timestamps(cupel_items *it, size_t first, size_t n, const int64_t *v, char *err) {
	return keep2(cupel_items_set_timestamps(it, first, n, v), err);
}
static cupel_status go_items_set_priorities(cupel_items *it, size_t first, size_t n, const int64_t *v, char *err) {
	return keep2(cupel_items_set_priorities(it, first, n, v), err);
}
static cupel_status go_items_set_pinned_many(cupel_items *it, size_t first, size_t n, const bool *v, char *err) {
	return keep2(cupel_items_set_pinned_many(it, first, n, v), err);
}
static cupel_status go_items_set_relevance_hints(cupel_items *it, size_t first, size_t n, const double *v, char *err) {
	return keep2(cupel_items_set_relevance_hints(it, first, n, v), err);
}
static cupel_status go_items_set_timestamp(cupel_items *it, size_t i, int64_t v, char *err) {
	return keep2(cupel_items_set_timestamp(it, i, v), err);
}
static cupel_status go_items_set_priority(cupel_items *it, size_t i, int64_t v, char *err) {
	return keep2(cupel_items_set_priority(it, i, v), err);
}
static cupel_status go_items_set_relevance_hint(cupel_items *it, size_t i, double v, char *err) {
	return keep2(cupel_items_set_relevance_hint(it, i, v), err);
}
static cupel_status go_items_set_source(cupel_items *it, size_t i, const char *s, char *err) {
	return keep2(cupel_items_set_source(it, i, s), err);
}
static cupel_status go_items_add_tag(cupel_items *it, size_t i, const char *s, char *err) {
	return keep2(cupel_items_add_tag(it, i, s), err);
}
static cupel_status go_items_set_metadata(cupel_items *it, size_t i, const char *k, const char *v, char *err) {
	return keep2(cupel_items_set_metadata(it, i, k, v), err);
}
// One constructor shim for every scorer: `which` picks it.
static cupel_status go_scorer_new(int which, const cupel_kind_weight *kw, const cupel_tag_weight *tw,
                                  const cupel_scorer *const *kids, const double *w, size_t n, double x,
                                  const char *key, const char *value, int curve, const cupel_decay_window *win,
                                  int64_t ref, double null_score, cupel_scorer **out, char *err) {
	cupel_status st;
	switch (which) {
	case 0: st = cupel_scorer_new_given(out); break;
	case 1: st = cupel_scorer_new_recency(out); break;
	case 2: st = cupel_scorer_new_priority(out); break;
	case 3: st = cupel_scorer_new_frequency(out); break;
	case 4: st = cupel_scorer_new_reflexive(out); break;
	case 5: st = cupel_scorer_new_kind(kw, n, out); break;
	case 6: st = cupel_scorer_new_tag(tw, n, out); break;
	case 7: st = cupel_scorer_new_composite(kids, w, n, out); break;
	case 8: st = cupel_scorer_new_scaled(kids[0], out); break;
	case 9: st = cupel_scorer_new_metadata_trust(x, out); break;
	case 10: st = cupel_scorer_new_metadata_key(key, value, x, out); break;
	default: st = cupel_scorer_new_decay(curve, x, win, n, ref, null_score, out); break;
	}
	return keep2(st, err);
}
static cupel_status go_scorer_score(const cupel_scorer *s, const cupel_items *it, double *out, size_t cap, size_t *len,
                                    char *err) {
	return keep2(cupel_scorer_score(s, it, out, cap, len), err);
}
static cupel_status go_placer_new(int u_shaped, cupel_placer **out, char *err) {
	return keep2(u_shaped ? cupel_placer_new_u_shaped(out) : cupel_placer_new_chronological(out), err);
}
static cupel_status go_placer_place(const cupel_placer *p, const cupel_items *it, const size_t *idx, const double *sc,
                                    size_t n, size_t *out, size_t cap, size_t *len, char *err) {
	return keep2(cupel_placer_place(p, it, idx, sc, n, out, cap, len), err);
}
static cupel_status go_pipeline_new(const cupel_scorer *s, const cupel_slicer *sl, const cupel_placer *p,
                                    cupel_pipeline **out, char *err) {
	return keep2(cupel_pipeline_new(s, sl, p, out), err);
}
static cupel_status go_pipeline_set(cupel_pipeline *p, int dedup, int overflow, char *err) {
	cupel_status st = cupel_pipeline_set_deduplication(p, dedup != 0);
	if (st == CUPEL_OK) st = cupel_pipeline_set_overflow(p, overflow);
	return keep2(st, err);
}
static cupel_status go_pipeline_run(const cupel_pipeline *p, const cupel_items *it, const cupel_budget *b, size_t *out,
                                    size_t cap, size_t *len, cupel_report *r, char *err) {
	return keep2(cupel_pipeline_run(p, it, b, out, cap, len, r), err);
}
static cupel_status go_items_add_variant2(cupel_items *it, size_t i, int64_t tokens, double value, const char *c,
                                          char *err) {
	return keep2(cupel_items_add_variant(it, i, tokens, value, c), err);
}
static cupel_status go_items_set_truncatable2(cupel_items *it, size_t i, int keep, int64_t min, char *err) {
	return keep2(cupel_items_set_truncatable(it, i, keep, min), err);
}
static cupel_status go_items_truncate2(cupel_items *it, size_t n, char *err) {
	return keep2(cupel_items_truncate(it, n), err);
}
static cupel_status go_report_decision(const cupel_report *r, int included, size_t i, cupel_decision *d, char *err) {
	return keep2(included ? cupel_report_included(r, i, d) : cupel_report_excluded(r, i, d), err);
}
static cupel_status go_report_json(const cupel_report *r, const cupel_items *it, char *buf, size_t cap, size_t *len,
                                   char *err) {
	return keep2(cupel_report_json(r, it, buf, cap, len), err);
}
*/
import "C"

import (
	"bytes"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
	"unicode/utf8"
	"unsafe"
)

// ---- item attributes ------------------------------------------------------------

// Item is one candidate with every attribute the pipeline reads: what
// PushItems takes and Items.Get reads back. Kind is required (DefaultKind
// for the default; an empty one is an error, as everywhere); the other zero
// values mean absent, where a pointer does not say so.
type Item struct {
	Tokens    int64
	Score     float64 // the caller's score (the given scorer, and Slice)
	Kind      string  // required: DefaultKind ("Message") for the default
	Content   string  // "" = no content (unique for deduplication)
	Timestamp *int64  // UTC milliseconds since the epoch; nil = none
	Priority  *int64  // nil = none
	Pinned    bool
	Hint      *float64 // futureRelevanceHint; nil = none
	Source    string   // "" = "Chat" (Get reads back "Chat")
	Tags      []string // in the order added, repeats kept
	Metadata  map[string]string
	Group     uint64 // keep-together group, 0 = none
	// Variants are smaller stand-ins selection may take instead of the
	// item (Items.AddVariant), variant v at [v-1]; nil = none. Content ""
	// is a variant without content.
	Variants []Variant
	// Truncatable says how a pipeline run may cut the item down to fit
	// (Items.SetTruncatable); nil = never cut.
	Truncatable *Truncatable
	// Key is the item's identity for sessions (Items.SetKey): the same
	// non-zero key names the same message, tool call or document from one
	// turn's list to the next; 0 = none (the item is then told apart by
	// its kind, tokens and content).
	Key uint64
	// Volatile marks an item expected to change every turn
	// (Items.SetVolatile): a session places it after every other item.
	Volatile bool
}

// pushScratch holds PushItems' columns between calls (see pushScratchPool).
type pushScratch struct {
	tokens, ts, prios column[int64]
	scores, hints     column[float64]
	pinned, volatile  column[bool]
	groups, keys      column[uint64]
	kinds, contents   column[byte]
	kindAt, contentAt column[C.uintptr_t] // offsets into kinds and contents
}

var pushScratchPool = sync.Pool{New: func() any { return new(pushScratch) }}

// column is a reusable slice.
type column[T any] []T

// take returns the column with length n, reallocated only when too small;
// the first n elements hold whatever they held.
func (c *column[T]) take(n int) []T {
	if cap(*c) < n {
		*c = make([]T, n)
	}
	return (*c)[:n]
}

// zeroed is take with the n elements set to T's zero value.
func (c *column[T]) zeroed(n int) []T {
	s := c.take(n)
	var zero T
	for i := range s {
		s[i] = zero
	}
	return s
}

// PushItems adds items with all their attributes: one native call per
// column (push, contents, timestamps, priorities, pinned flags, hints,
// groups, keys, volatile flags), plus one per tag, metadata entry, source,
// variant or truncation actually given. All or nothing: every value is
// checked before the first item is added (and should a later call fail all
// the same, the list is truncated back), and an error names it as
// list[i].Field ("list[3].Kind \"\" is empty ...", "list[1].Variants[0].Value
// is 0 ...").
func (it *Items) PushItems(list []Item) error {
	if err := it.need("items"); err != nil {
		return err
	}
	n := len(list)
	if n == 0 {
		return nil
	}
	first := it.Len()
	if pushed, err := it.pushItems(list, first); err != nil {
		if !pushed {
			return err // refused by checkItems: nothing was pushed
		}
		// Only a library that refuses what checkItems let through gets here
		// after the push: the pushed items go again (the push itself
		// failed with nothing added, and the truncation is then a no-op).
		var e errBuf
		C.go_items_truncate2(it.p, C.size_t(first), e.ptr())
		runtime.KeepAlive(it)
		return err
	}
	return nil
}

// pushItems is PushItems after its handle check; first is the list's
// length before it. pushed is false when checkItems refused the list
// (before any native call), true once the items went to the library.
func (it *Items) pushItems(list []Item, first int) (pushed bool, err error) {
	n := len(list)
	// The columns come from a pool: the library copies what it is given,
	// so a call leaves no garbage behind for the next to pay for in GC.
	sc := pushScratchPool.Get().(*pushScratch)
	defer pushScratchPool.Put(sc)
	tokens, scores := sc.tokens.take(n), sc.scores.take(n)
	ts, prios, hints := sc.ts.take(0), sc.prios.take(0), sc.hints.take(0)
	// Kinds and contents packed: NUL-terminated strings back to back in one
	// Go byte slice each (no C copy, no per-string allocation).
	kinds, contents := sc.kinds.take(0), sc.contents.take(0)
	kindAt, contentAt := sc.kindAt.take(n), sc.contentAt.take(n)
	var pinned, volatile []bool
	var groups, keys []uint64
	perItem, emptyKind := false, false
	for i := range list {
		x := &list[i]
		tokens[i], scores[i] = x.Tokens, x.Score
		// New items are unpinned and ungrouped: those columns are made,
		// and cross, only when some item sets them.
		if x.Pinned {
			if pinned == nil {
				pinned = sc.pinned.zeroed(n)
			}
			pinned[i] = true
		}
		if x.Group != 0 {
			if groups == nil {
				groups = sc.groups.zeroed(n)
			}
			groups[i] = x.Group
		}
		if x.Key != 0 {
			if keys == nil {
				keys = sc.keys.zeroed(n)
			}
			keys[i] = x.Key
		}
		if x.Volatile {
			if volatile == nil {
				volatile = sc.volatile.zeroed(n)
			}
			volatile[i] = true
		}
		emptyKind = emptyKind || x.Kind == ""
		kindAt[i], contentAt[i] = C.uintptr_t(len(kinds)), C.uintptr_t(len(contents))
		kinds = append(append(kinds, x.Kind...), 0)
		contents = append(append(contents, x.Content...), 0)
		if x.Timestamp != nil {
			ts = append(ts, *x.Timestamp)
		}
		if x.Priority != nil {
			prios = append(prios, *x.Priority)
		}
		if x.Hint != nil {
			hints = append(hints, *x.Hint)
		}
		perItem = perItem || x.Source != "" || len(x.Tags) > 0 || len(x.Metadata) > 0 || len(x.Variants) > 0 ||
			x.Truncatable != nil
	}
	// Kept for the next call (grown by append where they had to).
	sc.ts, sc.prios, sc.hints, sc.kinds, sc.contents = ts, prios, hints, kinds, contents
	// The checks, on the packed columns while they are in cache: one NUL
	// per string (none inside one) and valid UTF-8 contents (a NUL between
	// strings cannot hide a broken sequence) pass every plain item at once;
	// checkItems, which names what it refuses item by item, runs only when
	// these fail or an item has more to check.
	const nul = "\x00"
	if perItem || emptyKind || bytes.Count(kinds, []byte(nul)) != n || bytes.Count(contents, []byte(nul)) != n ||
		!utf8.Valid(contents) {
		if err := checkItems(list); err != nil {
			return false, err
		}
	}
	var e errBuf
	err = e.checkWith(C.go_items_push_many_at(it.ptr(), C.size_t(n), (*C.int64_t)(unsafe.Pointer(&tokens[0])),
		(*C.double)(unsafe.Pointer(&scores[0])), (*C.char)(unsafe.Pointer(&kinds[0])), &kindAt[0], e.ptr()),
		pushItemsRules)
	if err != nil {
		return true, err
	}
	// From here on nothing can fail (checkItems checked every value the
	// library checks after the push); an error would be a library bug,
	// and PushItems truncates the list back.
	err = e.checkWith(C.go_items_set_contents_at(it.ptr(), C.size_t(first), C.size_t(n),
		(*C.char)(unsafe.Pointer(&contents[0])), &contentAt[0], e.ptr()), pushItemsRules)
	if err != nil {
		return true, err
	}
	// A column present on every item goes in one call; otherwise item by item.
	if len(ts) == n {
		if err := it.SetTimestamps(first, ts); err != nil {
			return true, err
		}
	}
	if len(prios) == n {
		if err := it.SetPriorities(first, prios); err != nil {
			return true, err
		}
	}
	if len(hints) == n {
		if err := it.SetRelevanceHints(first, hints); err != nil {
			return true, err
		}
	}
	if pinned != nil {
		if err := it.SetPinnedMany(first, pinned); err != nil {
			return true, err
		}
	}
	if groups != nil {
		if err := it.SetGroups(first, groups); err != nil {
			return true, err
		}
	}
	if keys != nil {
		if err := it.SetKeys(first, keys); err != nil {
			return true, err
		}
	}
	if volatile != nil {
		if err := it.SetVolatileMany(first, volatile); err != nil {
			return true, err
		}
	}
	perItem = perItem || len(ts) != n && len(ts) > 0 || len(prios) != n && len(prios) > 0 ||
		len(hints) != n && len(hints) > 0
	if !perItem {
		runtime.KeepAlive(it)
		return true, nil
	}
	m := cStrings{}
	defer m.free()
	for k, x := range list {
		i := C.size_t(first + k)
		var st C.cupel_status
		if x.Timestamp != nil && len(ts) != n {
			st = orStatus(st, C.go_items_set_timestamp(it.p, i, C.int64_t(*x.Timestamp), e.ptr()))
		}
		if x.Priority != nil && len(prios) != n {
			st = orStatus(st, C.go_items_set_priority(it.p, i, C.int64_t(*x.Priority), e.ptr()))
		}
		if x.Hint != nil && len(hints) != n {
			st = orStatus(st, C.go_items_set_relevance_hint(it.p, i, C.double(*x.Hint), e.ptr()))
		}
		if x.Source != "" {
			st = orStatus(st, C.go_items_set_source(it.p, i, m.get(x.Source), e.ptr()))
		}
		for _, t := range x.Tags {
			st = orStatus(st, C.go_items_add_tag(it.p, i, m.get(t), e.ptr()))
		}
		keys := make([]string, 0, len(x.Metadata))
		for key := range x.Metadata {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		for _, key := range keys {
			st = orStatus(st, C.go_items_set_metadata(it.p, i, m.get(key), m.get(x.Metadata[key]), e.ptr()))
		}
		for _, v := range x.Variants {
			var c *C.char
			if v.Content != "" {
				c = m.get(v.Content)
			}
			st = orStatus(st, C.go_items_add_variant2(it.p, i, C.int64_t(v.Tokens), C.double(v.Value), c, e.ptr()))
		}
		if t := x.Truncatable; t != nil {
			st = orStatus(st, C.go_items_set_truncatable2(it.p, i, C.int(t.Keep), C.int64_t(t.MinTokens), e.ptr()))
		}
		if err := e.check(st); err != nil {
			return true, err
		}
	}
	runtime.KeepAlive(it)
	return true, nil
}

// checkItems checks, before anything is pushed, what the library would
// refuse only after the push (PushItems is several native calls): a kind
// left empty (the packed kinds read "" as the default), text with a NUL
// byte or not UTF-8, a blank source. Scores and the kinds' other rules are
// the push's own, which adds nothing when it fails.
func checkItems(list []Item) error {
	for i := range list {
		if err := checkItem(&list[i], i); err != nil {
			return err
		}
	}
	return nil
}

// checkItem is checkItems' check of list[i], naming what it refuses.
func checkItem(x *Item, i int) error {
	field := func(name string) string { return fmt.Sprintf("list[%d].%s", i, name) }
	if x.Kind == "" {
		return argError("%s \"\" is empty; use DefaultKind for the default kind", field("Kind"))
	}
	if err := textError(field("Kind"), x.Kind); err != nil {
		return err
	}
	if err := validText(field("Content"), x.Content, false); err != nil {
		return err
	}
	if x.Source != "" {
		if err := validText(field("Source"), x.Source, true); err != nil {
			return err
		}
	}
	for k, t := range x.Tags {
		if err := validText(fmt.Sprintf("list[%d].Tags[%d]", i, k), t, false); err != nil {
			return err
		}
	}
	for key, v := range x.Metadata {
		if err := validText(fmt.Sprintf("list[%d].Metadata key %q", i, key), key, false); err != nil {
			return err
		}
		if err := validText(fmt.Sprintf("list[%d].Metadata[%q]", i, key), v, false); err != nil {
			return err
		}
	}
	if err := checkShrink(x, i); err != nil {
		return err
	}
	return nil
}

func orStatus(a, b C.cupel_status) C.cupel_status {
	if a != C.CUPEL_OK {
		return a
	}
	return b
}

// SetContents sets the contents of items first .. first+len(contents)-1 in
// one call, all or nothing; "" leaves an item's content as it is. The
// strings are copied into one C buffer (one allocation, not one per string).
func (it *Items) SetContents(first int, contents []string) error {
	if err := firstError(it.need("items"), it.indexError("first", first)); err != nil {
		return err
	}
	n := len(contents)
	if n == 0 {
		return nil
	}
	for i, c := range contents {
		if err := textErrorAt("contents[%d]", i, c); err != nil {
			return err
		}
	}
	size := 0
	for _, c := range contents {
		size += len(c) + 1
	}
	ptrSize := int(unsafe.Sizeof((*C.char)(nil)))
	// Zeroed: storing a pointer through a Go pointer type runs the write
	// barrier, which reads the slot's old value as a pointer.
	block := C.calloc(C.size_t(size+n*ptrSize), 1)
	defer C.free(block)
	ptrs := unsafe.Slice((**C.char)(block), n)
	text := unsafe.Slice((*byte)(unsafe.Add(block, n*ptrSize)), size)
	at := 0
	for i, c := range contents {
		if c == "" {
			ptrs[i] = nil
			continue
		}
		copy(text[at:], c)
		text[at+len(c)] = 0
		ptrs[i] = (*C.char)(unsafe.Pointer(&text[at]))
		at += len(c) + 1
	}
	var e errBuf
	err := e.check(C.go_items_set_contents(it.ptr(), C.size_t(first), C.size_t(n), &ptrs[0], e.ptr()))
	runtime.KeepAlive(it)
	return err
}

// SetTimestamps sets UTC-millisecond timestamps of items first.. in one call.
func (it *Items) SetTimestamps(first int, unixMillis []int64) error {
	if err := firstError(it.need("items"), it.indexError("first", first)); err != nil {
		return err
	}
	if len(unixMillis) == 0 {
		return nil
	}
	var e errBuf
	err := e.check(C.go_items_set_timestamps(it.ptr(), C.size_t(first), C.size_t(len(unixMillis)),
		(*C.int64_t)(unsafe.Pointer(&unixMillis[0])), e.ptr()))
	runtime.KeepAlive(it)
	return err
}

// SetPriorities sets the priorities of items first.. in one call.
func (it *Items) SetPriorities(first int, priorities []int64) error {
	if err := firstError(it.need("items"), it.indexError("first", first)); err != nil {
		return err
	}
	if len(priorities) == 0 {
		return nil
	}
	var e errBuf
	err := e.check(C.go_items_set_priorities(it.ptr(), C.size_t(first), C.size_t(len(priorities)),
		(*C.int64_t)(unsafe.Pointer(&priorities[0])), e.ptr()))
	runtime.KeepAlive(it)
	return err
}

// SetPinnedMany sets the pinned flags of items first.. in one call.
func (it *Items) SetPinnedMany(first int, pinned []bool) error {
	if err := firstError(it.need("items"), it.indexError("first", first)); err != nil {
		return err
	}
	if len(pinned) == 0 {
		return nil
	}
	var e errBuf
	err := e.check(C.go_items_set_pinned_many(it.ptr(), C.size_t(first), C.size_t(len(pinned)),
		(*C.bool)(unsafe.Pointer(&pinned[0])), e.ptr()))
	runtime.KeepAlive(it)
	return err
}

// SetRelevanceHints sets the futureRelevanceHints of items first.. in one call.
func (it *Items) SetRelevanceHints(first int, hints []float64) error {
	if err := firstError(it.need("items"), it.indexError("first", first)); err != nil {
		return err
	}
	if len(hints) == 0 {
		return nil
	}
	var e errBuf
	err := e.check(C.go_items_set_relevance_hints(it.ptr(), C.size_t(first), C.size_t(len(hints)),
		(*C.double)(unsafe.Pointer(&hints[0])), e.ptr()))
	runtime.KeepAlive(it)
	return err
}

// ---- scorers ------------------------------------------------------------------

// Scorer is a configured scorer (the Score stage). Composite and scaled
// scorers copy their children: those may be closed right after.
type Scorer struct{ p *C.cupel_scorer }

type scorerArgs struct {
	which      int
	kw         []C.cupel_kind_weight
	tw         []C.cupel_tag_weight
	kids       []*C.cupel_scorer
	weights    []float64
	x          float64
	key, value string
	curve      DecayCurve
	windows    []C.cupel_decay_window
	ref        int64
	nullScore  float64
}

func newScorer(a scorerArgs, extra []rule, keep ...interface{}) (*Scorer, error) {
	m := cStrings{}
	defer m.free()
	n := 0
	var kw *C.cupel_kind_weight
	var tw *C.cupel_tag_weight
	var kids **C.cupel_scorer
	var w *C.double
	var win *C.cupel_decay_window
	switch {
	case a.kw != nil:
		// Non-NULL even when empty (no kind weighted: every item scores 0);
		// NULL would mean the spec's defaults.
		if cap(a.kw) == 0 {
			a.kw = make([]C.cupel_kind_weight, 0, 1)
		}
		n, kw = len(a.kw), &a.kw[:1][0]
	case len(a.tw) > 0:
		n, tw = len(a.tw), &a.tw[0]
	case len(a.windows) > 0:
		n, win = len(a.windows), &a.windows[0]
	}
	var kidsC []*C.cupel_scorer
	if len(a.kids) > 0 {
		// A Go slice holding C pointers only (no Go pointers): cgo lets
		// it be passed as it is.
		kidsC = a.kids
		kids = &kidsC[0]
		if a.which == 7 {
			n = len(a.kids)
			w = (*C.double)(unsafe.Pointer(&a.weights[0]))
		}
	}
	var key, value *C.char
	if a.which == 10 {
		var err error
		if key, err = m.arg("key", a.key); err != nil {
			return nil, err
		}
		if value, err = m.arg("value", a.value); err != nil {
			return nil, err
		}
	}
	var e errBuf
	s := &Scorer{}
	err := e.checkWith(C.go_scorer_new(C.int(a.which), kw, tw, (**C.cupel_scorer)(unsafe.Pointer(kids)), w, C.size_t(n),
		C.double(a.x), key, value, C.int(a.curve), win, C.int64_t(a.ref), C.double(a.nullScore), &s.p, e.ptr()), extra)
	runtime.KeepAlive(keep)
	if err != nil {
		return nil, err
	}
	runtime.SetFinalizer(s, (*Scorer).Close)
	return s, nil
}

// NewGivenScorer scores each item with the score pushed with it.
func NewGivenScorer() (*Scorer, error) { return newScorer(scorerArgs{which: 0}, nil) }

// NewRecencyScorer ranks items by timestamp.
func NewRecencyScorer() (*Scorer, error) { return newScorer(scorerArgs{which: 1}, nil) }

// NewPriorityScorer ranks items by priority.
func NewPriorityScorer() (*Scorer, error) { return newScorer(scorerArgs{which: 2}, nil) }

// NewFrequencyScorer scores items by how many others share their tags.
func NewFrequencyScorer() (*Scorer, error) { return newScorer(scorerArgs{which: 3}, nil) }

// NewReflexiveScorer scores items by their futureRelevanceHint.
func NewReflexiveScorer() (*Scorer, error) { return newScorer(scorerArgs{which: 4}, nil) }

// NewKindScorer scores items by the weight of their kind (keys: kinds, not
// empty or blank, compared with ASCII case folding; values: finite, >= 0);
// nil weights: the spec's defaults. An error names the entry by its key:
// weights["Message"] is NaN.
func NewKindScorer(weights map[string]float64) (*Scorer, error) {
	m := cStrings{}
	defer m.free()
	a := scorerArgs{which: 5}
	for _, k := range sortedKeys(weights) {
		p, err := m.arg(fmt.Sprintf("weights key %q", k), k)
		if err != nil {
			return nil, err
		}
		a.kw = append(a.kw, C.cupel_kind_weight{kind: p, weight: C.double(weights[k])})
	}
	if weights != nil && a.kw == nil {
		// An empty, non-nil map: no kind has a weight (every item scores 0).
		a.kw = []C.cupel_kind_weight{}
	}
	return newScorer(a, nil)
}

// NewTagScorer scores items by the weights of their tags (values: finite,
// >= 0). An error names the entry by its key: weights["auth"] is NaN.
func NewTagScorer(weights map[string]float64) (*Scorer, error) {
	m := cStrings{}
	defer m.free()
	a := scorerArgs{which: 6}
	for _, k := range sortedKeys(weights) {
		p, err := m.arg(fmt.Sprintf("weights key %q", k), k)
		if err != nil {
			return nil, err
		}
		a.tw = append(a.tw, C.cupel_tag_weight{tag: p, weight: C.double(weights[k])})
	}
	return newScorer(a, nil)
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// WeightedScorer is one part of a composite scorer.
type WeightedScorer struct {
	Scorer *Scorer
	Weight float64
}

// NewCompositeScorer is the weighted mean of its parts (at least one; each
// Scorer open, each Weight finite and > 0; relative: normalised to sum 1).
// It copies the parts' scorers: they may be closed right after. An error
// names the part: parts[2].Weight is NaN, parts[2].Scorer is nil.
func NewCompositeScorer(parts []WeightedScorer) (*Scorer, error) {
	if len(parts) == 0 {
		return nil, argError("parts is empty; a composite needs at least one part")
	}
	a := scorerArgs{which: 7}
	for i, p := range parts {
		if err := p.Scorer.need(fmt.Sprintf("parts[%d].Scorer", i)); err != nil {
			return nil, err
		}
		a.kids = append(a.kids, p.Scorer.p)
		a.weights = append(a.weights, p.Weight)
	}
	return newScorer(a, nil, parts)
}

// NewScaledScorer rescales inner's scores to [0, 1] (min-max over the
// list). It copies inner: inner may be closed right after.
func NewScaledScorer(inner *Scorer) (*Scorer, error) {
	if err := inner.need("inner"); err != nil {
		return nil, err
	}
	return newScorer(scorerArgs{which: 8, kids: []*C.cupel_scorer{inner.p}}, nil, inner)
}

// NewMetadataTrustScorer reads the "cupel:trust" metadata value.
func NewMetadataTrustScorer(defaultScore float64) (*Scorer, error) {
	return newScorer(scorerArgs{which: 9, x: defaultScore}, nil)
}

// NewMetadataKeyScorer boosts items whose metadata key has value (compared
// exactly) by boost (finite, > 0).
func NewMetadataKeyScorer(key, value string, boost float64) (*Scorer, error) {
	return newScorer(scorerArgs{which: 10, key: key, value: value, x: boost}, nil)
}

// DecayCurve selects the DecayScorer's curve.
type DecayCurve int

// The decay curves.
const (
	DecayCurveExponential DecayCurve = C.CUPEL_DECAY_EXPONENTIAL
	DecayCurveStep        DecayCurve = C.CUPEL_DECAY_STEP
	DecayCurveWindow      DecayCurve = C.CUPEL_DECAY_WINDOW
)

// DecayWindow is one step of the step curve.
type DecayWindow struct{ MaxAgeSecs, Score float64 }

// NewDecayScorer scores by the age of each item's timestamp at referenceUnixMillis.
func NewDecayScorer(curve DecayCurve, durationSecs float64, windows []DecayWindow, referenceUnixMillis int64,
	nullTimestampScore float64) (*Scorer, error) {
	a := scorerArgs{which: 11, curve: curve, x: durationSecs, ref: referenceUnixMillis, nullScore: nullTimestampScore}
	for _, w := range windows {
		a.windows = append(a.windows, C.cupel_decay_window{max_age_secs: C.double(w.MaxAgeSecs), score: C.double(w.Score)})
	}
	return newScorer(a, nil)
}

// Score scores every item of items, by index.
func (s *Scorer) Score(items *Items) ([]float64, error) {
	if err := firstError(s.need("scorer"), items.need("items")); err != nil {
		return nil, err
	}
	n := items.Len()
	out := make([]float64, n+1)
	var got C.size_t
	var e errBuf
	err := e.check(C.go_scorer_score(s.ptr(), items.ptr(), (*C.double)(unsafe.Pointer(&out[0])), C.size_t(n), &got, e.ptr()))
	runtime.KeepAlive(s)
	runtime.KeepAlive(items)
	if err != nil {
		return nil, err
	}
	return out[:got], nil
}

func (s *Scorer) ptr() *C.cupel_scorer {
	if s == nil {
		return nil
	}
	return s.p
}

// Close frees the scorer. Calling it again is a no-op; passing a closed
// scorer to a call fails with ErrClosed.
func (s *Scorer) Close() {
	if s != nil && s.p != nil {
		C.cupel_scorer_free(s.p)
		s.p = nil
		runtime.SetFinalizer(s, nil)
	}
}

// ---- placers and the pipeline ---------------------------------------------------

// Placer orders the final context.
type Placer struct{ p *C.cupel_placer }

func newPlacer(uShaped int) (*Placer, error) {
	var e errBuf
	p := &Placer{}
	if err := e.check(C.go_placer_new(C.int(uShaped), &p.p, e.ptr())); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(p, (*Placer).Close)
	return p, nil
}

// NewChronologicalPlacer orders items oldest first (untimed ones last).
func NewChronologicalPlacer() (*Placer, error) { return newPlacer(0) }

// NewUShapedPlacer puts the best-scored items at both edges.
func NewUShapedPlacer() (*Placer, error) { return newPlacer(1) }

// Place is the Place stage on its own: the item indices, with their scores
// (one each, finite), in placed order.
func (p *Placer) Place(items *Items, indices []int, scores []float64) ([]int, error) {
	if err := firstError(p.need("placer"), items.need("items")); err != nil {
		return nil, err
	}
	if len(indices) != len(scores) {
		return nil, argError("indices and scores have lengths %d and %d; one score per index", len(indices), len(scores))
	}
	n := len(indices)
	idx := make([]C.size_t, n+1) // +1: never a zero-length array to take the address of
	for i, v := range indices {
		if v < 0 {
			return nil, argError("indices[%d] is %d: out of range, the list holds %d items", i, v, items.Len())
		}
		idx[i] = C.size_t(v)
	}
	sc := make([]C.double, n+1)
	for i, v := range scores {
		sc[i] = C.double(v)
	}
	pooled, buf := takeIndexBuf(n + 1)
	defer indexBufPool.Put(pooled)
	var got C.size_t
	var e errBuf
	err := e.check(C.go_placer_place(p.p, items.p, &idx[0], &sc[0], C.size_t(n), buf.ptr(),
		C.size_t(len(buf)), &got, e.ptr()))
	runtime.KeepAlive(p)
	runtime.KeepAlive(items)
	if err != nil {
		return nil, err
	}
	return buf.ints(got), nil
}

func (p *Placer) ptr() *C.cupel_placer {
	if p == nil {
		return nil
	}
	return p.p
}

// Close frees the placer. Calling it again is a no-op; any other use of a
// closed placer fails with ErrClosed.
func (p *Placer) Close() {
	if p != nil && p.p != nil {
		C.cupel_placer_free(p.p)
		p.p = nil
		runtime.SetFinalizer(p, nil)
	}
}

// Overflow is what the pipeline does when the selection exceeds the target.
type Overflow int

// The overflow strategies.
const (
	OverflowThrow    Overflow = C.CUPEL_OVERFLOW_THROW
	OverflowTruncate Overflow = C.CUPEL_OVERFLOW_TRUNCATE
	OverflowProceed  Overflow = C.CUPEL_OVERFLOW_PROCEED
)

// Pipeline runs all six stages; it keeps copies of its scorer, slicer and placer.
type Pipeline struct {
	p     *C.cupel_pipeline
	trace *traceState // SetTrace's callback, nil when untraced
	tok   *Tokenizer  // SetTokenizer's, for Select (the library keeps its own reference)
}

// PipelineOptions configures a pipeline. Slicer is required; Scorer nil:
// the pushed scores (the given scorer); Placer nil: the slicer's order;
// Tokenizer nil: none (Pipeline.SetTokenizer), needed to cut truncatable
// items. A closed one is an error (ErrClosed), never taken for nil.
// Deduplication is on unless NoDeduplication.
type PipelineOptions struct {
	Scorer          *Scorer
	Slicer          *Slicer
	Placer          *Placer
	Tokenizer       *Tokenizer
	NoDeduplication bool
	Overflow        Overflow
}

// NewPipeline creates a pipeline from opts (it copies the scorer, slicer
// and placer, and keeps its own reference to the tokenizer: they may be
// closed right after).
func NewPipeline(opts PipelineOptions) (*Pipeline, error) {
	o := opts
	if err := firstError(o.Scorer.optional("opts.Scorer"), o.Slicer.need("opts.Slicer"),
		o.Placer.optional("opts.Placer"), o.Tokenizer.optional("opts.Tokenizer")); err != nil {
		return nil, err
	}
	var e errBuf
	p := &Pipeline{}
	err := e.check(C.go_pipeline_new(o.Scorer.ptr(), o.Slicer.p, o.Placer.ptr(), &p.p, e.ptr()))
	runtime.KeepAlive(o.Scorer)
	runtime.KeepAlive(o.Slicer)
	runtime.KeepAlive(o.Placer)
	if err != nil {
		return nil, err
	}
	runtime.SetFinalizer(p, (*Pipeline).Close)
	dedup := 1
	if o.NoDeduplication {
		dedup = 0
	}
	if err := e.check(C.go_pipeline_set(p.p, C.int(dedup), C.int(o.Overflow), e.ptr())); err != nil {
		p.Close()
		return nil, err
	}
	if o.Tokenizer != nil {
		if err := p.SetTokenizer(o.Tokenizer); err != nil {
			p.Close()
			return nil, err
		}
	}
	return p, nil
}

// Run runs the pipeline: the placed item indices, and every decision in
// report (may be nil).
func (p *Pipeline) Run(items *Items, budget *Budget, report *Report) ([]int, error) {
	if err := firstError(p.need("pipeline"), items.need("items"), budget.need("budget"),
		report.optional("report")); err != nil {
		return nil, err
	}
	pooled, buf := takeIndexBuf(items.Len())
	defer indexBufPool.Put(pooled)
	var n C.size_t
	if p.trace != nil {
		if err := runPipeline(p, items, budget, buf, &n, report); err != nil {
			return nil, err
		}
		return buf.ints(n), nil
	}
	var e errBuf
	err := e.check(C.go_pipeline_run(p.p, items.p, budget.p, buf.ptr(), C.size_t(len(buf)), &n,
		report.ptr(), e.ptr()))
	runtime.KeepAlive(p)
	runtime.KeepAlive(items)
	runtime.KeepAlive(budget)
	runtime.KeepAlive(report)
	if err != nil {
		return nil, err
	}
	return buf.ints(n), nil
}

func (p *Pipeline) ptr() *C.cupel_pipeline {
	if p == nil {
		return nil
	}
	return p.p
}

// Close frees the pipeline and lets go of its trace callback (SetTrace;
// sessions made from it keep theirs). Calling it again is a no-op; any
// other method of a closed pipeline fails with ErrClosed.
func (p *Pipeline) Close() {
	if p != nil && p.p != nil {
		C.cupel_pipeline_free(p.p)
		p.p = nil
		p.trace.release()
		p.trace, p.tok = nil, nil
		runtime.SetFinalizer(p, nil)
	}
}

// ---- the report's decisions ----------------------------------------------------

// Reason is why an item was included or excluded.
type Reason int

// The reasons; the numbers are the C ABI's and never change.
const (
	ReasonScored                Reason = C.CUPEL_REASON_SCORED
	ReasonPinned                Reason = C.CUPEL_REASON_PINNED
	ReasonZeroToken             Reason = C.CUPEL_REASON_ZERO_TOKEN
	ReasonVariant               Reason = C.CUPEL_REASON_VARIANT   // included as one of its variants (Decision.Variant)
	ReasonTruncated             Reason = C.CUPEL_REASON_TRUNCATED // included cut down (Decision.HeadEnd, TailStart)
	ReasonBudgetExceeded        Reason = C.CUPEL_REASON_BUDGET_EXCEEDED
	ReasonScoredTooLow          Reason = C.CUPEL_REASON_SCORED_TOO_LOW
	ReasonDeduplicated          Reason = C.CUPEL_REASON_DEDUPLICATED
	ReasonQuotaCapExceeded      Reason = C.CUPEL_REASON_QUOTA_CAP_EXCEEDED
	ReasonQuotaRequireDisplaced Reason = C.CUPEL_REASON_QUOTA_REQUIRE_DISPLACED
	ReasonNegativeTokens        Reason = C.CUPEL_REASON_NEGATIVE_TOKENS
	ReasonPinnedOverride        Reason = C.CUPEL_REASON_PINNED_OVERRIDE
	ReasonFiltered              Reason = C.CUPEL_REASON_FILTERED
	ReasonCountCapExceeded      Reason = C.CUPEL_REASON_COUNT_CAP_EXCEEDED
	// ReasonDeferred: excluded by a session (Session.Run): the pipeline
	// takes it, but the session keeps the prompt's cached prefix instead
	// (an item it left out before stays out until the next compaction,
	// and a compaction leaves its slack free).
	ReasonDeferred Reason = C.CUPEL_REASON_DEFERRED
)

// String is the specification's name of the reason, as the library's
// cupel_reason_str and the JSON report spell it: "BudgetExceeded", ...;
// "Unknown" for a number that is no reason.
func (r Reason) String() string {
	if r < math.MinInt32 || r > math.MaxInt32 {
		return C.GoString(C.cupel_reason_str(-1)) // no reason: "Unknown"
	}
	return C.GoString(C.cupel_reason_str(C.int(r)))
}

// Decision is one item's fate.
type Decision struct {
	Index           int // push order
	Score           float64
	Reason          Reason
	ItemTokens      int64
	AvailableTokens int64 // BudgetExceeded: the tokens left
	Related         int   // Deduplicated: the item kept; PinnedOverride: the pinned item; -1 when none
	Group           uint64
	GroupTokens     int64 // the tokens the decision was made on

	// What an included item adds to the context (Report.Included only;
	// zero in Excluded): Variant is the option chosen, 0 for the item as
	// pushed (also when it was cut) and v for its variant v
	// (ReasonVariant); AddedTokens are the tokens it adds (the variant's,
	// the cut's or ItemTokens; Report.SelectedTokens sums them). HeadEnd
	// and TailStart are the kept byte ranges of the item's own content,
	// content[:HeadEnd] + content[TailStart:] (byte offsets, Go string
	// indices): both len(content) when it was not cut, both 0 when it has
	// no content. A truncatable item included by the fill after the
	// slicer has ReasonTruncated (its offsets cover all of the content
	// when its whole text fits what was left). Text gives the text to
	// send.
	Variant            int
	AddedTokens        int64
	HeadEnd, TailStart int
}

func (r *Report) decisions(included bool) ([]Decision, error) {
	if err := r.need("report"); err != nil {
		return nil, err
	}
	var n C.size_t
	inc := 0
	if included {
		n, inc = C.cupel_report_included_count(r.ptr()), 1
	} else {
		n = C.cupel_report_excluded_count(r.ptr())
	}
	out := make([]Decision, 0, int(n))
	var d C.cupel_decision
	var e errBuf
	for i := C.size_t(0); i < n; i++ {
		if err := e.check(C.go_report_decision(r.ptr(), C.int(inc), i, &d, e.ptr())); err != nil {
			return nil, err
		}
		related := -1
		if d.related_index != C.size_t(^uint(0)) {
			related = int(d.related_index)
		}
		out = append(out, Decision{
			Index: int(d.item_index), Score: float64(d.score), Reason: Reason(d.reason),
			ItemTokens: int64(d.item_tokens), AvailableTokens: int64(d.available_tokens), Related: related,
			Group: uint64(d.group), GroupTokens: int64(d.group_tokens),
		})
		if included {
			if err := r.chosen(i, &out[len(out)-1]); err != nil {
				return nil, err
			}
		}
	}
	runtime.KeepAlive(r)
	return out, nil
}

// Included are the included items in placed order, each with the option
// chosen, the tokens it adds and its cut (Decision.Variant, AddedTokens,
// HeadEnd, TailStart; Decision.Text is the text to send).
func (r *Report) Included() ([]Decision, error) { return r.decisions(true) }

// Excluded are the excluded items, score descending.
func (r *Report) Excluded() ([]Decision, error) { return r.decisions(false) }

// TotalCandidates is the number of items the run decided on.
func (r *Report) TotalCandidates() int64 {
	n := int64(C.cupel_report_total_candidates(r.ptr()))
	runtime.KeepAlive(r)
	return n
}

// TotalTokensConsidered sums every decided item's tokens.
func (r *Report) TotalTokensConsidered() int64 {
	n := int64(C.cupel_report_total_tokens_considered(r.ptr()))
	runtime.KeepAlive(r)
	return n
}

// TokensOverBudget is how many tokens the placed items exceed the target by
// under OverflowProceed (the spec's OverflowEvent); 0 otherwise.
func (r *Report) TokensOverBudget() int64 {
	n := int64(C.cupel_report_tokens_over_budget(r.ptr()))
	runtime.KeepAlive(r)
	return n
}

// JSON is the specification's SelectionReport JSON (items: the run's list).
func (r *Report) JSON(items *Items) (string, error) {
	if err := firstError(r.need("report"), items.need("items")); err != nil {
		return "", err
	}
	var n C.size_t
	var e errBuf
	st := C.go_report_json(r.ptr(), items.ptr(), nil, 0, &n, e.ptr())
	if st != C.CUPEL_ERROR_BUFFER_TOO_SMALL {
		if err := e.check(st); err != nil {
			return "", err
		}
	}
	buf := C.malloc(n + 1)
	defer C.free(buf)
	err := e.check(C.go_report_json(r.ptr(), items.ptr(), (*C.char)(buf), n+1, &n, e.ptr()))
	runtime.KeepAlive(r)
	runtime.KeepAlive(items)
	if err != nil {
		return "", err
	}
	return C.GoStringN((*C.char)(buf), C.int(n)), nil
}
