package cupel

import (
	"encoding/base64"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// sentence: Hello|,| world|!| This| is| lib|cup|el| counting| tokens|.
// (47 bytes, 12 o200k_base tokens).
const sentence = "Hello, world! This is libcupel counting tokens."

// Texts in several scripts, emoji (with skin tones and ZWJ sequences)
// and code: every byte offset a cut returns must be a character boundary.
var mixedTexts = []string{
	"日本語のテキスト",
	"日本語のテキストを数えます。東京は晴れ、大阪は雨でした。",
	"👋🏽 Hello 🌍! Family: 👨‍👩‍👧‍👦, flags 🇯🇵🇫🇷, party 🎉🎉🎉 done.",
	"Здравствуйте, мир! Γειά σου κόσμε. مرحبا بالعالم. नमस्ते दुनिया।",
	"func main() {\n\tfmt.Println(\"héllo\", 42)\n}\n",
	"   leading spaces and trailing\t\t\n\n",
	sentence,
}

func tokenizer(t *testing.T, name string) *Tokenizer {
	t.Helper()
	tk, err := NewTokenizer(name)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func count(t *testing.T, tk *Tokenizer, text string) int64 {
	t.Helper()
	n, err := tk.Count(text)
	if err != nil {
		t.Fatalf("Count(%q): %v", text, err)
	}
	return n
}

func TestTokenizerCounts(t *testing.T) {
	o := tokenizer(t, O200kBase)
	defer o.Close()
	c := tokenizer(t, Cl100kBase)
	defer c.Close()
	for _, x := range []struct {
		tk   *Tokenizer
		text string
		want int64
	}{
		{o, "hello world", 2},
		{o, sentence, 12},
		{o, "日本語のテキスト", 6},
		{c, "日本語のテキスト", 8},
		{o, "<|endoftext|>", 7}, // special tokens are ordinary text
		{o, "", 0},
		{c, "", 0},
		// A substring: only its bytes count (the text is passed by pointer
		// and length, never read up to a NUL).
		{o, "hello worldXXXX"[:11], 2},
	} {
		if got := count(t, x.tk, x.text); got != x.want {
			t.Errorf("Count(%q) = %d, want %d", x.text, got, x.want)
		}
	}
	// A text built at run time (heap memory), and one holding a NUL byte
	// (valid UTF-8: counted, not cut short).
	heap := strings.Repeat("hello world ", 1000)
	if got := count(t, o, heap); got < 1000 || got > 3000 {
		t.Errorf("Count(12000 bytes of hello world) = %d", got)
	}
	if a, b := count(t, o, "a\x00b"), count(t, o, "a"); a <= b {
		t.Errorf("Count(\"a\\x00b\") = %d is not more than Count(\"a\") = %d", a, b)
	}
	// Counts add up over pieces the pattern splits anyway (a space starts a
	// word piece).
	if got := count(t, o, "hello world hello world"); got != 4 {
		t.Errorf("two hello worlds: %d", got)
	}
	_, err := o.Count("ab\xffc")
	expectErr(t, err, ErrInvalidArgument, "text is not valid UTF-8 (invalid byte at offset 2)")
	_, err = o.Count("ab\xe6\x97") // a character cut short
	expectErr(t, err, ErrInvalidArgument, "offset 2")
}

func TestTokenizerCountMany(t *testing.T) {
	o := tokenizer(t, O200kBase)
	defer o.Close()
	texts := append([]string{"", "hello world"}, mixedTexts...)
	got, err := o.CountMany(texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(texts) || got[0] != 0 || got[1] != 2 || got[len(got)-1] != 12 {
		t.Fatalf("CountMany = %v", got)
	}
	for i, text := range texts {
		if want := count(t, o, text); got[i] != want {
			t.Errorf("CountMany[%d] = %d, Count = %d", i, got[i], want)
		}
	}
	// A batch large enough for two threads: the counts stay in order.
	var big []string
	for i := 0; i < 3000; i++ {
		big = append(big, fmt.Sprintf("%d %s", i, mixedTexts[i%len(mixedTexts)]), strings.Repeat("x", i%7))
	}
	counts, err := o.CountMany(big)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range big {
		if want := count(t, o, text); counts[i] != want {
			t.Fatalf("CountMany(big)[%d] = %d, Count = %d", i, counts[i], want)
		}
	}
	if got, err := o.CountMany(nil); err != nil || len(got) != 0 {
		t.Fatalf("CountMany(nil) = %v, %v", got, err)
	}
	// All or nothing: the error names the text and the byte offset.
	got, err = o.CountMany([]string{"fine", "also fine", "x\xfe"})
	expectErr(t, err, ErrInvalidArgument, "texts[2] is not valid UTF-8 (invalid byte at offset 1)")
	if got != nil {
		t.Fatalf("a failed CountMany returned %v", got)
	}
}

// checkCut checks what a Truncate returned against the contract: the kept
// text is text[:HeadEnd] + text[TailStart:], cut at character boundaries,
// the token count is the pieces' and within maxTokens, and each keep's rule.
func checkCut(t *testing.T, tk *Tokenizer, text string, max int64, keep Keep, cut Truncation) {
	t.Helper()
	what := fmt.Sprintf("Truncate(%q, %d, %v) = %+v", text, max, keep, cut)
	if cut.HeadEnd < 0 || cut.HeadEnd > cut.TailStart || cut.TailStart > len(text) {
		t.Fatalf("%s: offsets out of order", what)
	}
	if cut.Head != text[:cut.HeadEnd] || cut.Tail != text[cut.TailStart:] || cut.Text != cut.Head+cut.Tail {
		t.Fatalf("%s: the kept text is not text[:HeadEnd] + text[TailStart:]", what)
	}
	for _, at := range []int{cut.HeadEnd, cut.TailStart} {
		if at < len(text) && !utf8.RuneStart(text[at]) {
			t.Fatalf("%s: offset %d splits a character", what, at)
		}
	}
	if !utf8.ValidString(cut.Text) {
		t.Fatalf("%s: the kept text is not UTF-8", what)
	}
	if cut.Tokens > max || cut.Tokens != count(t, tk, cut.Head)+count(t, tk, cut.Tail) {
		t.Fatalf("%s: tokens", what)
	}
	whole := count(t, tk, text)
	switch {
	case whole <= max:
		if cut.HeadEnd != len(text) || cut.TailStart != len(text) || cut.Tokens != whole {
			t.Fatalf("%s: the text fits (%d tokens) and must be kept whole", what, whole)
		}
	case keep == KeepHead && cut.TailStart != len(text), keep == KeepTail && cut.HeadEnd != 0:
		t.Fatalf("%s: kept the wrong end", what)
	case max == 0 && (cut.HeadEnd != 0 || cut.TailStart != len(text)):
		t.Fatalf("%s: max 0 keeps nothing", what)
	}
}

func TestTokenizerTruncate(t *testing.T) {
	o := tokenizer(t, O200kBase)
	defer o.Close()
	for _, x := range []struct {
		max             int64
		keep            Keep
		head, tail      int
		tokens          int64
		text            string
		headStr, tailSt string
	}{
		{4, KeepHead, 13, 47, 4, "Hello, world!", "Hello, world!", ""},
		{3, KeepTail, 0, 30, 3, " counting tokens.", "", " counting tokens."},
		{5, KeepBothEnds, 12, 39, 5, "Hello, world tokens.", "Hello, world", " tokens."},
		{4, KeepBothEnds, 6, 39, 4, "Hello, tokens.", "Hello,", " tokens."},
		{12, KeepHead, 47, 47, 12, sentence, sentence, ""},
		{100, KeepBothEnds, 47, 47, 12, sentence, sentence, ""},
		{0, KeepTail, 0, 47, 0, "", "", ""},
	} {
		cut, err := o.Truncate(sentence, x.max, x.keep)
		if err != nil {
			t.Fatal(err)
		}
		want := Truncation{Text: x.text, Head: x.headStr, Tail: x.tailSt, HeadEnd: x.head, TailStart: x.tail,
			Tokens: x.tokens}
		if !reflect.DeepEqual(cut, want) {
			t.Errorf("Truncate(sentence, %d, %v) = %+v, want %+v", x.max, x.keep, cut, want)
		}
		checkCut(t, o, sentence, x.max, x.keep, cut)
	}

	// Non-ASCII: offsets are byte offsets (Go string indices) on character
	// boundaries. 日本語 is 日本|語: one token keeps 日本, 6 bytes.
	cut, err := o.Truncate("日本語", 1, KeepHead)
	if err != nil || cut.HeadEnd != 6 || cut.Text != "日本" || cut.Tokens != 1 {
		t.Fatalf("Truncate(日本語, 1, KeepHead) = %+v, %v", cut, err)
	}
	cut, err = o.Truncate("日本語のテキスト", 2, KeepBothEnds)
	if err != nil {
		t.Fatal(err)
	}
	const jp = "日本語のテキスト"
	if jp[:cut.HeadEnd]+jp[cut.TailStart:] != cut.Text || cut.Text == "" || cut.Text == jp {
		t.Fatalf("Truncate(%s, 2, KeepBothEnds) = %+v", jp, cut)
	}
	// Every keep and every budget up to the whole count, on every text.
	for _, name := range []string{O200kBase, Cl100kBase} {
		tk := tokenizer(t, name)
		for _, text := range mixedTexts {
			whole := count(t, tk, text)
			for max := int64(0); max <= whole+1; max++ {
				for _, keep := range []Keep{KeepHead, KeepTail, KeepBothEnds} {
					cut, err := tk.Truncate(text, max, keep)
					if err != nil {
						t.Fatal(err)
					}
					checkCut(t, tk, text, max, keep, cut)
				}
			}
		}
		tk.Close()
	}

	_, err = o.Truncate(sentence, -1, KeepHead)
	expectErr(t, err, ErrInvalidArgument, "maxTokens is -1; it must be >= 0")
	_, err = o.Truncate(sentence, 3, Keep(7))
	expectErr(t, err, ErrInvalidArgument, "keep is Keep(7)")
	_, err = o.Truncate("ok \xff", 3, KeepTail)
	expectErr(t, err, ErrInvalidArgument, "text is not valid UTF-8 (invalid byte at offset 3)")
	if KeepBothEnds.String() != "KeepBothEnds" || Keep(9).String() != "Keep(9)" {
		t.Fatal(KeepBothEnds.String(), Keep(9).String())
	}
}

// tinyVocab is a tiktoken file: the 256 bytes (rank = byte, except skip)
// and then extra lines.
func tinyVocab(extra string, skip int) []byte {
	var b strings.Builder
	for i := 0; i < 256; i++ {
		if i != skip {
			fmt.Fprintf(&b, "%s %d\n", base64.StdEncoding.EncodeToString([]byte{byte(i)}), i)
		}
	}
	return []byte(b.String() + extra)
}

func TestTokenizerFromTiktoken(t *testing.T) {
	// "YWI=" is "ab", "YWJj" is "abc".
	vocab := tinyVocab("YWI= 256\nYWJj 257\n", -1)
	tk, err := NewTokenizerFromTiktoken(vocab, "")
	if err != nil {
		t.Fatal(err)
	}
	// o200k_base's pattern: pieces "abc" and " abd": abc | " ", ab, d.
	if got := count(t, tk, "abc abd"); got != 4 {
		t.Fatalf("Count(abc abd) = %d, want 4", got)
	}
	cut, err := tk.Truncate("abc abd", 2, KeepHead)
	if err != nil || cut.Text != "abc " || cut.Tokens != 2 {
		t.Fatalf("Truncate(abc abd, 2, KeepHead) = %+v, %v", cut, err)
	}
	tk.Close()
	// A pattern of its own (the general engine): one piece per character.
	tk, err = NewTokenizerFromTiktoken(vocab, ".")
	if err != nil {
		t.Fatal(err)
	}
	if got := count(t, tk, "abc"); got != 3 {
		t.Fatalf("Count(abc) with pattern . = %d, want 3", got)
	}
	tk.Close()

	// A malformed vocabulary names its line.
	_, err = NewTokenizerFromTiktoken(tinyVocab("YWI= 256\nnot base64 at all 257\n", -1), "")
	expectErr(t, err, ErrInvalidArgument, "line 258")
	_, err = NewTokenizerFromTiktoken(tinyVocab("YWI= 256\nYWJj 256\n", -1), "")
	expectErr(t, err, ErrInvalidArgument, "line 258: rank 256 is already the rank of line 257")
	_, err = NewTokenizerFromTiktoken(tinyVocab("YWI= 256\n", 0x41), "")
	expectErr(t, err, ErrInvalidArgument, "single byte 0x41")
	_, err = NewTokenizerFromTiktoken(nil, "")
	expectErr(t, err, ErrInvalidArgument, "no tokens")
	_, err = NewTokenizerFromTiktoken(vocab, "(unclosed")
	expectErr(t, err, ErrInvalidArgument, "pattern")
	_, err = NewTokenizerFromTiktoken(vocab, "a\x00b")
	expectErr(t, err, ErrInvalidArgument, "pattern contains a NUL byte")
}

func TestTokenizerNames(t *testing.T) {
	for _, name := range []string{"gpt2", "", "O200K_BASE", "o200k_base\x00"} {
		tk, err := NewTokenizer(name)
		if tk != nil {
			t.Fatalf("NewTokenizer(%q) made a tokenizer", name)
		}
		expectErr(t, err, ErrInvalidArgument, "name")
		// The message lists the known encodings (as the library spells
		// them: quoted names are not renamed to Go's camelCase).
		if !strings.Contains(name, "\x00") {
			expectErr(t, err, ErrInvalidArgument, `the known ones are "o200k_base" and "cl100k_base"`)
		}
	}
}

func TestClosedTokenizer(t *testing.T) {
	tk := tokenizer(t, O200kBase)
	it := must(NewItems())
	defer it.Close()
	if err := it.PushText(tk, "kept", 0.5, DefaultKind); err != nil {
		t.Fatal(err)
	}
	tk.Close()
	tk.Close() // idempotent
	_, err := tk.Count("a")
	expectErr(t, err, ErrClosed, "tokenizer is closed")
	_, err = tk.CountMany([]string{"a"})
	expectErr(t, err, ErrClosed, "tokenizer is closed")
	_, err = tk.Truncate("a", 1, KeepHead)
	expectErr(t, err, ErrClosed, "tokenizer is closed")
	expectErr(t, it.PushText(tk, "a", 0.5, DefaultKind), ErrClosed, "tokenizer is closed")
	expectErr(t, it.PushTexts(tk, []string{"a"}, []float64{0.5}, nil), ErrClosed, "tokenizer is closed")
	if it.Len() != 1 {
		t.Fatalf("the list changed: %d items", it.Len())
	}
	var none *Tokenizer
	_, err = none.Count("a")
	expectErr(t, err, ErrNullPointer, "tokenizer is nil")
	expectErr(t, it.PushText(none, "a", 0.5, DefaultKind), ErrNullPointer, "tokenizer is nil")
	none.Close()
	// A closed list with an open tokenizer.
	o := tokenizer(t, O200kBase)
	defer o.Close()
	closed := must(NewItems())
	closed.Close()
	expectErr(t, closed.PushText(o, "a", 0.5, DefaultKind), ErrClosed, "items is closed")
	expectErr(t, closed.PushTexts(o, []string{"a"}, []float64{0.5}, nil), ErrClosed, "items is closed")
}

func TestPushText(t *testing.T) {
	o := tokenizer(t, O200kBase)
	defer o.Close()
	it := must(NewItems())
	defer it.Close()
	if err := it.PushText(o, sentence, 0.9, "Document"); err != nil {
		t.Fatal(err)
	}
	if err := it.PushText(o, "日本語のテキスト", 0.4, DefaultKind); err != nil {
		t.Fatal(err)
	}
	for i, want := range []Item{
		{Tokens: 12, Score: 0.9, Kind: "Document", Content: sentence, Source: "Chat"},
		{Tokens: 6, Score: 0.4, Kind: "Message", Content: "日本語のテキスト", Source: "Chat"},
	} {
		got, err := it.Get(i)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("Get(%d) = %+v, %v; want %+v", i, got, err, want)
		}
	}
	// Errors name the argument; the list is unchanged.
	expectErr(t, it.PushText(o, "", 0.5, DefaultKind), ErrInvalidArgument, "text is empty")
	expectErr(t, it.PushText(o, "x\xff", 0.5, DefaultKind), ErrInvalidArgument,
		"text is not valid UTF-8 (invalid byte at offset 1)")
	expectErr(t, it.PushText(o, "x", math.NaN(), DefaultKind), ErrInvalidArgument, "score")
	expectErr(t, it.PushText(o, "x", 0.5, ""), ErrInvalidArgument, "kind")
	expectErr(t, it.PushText(o, "x", 0.5, "a\x00b"), ErrInvalidArgument, "kind contains a NUL byte")
	if it.Len() != 2 {
		t.Fatalf("a failed PushText changed the list: %d items", it.Len())
	}
}

func TestPushTexts(t *testing.T) {
	o := tokenizer(t, O200kBase)
	defer o.Close()
	it := must(NewItems())
	defer it.Close()
	texts := []string{"hello world", sentence, "👋🏽 Hello 🌍!"}
	if err := it.PushTexts(o, texts, []float64{0.5, 0.25, 0.75}, []string{"Document", "ToolOutput", "Message"}); err != nil {
		t.Fatal(err)
	}
	if err := it.PushTexts(o, []string{"a", "b c"}, []float64{0.1, 0.2}, nil); err != nil {
		t.Fatal(err)
	}
	counts := must(o.CountMany(append(texts, "a", "b c")))
	kinds := []string{"Document", "ToolOutput", "Message", "Message", "Message"}
	scores := []float64{0.5, 0.25, 0.75, 0.1, 0.2}
	if it.Len() != 5 {
		t.Fatalf("%d items", it.Len())
	}
	for i, text := range append(texts, "a", "b c") {
		got := must(it.Get(i))
		if got.Tokens != counts[i] || got.Content != text || got.Kind != kinds[i] || got.Score != scores[i] {
			t.Fatalf("Get(%d) = %+v; want %d tokens, content %q, kind %s", i, got, counts[i], text, kinds[i])
		}
	}
	if counts[0] != 2 || counts[1] != 12 {
		t.Fatalf("counts %v", counts)
	}
	// All or nothing: a bad element anywhere adds no item, and its error
	// names it.
	ok := []string{"one", "two", "three"}
	half := []float64{0.5, 0.5, 0.5}
	for _, x := range []struct {
		texts  []string
		scores []float64
		kinds  []string
		want   string
	}{
		{[]string{"one", "", "three"}, half, nil, "texts[1] is empty"},
		{[]string{"one", "two", "thr\xffee"}, half, nil, "texts[2] is not valid UTF-8 (invalid byte at offset 3)"},
		{ok, []float64{0.5, 0.5, math.Inf(1)}, nil, "scores[2]"},
		{ok, half, []string{"Message", "", "Message"}, "kinds[1]"},
		{ok, half, []string{"Message", "Message", " "}, "kinds[2]"},
		{ok, half, []string{"Mes\x00sage", "Message", "Message"}, "kinds[0] contains a NUL byte"},
		{ok, []float64{0.5}, nil, "texts, scores and kinds have lengths 3, 1 and 0"},
		{ok, half, []string{"Message"}, "texts, scores and kinds have lengths 3, 3 and 1"},
	} {
		expectErr(t, it.PushTexts(o, x.texts, x.scores, x.kinds), ErrInvalidArgument, x.want)
		if it.Len() != 5 {
			t.Fatalf("a failed PushTexts (%s) changed the list: %d items", x.want, it.Len())
		}
	}
	if err := it.PushTexts(o, nil, nil, nil); err != nil || it.Len() != 5 {
		t.Fatalf("an empty PushTexts: %v, %d items", err, it.Len())
	}

	// From strings to a selection, no token counted by hand: the greedy
	// slicer fits the densest items in 14 tokens.
	g := must(NewGreedy())
	defer g.Close()
	b := budget(t, 14, 14)
	defer b.Close()
	got, err := Slice(g, it, b, 0, nil)
	var sum int64
	for _, i := range got {
		sum += counts[i]
	}
	if err != nil || len(got) == 0 || sum > 14 {
		t.Fatalf("Slice = %v (%d tokens), %v", got, sum, err)
	}
}

// One tokenizer shared by goroutines: the same counts and cuts as alone.
func TestTokenizerConcurrent(t *testing.T) {
	o := tokenizer(t, O200kBase)
	defer o.Close()
	want := must(o.CountMany(mixedTexts))
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for round := 0; round < 20; round++ {
				k := (g + round) % len(mixedTexts)
				n, err := o.Count(mixedTexts[k])
				if err != nil || n != want[k] {
					errs <- fmt.Errorf("goroutine %d: Count = %d, %v; want %d", g, n, err, want[k])
					return
				}
				cut, err := o.Truncate(mixedTexts[k], want[k]/2, KeepBothEnds)
				if err != nil || cut.Tokens > want[k]/2 {
					errs <- fmt.Errorf("goroutine %d: Truncate = %+v, %v", g, cut, err)
					return
				}
				counts, err := o.CountMany(mixedTexts)
				if err != nil || !reflect.DeepEqual(counts, want) {
					errs <- fmt.Errorf("goroutine %d: CountMany = %v, %v", g, counts, err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Tokenizers left to the garbage collector are freed by their finalizers.
func TestTokenizerFinalizer(t *testing.T) {
	runtime.GC()
	before := LiveHandles()
	for i := 0; i < 50; i++ {
		tk, err := NewTokenizer(Cl100kBase)
		if err != nil {
			t.Fatal(err)
		}
		if n := count(t, tk, "hello world"); n != 2 {
			t.Fatalf("Count = %d", n)
		}
		if i%2 == 0 {
			tk.Close()
		}
	}
	for tries := 0; LiveHandles() > before && tries < 100; tries++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if live := LiveHandles(); live > before {
		t.Fatalf("%d native handles still live after GC (were %d)", live, before)
	}
}
