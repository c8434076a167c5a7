"""pytest for the Python package, run from an installed copy (tests/python_binding.rs
installs it into a fresh virtual environment first)."""
import dataclasses
import json

import pytest

import cupel


def test_the_library_is_bundled_in_the_package():
    import os
    import pathlib
    if os.environ.get("CUPEL_LIB"):
        pytest.skip("CUPEL_LIB loads another library (a run from the source tree)")
    here = pathlib.Path(cupel.__file__).resolve().parent
    assert (here / "libcupel.so").exists() or (here / "libcupel.dylib").exists()
    assert (here / "py.typed").exists()
    assert cupel.version().count(".") == 2


def test_greedy_and_knapsack_on_the_spec_example():
    with cupel.Items([{"tokens": t, "score": s} for t, s in [(400, 0.9), (100, 0.7), (100, 0.5), (200, 0.1)]]) as items:
        budget = cupel.Budget(300)
        assert cupel.slice(cupel.Greedy(), items, budget) == [1, 2]
        selected, report = cupel.slice(cupel.Knapsack(1), items, budget, report=True)
        assert sorted(selected) == [1, 2]
        assert report.selected_tokens == 200
        over = next(d for d in report.excluded if d.index == 0)
        assert over.reason is cupel.Reason.BUDGET_EXCEEDED and over.reason.spec_name == "BudgetExceeded"
        assert (over.item_tokens, over.available_tokens) == (400, 100)


def test_errors_carry_status_and_message():
    with pytest.raises(ValueError) as e:
        cupel.Knapsack(0)
    assert e.value.status is cupel.Status.INVALID_ARGUMENT and "bucket_size is 0" in str(e.value)
    with pytest.raises(cupel.CupelError, match="target_tokens 20 > max_tokens 10"):
        cupel.Budget(10, 20)
    with pytest.raises(cupel.CupelError, match=r"scores\[0\] is NaN"):
        cupel.Items([{"tokens": 1, "score": float("nan")}])
    items = cupel.Items([{"tokens": 1}])
    with pytest.raises(cupel.IndexOutOfRangeError, match="index is 5, out of range"):
        items.set_group(5, 1)
    strict = cupel.CountQuota(cupel.Greedy(), {"Memory": (1, 2)}, cupel.Scarcity.ERROR)
    with pytest.raises(cupel.ScarcityError):
        cupel.slice(strict, items, cupel.Budget(100))
    items.close()
    items.close()
    assert items.closed
    with pytest.raises(cupel.ClosedError, match="items is closed") as e:
        len(items)
    assert isinstance(e.value, ValueError) and e.value.status is cupel.Status.NULL_POINTER


@dataclasses.dataclass
class Turn:
    tokens: int
    content: str
    timestamp: int = None
    kind: str = "Message"
    pinned: bool = False


def test_pipeline_from_dataclasses_with_report():
    day = 86400000
    turns = [
        Turn(50, "You are helpful.", 0, "SystemPrompt", True),
        Turn(100, "hello", day),
        Turn(100, "how are you", 2 * day),
        Turn(100, "ls output", 3 * day, "ToolOutput"),
        Turn(100, "hello", 4 * day),
        Turn(-3, "broken"),
        Turn(5000, "a huge file", None, "Document"),
    ]
    with cupel.Items.from_records(turns) as items, cupel.Pipeline(
        scorer=cupel.scorers.Composite([(cupel.scorers.Recency(), 2), (cupel.scorers.Kind(), 1)]),
        slicer=cupel.Greedy(),
        placer=cupel.Chronological(),
    ) as pipeline:
        placed, report = pipeline.run(items, cupel.Budget(1000, 300), report=True)
        assert placed[0] == 0
        assert report.included[0].reason is cupel.Reason.PINNED
        why = {d.index: d for d in report.excluded}
        assert why[1].reason is cupel.Reason.DEDUPLICATED and why[1].related_index == 4
        assert why[5].reason is cupel.Reason.NEGATIVE_TOKENS
        assert why[6].reason is cupel.Reason.BUDGET_EXCEEDED
        assert report.total_candidates == 7
        assert report.to_dict()["total_candidates"] == 7
        assert json.loads(report.json)["excluded"]
        strict = cupel.Pipeline(slicer=cupel.Greedy(), overflow=cupel.Overflow.THROW)
        with pytest.raises(cupel.CupelError, match="pinned items need 50 tokens"):
            strict.run(items, cupel.Budget(40))


def test_columns_fast_path():
    items = cupel.Items.from_columns([10, 200, 60], [0.9, 0.1, 0.5], kinds=["ToolCall", "ToolOutput", None],
                                     contents=["a", None, "c"], timestamps=[1, 2, 3], pinned=[False, False, True],
                                     groups=[7, 7, 0])
    assert len(items) == 3
    placed, report = cupel.Pipeline(slicer=cupel.Greedy(), placer=cupel.Chronological()).run(
        items, cupel.Budget(100), report=True)
    assert placed == [2]  # the pinned one; the pair (210) does not fit
    assert report.included[0].reason is cupel.Reason.PINNED
    with pytest.raises(ValueError, match=r"kinds\[1\] is empty"):
        cupel.Items.from_columns([1, 2], kinds=["a", ""])
    with pytest.raises(ValueError, match="contents has 1 values for 2 tokens"):
        cupel.Items.from_columns([1, 2], contents=["x"])


def test_groups_and_every_scorer():
    items = cupel.Items([
        cupel.Item(tokens=10, score=0.9, kind="ToolCall", group=7, tags=["auth"], metadata={"cupel:trust": "0.9"}),
        cupel.Item(tokens=200, score=0.1, kind="ToolOutput", group=7, priority=3, relevance_hint=0.4),
        cupel.Item(tokens=60, score=0.5, timestamp=1000, source="Docs"),
    ])
    selected, report = cupel.slice(cupel.Greedy(), items, cupel.Budget(100), report=True)
    assert selected == [2]
    assert all(d.group == 7 and d.group_tokens == 210 for d in report.excluded)
    s = cupel.scorers
    for scorer in [s.Given(), s.Recency(), s.Priority(), s.Frequency(), s.Reflexive(), s.Kind({"ToolCall": 2}),
                   s.Tag({"auth": 1}), s.MetadataTrust(), s.MetadataKey("k", "v", 2),
                   s.Decay(s.STEP, windows=[(60, 0.9), (3600, 0.1)], reference_time=10000),
                   s.Scaled(s.Given())]:
        with scorer:
            assert len(scorer.score(items)) == 3
    assert s.Given().score(items) == [0.9, 0.1, 0.5]
    with pytest.raises(ValueError, match="boost"):
        s.MetadataKey("k", "v", 0)


def test_handles_are_freed():
    import gc
    gc.collect()
    before = cupel.live_handles()
    for _ in range(100):
        cupel.slice(cupel.Greedy(), cupel.Items([{"tokens": 1}]), cupel.Budget(10))
    gc.collect()
    assert cupel.live_handles() == before


def test_placer_place_and_tokens_over_budget():
    day = 86400000
    items = cupel.Items.from_columns([50, 100, 100, 100], [0.0] * 4, timestamps=[0, day, 2 * day, 3 * day],
                                     pinned=[True, False, False, False])
    # Timestamps 3, 1 and 0 days; scores 0.1, 0.9, 0.5.
    assert cupel.Chronological().place(items, [3, 1, 0], [0.1, 0.9, 0.5]) == [0, 1, 3]
    assert cupel.UShaped().place(items, [3, 1, 0], [0.1, 0.9, 0.5]) == [1, 3, 0]
    assert cupel.UShaped().place(items, [], []) == []
    with pytest.raises(cupel.InvalidArgumentError, match="2 indices and 1 scores"):
        cupel.UShaped().place(items, [1, 2], [0.5])
    with pytest.raises(cupel.IndexOutOfRangeError, match=r"indices\[0\] is -1"):
        cupel.UShaped().place(items, [-1], [0.5])
    with pytest.raises(IndexError, match=r"indices\[0\] is 99, out of range: the list holds 4 items"):
        cupel.UShaped().place(items, [99], [0.5])
    with cupel.Pipeline(slicer=cupel.Greedy(), overflow=cupel.Overflow.PROCEED) as pipeline:
        placed, report = pipeline.run(items, cupel.Budget(1000, 40), report=True)
        assert placed == [0]
        assert report.tokens_over_budget == 10  # the pinned 50 over a target of 40
        _, report = pipeline.run(items, cupel.Budget(1000, 1000), report=True)
        assert report.tokens_over_budget == 0
