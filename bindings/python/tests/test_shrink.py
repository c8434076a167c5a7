"""pytest: items that shrink instead of vanish. Variants (Items.add_variant,
push(variants=...), records' `variants`), truncatable items
(set_truncatable / clear_truncatable / truncatable, push(truncatable=...)),
the pipeline's tokenizer, what a report says was chosen (variant, tokens
added, the cut as UTF-8 byte offsets, the text as sent), the Variant and
Truncated reasons, Items.truncate, and every argument error (nothing
changes on error). Scenario S is the brief's worked example, its values
computed through the C ABI."""
import math

import pytest

import cupel

DOC = "".join(f"Line {i}: the quick brown fox jumps over the lazy dog.\n" for i in range(200))
CLEARED = "[output cleared: 9,000 tokens]"
JAPANESE = "日本語のテキストを数えます。東京は晴れ、大阪は雨でした。" * 20


@pytest.fixture(scope="module")
def tok():
    with cupel.Tokenizer("o200k_base") as t:
        yield t


def scenario_items(tok):
    """Scenario S's three items."""
    items = cupel.Items()
    assert items.push(40, 0.9, "Message") == 0
    items.set_content(0, "What failed in the last build?")
    assert items.push(9000, 0.8, "ToolOutput", variants=[cupel.Variant(12, 0.1, CLEARED)]) == 1
    items.set_content(1, "(the build log)")
    assert items.push_text(tok, DOC, 0.6, "Document", truncatable=cupel.Truncatable(cupel.Keep.HEAD, 50)) == 2
    return items


# ---- Scenario S ----------------------------------------------------------------------


def test_scenario_s_doc(tok):
    assert len(DOC.encode("utf-8")) == 10890
    assert tok.count(DOC) == 2800


@pytest.mark.parametrize("slicer, order", [(cupel.Greedy, [0, 1, 2]), (lambda: cupel.Knapsack(1), [1, 0, 2])],
                         ids=["greedy", "knapsack"])
def test_scenario_s(tok, slicer, order):
    with scenario_items(tok) as items, cupel.Budget(1000, 1000) as budget, slicer() as sl, \
            cupel.Pipeline(slicer=sl) as pipeline:
        # Without a tokenizer: the truncatable item 2 cannot be cut.
        with pytest.raises(cupel.InvalidArgumentError) as e:
            pipeline.run(items, budget, report=True)
        assert isinstance(e.value, ValueError) and e.value.status is cupel.Status.INVALID_ARGUMENT
        assert "item 2" in str(e.value) and "tokenizer" in str(e.value)
        assert "Pipeline.set_tokenizer" in str(e.value) and "cupel_" not in str(e.value)

        pipeline.set_tokenizer(tok)
        placed, report = pipeline.run(items, budget, report=True)
        assert placed == order
        by_item = {d.index: d for d in report.included}
        assert [d.index for d in report.included] == order
        assert report.excluded == []
        assert report.selected_tokens == 1000

        d0, d1, d2 = by_item[0], by_item[1], by_item[2]
        assert [d0.reason, d1.reason, d2.reason] == [cupel.Reason.SCORED, cupel.Reason.VARIANT,
                                                     cupel.Reason.TRUNCATED]
        assert d0.score == 0.9
        assert d1.score == pytest.approx(0.8 * 0.1, rel=1e-12)
        assert d2.score == pytest.approx(0.6 * 948 / 2800, rel=1e-12)
        assert round(d2.score, 7) == 0.2031429
        assert [d0.variant, d1.variant, d2.variant] == [0, 1, 0]
        assert [d0.tokens_added, d1.tokens_added, d2.tokens_added] == [40, 12, 948]
        assert [d0.item_tokens, d1.item_tokens, d2.item_tokens] == [40, 9000, 2800]
        assert [(d.head_end, d.tail_start) for d in (d0, d1, d2)] == [(30, 30), (15, 15), (3647, 10890)]
        assert d0.text == "What failed in the last build?"
        assert d1.text == CLEARED
        assert d2.text == DOC.encode("utf-8")[:3647].decode("utf-8") == DOC[:3647]
        assert tok.count(d2.text) == 948

        # The JSON report says the same.
        included = {d.index: e for d, e in zip(report.included, report.to_dict()["included"])}
        assert included[2]["item"]["tokens"] == 2800
        assert included[1]["reason"]["reason"] == "Variant"
        assert included[1]["reason"]["variant"] == 1 and included[1]["reason"]["tokens_added"] == 12
        assert included[2]["reason"]["reason"] == "Truncated"
        assert included[2]["reason"]["cut"] == {"head_end": 3647, "tail_start": 10890}
        assert included[2]["reason"]["tokens_added"] == 948


def test_scenario_s_read_back(tok):
    with scenario_items(tok) as items:
        assert items.variants(0) == [] and items.variants(2) == []
        assert items.variants(1) == [cupel.Variant(tokens=12, value=0.1, content=CLEARED)]
        assert items.truncatable(0) is None and items.truncatable(1) is None
        assert items.truncatable(2) == cupel.Truncatable(keep=cupel.Keep.HEAD, min_tokens=50)
        got = items.get(2)
        assert (got.tokens, got.content, got.kind) == (2800, DOC, "Document")
        assert got.variants == () and got.truncatable == cupel.Truncatable(cupel.Keep.HEAD, 50)
        assert items.get(1).variants == (cupel.Variant(12, 0.1, CLEARED),)
        assert items.get(1).truncatable is None


# ---- variants: adding and reading back ------------------------------------------------


def test_add_variant_numbers_and_read_back():
    with cupel.Items() as items:
        items.push(500, 0.5)
        assert items.add_variant(0, 50, 0.4, "summary") == 1
        assert items.add_variant(0, tokens=5, value=1, content=None) == 2
        assert items.add_variant(0, 600, 1.0, "bigger than the item") == 3
        assert items.add_variant(0, 0, 1e-300) == 4
        got = items.variants(0)
        assert got == [cupel.Variant(50, 0.4, "summary"), cupel.Variant(5, 1.0, None),
                       cupel.Variant(600, 1.0, "bigger than the item"), cupel.Variant(0, 1e-300)]
        assert all(isinstance(v.value, float) for v in got)
        assert items.get(0).variants == tuple(got)
        assert items.add_variant(0, 1, 0.5, "é 🚀 日本") == 5
        assert items.variants(0)[4].content == "é 🚀 日本"


def test_variants_in_every_form_on_push_and_push_text(tok):
    with cupel.Items() as items:
        i = items.push(100, 0.5, variants=[cupel.Variant(10, 0.5, "ten"), (5, 0.25), (3, 0.125, "three"),
                                           {"tokens": 2, "value": 0.0625}, {"tokens": 1, "value": 1, "content": "x"}])
        assert i == 0
        assert items.variants(0) == [cupel.Variant(10, 0.5, "ten"), cupel.Variant(5, 0.25),
                                     cupel.Variant(3, 0.125, "three"), cupel.Variant(2, 0.0625),
                                     cupel.Variant(1, 1.0, "x")]
        assert items.push(7, variants=()) == 1 and items.variants(1) == []
        assert items.push(7, variants=iter([(1, 0.5)])) == 2 and items.variants(2) == [cupel.Variant(1, 0.5)]
        j = items.push_text(tok, "hello world", 0.5, variants=[(1, 0.5, "hi")], truncatable="tail")
        assert j == 3
        assert items.variants(3) == [cupel.Variant(1, 0.5, "hi")]
        assert items.truncatable(3) == cupel.Truncatable(cupel.Keep.TAIL, 0)


def test_records_carry_variants_and_truncation():
    records = [
        {"tokens": 100, "content": "a", "variants": [(10, 0.5, "short a")], "truncatable": ("both_ends", 3)},
        cupel.Item(tokens=50, content="b", variants=(cupel.Variant(5, 0.5),), truncatable=cupel.Truncatable("tail")),
        {"tokens": 10, "variants": None, "truncatable": None},
        {"tokens": 10, "truncatable": {"min_tokens": 4}},
        {"tokens": 10, "truncatable": True},
        {"tokens": 10, "truncatable": False},
    ]
    with cupel.Items(records) as items:
        assert len(items) == 6
        assert items.variants(0) == [cupel.Variant(10, 0.5, "short a")]
        assert items.truncatable(0) == cupel.Truncatable(cupel.Keep.BOTH_ENDS, 3)
        assert items.variants(1) == [cupel.Variant(5, 0.5)]
        assert items.truncatable(1) == cupel.Truncatable(cupel.Keep.TAIL, 0)
        assert items.variants(2) == [] and items.truncatable(2) is None
        assert items.truncatable(3) == cupel.Truncatable(cupel.Keep.HEAD, 4)
        assert items.truncatable(4) == cupel.Truncatable(cupel.Keep.HEAD, 0)
        assert items.truncatable(5) is None
        # Items read back push again as they were.
        with cupel.Items(list(items)) as copy:
            assert list(copy) == list(items)


def test_truncatable_set_replace_clear_and_keep_spellings():
    with cupel.Items() as items:
        items.push(10)
        assert items.truncatable(0) is None
        items.set_truncatable(0)
        assert items.truncatable(0) == cupel.Truncatable(cupel.Keep.HEAD, 0)
        for keep, want in [("tail", cupel.Keep.TAIL), ("BOTH_ENDS", cupel.Keep.BOTH_ENDS), (0, cupel.Keep.HEAD),
                           (cupel.Keep.TAIL, cupel.Keep.TAIL), (2, cupel.Keep.BOTH_ENDS)]:
            items.set_truncatable(0, keep, 7)
            got = items.truncatable(0)
            assert got == cupel.Truncatable(want, 7) and type(got.keep) is cupel.Keep
        items.set_truncatable(0, min_tokens=0)
        assert items.truncatable(0).min_tokens == 0
        items.clear_truncatable(0)
        assert items.truncatable(0) is None and items.get(0).truncatable is None
        items.clear_truncatable(0)  # a no-op when it is not
        assert items.truncatable(0) is None
    assert cupel.Truncatable("both_ends").keep is cupel.Keep.BOTH_ENDS
    assert cupel.Truncatable() == cupel.Truncatable(cupel.Keep.HEAD, 0)


# ---- the pipeline's tokenizer and the report ------------------------------------------


def cut_run(tok, content, keep, target, min_tokens=1):
    """One truncatable item of `content` under a target of `target`."""
    with cupel.Items() as items, cupel.Budget(target, target) as budget, cupel.Greedy() as greedy, \
            cupel.Pipeline(slicer=greedy, tokenizer=tok) as pipeline:
        items.push_text(tok, content, 0.5, truncatable=(keep, min_tokens))
        placed, report = pipeline.run(items, budget, report=True)
        return placed, report


@pytest.mark.parametrize("keep", list(cupel.Keep))
def test_the_text_as_sent_is_the_cut_in_utf8_bytes(tok, keep):
    full = tok.count(JAPANESE)
    placed, report = cut_run(tok, JAPANESE, keep, 21)
    assert placed == [0]
    (d,) = report.included
    assert d.reason is cupel.Reason.TRUNCATED and d.variant == 0
    # The same cut as Tokenizer.truncate with max_tokens = the tokens left.
    cut = tok.truncate(JAPANESE, 21, keep)
    assert d.text == cut.text
    assert d.tokens_added == cut.tokens <= 21 and report.selected_tokens == cut.tokens
    b = JAPANESE.encode("utf-8")
    # Byte offsets, not str indices (the text is multi-byte).
    assert d.head_end == len(JAPANESE[:cut.head_end].encode("utf-8"))
    assert d.tail_start == len(JAPANESE[:cut.tail_start].encode("utf-8"))
    assert d.text == (b[:d.head_end] + b[d.tail_start:]).decode("utf-8")
    if keep is not cupel.Keep.TAIL:
        assert d.head_end != cut.head_end
    assert d.item_tokens == full
    assert d.score == pytest.approx(0.5 * cut.tokens / full, rel=1e-12)


def test_an_item_that_fits_is_not_cut(tok):
    placed, report = cut_run(tok, JAPANESE, "head", 10_000)
    (d,) = report.included
    n = len(JAPANESE.encode("utf-8"))
    assert d.reason is cupel.Reason.SCORED
    assert (d.variant, d.head_end, d.tail_start, d.text) == (0, n, n, JAPANESE)
    assert d.tokens_added == d.item_tokens == tok.count(JAPANESE)


def test_below_min_tokens_it_is_passed_over(tok):
    placed, report = cut_run(tok, DOC, "head", 40, min_tokens=41)
    assert placed == [] and report.included == []
    (d,) = report.excluded
    assert d.reason is cupel.Reason.BUDGET_EXCEEDED
    assert (d.variant, d.tokens_added, d.head_end, d.tail_start, d.text) == (0, 0, None, None, None)


def test_texts_without_content_and_variants_without_content(tok):
    with cupel.Items() as items, cupel.Budget(100, 100) as budget, cupel.Greedy() as greedy, \
            cupel.Pipeline(slicer=greedy) as pipeline:
        items.push(30, 0.9)  # no content
        items.push(500, 0.8, variants=[(20, 0.5)])  # a variant without content
        items.push(500, 0.7, variants=[(20, 0.5, "digest")])
        items.set_content(2, "the whole thing")
        placed, report = pipeline.run(items, budget, report=True)
        by = {d.index: d for d in report.included}
        assert sorted(by) == [0, 1, 2]
        assert (by[0].variant, by[0].tokens_added, by[0].head_end, by[0].tail_start, by[0].text) == (0, 30, 0, 0, None)
        assert (by[1].reason, by[1].variant, by[1].tokens_added, by[1].text) == (cupel.Reason.VARIANT, 1, 20, None)
        assert (by[1].head_end, by[1].tail_start) == (0, 0)
        assert (by[2].variant, by[2].text) == (1, "digest")
        assert (by[2].head_end, by[2].tail_start) == (15, 15)  # the item's own content, not cut
        assert report.selected_tokens == 70
        # The Slice stage alone honours variants too.
        selected, sliced = cupel.slice(greedy, items, budget, 0, report=True)
        assert sorted(selected) == [0, 1, 2]
        assert {d.index: (d.variant, d.text) for d in sliced.included} == {0: (0, None), 1: (1, None),
                                                                            2: (1, "digest")}


def test_the_pipeline_keeps_its_own_tokenizer_and_none_removes_it():
    with cupel.Items() as items, cupel.Budget(20, 20) as budget, cupel.Greedy() as greedy, \
            cupel.Pipeline(slicer=greedy) as pipeline:
        items.push_text(cupel.Tokenizer("o200k_base"), DOC, 0.5, truncatable="head")
        t = cupel.Tokenizer("o200k_base")
        pipeline.set_tokenizer(t)
        t.close()  # the pipeline holds its own reference
        placed, report = pipeline.run(items, budget, report=True)
        assert placed == [0] and report.included[0].reason is cupel.Reason.TRUNCATED
        assert report.included[0].tokens_added == 20
        pipeline.set_tokenizer(None)
        with pytest.raises(ValueError, match=r"item 0 is truncatable but the pipeline has no tokenizer"):
            pipeline.run(items, budget)
        # Without truncatable items no tokenizer is needed.
        items.clear_truncatable(0)
        assert pipeline.run(items, budget) == []


def test_a_truncatable_item_without_content_fails_the_run(tok):
    with cupel.Items() as items, cupel.Budget(100) as budget, cupel.Greedy() as greedy, \
            cupel.Pipeline(slicer=greedy, tokenizer=tok) as pipeline:
        items.push(10, 0.5)
        items.push(200, 0.5)
        items.set_truncatable(1, "head", 1)
        with pytest.raises(cupel.InvalidArgumentError) as e:
            pipeline.run(items, budget)
        assert "item 1" in str(e.value) and "no content" in str(e.value)
        assert "Items.set_content" in str(e.value)
        items.set_content(1, "now it has some")
        assert pipeline.run(items, budget) == [0, 1]


def test_pipeline_tokenizer_argument_errors(tok):
    with cupel.Greedy() as greedy, cupel.Pipeline(slicer=greedy) as pipeline:
        with pytest.raises(TypeError, match=r"tokenizer must be a Tokenizer, not Greedy"):
            pipeline.set_tokenizer(greedy)
        with pytest.raises(TypeError, match=r"tokenizer must be a Tokenizer, not str"):
            cupel.Pipeline(slicer=greedy, tokenizer="o200k_base")
        closed = cupel.Tokenizer("o200k_base")
        closed.close()
        with pytest.raises(cupel.ClosedError, match=r"tokenizer is closed"):
            pipeline.set_tokenizer(closed)
        with pytest.raises(cupel.ClosedError, match=r"tokenizer is closed"):
            cupel.Pipeline(slicer=greedy, tokenizer=closed)
    pipeline.close()
    with pytest.raises(cupel.ClosedError, match=r"pipeline is closed"):
        pipeline.set_tokenizer(tok)
    with pytest.raises(TypeError, match=r"pipeline is None"):
        cupel.Pipeline.set_tokenizer(None, tok)


# ---- argument errors: each names the argument, and nothing changes -------------------


def two_items():
    items = cupel.Items()
    items.push(100, 0.5, "Message")
    items.push(50, 0.5, "Message")
    items.set_content(0, "alpha")
    items.add_variant(0, 10, 0.5, "a")
    items.set_truncatable(1, "tail", 3)
    return items


def unchanged(items):
    assert len(items) == 2
    assert items.variants(0) == [cupel.Variant(10, 0.5, "a")] and items.variants(1) == []
    assert items.truncatable(0) is None and items.truncatable(1) == cupel.Truncatable(cupel.Keep.TAIL, 3)


@pytest.mark.parametrize("kwargs, error, pattern", [
    ({"value": 0}, ValueError, r"^value is 0; it must be in \(0, 1\]"),
    ({"value": 0.0}, ValueError, r"^value is 0\.0; it must be in \(0, 1\]"),
    ({"value": 1.5}, ValueError, r"^value is 1\.5;"),
    ({"value": -0.5}, ValueError, r"^value is -0\.5;"),
    ({"value": math.nan}, ValueError, r"^value is NaN;"),
    ({"value": math.inf}, ValueError, r"^value is inf;"),
    ({"value": "0.5"}, TypeError, r"^value must be a number"),
    ({"value": True}, TypeError, r"^value must be a number"),
    ({"value": None}, TypeError, r"^value is None"),
    ({"tokens": -1}, ValueError, r"^tokens is -1; a variant's tokens must be >= 0"),
    ({"tokens": 2.5}, TypeError, r"^tokens must be an int, not float"),
    ({"tokens": 2 ** 63}, ValueError, r"^tokens does not fit a 64-bit signed integer"),
    ({"tokens": None}, TypeError, r"^tokens is None"),
    ({"content": ""}, ValueError, r"^content is empty; pass None"),
    ({"content": "\ud800"}, ValueError, r"^content is not valid Unicode text \(a lone surrogate U\+D800"),
    ({"content": "a\0b"}, ValueError, r"^content contains a NUL character at position 1"),
    ({"content": b"bytes"}, TypeError, r"^content must be a str"),
    ({"index": 2}, IndexError, r"^index is 2, out of range: the list holds 2 items"),
    ({"index": -1}, IndexError, r"^index is -1, out of range.*negative indices are not taken"),
    ({"index": 1.0}, TypeError, r"^index must be an int"),
])
def test_add_variant_errors(kwargs, error, pattern):
    with two_items() as items:
        args = {"index": 0, "tokens": 5, "value": 0.5, "content": "c", **kwargs}
        with pytest.raises(error, match=pattern) as e:
            items.add_variant(**args)
        assert isinstance(e.value, cupel.CupelError)
        unchanged(items)


def test_the_256th_variant_is_refused():
    with cupel.Items() as items:
        items.push(100, 0.5)
        for k in range(255):
            assert items.add_variant(0, 1, 0.5) == k + 1
        with pytest.raises(cupel.InvalidArgumentError, match=r"item 0 has 255 variants already"):
            items.add_variant(0, 1, 0.5)
        assert len(items.variants(0)) == 255
        with pytest.raises(ValueError, match=r"^variants has 256 variants; an item has at most 255"):
            items.push(10, variants=[(1, 0.5)] * 256)
        assert len(items) == 1


@pytest.mark.parametrize("kwargs, error, pattern", [
    ({"keep": 7}, ValueError, r"^keep is 7; it must be a cupel.Keep"),
    ({"keep": -1}, ValueError, r"^keep is -1;"),
    ({"keep": "middle"}, ValueError, r"^keep is 'middle'; it must be a cupel.Keep"),
    ({"keep": 1.0}, TypeError, r"^keep must be a cupel.Keep"),
    ({"keep": True}, TypeError, r"^keep must be a cupel.Keep"),
    ({"keep": None}, TypeError, r"^keep is None"),
    ({"min_tokens": -1}, ValueError, r"^min_tokens is -1; it must be >= 0"),
    ({"min_tokens": 2.5}, TypeError, r"^min_tokens must be an int"),
    ({"min_tokens": 2 ** 63}, ValueError, r"^min_tokens does not fit a 64-bit signed integer"),
    ({"index": 2}, IndexError, r"^index is 2, out of range"),
    ({"index": -2}, IndexError, r"^index is -2, out of range"),
])
def test_set_truncatable_errors(kwargs, error, pattern):
    with two_items() as items:
        args = {"index": 1, "keep": "head", "min_tokens": 1, **kwargs}
        with pytest.raises(error, match=pattern):
            items.set_truncatable(**args)
        unchanged(items)


def test_read_back_and_clear_index_errors():
    with two_items() as items:
        for call in (items.clear_truncatable, items.truncatable, items.variants):
            with pytest.raises(IndexError, match=r"^index is 2, out of range"):
                call(2)
            with pytest.raises(TypeError, match=r"^index must be an int"):
                call("0")
        unchanged(items)


def test_closed_and_none_items():
    items = two_items()
    items.close()
    for call in (lambda: items.add_variant(0, 1, 0.5), lambda: items.set_truncatable(0),
                 lambda: items.clear_truncatable(0), lambda: items.truncatable(0), lambda: items.variants(0),
                 lambda: items.truncate(0), lambda: items.push(1, variants=[(1, 0.5)])):
        with pytest.raises(cupel.ClosedError, match=r"^items is closed"):
            call()
    for call in (cupel.Items.add_variant, cupel.Items.set_truncatable):
        with pytest.raises(cupel.ArgumentTypeError, match=r"^items is None; it must be an Items") as e:
            call(None, 0, 1, 0.5) if call is cupel.Items.add_variant else call(None, 0)
        assert e.value.status is cupel.Status.NULL_POINTER


@pytest.mark.parametrize("kwargs, error, pattern", [
    ({"variants": [(1, 0)]}, ValueError, r"^variants\[0\]\.value is 0; it must be in \(0, 1\]"),
    ({"variants": [(1, 0.5), (-1, 0.5)]}, ValueError, r"^variants\[1\]\.tokens is -1"),
    ({"variants": [(1, 0.5, "")]}, ValueError, r"^variants\[0\]\.content is empty"),
    ({"variants": [{"tokens": 1, "value": 0.5, "contents": "x"}]}, ValueError,
     r"^variants\[0\] has the key 'contents'; a variant has only tokens, value and content"),
    ({"variants": [{"value": 0.5}]}, TypeError, r"^variants\[0\]\.tokens is None"),
    ({"variants": [(1,)]}, TypeError, r"^variants\[0\] must be a cupel.Variant, a \(tokens, value\[, content\]\)"),
    ({"variants": [7]}, TypeError, r"^variants\[0\] must be a cupel.Variant"),
    ({"variants": cupel.Variant(1, 0.5)}, TypeError, r"^variants must be a list of cupel.Variant"),
    ({"variants": "abc"}, TypeError, r"^variants must be a list"),
    ({"variants": {"tokens": 1, "value": 0.5}}, TypeError, r"^variants must be a list"),
    ({"truncatable": "middle"}, ValueError, r"^truncatable\.keep is 'middle'"),
    ({"truncatable": ("head", -1)}, ValueError, r"^truncatable\.min_tokens is -1; it must be >= 0"),
    ({"truncatable": ("head", 1.5)}, TypeError, r"^truncatable\.min_tokens must be an int"),
    ({"truncatable": (7, 1)}, ValueError, r"^truncatable\.keep is 7"),
    ({"truncatable": {"keep": "tail", "min": 1}}, ValueError, r"^truncatable has the key 'min'"),
    ({"truncatable": 1}, TypeError, r"^truncatable must be a cupel.Truncatable"),
    ({"truncatable": cupel.Truncatable("sideways", 0)}, ValueError, r"^truncatable\.keep is 'sideways'"),
])
def test_push_with_bad_variants_or_truncation_adds_nothing(tok, kwargs, error, pattern):
    with two_items() as items:
        with pytest.raises(error, match=pattern):
            items.push(10, 0.5, **kwargs)
        with pytest.raises(error, match=pattern):
            items.push_text(tok, "hello world", 0.5, **kwargs)
        unchanged(items)


def test_extend_with_a_bad_variant_adds_nothing():
    with two_items() as items:
        records = [{"tokens": 1}, {"tokens": 2, "variants": [(1, 0.5), (1, math.nan)]}]
        with pytest.raises(ValueError, match=r"^records\[1\]\.variants\[1\]\.value is NaN"):
            items.extend(records)
        with pytest.raises(ValueError, match=r"^records\[0\]\.truncatable\.min_tokens is -3"):
            items.extend([{"tokens": 1, "truncatable": ("tail", -3)}])
        unchanged(items)


def test_a_failure_after_the_push_is_undone(monkeypatch):
    # Were a variant or a truncation to reach C unchecked and be refused
    # there, the items already pushed are removed again (cupel_items_truncate).
    monkeypatch.setattr(cupel, "_truncatable_arg", lambda v, name: None if v is None else (cupel.Keep.HEAD, -1))
    with two_items() as items:
        with pytest.raises(cupel.InvalidArgumentError, match=r"min_tokens is -1 for item 2"):
            items.push(10, 0.5, variants=[(1, 0.5)], truncatable="head")
        with pytest.raises(cupel.InvalidArgumentError, match=r"min_tokens is -1 for item 4"):
            items.extend([{"tokens": 1, "content": "x", "tags": ["t"]}, {"tokens": 2},
                          {"tokens": 3, "truncatable": "head"}])
        unchanged(items)
        assert items.get(1).content is None and items.get(1).tags == ()


# ---- Items.truncate --------------------------------------------------------------------


def test_truncate_undoes_pushes():
    with two_items() as items:
        items.push(7, 0.25, "Document", variants=[(1, 0.5, "v")])
        items.set_content(2, "gamma")
        items.add_tag(2, "t")
        items.set_truncatable(2, "head", 1)
        assert len(items) == 3
        items.truncate(3)  # its own length: nothing changes
        assert len(items) == 3
        items.truncate(2)
        unchanged(items)
        assert items.get(0).content == "alpha"
        # The next push takes index 2 again, with none of the old attributes.
        assert items.push(5) == 2
        got = items.get(2)
        assert (got.tokens, got.content, got.tags, got.variants, got.truncatable) == (5, None, (), (), None)
        items.truncate(0)
        assert len(items) == 0 and list(items) == []


@pytest.mark.parametrize("length, error, pattern", [
    (3, ValueError, r"^length is 3; it must be in 0 \.\. 2 \(the list holds 2 items"),
    (-1, ValueError, r"^length is -1; it must be in 0 \.\. 2"),
    (2 ** 64, ValueError, r"^length is 18446744073709551616"),
    (1.0, TypeError, r"^length must be an int, not float"),
    (None, TypeError, r"^length is None"),
])
def test_truncate_errors(length, error, pattern):
    with two_items() as items:
        with pytest.raises(error, match=pattern):
            items.truncate(length)
        unchanged(items)
