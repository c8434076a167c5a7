package cupel

/*
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cupel.h"

// As in cupel.go: the message is copied in the failing C call.
static cupel_status keep4(cupel_status st, char *err) {
	if (st != CUPEL_OK) {
		const char *m = cupel_last_error();
		strncpy(err, m ? m : "", 1023);
		err[1023] = 0;
	}
	return st;
}

// A text arrives as a Go string (_GoString_: its bytes and length, no copy);
// the library reads it during the call only.
static cupel_status go_tokenizer_new(const char *name, cupel_tokenizer **out, char *err) {
	return keep4(cupel_tokenizer_new(name, out), err);
}
static cupel_status go_tokenizer_from_tiktoken(const uint8_t *ranks, size_t len, const char *pattern,
                                               cupel_tokenizer **out, char *err) {
	return keep4(cupel_tokenizer_from_tiktoken(ranks, len, pattern, out), err);
}
static cupel_status go_tokenizer_count(const cupel_tokenizer *t, _GoString_ text, int64_t *out, char *err) {
	return keep4(cupel_tokenizer_count(t, _GoStringPtr(text), _GoStringLen(text), out), err);
}
static cupel_status go_tokenizer_truncate(const cupel_tokenizer *t, _GoString_ text, int64_t max, int keep,
                                          size_t *head_end, size_t *tail_start, int64_t *tokens, char *err) {
	return keep4(cupel_tokenizer_truncate(t, _GoStringPtr(text), _GoStringLen(text), max, keep, head_end,
	                                      tail_start, tokens), err);
}
static cupel_status go_items_push_text(cupel_items *it, const cupel_tokenizer *t, _GoString_ text, double score,
                                       const char *kind, char *err) {
	return keep4(cupel_items_push_text(it, t, _GoStringPtr(text), _GoStringLen(text), score, kind), err);
}

// Many texts arrive packed back to back in one buffer, lens[i] bytes each:
// cgo lets Go pass no array of Go pointers, so the pointer array is made
// here, in C memory, and freed before the call returns.
static const char **go_unpack(const char *packed, size_t n, const size_t *lens) {
	const char **ptrs = malloc((n ? n : 1) * sizeof *ptrs);
	size_t at = 0;
	if (!ptrs) return NULL;
	for (size_t i = 0; i < n; i++) {
		ptrs[i] = lens[i] ? packed + at : NULL;
		at += lens[i];
	}
	return ptrs;
}
static cupel_status go_no_memory(char *err) {
	snprintf(err, 1024, "out of memory for the texts' pointers");
	return CUPEL_ERROR_INTERNAL;
}
static cupel_status go_tokenizer_count_many(const cupel_tokenizer *t, size_t n, const char *packed,
                                            const size_t *lens, int64_t *out, char *err) {
	const char **ptrs = go_unpack(packed, n, lens);
	if (!ptrs) return go_no_memory(err);
	cupel_status st = keep4(cupel_tokenizer_count_many(t, n, ptrs, lens, out), err);
	free(ptrs);
	return st;
}
// kinds: NULL, or n NUL-terminated kinds back to back.
static cupel_status go_items_push_texts(cupel_items *it, const cupel_tokenizer *t, size_t n, const char *packed,
                                        const size_t *lens, const double *scores, const char *kinds, char *err) {
	const char **ptrs = go_unpack(packed, n, lens);
	const char **kp = NULL;
	if (!ptrs) return go_no_memory(err);
	if (kinds) {
		kp = malloc((n ? n : 1) * sizeof *kp);
		if (!kp) {
			free(ptrs);
			return go_no_memory(err);
		}
		for (size_t i = 0; i < n; i++) {
			kp[i] = kinds;
			kinds += strlen(kinds) + 1;
		}
	}
	cupel_status st = keep4(cupel_items_push_texts(it, t, n, ptrs, lens, scores, kp), err);
	free(kp);
	free(ptrs);
	return st;
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// ---- Tokenizer ----------------------------------------------------------------------

// The built-in encodings, for NewTokenizer.
const (
	// O200kBase is the encoding of GPT-4o, GPT-4.1, the o-series and GPT-5.
	O200kBase = "o200k_base"
	// Cl100kBase is the encoding of GPT-4, GPT-3.5 and text-embedding-3.
	Cl100kBase = "cl100k_base"
)

// Tokenizer counts and cuts text in tokens exactly as tiktoken's
// encode_ordinary does for its vocabulary (special tokens such as
// <|endoftext|> are ordinary text). It is immutable: any number of
// goroutines may use one tokenizer at once. Close it when done (a finalizer
// frees a forgotten one); do not use it during its Close.
//
// Texts are Go strings, handed to the library without a copy (CountMany and
// PushTexts pack theirs into one reused buffer: cgo passes no array of Go
// pointers). Offsets are byte offsets into the string, as Go indexes
// strings. A text that is not valid UTF-8 is an ErrInvalidArgument error
// naming the argument and the offset of its first bad byte.
type Tokenizer struct{ p *C.cupel_tokenizer }

func newTokenizer(create func(**C.cupel_tokenizer, *C.char) C.cupel_status, extra []rule) (*Tokenizer, error) {
	var e errBuf
	t := &Tokenizer{}
	if err := e.checkWith(create(&t.p, e.ptr()), extra); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(t, (*Tokenizer).Close)
	return t, nil
}

// tokenizerRules name, in messages, the C function a Go caller knows as
// NewTokenizerFromTiktoken.
var tokenizerRules = rules(`\bcupel_tokenizer_from_tiktoken\b`, `NewTokenizerFromTiktoken`)

// NewTokenizer creates a tokenizer for a built-in encoding: O200kBase
// ("o200k_base") or Cl100kBase ("cl100k_base"). The vocabulary is indexed on
// first use (a few milliseconds) and shared by every tokenizer of the
// process after that. An unknown name is ErrInvalidArgument, its message
// listing the known ones; a library built without its vocabularies gives
// ErrUnsupported.
func NewTokenizer(name string) (*Tokenizer, error) {
	m := cStrings{}
	defer m.free()
	n, err := m.arg("name", name)
	if err != nil {
		return nil, err
	}
	return newTokenizer(func(out **C.cupel_tokenizer, e *C.char) C.cupel_status {
		return C.go_tokenizer_new(n, out, e)
	}, tokenizerRules)
}

// NewTokenizerFromTiktoken creates a tokenizer from any byte-level BPE
// vocabulary in tiktoken's file format: ranks are the file's bytes (lines of
// "base64(token) rank", as Llama 3 and the OpenAI encodings ship them) and
// pattern the pre-tokenization regular expression as tiktoken writes it
// ("": o200k_base's). The library keeps its own copy of the vocabulary. A
// malformed line, a duplicate token or rank or a missing single-byte token
// is ErrInvalidArgument naming the line; a pattern that does not compile,
// or uses what the library's engine does not support, is ErrInvalidArgument
// naming the problem.
func NewTokenizerFromTiktoken(ranks []byte, pattern string) (*Tokenizer, error) {
	m := cStrings{}
	defer m.free()
	var pat *C.char
	if pattern != "" {
		var err error
		if pat, err = m.arg("pattern", pattern); err != nil {
			return nil, err
		}
	}
	var rp *C.uint8_t
	if len(ranks) > 0 {
		rp = (*C.uint8_t)(unsafe.Pointer(&ranks[0]))
	}
	t, err := newTokenizer(func(out **C.cupel_tokenizer, e *C.char) C.cupel_status {
		return C.go_tokenizer_from_tiktoken(rp, C.size_t(len(ranks)), pat, out, e)
	}, tokenizerRules)
	runtime.KeepAlive(ranks)
	return t, err
}

// Close frees the tokenizer. Calling it again is a no-op; any other method
// of a closed tokenizer, or passing it to Items.PushText or PushTexts,
// fails with ErrClosed.
func (t *Tokenizer) Close() {
	if t != nil && t.p != nil {
		C.cupel_tokenizer_free(t.p)
		t.p = nil
		runtime.SetFinalizer(t, nil)
	}
}

func (t *Tokenizer) need(name string) error {
	return handleError(name, t == nil, t != nil && t.p == nil)
}

// Count is the number of tokens of text: the length of tiktoken's
// encode_ordinary for this vocabulary, on every text ("" counts 0).
func (t *Tokenizer) Count(text string) (int64, error) {
	if err := t.need("tokenizer"); err != nil {
		return 0, err
	}
	var e errBuf
	var n C.int64_t
	err := e.check(C.go_tokenizer_count(t.p, text, &n, e.ptr()))
	runtime.KeepAlive(t)
	if err != nil {
		return 0, err
	}
	return int64(n), nil
}

// textScratch holds the packed texts (and kinds) of CountMany and
// PushTexts between calls.
type textScratch struct {
	packed, kinds column[byte]
	lens          column[C.size_t]
}

var textScratchPool = sync.Pool{New: func() any { return new(textScratch) }}

// pack puts texts back to back in sc.packed with their lengths in sc.lens;
// the pointer is nil when every text is empty.
func (sc *textScratch) pack(texts []string) (*C.char, *C.size_t) {
	lens := sc.lens.take(len(texts))
	packed := sc.packed.take(0)
	for i, s := range texts {
		lens[i] = C.size_t(len(s))
		packed = append(packed, s...)
	}
	sc.packed = packed
	var p *C.char
	if len(packed) > 0 {
		p = (*C.char)(unsafe.Pointer(&packed[0]))
	}
	return p, &lens[0]
}

// CountMany counts every text, all or nothing, and returns the counts in
// the texts' order. Large batches are counted on two threads. A text that
// is not UTF-8 fails the whole call with ErrInvalidArgument naming it:
// "texts[3] is not valid UTF-8 (invalid byte at offset 7)".
func (t *Tokenizer) CountMany(texts []string) ([]int64, error) {
	if err := t.need("tokenizer"); err != nil {
		return nil, err
	}
	out := make([]int64, len(texts))
	if len(texts) == 0 {
		return out, nil
	}
	sc := textScratchPool.Get().(*textScratch)
	defer textScratchPool.Put(sc)
	packed, lens := sc.pack(texts)
	var e errBuf
	err := e.check(C.go_tokenizer_count_many(t.p, C.size_t(len(texts)), packed, lens,
		(*C.int64_t)(unsafe.Pointer(&out[0])), e.ptr()))
	runtime.KeepAlive(t)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Keep says what Tokenizer.Truncate keeps of a text.
type Keep int

const (
	// KeepHead keeps the beginning of the text.
	KeepHead Keep = C.CUPEL_KEEP_HEAD
	// KeepTail keeps the end of the text.
	KeepTail Keep = C.CUPEL_KEEP_TAIL
	// KeepBothEnds keeps the beginning and the end; the middle goes.
	KeepBothEnds Keep = C.CUPEL_KEEP_BOTH_ENDS
)

// String is the constant's name ("KeepHead", "KeepTail", "KeepBothEnds"),
// or "Keep(7)" for a value that is none of them.
func (k Keep) String() string {
	switch k {
	case KeepHead:
		return "KeepHead"
	case KeepTail:
		return "KeepTail"
	case KeepBothEnds:
		return "KeepBothEnds"
	}
	return fmt.Sprintf("Keep(%d)", int(k))
}

// Truncation is what Tokenizer.Truncate kept of a text: text[:HeadEnd]
// followed by text[TailStart:].
type Truncation struct {
	// Text is the kept text, Head followed by Tail, with no marker between
	// them (a caller who writes one reserves its tokens first).
	Text string
	// Head is text[:HeadEnd] and Tail is text[TailStart:] (no copies).
	Head, Tail string
	// HeadEnd and TailStart are byte offsets into the text (Go string
	// indices), both on UTF-8 character boundaries, HeadEnd <= TailStart.
	// Nothing was cut when both are len(text); HeadEnd < TailStart otherwise.
	HeadEnd, TailStart int
	// Tokens is Head's count plus Tail's, each counted on its own; never
	// more than maxTokens. (Counting Text itself may differ by a token at
	// the seam, since a token can span it.)
	Tokens int64
}

// Truncate cuts text to at most maxTokens (>= 0) tokens, keeping its head,
// its tail or both ends, at token boundaries of the whole text's tokens
// that are character boundaries:
//
//   - a text that counts at most maxTokens is kept whole (HeadEnd =
//     TailStart = len(text)); maxTokens 0 keeps nothing (HeadEnd 0,
//     TailStart len(text));
//   - KeepHead: the longest prefix that counts at most maxTokens
//     (TailStart = len(text));
//   - KeepTail: the longest suffix that counts at most maxTokens (HeadEnd 0);
//   - KeepBothEnds: the head by the KeepHead rule with ceil(maxTokens/2)
//     tokens, then the tail by the KeepTail rule with the tokens left,
//     never starting before the head's end.
//
// The cost is about one Count of the text. A negative maxTokens or a keep
// that is none of the constants is ErrInvalidArgument.
func (t *Tokenizer) Truncate(text string, maxTokens int64, keep Keep) (Truncation, error) {
	if err := t.need("tokenizer"); err != nil {
		return Truncation{}, err
	}
	if keep != KeepHead && keep != KeepTail && keep != KeepBothEnds {
		return Truncation{}, argError("keep is %v; it must be KeepHead, KeepTail or KeepBothEnds", keep)
	}
	var e errBuf
	var head, tail C.size_t
	var n C.int64_t
	err := e.check(C.go_tokenizer_truncate(t.p, text, C.int64_t(maxTokens), C.int(keep), &head, &tail, &n,
		e.ptr()))
	runtime.KeepAlive(t)
	if err != nil {
		return Truncation{}, err
	}
	h, tl := int(head), int(tail)
	if uint64(head) > uint64(tail) || uint64(tail) > uint64(len(text)) {
		return Truncation{}, &Error{Status: StatusInternal,
			Message: fmt.Sprintf("the library cut a %d-byte text at %d and %d", len(text), head, tail)}
	}
	tr := Truncation{Head: text[:h], Tail: text[tl:], HeadEnd: h, TailStart: tl, Tokens: int64(n)}
	switch {
	case tr.Tail == "":
		tr.Text = tr.Head
	case tr.Head == "":
		tr.Text = tr.Tail
	default:
		tr.Text = tr.Head + tr.Tail
	}
	return tr, nil
}

// ---- items from text ------------------------------------------------------------------

// PushText adds one item made from text: its tokens are text's count with
// tokenizer, its content is text (not empty, UTF-8), with score (finite)
// and kind (not empty or blank; DefaultKind for the default) as Push takes
// them. On error the list is unchanged.
func (it *Items) PushText(tokenizer *Tokenizer, text string, score float64, kind string) error {
	if err := firstError(it.need("items"), tokenizer.need("tokenizer")); err != nil {
		return err
	}
	m := cStrings{}
	defer m.free()
	k, err := m.arg("kind", kind)
	if err != nil {
		return err
	}
	var e errBuf
	err = e.check(C.go_items_push_text(it.p, tokenizer.p, text, C.double(score), k, e.ptr()))
	runtime.KeepAlive(it)
	runtime.KeepAlive(tokenizer)
	return err
}

// PushTexts adds len(texts) items made from texts, all or nothing: item i
// has content texts[i] (not empty, UTF-8), tokens its count with
// tokenizer, score scores[i] and kind kinds[i]. kinds may be nil (every
// item of DefaultKind); otherwise it has one entry per text, none empty or
// blank. The texts are counted on up to two threads. A bad entry's error
// names it: "texts[2] is empty; ...", "scores[4] is NaN".
func (it *Items) PushTexts(tokenizer *Tokenizer, texts []string, scores []float64, kinds []string) error {
	return it.pushTexts(tokenizer, texts, scores, kinds, nil, "kinds[%d]")
}

// pushTexts is PushTexts with extra renames for the library's messages and
// the name of kind i in the binding's own (Select: messages[i].Kind).
func (it *Items) pushTexts(tokenizer *Tokenizer, texts []string, scores []float64, kinds []string, extra []rule,
	kindName string) error {
	if err := firstError(it.need("items"), tokenizer.need("tokenizer")); err != nil {
		return err
	}
	n := len(texts)
	if len(scores) != n || (kinds != nil && len(kinds) != n) {
		return argError("texts, scores and kinds have lengths %d, %d and %d; they must agree", n, len(scores), len(kinds))
	}
	if n == 0 {
		return nil
	}
	sc := textScratchPool.Get().(*textScratch)
	defer textScratchPool.Put(sc)
	var kp *C.char
	if kinds != nil {
		packed := sc.kinds.take(0)
		for i, k := range kinds {
			// A NUL would end the kind early in the packed kinds; an empty
			// or blank kind is the library's to refuse (it names kinds[i]).
			if err := textErrorAt(kindName, i, k); err != nil {
				return err
			}
			packed = append(append(packed, k...), 0)
		}
		sc.kinds = packed
		kp = (*C.char)(unsafe.Pointer(&packed[0]))
	}
	packed, lens := sc.pack(texts)
	var e errBuf
	err := e.checkWith(C.go_items_push_texts(it.p, tokenizer.p, C.size_t(n), packed, lens,
		(*C.double)(unsafe.Pointer(&scores[0])), kp, e.ptr()), extra)
	runtime.KeepAlive(it)
	runtime.KeepAlive(tokenizer)
	return err
}
