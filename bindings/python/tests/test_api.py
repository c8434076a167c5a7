"""pytest: read-back, reason names, argument checks, the budget simulation
calls, streams and the package's install (tests/python_binding.rs runs
these from the installed wheel under CPython and PyPy)."""
import gc
import math
import os
import sys
from pathlib import Path

import pytest

import cupel

s = cupel.scorers


def test_the_package_is_the_installed_wheel():
    # tests/python_binding.rs sets CUPEL_TEST_INSTALLED: cupel must then come
    # from the virtual environment, with the library inside the package.
    if not os.environ.get("CUPEL_TEST_INSTALLED"):
        pytest.skip("run from the source tree")
    here = Path(cupel.__file__).resolve()
    assert Path(sys.prefix).resolve() in here.parents, (here, sys.prefix)
    assert (here.parent / "libcupel.so").exists()
    assert "CUPEL_LIB" not in os.environ
    assert cupel.abi_version() == 2


def full_items():
    items = cupel.Items()
    assert items.push(120, 0.25, "SystemPrompt") == 0
    assert items.push(30) == 1
    items.set_content(0, "system prompt")
    items.set_timestamp(0, -5)
    items.set_priority(0, 7)
    items.set_pinned(0, True)
    items.set_relevance_hint(0, 0.75)
    items.set_source(0, "Rag")
    items.set_group(0, 2 ** 64 - 1)
    items.add_tag(0, "b")
    items.add_tag(0, "a")
    items.add_tag(0, "b")
    items.set_metadata(0, "z", "1")
    items.set_metadata(0, "y", "é")
    items.set_metadata(0, "z", "2")  # replaces, keeps its place
    return items


def test_read_back_every_attribute():
    with full_items() as items:
        got = items.get(0)
        assert got == cupel.Item(tokens=120, score=0.25, kind="SystemPrompt", content="system prompt", timestamp=-5,
                                 priority=7, pinned=True, relevance_hint=0.75, source="Rag", tags=("b", "a", "b"),
                                 metadata={"z": "2", "y": "é"}, group=2 ** 64 - 1)
        assert list(got.metadata) == ["z", "y"]


def test_read_back_absent_values_and_defaults():
    with full_items() as items:
        got = items.get(1)
        assert (got.tokens, got.score, got.kind, got.source) == (30, 0.0, "Message", "Chat")
        assert got.content is None and got.timestamp is None and got.priority is None
        assert got.relevance_hint is None
        assert got.pinned is False and got.group == 0 and got.tags == () and got.metadata == {}
        # Kinds compare case-insensitively and read back as first spelled.
        items.push(1, 0.5, "systemprompt")
        assert items.get(2).kind == "SystemPrompt"
        assert [i.tokens for i in items] == [120, 30, 1]


def test_read_back_round_trips_records():
    records = [cupel.Item(tokens=10, score=0.5, kind="Document", content="x", timestamp=3, priority=1, pinned=True,
                          relevance_hint=0.2, source="Tool", tags=("t",), metadata={"k": "v"}, group=4),
               cupel.Item(tokens=-3, kind="Message", source="Chat")]
    with cupel.Items(records) as items:
        assert list(items) == records


def test_read_back_out_of_range():
    with full_items() as items:
        with pytest.raises(cupel.IndexOutOfRangeError, match=r"index is 2, out of range: the list holds 2 items "
                                                             r"\(valid indices: 0 to 1\)") as e:
            items.get(2)
        assert isinstance(e.value, IndexError) and isinstance(e.value, cupel.CupelError)
        with pytest.raises(IndexError, match="index is -1.*negative indices are not taken"):
            items.get(-1)
        with pytest.raises(TypeError, match=r"index must be an int, not float \(1.0\)"):
            items.get(1.0)
        with pytest.raises(TypeError, match=r"index must be an int, not bool"):
            items.get(True)
    with cupel.Items() as empty, pytest.raises(IndexError, match="none: the list is empty"):
        empty.get(0)


def test_reason_names_come_from_the_library():
    for reason in cupel.Reason:
        # The enum's names are the library's names in upper snake case.
        assert reason.spec_name == "".join(w.capitalize() for w in reason.name.split("_"))
        assert cupel.reason_name(int(reason)) == reason.spec_name
    assert cupel.Reason.COUNT_CAP_EXCEEDED.spec_name == "CountCapExceeded"
    assert (cupel.Reason.VARIANT, cupel.Reason.TRUNCATED) == (3, 4)
    assert cupel.Reason(3).spec_name == "Variant" and cupel.Reason(4).spec_name == "Truncated"
    assert cupel.Reason.DEFERRED == 19 and cupel.reason_name(19) == "Deferred"
    for unknown in (5, 9, 20, -1, 2 ** 31, -(2 ** 40)):
        assert cupel.reason_name(unknown) == "Unknown"
    with pytest.raises(TypeError, match="code must be an int"):
        cupel.reason_name(1.0)


def test_ints_are_checked_before_they_reach_c():
    with cupel.Items() as items:
        for bad, what in [(10.7, "float"), (True, "bool"), ("10", "str"), (None, "None")]:
            with pytest.raises(TypeError, match="tokens"):
                items.push(bad)
            with pytest.raises(TypeError, match=r"records\[1\].tokens"):
                items.extend([{"tokens": 1}, {"tokens": bad}])
            with pytest.raises(TypeError, match=r"tokens\[1\]"):
                items.extend_columns([1, bad])
        for huge in (2 ** 63, -(2 ** 63) - 1):
            with pytest.raises(ValueError, match="tokens does not fit a 64-bit signed integer") as e:
                items.push(huge)
            assert "9223372036854775808" not in str(e.value)
            with pytest.raises(ValueError, match=r"timestamps\[0\] does not fit"):
                items.extend_columns([1], timestamps=[huge])
        with pytest.raises(ValueError, match=r"records\[0\].group is -1"):
            items.extend([{"tokens": 1, "group": -1}])
        with pytest.raises(TypeError, match=r"records\[0\].pinned must be a bool, not int"):
            items.extend([{"tokens": 1, "pinned": 1}])
        with pytest.raises(TypeError, match=r"records\[0\].metadata\['k'\] must be a str, not float"):
            items.extend([{"tokens": 1, "metadata": {"k": 0.5}}])
        with pytest.raises(TypeError, match=r"records\[0\].tags must be a list of str, not str"):
            items.extend([{"tokens": 1, "tags": "abc"}])
        with pytest.raises(ValueError, match=r"records\[0\].source '  ' is empty or only whitespace"):
            items.extend([{"tokens": 1, "source": "  "}])
        with pytest.raises(ValueError, match=r"contents\[0\] contains a NUL"):
            items.extend_columns([1], contents=["a\0b"])
        with pytest.raises(ValueError, match=r"records\[1\].kind is not valid Unicode"):
            items.extend([{"tokens": 1}, {"tokens": 1, "kind": "\udfff"}])
        # A failed call adds nothing: the checks come before the first native call.
        assert len(items) == 0
        # NumPy-style integers (anything with __index__) are ints.
        class Index:
            def __index__(self):
                return 4
        assert items.push(Index(), 1) == 0 and items.get(0).tokens == 4 and items.get(0).score == 1.0
        items.extend_columns([2 ** 63 - 1, -(2 ** 63)], [0.0, 0.0])
        assert [i.tokens for i in items][1:] == [2 ** 63 - 1, -(2 ** 63)]


def test_budget_setters_and_effective():
    with cupel.Budget(1000, 800) as budget:
        budget.set_output_reserve(100)
        budget.reserve("Memory", 50)
        budget.set_safety_margin(10)
        mx, target = budget.effective(pinned_tokens=20)
        assert mx < 1000 and target < 800
        with pytest.raises(ValueError, match="output_reserve is -1"):
            budget.set_output_reserve(-1)
        with pytest.raises(TypeError, match="percent must be a number"):
            budget.set_safety_margin("5")
        assert budget.effective(pinned_tokens=20) == (mx, target)
    with pytest.raises(TypeError, match="max_tokens must be an int, not float"):
        cupel.Budget(1000.0)
    with pytest.raises(ValueError, match="max_tokens does not fit"):
        cupel.Budget(2 ** 63)
    with pytest.raises(ValueError, match=r"target_tokens 20 > max_tokens 10"):
        cupel.Budget(10, 20)
    budget.close()
    with pytest.raises(cupel.ClosedError, match="budget is closed"):
        budget.effective()


def test_marginal_items_and_find_min_budget():
    with cupel.Items.from_columns([100, 200, 50], [0.9, 0.5, 0.1]) as items, cupel.Budget(300, 250) as budget, \
            cupel.Greedy() as greedy:
        # The C ABI's order: (slicer, items, budget, pinned_tokens, slack_tokens).
        assert cupel.marginal_items(greedy, items, budget, 0, 150) == [2]
        assert cupel.marginal_items(greedy, items, budget, 0, 0) == []
        # (slicer, items, pinned_tokens, target_index, search_ceiling)
        assert cupel.find_min_budget(greedy, items, 0, 2, 1000) == 150
        assert cupel.find_min_budget(greedy, items, 0, 1, 1000) == 300
        assert cupel.find_min_budget(greedy, items, 0, 1, 250) is None
        with pytest.raises(ValueError, match="search_ceiling"):
            cupel.find_min_budget(greedy, items, 0, 1, 100)
        with pytest.raises(IndexError, match="target_index is 3"):
            cupel.find_min_budget(greedy, items, 0, 3, 1000)
        with pytest.raises(ValueError, match="slack_tokens is -1"):
            cupel.marginal_items(greedy, items, budget, 0, -1)
        with cupel.Quota(greedy, {"Message": (10, 50)}) as quota, pytest.raises(cupel.UnsupportedError):
            cupel.marginal_items(quota, items, budget, 0, 10)


def test_stream():
    with cupel.Stream(100, 2) as stream:
        assert stream.push(60, 0.9) is False
        assert stream.push(60, 0.5) is False  # the batch: 60 taken, 60 does not fit
        assert stream.push(30, 0.1, group=5) is False  # a group: one candidate of the batch
        assert stream.push(10, 0.1, group=5) is False
        assert stream.push(1, 0.1) is True  # the batch closes: 100 spent, the producer can stop
        assert stream.finish() == [0, 2, 3]
        assert stream.finish() == [0, 2, 3]
        with pytest.raises(ValueError, match="finished"):
            stream.push(1, 0.5)
    with cupel.Stream(100) as stream:
        with pytest.raises(ValueError, match="score is NaN"):
            stream.push(1, math.nan)
        with pytest.raises(TypeError, match=r"tokens must be an int, not float \(1.5\)"):
            stream.push(1.5, 0.5)
        with pytest.raises(ValueError, match="group is -1"):
            stream.push(1, 0.5, group=-1)
        assert stream.finish() == []
    with pytest.raises(ValueError, match="batch_size is -1"):
        cupel.Stream(100, -1)


def test_slicer_memory_limit_and_count_reports():
    with cupel.Knapsack(1) as knapsack:
        assert knapsack.memory_limit == 1 << 30
        knapsack.memory_limit = 64
        assert knapsack.memory_limit == 64
        with cupel.Items.from_columns([1000] * 50, [0.5] * 50) as items, pytest.raises(cupel.CapacityError):
            cupel.slice(knapsack, items, cupel.Budget(100000))
        with pytest.raises(ValueError, match="memory_limit is -1"):
            knapsack.memory_limit = -1
    with cupel.Items.from_columns([10, 10, 10], [0.9, 0.8, 0.7], kinds=["Memory", "Memory", "Message"]) as items:
        slicer = cupel.CountQuota(cupel.Greedy(), {"Memory": (1, 1), "Document": (1, 2)})
        selected, report = cupel.slice(slicer, items, cupel.Budget(1000), report=True)
        assert sorted(selected) == [0, 2]
        assert report.cap_excluded == [1]
        assert report.shortfalls == [cupel.Shortfall("Document", 1, 0)]
        assert any(d.reason is cupel.Reason.COUNT_CAP_EXCEEDED for d in report.excluded)


def test_handles_are_checked():
    items, budget = cupel.Items([{"tokens": 1}]), cupel.Budget(10)
    with pytest.raises(TypeError, match="slicer must be a Slicer, not Scorer"):
        cupel.slice(s.Recency(), items, budget)
    with pytest.raises(TypeError, match="items is None; it must be an Items"):
        cupel.Pipeline(slicer=cupel.Greedy()).run(None, budget)
    with pytest.raises(TypeError, match=r"parts\[1\] must be a Scorer, not Greedy"):
        s.Composite([(s.Recency(), 1), (cupel.Greedy(), 1)])
    with pytest.raises(TypeError, match=r"parts\[0\] must be a \(scorer, weight\) pair"):
        s.Composite([s.Recency()])
    with pytest.raises(ValueError, match="overflow is 7"):
        cupel.Pipeline(slicer=cupel.Greedy(), overflow=7)
    closed = cupel.Greedy()
    closed.close()
    with pytest.raises(cupel.ClosedError, match="inner is closed"):
        cupel.Quota(closed, {})
    gc.collect()
