package cupel

/*
#include <stdlib.h>
#include <string.h>
#include "cupel.h"

// As in cupel.go: the message is copied in the failing C call.
static cupel_status keep5(cupel_status st, char *err) {
	if (st != CUPEL_OK) {
		const char *m = cupel_last_error();
		strncpy(err, m ? m : "", 1023);
		err[1023] = 0;
	}
	return st;
}
static cupel_status go_items_truncate(cupel_items *it, size_t n, char *err) {
	return keep5(cupel_items_truncate(it, n), err);
}
static cupel_status go_items_add_variant(cupel_items *it, size_t i, int64_t tokens, double value, const char *content,
                                         char *err) {
	return keep5(cupel_items_add_variant(it, i, tokens, value, content), err);
}
static cupel_status go_items_set_truncatable(cupel_items *it, size_t i, int keep, int64_t min, char *err) {
	return keep5(cupel_items_set_truncatable(it, i, keep, min), err);
}
static cupel_status go_items_clear_truncatable(cupel_items *it, size_t i, char *err) {
	return keep5(cupel_items_clear_truncatable(it, i), err);
}
static cupel_status go_items_variant_count(const cupel_items *it, size_t i, size_t *n, char *err) {
	return keep5(cupel_items_variant_count(it, i, n), err);
}
static cupel_status go_items_variant(const cupel_items *it, size_t i, size_t v, int64_t *tokens, double *value,
                                     const char **content, size_t *len, char *err) {
	return keep5(cupel_items_variant(it, i, v, tokens, value, content, len), err);
}
static cupel_status go_items_truncatable(const cupel_items *it, size_t i, bool *is, int *keep, int64_t *min,
                                         char *err) {
	return keep5(cupel_items_truncatable(it, i, is, keep, min), err);
}
static cupel_status go_pipeline_set_tokenizer(cupel_pipeline *p, const cupel_tokenizer *t, char *err) {
	return keep5(cupel_pipeline_set_tokenizer(p, t), err);
}
static cupel_status go_items_content1(const cupel_items *it, size_t i, const char **c, size_t *len, char *err) {
	return keep5(cupel_items_content(it, i, c, len), err);
}
// What included entry i chose: its variant and tokens, and its cut.
static cupel_status go_report_chosen(const cupel_report *r, size_t i, size_t *variant, int64_t *tokens,
                                     size_t *head_end, size_t *tail_start, char *err) {
	cupel_status st = cupel_report_included_variant(r, i, variant, tokens);
	if (st == CUPEL_OK) st = cupel_report_included_cut(r, i, head_end, tail_start);
	return keep5(st, err);
}
*/
import "C"

import (
	"fmt"
	"math"
	"runtime"
	"unicode/utf8"
)

// ---- items that shrink instead of vanish ------------------------------------------

// MaxVariants is the most variants an item may have.
const MaxVariants = 255

// Variant is a smaller stand-in for an item (a summary, a digest, a
// placeholder such as "[output cleared]") that selection may take instead
// of the item: Items.AddVariant adds one, Item.Variants lists an item's
// variants (PushItems adds them, Items.Get and Items.Variants read them
// back). Variants are numbered 1, 2, ... in the order added; variant 0 is
// the item as pushed, and selection takes at most one option of an item.
type Variant struct {
	// Tokens (>= 0, may be more than the item's) is what the variant adds
	// to the context.
	Tokens int64
	// Value in (0, 1] is the share of the item's score the variant keeps:
	// its score is the item's times Value.
	Value float64
	// Content is the variant's text, what the host sends in the item's
	// place; "" = none (in Item.Variants and read-back; AddVariant needs
	// one).
	Content string
}

// Truncatable says how a pipeline run may cut an item down to fit
// (Items.SetTruncatable; Item.Truncatable, nil when the item is not).
type Truncatable struct {
	// Keep is what a cut keeps: KeepHead, KeepTail or KeepBothEnds.
	Keep Keep
	// MinTokens (>= 0) is the least a cut may keep: a cut that would keep
	// fewer tokens is not made.
	MinTokens int64
}

// variantRules: a Go caller has no NULL to pass for "no content".
var variantRules = rules(`; pass NULL for none`, `; push a variant without content with Item.Variants`)

// AddVariant adds a variant to item index: tokens (>= 0; may be more than
// the item's) is what it adds to the context, value in (0, 1] the share of
// the item's score it keeps, content (not empty, UTF-8) its text. It is
// variant number len(Variants(index)) after the call. An item has at most
// MaxVariants variants; a variant without content is pushed with
// Item.Variants (Content ""). Selection takes at most one option of an
// item: KnapsackSlice exactly (at its bucket granularity), GreedySlice
// greedily; a variant of an item pushed with 0 tokens, or of a pinned one,
// is never chosen; a grouped item's variant v gives its group an option in
// which every member with a variant v takes it. A run reports the choice
// in Decision.Variant (reason ReasonVariant). On error the list is
// unchanged.
func (it *Items) AddVariant(index int, tokens int64, value float64, content string) error {
	if err := it.need("items"); err != nil {
		return err
	}
	m := cStrings{}
	defer m.free()
	c, err := m.arg("content", content)
	if err != nil {
		return err
	}
	if err := it.indexError("index", index); err != nil {
		return err
	}
	var e errBuf
	err = e.checkWith(C.go_items_add_variant(it.p, C.size_t(index), C.int64_t(tokens), C.double(value), c, e.ptr()),
		variantRules)
	runtime.KeepAlive(it)
	return err
}

// Variants are item index's variants, variant v at [v-1] (nil when it has
// none); Content "" for a variant without content.
func (it *Items) Variants(index int) ([]Variant, error) {
	if err := firstError(it.need("items"), it.indexError("index", index)); err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(it)
	var e errBuf
	var n C.size_t
	if err := e.check(C.go_items_variant_count(it.p, C.size_t(index), &n, e.ptr())); err != nil {
		return nil, err
	}
	return it.variants(C.size_t(index), n)
}

// variants reads the n variants of item i (nil when n is 0).
func (it *Items) variants(i, n C.size_t) ([]Variant, error) {
	if n == 0 {
		return nil, nil
	}
	out := make([]Variant, 0, int(n))
	for v := C.size_t(1); v <= n; v++ {
		x, err := it.variant(i, v)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

// variant reads variant v (1-based) of item i.
func (it *Items) variant(i, v C.size_t) (Variant, error) {
	var e errBuf
	var tokens C.int64_t
	var value C.double
	var p *C.char
	var n C.size_t
	if err := e.check(C.go_items_variant(it.p, i, v, &tokens, &value, &p, &n, e.ptr())); err != nil {
		return Variant{}, err
	}
	return Variant{Tokens: int64(tokens), Value: float64(value), Content: goText(p, n)}, nil
}

// SetTruncatable makes item index truncatable: a pipeline run with a
// tokenizer (Pipeline.SetTokenizer, PipelineOptions.Tokenizer) may include
// it cut down with Tokenizer.Truncate's rules, keeping keep (KeepHead,
// KeepTail or KeepBothEnds), to fill what the slicer left, its score scaled
// by the kept share of its tokens. After the slicer, while the tokens left
// reach the minTokens (>= 0) of a truncatable item that was not selected,
// the one with the highest score per token (ties: push order) is cut to
// the tokens left, and included if what is kept still counts at least its
// minTokens. The item needs content, and the pipeline a tokenizer: a run
// fails otherwise (ErrInvalidArgument naming the item). A pinned item, a
// member of a group and an item a count cap excluded are never cut; Slice
// never cuts. A run reports the cut in Decision.HeadEnd and TailStart
// (reason ReasonTruncated). On error the list is unchanged.
func (it *Items) SetTruncatable(index int, keep Keep, minTokens int64) error {
	if err := firstError(it.need("items"), it.indexError("index", index)); err != nil {
		return err
	}
	if keep != KeepHead && keep != KeepTail && keep != KeepBothEnds {
		return argError("keep is %v; it must be KeepHead, KeepTail or KeepBothEnds", keep)
	}
	var e errBuf
	err := e.check(C.go_items_set_truncatable(it.p, C.size_t(index), C.int(keep), C.int64_t(minTokens), e.ptr()))
	runtime.KeepAlive(it)
	return err
}

// ClearTruncatable makes item index no longer truncatable (a no-op if it
// was not).
func (it *Items) ClearTruncatable(index int) error {
	if err := firstError(it.need("items"), it.indexError("index", index)); err != nil {
		return err
	}
	var e errBuf
	err := e.check(C.go_items_clear_truncatable(it.p, C.size_t(index), e.ptr()))
	runtime.KeepAlive(it)
	return err
}

// Truncatable is how item index may be cut (SetTruncatable), or nil when
// it is not truncatable.
func (it *Items) Truncatable(index int) (*Truncatable, error) {
	if err := firstError(it.need("items"), it.indexError("index", index)); err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(it)
	return it.truncatable(C.size_t(index))
}

func (it *Items) truncatable(i C.size_t) (*Truncatable, error) {
	var e errBuf
	var is C.bool
	var keep C.int
	var min C.int64_t
	if err := e.check(C.go_items_truncatable(it.p, i, &is, &keep, &min, e.ptr())); err != nil || !bool(is) {
		return nil, err
	}
	return &Truncatable{Keep: Keep(keep), MinTokens: int64(min)}, nil
}

// truncateRules: the C argument is `len`, the Go one n.
var truncateRules = rules(`\blen\b`, `n`)

// Truncate removes the items from index n on, with all their attributes
// (variants and truncation included), so that the list holds n items
// (0 <= n <= Len()): it undoes the pushes made since the list held n
// items, e.g. after a later call of the caller's own failed. Kinds only
// the removed items used are forgotten (a kind's spelling is then as if
// they had never been pushed). On error the list is unchanged.
func (it *Items) Truncate(n int) error {
	if err := it.need("items"); err != nil {
		return err
	}
	if n < 0 {
		return argError("n %d is negative; it must be in 0 ..= %d, the items the list holds", n, it.Len())
	}
	var e errBuf
	err := e.checkWith(C.go_items_truncate(it.p, C.size_t(n), e.ptr()), truncateRules)
	runtime.KeepAlive(it)
	return err
}

// SetTokenizer gives the pipeline the tokenizer it cuts truncatable items
// with (Items.SetTruncatable); nil removes it. The pipeline keeps its own
// reference: tokenizer may be closed right after. A run with a truncatable
// item and no tokenizer fails with ErrInvalidArgument naming the item.
func (p *Pipeline) SetTokenizer(tokenizer *Tokenizer) error {
	if err := firstError(p.need("pipeline"), tokenizer.optional("tokenizer")); err != nil {
		return err
	}
	var e errBuf
	err := e.check(C.go_pipeline_set_tokenizer(p.p, tokenizer.ptr(), e.ptr()))
	runtime.KeepAlive(p)
	runtime.KeepAlive(tokenizer)
	if err == nil {
		p.tok = tokenizer
	}
	return err
}

func (t *Tokenizer) optional(name string) error {
	return optionalError(name, t == nil, t != nil && t.p == nil)
}

func (t *Tokenizer) ptr() *C.cupel_tokenizer {
	if t == nil {
		return nil
	}
	return t.p
}

// chosen fills the included decision d (entry i of the report) with the
// option the run chose and its cut.
func (r *Report) chosen(i C.size_t, d *Decision) error {
	var e errBuf
	var variant, head, tail C.size_t
	var tokens C.int64_t
	if err := e.check(C.go_report_chosen(r.p, i, &variant, &tokens, &head, &tail, e.ptr())); err != nil {
		return err
	}
	if uint64(variant) > math.MaxInt32 || uint64(head) > uint64(tail) || uint64(tail) > math.MaxInt {
		return &Error{Status: StatusInternal, Message: fmt.Sprintf(
			"the library reported variant %d and a cut at %d and %d for included entry %d", variant, head, tail, i)}
	}
	d.Variant, d.AddedTokens, d.HeadEnd, d.TailStart = int(variant), int64(tokens), int(head), int(tail)
	return nil
}

// Text is the text the host sends for included decision d of a run over
// items (the same list, unchanged since): variant d.Variant's content when
// d.Variant > 0, else the item's content cut as the run cut it,
// content[:d.HeadEnd] + content[d.TailStart:] (byte offsets; the whole
// content when it was not cut). "" when that has no content.
func (d Decision) Text(items *Items) (string, error) {
	if err := firstError(items.need("items"), items.indexError("d.Index", d.Index)); err != nil {
		return "", err
	}
	defer runtime.KeepAlive(items)
	if d.Variant > 0 {
		v, err := items.variant(C.size_t(d.Index), C.size_t(d.Variant))
		if err != nil {
			return "", err
		}
		return v.Content, nil
	}
	var e errBuf
	var p *C.char
	var n C.size_t
	if err := e.check(C.go_items_content1(items.p, C.size_t(d.Index), &p, &n, e.ptr())); err != nil {
		return "", err
	}
	c := goText(p, n)
	if d.HeadEnd == len(c) && d.TailStart == len(c) {
		return c, nil
	}
	if d.HeadEnd < 0 || d.HeadEnd > d.TailStart || d.TailStart > len(c) ||
		!utf8.ValidString(c[:d.HeadEnd]) || !utf8.ValidString(c[d.TailStart:]) {
		return "", argError("d.HeadEnd %d and d.TailStart %d do not cut item %d's %d-byte content: "+
			"the decision is not of a run over this list as it is", d.HeadEnd, d.TailStart, d.Index, len(c))
	}
	return c[:d.HeadEnd] + c[d.TailStart:], nil
}

// checkShrink checks item i's variants and truncation for PushItems before
// anything is pushed, naming a bad value as list[i].Variants[k].Field or
// list[i].Truncatable.Field.
func checkShrink(x *Item, i int) error {
	if len(x.Variants) > MaxVariants {
		return argError("list[%d].Variants has %d variants; an item has at most %d", i, len(x.Variants), MaxVariants)
	}
	for k, v := range x.Variants {
		field := func(name string) string { return fmt.Sprintf("list[%d].Variants[%d].%s", i, k, name) }
		if v.Tokens < 0 {
			return argError("%s is %d; it must be >= 0", field("Tokens"), v.Tokens)
		}
		if !(v.Value > 0 && v.Value <= 1) {
			return argError("%s is %v; it must be in (0, 1]", field("Value"), v.Value)
		}
		if err := validText(field("Content"), v.Content, false); err != nil {
			return err
		}
	}
	if t := x.Truncatable; t != nil {
		if t.Keep != KeepHead && t.Keep != KeepTail && t.Keep != KeepBothEnds {
			return argError("list[%d].Truncatable.Keep is %v; it must be KeepHead, KeepTail or KeepBothEnds", i, t.Keep)
		}
		if t.MinTokens < 0 {
			return argError("list[%d].Truncatable.MinTokens is %d; it must be >= 0", i, t.MinTokens)
		}
	}
	return nil
}
