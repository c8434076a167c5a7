"""pytest: text in. cupel.Tokenizer (built-in and tiktoken-file vocabularies,
count, count_many, truncate with str-index ranges), Items.push_text /
extend_texts / from_texts, and their errors. A small hand-made vocabulary
with a simple pattern has a reference tokenizer written here (tiktoken's
algorithm), so counts and every truncation rule are checked against an
independent implementation, on text with multi-byte characters."""
import base64
import concurrent.futures
import ctypes
import gc
import math
import random
import re

import pytest

import cupel
from cupel import _native

SENTENCE = "Hello, world! This is libcupel counting tokens."  # 12 tokens in o200k_base
JAPANESE = "日本語のテキストを数えます。東京は晴れ、大阪は雨でした。"
EMOJI = "Ship it 🚀🚀 then party 🎉👍🏽 and rest 😴 — done ✅ ok."


@pytest.fixture(scope="module")
def o200k():
    with cupel.Tokenizer("o200k_base") as t:
        yield t


@pytest.fixture(scope="module")
def cl100k():
    with cupel.Tokenizer("cl100k_base") as t:
        yield t


# ---- a small vocabulary and its reference tokenizer -------------------------------

# Every single byte (ranks 0..255), then merges, then "world", reachable only
# as a whole piece (tiktoken takes a piece found in the vocabulary as one token
# before merging).
MERGES = [b"he", b"ll", b"hell", b"lo", b"or", b"ld", b" w", b" wor", b"12", b"\xc3\xa9"]
WHOLE = [b"world"]
PATTERN = r" ?[a-z]+|[0-9]{1,3}|[^a-z0-9]"
RANKS = {bytes([b]): b for b in range(256)}
for _tok in MERGES + WHOLE:
    RANKS[_tok] = len(RANKS)


def vocab_file(ranks=RANKS):
    return b"".join(base64.b64encode(tok) + b" " + str(rank).encode() + b"\n" for tok, rank in ranks.items())


def ref_piece(piece: bytes):
    """tiktoken's byte-pair merge of one piece: its tokens as bytes."""
    if piece in RANKS:
        return [piece]
    parts = [piece[i:i + 1] for i in range(len(piece))]
    while len(parts) > 1:
        best = min(range(len(parts) - 1), key=lambda i: RANKS.get(parts[i] + parts[i + 1], math.inf))
        if parts[best] + parts[best + 1] not in RANKS:
            break
        parts[best:best + 2] = [parts[best] + parts[best + 1]]
    return parts


def ref_tokens(text: str):
    """encode_ordinary of `text` with the small vocabulary: the tokens as bytes."""
    return [tok for piece in re.findall(PATTERN, text) for tok in ref_piece(piece.encode("utf-8"))]


def ref_count(b: bytes) -> int:
    return len(ref_tokens(b.decode("utf-8")))


def ref_truncate(text: str, max_tokens: int, keep: cupel.Keep):
    """The contract's rules (abi-text.md, "Token-exact truncation") by brute
    force, in BYTE offsets: (head_end, tail_start, tokens)."""
    b = text.encode("utf-8")
    n = len(b)
    total = ref_count(b)
    if total <= max_tokens:
        return n, n, total
    bounds, at = [0], 0
    for tok in ref_tokens(text):
        at += len(tok)
        bounds.append(at)
    bounds = [x for x in bounds if x == n or (b[x] & 0xC0) != 0x80]  # character boundaries only

    def head(m):
        return max(x for x in bounds if ref_count(b[:x]) <= m)

    def tail(m, start):
        return min(x for x in bounds if x >= start and ref_count(b[x:]) <= m)

    if keep is cupel.Keep.HEAD:
        h = head(max_tokens)
        return h, n, ref_count(b[:h])
    if keep is cupel.Keep.TAIL:
        t = tail(max_tokens, 0)
        return 0, t, ref_count(b[t:])
    h = head((max_tokens + 1) // 2)
    used = ref_count(b[:h])
    t = tail(max_tokens - used, h)
    return h, t, used + ref_count(b[t:])


@pytest.fixture(scope="module")
def small():
    with cupel.Tokenizer.from_tiktoken(vocab_file(), PATTERN) as t:
        yield t


def random_text(rng, n):
    alphabet = list("helowrd") * 4 + list("  0129,.!\n") + ["é", "日", "本", "😀", "👍🏽", "ß"]
    return "".join(rng.choice(alphabet) for _ in range(n))


# ---- counting ----------------------------------------------------------------------


def test_built_in_counts(o200k, cl100k):
    assert o200k.count(SENTENCE) == 12
    assert o200k.count("hello world") == cl100k.count("hello world") == 2
    assert o200k.count("") == cl100k.count("") == 0
    # Special tokens are ordinary text: "<|endoftext|>" is several tokens.
    assert o200k.count("<|endoftext|>") > 1
    assert o200k.name == "o200k_base" and cl100k.name == "cl100k_base"
    assert repr(o200k) == "<cupel.Tokenizer 'o200k_base'>"
    for t in (o200k, cl100k):
        for text in (JAPANESE, EMOJI):
            n = t.count(text)
            # A byte-level BPE: between one token and one token per UTF-8 byte.
            assert 1 <= n <= len(text.encode("utf-8"))
    # The two vocabularies differ on CJK text (o200k_base merges more of it).
    assert o200k.count(JAPANESE * 4) < cl100k.count(JAPANESE * 4)


def test_a_nul_character_is_text(o200k):
    assert o200k.count("a\0b") == o200k.count_many(["a\0b"])[0] >= 2
    assert o200k.count("a\0b") > o200k.count("ab") - 1


def test_count_many_is_count_in_order(o200k, cl100k):
    texts = [SENTENCE, "", JAPANESE, EMOJI, "x", "\n\n\n", SENTENCE * 50] * 40  # large enough for two threads
    for t in (o200k, cl100k):
        assert t.count_many(texts) == [t.count(x) for x in texts]
        assert t.count_many(iter(texts[:3])) == [t.count(x) for x in texts[:3]]  # any iterable
    assert o200k.count_many([]) == []
    assert o200k.count_many(("",)) == [0]


def test_the_small_vocabulary_counts_as_the_reference(small):
    assert small.name is None and repr(small) == "<cupel.Tokenizer a tiktoken file>"
    # By hand: "hello" merges he, ll, hell (+ o); " world" merges " w", "or",
    # " wor", then "ld"; "world" alone is one token (the whole piece).
    assert ref_tokens("hello world") == [b"hell", b"o", b" wor", b"ld"]
    assert small.count("hello world") == 4
    assert small.count("world") == 1
    assert small.count("123456") == 5  # "123" -> 12 3, "456" -> 4 5 6
    assert small.count("é") == 1 and small.count("😀") == 4
    rng = random.Random(26)
    texts = [random_text(rng, rng.randrange(0, 60)) for _ in range(300)]
    assert small.count_many(texts) == [ref_count(t.encode("utf-8")) for t in texts]
    assert [small.count(t) for t in texts[:50]] == [ref_count(t.encode("utf-8")) for t in texts[:50]]


def test_a_vocabulary_from_any_bytes_like_or_a_file(tmp_path):
    data = vocab_file()
    path = tmp_path / "small.tiktoken"
    path.write_bytes(data)
    for make in (lambda: cupel.Tokenizer.from_tiktoken(bytearray(data), PATTERN),
                 lambda: cupel.Tokenizer.from_tiktoken(memoryview(data), PATTERN),
                 lambda: cupel.Tokenizer.from_tiktoken_file(path, PATTERN),
                 lambda: cupel.Tokenizer.from_tiktoken_file(str(path), pattern=PATTERN)):
        with make() as t:
            assert t.count("hello world") == 4
    # pattern None is o200k_base's: " world" and "hello" split as there.
    with cupel.Tokenizer.from_tiktoken(data) as t:
        assert t.count("hello world") == 4
        assert t.count("hello123456") == 2 + 5


def test_threads_share_one_tokenizer(o200k):
    texts = [f"{JAPANESE} {i} {EMOJI} {SENTENCE * (i % 7)}" for i in range(400)]
    want = [o200k.count(t) for t in texts]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        got = list(pool.map(o200k.count, texts))
        many = list(pool.map(o200k.count_many, [texts] * 4))
        cuts = list(pool.map(lambda t: o200k.truncate(t, 9, cupel.Keep.BOTH_ENDS), texts))
    assert got == want and many == [want] * 4
    assert cuts == [o200k.truncate(t, 9, cupel.Keep.BOTH_ENDS) for t in texts]


# ---- truncation --------------------------------------------------------------------


def byte_offsets(tokenizer, text, max_tokens, keep):
    """cupel_tokenizer_truncate called directly: its BYTE offsets."""
    b = text.encode("utf-8")
    h, t, n = ctypes.c_size_t(), ctypes.c_size_t(), ctypes.c_int64()
    assert _native.lib.cupel_tokenizer_truncate(tokenizer._ptr, b, len(b), max_tokens, int(keep), ctypes.byref(h),
                                                ctypes.byref(t), ctypes.byref(n)) == 0
    return h.value, t.value, n.value


def check_cut(tokenizer, text, max_tokens, keep):
    cut = tokenizer.truncate(text, max_tokens, keep)
    assert isinstance(cut, cupel.Truncation)
    # The kept text and its ranges, in str indices (code points).
    assert cut.text == text[:cut.head_end] + text[cut.tail_start:]
    assert 0 <= cut.head_end <= cut.tail_start <= len(text)
    assert cut.head == text[:cut.head_end] and cut.tail == text[cut.tail_start:]
    # The same ranges as the C ABI's byte offsets.
    hb, tb, n = byte_offsets(tokenizer, text, max_tokens, keep)
    b = text.encode("utf-8")
    assert (len(b[:hb].decode("utf-8")), len(text) - len(b[tb:].decode("utf-8")), n) == \
        (cut.head_end, cut.tail_start, cut.tokens)
    # tokens: the head's count plus the tail's, within max_tokens.
    assert cut.tokens == tokenizer.count(cut.head) + tokenizer.count(cut.tail) <= max(max_tokens, tokenizer.count(text))
    if tokenizer.count(text) > max_tokens:
        assert cut.tokens <= max_tokens
        assert len(cut.text) < len(text)
        if keep == cupel.Keep.HEAD:
            assert cut.tail_start == len(text)
        if keep == cupel.Keep.TAIL:
            assert cut.head_end == 0
    else:
        assert (cut.head_end, cut.tail_start, cut.text) == (len(text), len(text), text)
    return cut


def test_truncate_the_sentence(o200k):
    assert o200k.truncate(SENTENCE, 4, cupel.Keep.HEAD) == cupel.Truncation("Hello, world!", 13, 47, 4)
    assert o200k.truncate(SENTENCE, 4, cupel.Keep.TAIL) == cupel.Truncation("el counting tokens.", 0, 28, 4)
    both = o200k.truncate(SENTENCE, 4, cupel.Keep.BOTH_ENDS)
    assert both == cupel.Truncation("Hello, tokens.", 6, 39, 4)
    assert (both.head, both.tail) == ("Hello,", " tokens.")
    assert o200k.truncate(SENTENCE, 12) == cupel.Truncation(SENTENCE, 47, 47, 12)  # fits; Keep.HEAD by default
    assert o200k.truncate(SENTENCE, 2 ** 63 - 1, "tail") == cupel.Truncation(SENTENCE, 47, 47, 12)
    assert o200k.truncate(SENTENCE, 0, "both_ends") == cupel.Truncation("", 0, 47, 0)
    assert o200k.truncate("", 0) == cupel.Truncation("", 0, 0, 0)
    # The keep spellings: the enum, its value, the strings in any case.
    for keep in (cupel.Keep.TAIL, 1, "tail", "TAIL", "Tail"):
        assert o200k.truncate(SENTENCE, 4, keep).head_end == 0


@pytest.mark.parametrize("text", [JAPANESE, EMOJI, "naïve café — ok", "😀" * 40, "a😀b" * 20])
def test_truncate_non_ascii_in_str_indices(o200k, cl100k, text):
    assert len(text.encode("utf-8")) > len(text)  # the units differ
    for t in (o200k, cl100k):
        total = t.count(text)
        for keep in cupel.Keep:
            for m in sorted({0, 1, 2, 3, 5, 8, total // 2, total - 1, total}):
                check_cut(t, text, m, keep)
    # Offsets are code points, not bytes: the Japanese head ends inside the
    # text's first half of characters, but past that many bytes would be.
    cut = o200k.truncate(JAPANESE, 5, cupel.Keep.HEAD)
    assert 0 < cut.head_end < len(JAPANESE) and JAPANESE.startswith(cut.text)
    hb, _, _ = byte_offsets(o200k, JAPANESE, 5, cupel.Keep.HEAD)
    assert hb == len(cut.text.encode("utf-8")) > cut.head_end


def test_truncate_follows_the_rules_exactly(small):
    """Every keep, every max_tokens, on random text with multi-byte
    characters that the small vocabulary splits into several tokens: the
    ranges are the reference's, converted to str indices."""
    rng = random.Random(2026)
    for _ in range(60):
        text = random_text(rng, rng.randrange(1, 40))
        b = text.encode("utf-8")
        total = ref_count(b)
        for keep in cupel.Keep:
            for m in range(0, total + 2):
                hb, tb, n = ref_truncate(text, m, keep)
                want = (len(b[:hb].decode("utf-8")), len(text) - len(b[tb:].decode("utf-8")), n)
                cut = small.truncate(text, m, keep)
                assert (cut.head_end, cut.tail_start, cut.tokens) == want, (text, m, keep)
                assert cut.text == text[:want[0]] + text[want[1]:]


def test_a_cut_never_splits_a_character(small):
    # "😀" is four single-byte tokens here: no cut may fall between them.
    text = "ab😀😀cd"
    for m in range(0, small.count(text) + 1):
        for keep in cupel.Keep:
            cut = check_cut(small, text, m, keep)
            assert cut.text.encode("utf-8").decode("utf-8") == cut.text


# ---- items from text ---------------------------------------------------------------


def test_push_text_reads_back(o200k):
    with cupel.Items() as items:
        assert items.push(5) == 0
        assert items.push_text(o200k, SENTENCE, 0.75, "Document") == 1
        assert items.push_text(o200k, JAPANESE) == 2
        assert items.push_text(tokenizer=o200k, text="a\0b", score=0.5, kind=None) == 3
        got = items.get(1)
        assert (got.tokens, got.content, got.score, got.kind) == (12, SENTENCE, 0.75, "Document")
        got = items.get(2)
        assert (got.tokens, got.content, got.score, got.kind) == (o200k.count(JAPANESE), JAPANESE, 0.0, "Message")
        assert items.get(3).content == "a\0b" and items.get(3).tokens == o200k.count("a\0b")


def test_extend_texts_and_from_texts(o200k, small):
    texts = [SENTENCE, JAPANESE, EMOJI, "hello world"] * 30
    scores = [0.1 * (i % 10) for i in range(len(texts))]
    kinds = [None, "Document", "ToolOutput", None] * 30
    with cupel.Items() as items:
        items.push(7)
        assert items.extend_texts(o200k, texts, scores, kinds=kinds) is items
        assert len(items) == 1 + len(texts)
        counts = o200k.count_many(texts)
        for i, got in enumerate(list(items)[1:]):
            assert (got.tokens, got.content, got.score) == (counts[i], texts[i], scores[i])
            assert got.kind == (kinds[i] or "Message")
        items.extend_texts(small, ["hello world"])
        assert items.get(len(items) - 1).tokens == 4 and items.get(len(items) - 1).score == 0.0
        assert items.extend_texts(o200k, []) is items
    with cupel.Items.from_texts(o200k, iter(["a b", "c"]), [1, 0.5]) as items:
        assert [(i.tokens, i.content, i.score) for i in items] == [(2, "a b", 1.0), (1, "c", 0.5)]


def test_a_pipeline_on_items_from_text(o200k):
    docs = [SENTENCE * 20, JAPANESE, EMOJI, "How do I log in?"]
    with cupel.Items.from_texts(o200k, docs, [0.2, 0.9, 0.5, 0.8]) as items, cupel.Greedy() as greedy, \
            cupel.Budget(60) as budget:
        chosen = cupel.slice(greedy, items, budget)
        assert sum(items.get(i).tokens for i in chosen) <= 60
        assert 0 not in chosen and 3 in chosen  # the long one does not fit


# ---- errors ------------------------------------------------------------------------


def test_an_unknown_encoding_lists_the_known_ones():
    for name in ("gpt2", "", "O200K_BASE"):
        with pytest.raises(cupel.InvalidArgumentError) as e:
            cupel.Tokenizer(name)
        assert isinstance(e.value, ValueError) and e.value.status is cupel.Status.INVALID_ARGUMENT
        assert "name" in str(e.value) and "o200k_base" in str(e.value) and "cl100k_base" in str(e.value)
    with pytest.raises(cupel.ArgumentTypeError, match="name is None"):
        cupel.Tokenizer(None)
    with pytest.raises(TypeError, match="name must be a str"):
        cupel.Tokenizer(b"o200k_base")
    with pytest.raises(ValueError, match="NUL"):
        cupel.Tokenizer("o200k_base\0")


def test_a_malformed_vocabulary_names_its_line():
    lines = vocab_file().splitlines(keepends=True)
    bad = b"".join(lines[:2] + [b"this is not base64 0\n"] + lines[2:])
    with pytest.raises(ValueError, match=r"line 3\b"):
        cupel.Tokenizer.from_tiktoken(bad)
    no_rank = b"".join(lines[:4] + [base64.b64encode(b"xyz") + b"\n"] + lines[4:])
    with pytest.raises(ValueError, match=r"line 5\b"):
        cupel.Tokenizer.from_tiktoken(no_rank)
    duplicate = b"".join(lines + [base64.b64encode(b"zz") + b" 3\n"])
    with pytest.raises(ValueError, match=rf"line {len(lines) + 1}\b"):
        cupel.Tokenizer.from_tiktoken(duplicate)
    missing = dict(RANKS)
    del missing[b"\x07"]
    with pytest.raises(cupel.InvalidArgumentError):
        cupel.Tokenizer.from_tiktoken(vocab_file(missing))
    with pytest.raises(cupel.InvalidArgumentError, match="pattern"):
        cupel.Tokenizer.from_tiktoken(vocab_file(), "(unclosed")
    with pytest.raises(cupel.ArgumentTypeError, match="ranks must be bytes"):
        cupel.Tokenizer.from_tiktoken(vocab_file().decode())
    with pytest.raises(cupel.ArgumentTypeError, match="ranks is None"):
        cupel.Tokenizer.from_tiktoken(None)
    with pytest.raises(cupel.ArgumentTypeError, match="pattern must be a str"):
        cupel.Tokenizer.from_tiktoken(vocab_file(), b"x")
    with pytest.raises(FileNotFoundError):
        cupel.Tokenizer.from_tiktoken_file("/nonexistent/o200k_base.tiktoken")


def test_texts_are_checked(o200k):
    for call in (o200k.count, lambda t: o200k.truncate(t, 3)):
        with pytest.raises(cupel.InvalidArgumentError, match=r"text is not valid Unicode .*U\+D800 at position 6"):
            call("abcdef\ud800")
        with pytest.raises(cupel.ArgumentTypeError) as e:
            call(None)
        assert e.value.status is cupel.Status.NULL_POINTER and "text is None" in str(e.value)
        with pytest.raises(cupel.ArgumentTypeError, match="text must be a str, not bytes"):
            call(b"hello")
    with pytest.raises(cupel.InvalidArgumentError, match=r"texts\[2\] is not valid Unicode .*position 1"):
        o200k.count_many(["a", "b", "c\udfff"])
    with pytest.raises(cupel.ArgumentTypeError, match=r"texts\[1\] is None"):
        o200k.count_many(["a", None])
    with pytest.raises(cupel.ArgumentTypeError, match=r"texts\[0\] must be a str, not int"):
        o200k.count_many([5])
    for texts in ("abc", b"abc", None, 5):
        with pytest.raises(cupel.ArgumentTypeError, match="texts"):
            o200k.count_many(texts)


def test_truncate_arguments_are_checked(o200k):
    with pytest.raises(cupel.InvalidArgumentError, match="max_tokens is -1; it must be >= 0"):
        o200k.truncate(SENTENCE, -1)
    with pytest.raises(cupel.InvalidArgumentError, match="max_tokens does not fit"):
        o200k.truncate(SENTENCE, 2 ** 63)
    for bad in (2.5, 4.0, "4", True, None):
        with pytest.raises(cupel.ArgumentTypeError, match="max_tokens"):
            o200k.truncate(SENTENCE, bad)
    for bad in (7, -1, "middle", "both"):
        with pytest.raises(cupel.InvalidArgumentError, match="keep is"):
            o200k.truncate(SENTENCE, 4, bad)
    for bad in (None, 1.0, True):
        with pytest.raises(cupel.ArgumentTypeError, match="keep"):
            o200k.truncate(SENTENCE, 4, bad)


def test_push_text_errors_change_nothing(o200k):
    with cupel.Items() as items, cupel.Budget(10) as budget:
        items.push(1)
        cases = [
            (lambda: items.push_text(o200k, ""), ValueError, "text is empty"),
            (lambda: items.push_text(o200k, "x\ud800"), ValueError, "text is not valid Unicode"),
            (lambda: items.push_text(o200k, "x", math.nan), ValueError, "score is NaN"),
            (lambda: items.push_text(o200k, "x", 0.5, " "), ValueError, "kind"),
            (lambda: items.push_text(None, "x"), TypeError, "tokenizer is None"),
            (lambda: items.push_text(budget, "x"), TypeError, "tokenizer must be a Tokenizer, not Budget"),
            (lambda: items.push_text(o200k, 5), TypeError, "text must be a str"),
            (lambda: items.extend_texts(o200k, ["a", "b", ""]), ValueError, r"texts\[2\] is empty"),
            (lambda: items.extend_texts(o200k, ["a", "\ud800"]), ValueError, r"texts\[1\] is not valid Unicode"),
            (lambda: items.extend_texts(o200k, ["a", None]), TypeError, r"texts\[1\] is None"),
            (lambda: items.extend_texts(o200k, ["a", "b"], [0.5, math.inf]), ValueError, r"scores\[1\]"),
            (lambda: items.extend_texts(o200k, ["a", "b"], [0.5, "x"]), TypeError, r"scores\[1\]"),
            (lambda: items.extend_texts(o200k, ["a", "b"], [0.5]), ValueError, "scores has 1 values for 2 texts"),
            (lambda: items.extend_texts(o200k, ["a", "b"], kinds=["Doc", ""]), ValueError, r"kinds\[1\]"),
            (lambda: items.extend_texts(o200k, ["a", "b"], kinds=["Doc", 3]), TypeError, r"kinds\[1\]"),
            (lambda: items.extend_texts(o200k, "ab"), TypeError, "texts must be a sequence of str"),
            (lambda: items.extend_texts(None, ["a"]), TypeError, "tokenizer is None"),
        ]
        for call, cls, message in cases:
            with pytest.raises(cls, match=message) as e:
                call()
            assert isinstance(e.value, cupel.CupelError)
            assert len(items) == 1, message
        with pytest.raises(cupel.ArgumentTypeError):
            cupel.Items.from_texts(o200k, ["a", None])


def test_a_closed_tokenizer():
    t = cupel.Tokenizer("cl100k_base")
    t.close()
    t.close()  # idempotent
    assert t.closed and repr(t) == "<cupel.Tokenizer 'cl100k_base' (closed)>"
    for call in (lambda: t.count("x"), lambda: t.count_many(["x"]), lambda: t.truncate("x", 1)):
        with pytest.raises(cupel.ClosedError, match="tokenizer is closed") as e:
            call()
        assert isinstance(e.value, ValueError) and e.value.status is cupel.Status.NULL_POINTER
    with cupel.Items() as items:
        for call in (lambda: items.push_text(t, "x"), lambda: items.extend_texts(t, ["x"])):
            with pytest.raises(cupel.ClosedError, match="tokenizer is closed"):
                call()
        assert len(items) == 0


def test_tokenizers_are_freed():
    gc.collect()
    before = cupel.live_handles()
    with cupel.Tokenizer("o200k_base") as t:
        assert cupel.live_handles() == before + 1
        loaded = cupel.Tokenizer.from_tiktoken(vocab_file(), PATTERN)
        assert cupel.live_handles() == before + 2
        del loaded  # dropped without close(): the collector frees it
        gc.collect()
        assert cupel.live_handles() == before + 1
        assert t.count("x") == 1
    assert cupel.live_handles() == before
    with pytest.raises(ValueError):
        cupel.Tokenizer("nope")
    with pytest.raises(ValueError):
        cupel.Tokenizer.from_tiktoken(b"!!\n")
    gc.collect()
    assert cupel.live_handles() == before
