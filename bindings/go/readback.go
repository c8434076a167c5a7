package cupel

/*
#include <stdlib.h>
#include <string.h>
#include "cupel.h"

// As in cupel.go: the message is copied in the failing C call.
static cupel_status keep3(cupel_status st, char *err) {
	if (st != CUPEL_OK) {
		const char *m = cupel_last_error();
		strncpy(err, m ? m : "", 1023);
		err[1023] = 0;
	}
	return st;
}
static cupel_status go_items_set_content(cupel_items *it, size_t i, const char *c, char *err) {
	return keep3(cupel_items_set_content(it, i, c), err);
}
static cupel_status go_items_set_pinned(cupel_items *it, size_t i, bool v, char *err) {
	return keep3(cupel_items_set_pinned(it, i, v), err);
}
static cupel_status go_items_set_timestamp1(cupel_items *it, size_t i, int64_t v, char *err) {
	return keep3(cupel_items_set_timestamp(it, i, v), err);
}
static cupel_status go_items_set_priority1(cupel_items *it, size_t i, int64_t v, char *err) {
	return keep3(cupel_items_set_priority(it, i, v), err);
}
static cupel_status go_items_set_relevance_hint1(cupel_items *it, size_t i, double v, char *err) {
	return keep3(cupel_items_set_relevance_hint(it, i, v), err);
}
static cupel_status go_items_set_source1(cupel_items *it, size_t i, const char *s, char *err) {
	return keep3(cupel_items_set_source(it, i, s), err);
}
static cupel_status go_items_add_tag1(cupel_items *it, size_t i, const char *s, char *err) {
	return keep3(cupel_items_add_tag(it, i, s), err);
}
static cupel_status go_items_set_metadata1(cupel_items *it, size_t i, const char *k, const char *v, char *err) {
	return keep3(cupel_items_set_metadata(it, i, k, v), err);
}

// One item's attributes, read in one C call (the strings point into the
// list: the caller copies them before the list can change).
typedef struct {
	int64_t tokens, timestamp, priority;
	double score, hint;
	bool has_timestamp, has_priority, has_hint, pinned;
	uint64_t group;
	const char *kind, *content, *source;
	size_t kind_len, content_len, source_len, tag_count, metadata_count, variant_count;
	bool truncatable;
	int keep;
	int64_t min_tokens;
	uint64_t key;
	bool is_volatile;
} go_item;

static cupel_status go_items_get(const cupel_items *it, size_t i, go_item *o, char *err) {
	cupel_status st = cupel_items_tokens(it, i, &o->tokens);
	if (st == CUPEL_OK) st = cupel_items_score(it, i, &o->score);
	if (st == CUPEL_OK) st = cupel_items_kind(it, i, &o->kind, &o->kind_len);
	if (st == CUPEL_OK) st = cupel_items_content(it, i, &o->content, &o->content_len);
	if (st == CUPEL_OK) st = cupel_items_source(it, i, &o->source, &o->source_len);
	if (st == CUPEL_OK) st = cupel_items_timestamp(it, i, &o->has_timestamp, &o->timestamp);
	if (st == CUPEL_OK) st = cupel_items_priority(it, i, &o->has_priority, &o->priority);
	if (st == CUPEL_OK) st = cupel_items_relevance_hint(it, i, &o->has_hint, &o->hint);
	if (st == CUPEL_OK) st = cupel_items_pinned(it, i, &o->pinned);
	if (st == CUPEL_OK) st = cupel_items_group(it, i, &o->group);
	if (st == CUPEL_OK) st = cupel_items_tag_count(it, i, &o->tag_count);
	if (st == CUPEL_OK) st = cupel_items_metadata_count(it, i, &o->metadata_count);
	if (st == CUPEL_OK) st = cupel_items_variant_count(it, i, &o->variant_count);
	if (st == CUPEL_OK) st = cupel_items_truncatable(it, i, &o->truncatable, &o->keep, &o->min_tokens);
	if (st == CUPEL_OK) st = cupel_items_key(it, i, &o->key);
	if (st == CUPEL_OK) st = cupel_items_volatile(it, i, &o->is_volatile);
	return keep3(st, err);
}
static cupel_status go_items_tag(const cupel_items *it, size_t i, size_t k, const char **s, size_t *n, char *err) {
	return keep3(cupel_items_tag(it, i, k, s, n), err);
}
static cupel_status go_items_metadata_entry(const cupel_items *it, size_t i, size_t k, const char **key, size_t *key_len,
                                            const char **value, size_t *value_len, char *err) {
	return keep3(cupel_items_metadata_entry(it, i, k, key, key_len, value, value_len), err);
}
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// ---- one item's attributes ---------------------------------------------------------

// setOne checks the list and index, then runs one setter of item index.
func (it *Items) setOne(index int, call func(i C.size_t, e *errBuf) C.cupel_status) error {
	if err := firstError(it.need("items"), it.indexError("index", index)); err != nil {
		return err
	}
	var e errBuf
	err := e.check(call(C.size_t(index), &e))
	runtime.KeepAlive(it)
	return err
}

// setText is setOne for a setter taking one string argument name.
func (it *Items) setText(index int, name, text string,
	call func(i C.size_t, s *C.char, e *errBuf) C.cupel_status) error {
	if err := it.need("items"); err != nil {
		return err
	}
	m := cStrings{}
	defer m.free()
	s, err := m.arg(name, text)
	if err != nil {
		return err
	}
	return it.setOne(index, func(i C.size_t, e *errBuf) C.cupel_status { return call(i, s, e) })
}

// SetContent sets item index's content (not empty, UTF-8), replacing an
// earlier one. Deduplication compares contents byte for byte; an item whose
// content was never set is unique.
func (it *Items) SetContent(index int, content string) error {
	return it.setText(index, "content", content, func(i C.size_t, s *C.char, e *errBuf) C.cupel_status {
		return C.go_items_set_content(it.p, i, s, e.ptr())
	})
}

// SetTimestamp sets item index's timestamp: UTC milliseconds since the Unix
// epoch (negative allowed).
func (it *Items) SetTimestamp(index int, unixMillis int64) error {
	return it.setOne(index, func(i C.size_t, e *errBuf) C.cupel_status {
		return C.go_items_set_timestamp1(it.p, i, C.int64_t(unixMillis), e.ptr())
	})
}

// SetPriority sets item index's priority (higher is more important).
func (it *Items) SetPriority(index int, priority int64) error {
	return it.setOne(index, func(i C.size_t, e *errBuf) C.cupel_status {
		return C.go_items_set_priority1(it.p, i, C.int64_t(priority), e.ptr())
	})
}

// SetPinned pins item index (or unpins it): Pipeline.Run includes a pinned
// item without scoring or slicing it, and its tokens come off the budget
// first. (Slice takes pinned tokens as an argument and ignores the flag.)
func (it *Items) SetPinned(index int, pinned bool) error {
	return it.setOne(index, func(i C.size_t, e *errBuf) C.cupel_status {
		return C.go_items_set_pinned(it.p, i, C.bool(pinned), e.ptr())
	})
}

// SetRelevanceHint sets item index's future-relevance hint, read by the
// Reflexive scorer (which clamps it to [0, 1] and gives 0 for a non-finite one).
func (it *Items) SetRelevanceHint(index int, hint float64) error {
	return it.setOne(index, func(i C.size_t, e *errBuf) C.cupel_status {
		return C.go_items_set_relevance_hint1(it.p, i, C.double(hint), e.ptr())
	})
}

// SetSource sets item index's source ("Chat" when never set; "Tool", "Rag"
// or any other visible name: not empty or blank). Reported in the JSON
// report only.
func (it *Items) SetSource(index int, source string) error {
	return it.setText(index, "source", source, func(i C.size_t, s *C.char, e *errBuf) C.cupel_status {
		return C.go_items_set_source1(it.p, i, s, e.ptr())
	})
}

// AddTag adds a tag (UTF-8) to item index; tags accumulate, repeats
// included. The Tag scorer compares tags exactly, the Frequency scorer with
// ASCII case folding.
func (it *Items) AddTag(index int, tag string) error {
	return it.setText(index, "tag", tag, func(i C.size_t, s *C.char, e *errBuf) C.cupel_status {
		return C.go_items_add_tag1(it.p, i, s, e.ptr())
	})
}

// SetMetadata sets metadata key of item index to value (UTF-8 strings;
// setting a key again replaces its value). The MetadataTrust scorer parses
// "cupel:trust" as a number; MetadataKey compares values exactly.
func (it *Items) SetMetadata(index int, key, value string) error {
	if err := it.need("items"); err != nil {
		return err
	}
	m := cStrings{}
	defer m.free()
	k, err := m.arg("key", key)
	if err != nil {
		return err
	}
	v, err := m.arg("value", value)
	if err != nil {
		return err
	}
	return it.setOne(index, func(i C.size_t, e *errBuf) C.cupel_status {
		return C.go_items_set_metadata1(it.p, i, k, v, e.ptr())
	})
}

// ---- read-back ----------------------------------------------------------------------

// goText copies n bytes at p (not NUL-terminated) into a Go string.
func goText(p *C.char, n C.size_t) string {
	if p == nil || n == 0 {
		return ""
	}
	return string(unsafe.Slice((*byte)(unsafe.Pointer(p)), int(n)))
}

// Get reads item index back with every attribute, as an Item that
// PushItems would push again: Kind as the list first spelled it (kinds
// compare with ASCII case folding), Content "" when the item has none,
// Source "Chat" unless set, Timestamp, Priority and Hint nil when absent,
// Tags in the order added, Metadata nil when the item has none, Variants
// nil when it has none, Truncatable nil when it is not, Key 0 when it has
// none. An index out of range (negative included) is ErrInvalidArgument
// naming it.
func (it *Items) Get(index int) (Item, error) {
	if err := firstError(it.need("items"), it.indexError("index", index)); err != nil {
		return Item{}, err
	}
	defer runtime.KeepAlive(it)
	i := C.size_t(index)
	var e errBuf
	var o C.go_item
	if err := e.check(C.go_items_get(it.p, i, &o, e.ptr())); err != nil {
		return Item{}, err
	}
	x := Item{
		Tokens:   int64(o.tokens),
		Score:    float64(o.score),
		Kind:     goText(o.kind, o.kind_len),
		Content:  goText(o.content, o.content_len),
		Source:   goText(o.source, o.source_len),
		Pinned:   bool(o.pinned),
		Group:    uint64(o.group),
		Key:      uint64(o.key),
		Volatile: bool(o.is_volatile),
	}
	if o.has_timestamp {
		v := int64(o.timestamp)
		x.Timestamp = &v
	}
	if o.has_priority {
		v := int64(o.priority)
		x.Priority = &v
	}
	if o.has_hint {
		v := float64(o.hint)
		x.Hint = &v
	}
	for k := C.size_t(0); k < o.tag_count; k++ {
		var p *C.char
		var n C.size_t
		if err := e.check(C.go_items_tag(it.p, i, k, &p, &n, e.ptr())); err != nil {
			return Item{}, err
		}
		x.Tags = append(x.Tags, goText(p, n))
	}
	if o.metadata_count > 0 {
		x.Metadata = make(map[string]string, int(o.metadata_count))
	}
	for k := C.size_t(0); k < o.metadata_count; k++ {
		var kp, vp *C.char
		var kn, vn C.size_t
		if err := e.check(C.go_items_metadata_entry(it.p, i, k, &kp, &kn, &vp, &vn, e.ptr())); err != nil {
			return Item{}, err
		}
		x.Metadata[goText(kp, kn)] = goText(vp, vn)
	}
	if o.truncatable {
		x.Truncatable = &Truncatable{Keep: Keep(o.keep), MinTokens: int64(o.min_tokens)}
	}
	var err error
	if x.Variants, err = it.variants(i, o.variant_count); err != nil {
		return Item{}, err
	}
	return x, nil
}
