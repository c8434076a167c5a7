"""pytest: sessions (cache-stable selection across turns). Item identity
(keys and volatile items: push(key=..., volatile=...), records, columns,
set_key / set_volatile, read back by get), cupel.Session (its rules
first / append / compact, the stable prefix, the breakpoints, reset, the
slack), the report's "session" object and the Deferred reason, and every
argument error (nothing changes on error)."""
import json
import math

import pytest

import cupel

# Three keyed items: by the pushed scores, item 0 then 1 fit 250 tokens, 2 does not.
ABC = [  # tokens, score, content, key
    (100, 0.9, "a", 1),
    (100, 0.8, "b", 2),
    (200, 0.5, "c", 3),
]


def abc_items(extra=()):
    """ABC, plus `extra` records."""
    records = [dict(tokens=t, score=s, content=c, key=k) for t, s, c, k in ABC]
    return cupel.Items(records + list(extra))


@pytest.fixture
def pipeline():
    with cupel.Greedy() as greedy, cupel.Pipeline(slicer=greedy) as p:
        yield p


@pytest.fixture
def session(pipeline):
    with cupel.Session(pipeline) as s:
        yield s


# ---- item identity -----------------------------------------------------------------


def test_keys_and_volatile_read_back_from_every_push():
    with cupel.Items() as items:
        assert items.push(10, 0.5, key=7) == 0
        assert items.push(10, 0.5, volatile=True) == 1
        assert items.push(10, 0.5, key=2 ** 64 - 1, volatile=True) == 2
        assert items.push(10, 0.5) == 3
        items.extend([{"tokens": 5, "key": 9}, cupel.Item(tokens=6, volatile=True), {"tokens": 7, "key": None}])
        items.extend_columns([1, 2], keys=[11, 0], volatile=[False, True])
        assert [(i.key, i.volatile) for i in items] == [(7, False), (0, True), (2 ** 64 - 1, True), (0, False),
                                                        (9, False), (0, True), (0, False), (11, False), (0, True)]
        items.set_key(3, 42)
        items.set_volatile(3)
        assert (items.get(3).key, items.get(3).volatile) == (42, True)
        items.set_key(3, 0)
        items.set_volatile(3, False)
        assert (items.get(3).key, items.get(3).volatile) == (0, False)
    with cupel.Tokenizer("o200k_base") as tok, cupel.Items() as items:
        items.push_text(tok, "hello world", key=5, volatile=True)
        assert items.get(0) == cupel.Item(tokens=2, content="hello world", kind="Message", source="Chat", key=5,
                                          volatile=True)
    with cupel.Items.from_columns([3, 4], keys=[1, 2], volatile=[True, False]) as items:
        assert [(i.key, i.volatile) for i in items] == [(1, True), (2, False)]


def test_records_round_trip_with_keys():
    records = [cupel.Item(tokens=10, score=0.5, kind="Message", source="Chat", key=3, volatile=True),
               cupel.Item(tokens=20, kind="Document", source="Chat", key=2 ** 63)]
    with cupel.Items(records) as items:
        assert list(items) == records


@pytest.mark.parametrize("call, error, match", [
    (lambda it: it.push(10, key=-1), ValueError, r"key is -1; it must be >= 0"),
    (lambda it: it.push(10, key=2 ** 64), ValueError, r"key does not fit a 64-bit unsigned integer"),
    (lambda it: it.push(10, key=1.5), TypeError, r"key must be an int, not float"),
    (lambda it: it.push(10, key="7"), TypeError, r"key must be an int, not str"),
    (lambda it: it.push(10, volatile="yes"), TypeError, r"volatile must be a bool, not str"),
    (lambda it: it.push(10, volatile=1), TypeError, r"volatile must be a bool, not int"),
    (lambda it: it.extend([{"tokens": 1}, {"tokens": 1, "key": -2}]), ValueError, r"records\[1\]\.key is -2"),
    (lambda it: it.extend([{"tokens": 1, "volatile": "no"}]), TypeError, r"records\[0\]\.volatile must be a bool"),
    (lambda it: it.extend_columns([1, 2], keys=[1, 2 ** 64]), ValueError, r"keys\[1\] does not fit"),
    (lambda it: it.extend_columns([1, 2], keys=[1]), ValueError, r"keys has 1 values for 2 tokens"),
    (lambda it: it.extend_columns([1, 2], volatile=[True, None]), TypeError, r"volatile\[1\] is None"),
    (lambda it: it.set_key(1, -1), ValueError, r"key is -1"),
    (lambda it: it.set_key(2, 1), IndexError, r"index is 2, out of range"),
    (lambda it: it.set_volatile(-1), IndexError, r"index is -1"),
    (lambda it: it.set_volatile(0, "yes"), TypeError, r"volatile must be a bool"),
    (lambda it: cupel.Items.set_key(None, 0, 1), TypeError, r"items is None"),
])
def test_identity_errors_change_nothing(call, error, match):
    with cupel.Items() as items:
        items.push(1, key=4)
        items.push(2)
        with pytest.raises(error, match=match) as e:
            call(items)
        assert isinstance(e.value, cupel.CupelError)
        assert [(i.tokens, i.key, i.volatile) for i in items] == [(1, 4, False), (2, 0, False)]


def test_identity_setters_on_a_closed_list():
    items = cupel.Items([{"tokens": 1}])
    items.close()
    for call in (lambda: items.set_key(0, 1), lambda: items.set_volatile(0)):
        with pytest.raises(cupel.ClosedError, match="items is closed"):
            call()


# ---- the rules: first, append, compact -----------------------------------------------


def test_first_run_then_append_on_the_same_list(session, pipeline):
    assert session.last_action is cupel.SessionAction.FIRST
    assert session.stable_prefix == (0, 0) and session.breakpoints == []
    with abc_items() as items, cupel.Budget(250) as budget:
        first = session.run(items, budget)
        assert first == pipeline.run(items, budget) == [0, 1]
        assert session.last_action is cupel.SessionAction.FIRST
        assert session.stable_prefix == (0, 0)
        assert session.stable_prefix.items == 0 and session.stable_prefix.tokens == 0
        assert session.breakpoints == [cupel.Breakpoint(2, 200, cupel.BreakpointMark.END)]

        assert session.run(items, budget) == first
        assert session.last_action is cupel.SessionAction.APPEND
        assert session.stable_prefix == (2, 200)  # the whole output
        assert isinstance(session.stable_prefix, cupel.StablePrefix)
        assert session.breakpoints == [cupel.Breakpoint(2, 200, cupel.BreakpointMark.END)]


def test_a_new_item_that_fits_is_appended_last(session):
    with abc_items() as items, cupel.Budget(350) as budget:
        assert session.run(items, budget) == [0, 1]
    # Next turn: the same items and a new one of 50 tokens with the best score.
    with abc_items([{"tokens": 50, "score": 1.0, "content": "d", "key": 4}]) as items, \
            cupel.Budget(350) as budget:
        assert session.run(items, budget) == [0, 1, 3]
        assert session.last_action is cupel.SessionAction.APPEND
        assert session.stable_prefix == (2, 200)
        assert [(b.items, b.tokens, b.mark) for b in session.breakpoints] == [
            (2, 200, cupel.BreakpointMark.STABLE), (3, 250, cupel.BreakpointMark.END)]


def test_a_volatile_item_is_placed_last(pipeline):
    # The volatile item has the best score: the pipeline alone places it first.
    extra = [{"tokens": 20, "score": 1.0, "content": "open file", "volatile": True}]
    with cupel.Session(pipeline) as session, abc_items(extra) as items, cupel.Budget(250) as budget:
        assert pipeline.run(items, budget) == [3, 0, 1]
        assert session.run(items, budget) == [0, 1, 3]
        # The END breakpoint is after the last non-volatile item.
        assert session.breakpoints == [cupel.Breakpoint(2, 200, cupel.BreakpointMark.END)]
        # Next turn the volatile item changed: the prefix before it holds.
        items.set_content(3, "open file, edited")
        assert session.run(items, budget) == [0, 1, 3]
        assert session.last_action is cupel.SessionAction.APPEND
        assert session.stable_prefix == (2, 200)


def test_an_item_left_out_before_stays_out_as_deferred(session, pipeline):
    with abc_items() as items:
        with cupel.Budget(250) as budget:
            assert session.run(items, budget) == [0, 1]
        # A larger budget: the pipeline alone would add item 2; the session keeps its prompt.
        with cupel.Budget(400) as budget:
            assert pipeline.run(items, budget) == [0, 1, 2]
            placed, report = session.run(items, budget, report=True)
    assert placed == [0, 1] and session.last_action is cupel.SessionAction.APPEND
    assert [(d.index, d.reason) for d in report.excluded] == [(2, cupel.Reason.DEFERRED)]
    assert report.excluded[0].reason.spec_name == "Deferred"
    assert cupel.Reason.DEFERRED == 19 and cupel.reason_name(19) == "Deferred"
    assert [d.index for d in report.included] == [0, 1]
    assert [d["reason"] for d in report.to_dict()["excluded"]] == [{"reason": "Deferred"}]


def conversation(session, turns, budget_tokens=1000):
    """Runs `turns` (lists of new message tokens) as a conversation: a pinned
    system prompt of 300 tokens, keyed messages by recency, one volatile
    document per turn. Returns each turn's (placed, action, stable prefix,
    breakpoints, report)."""
    out = []
    history = [{"tokens": 300, "content": "system", "pinned": True, "key": 1, "timestamp": 0}]
    with cupel.Budget(budget_tokens) as budget:
        for turn, new in enumerate(turns, 1):
            for tokens in new:
                n = len(history)
                history.append({"tokens": tokens, "content": f"message {n}", "key": n + 1, "timestamp": n})
            doc = {"tokens": 200, "kind": "Document", "content": f"doc {turn}", "volatile": True, "timestamp": 100}
            with cupel.Items(history + [doc]) as items:
                placed, report = session.run(items, budget, report=True)
            out.append((placed, session.last_action, session.stable_prefix, session.breakpoints, report))
    return out


@pytest.fixture
def recency_pipeline():
    with cupel.scorers.Recency() as recency, cupel.Greedy() as greedy, cupel.Chronological() as chrono, \
            cupel.Pipeline(scorer=recency, slicer=greedy, placer=chrono) as p:
        yield p


def test_a_conversation_appends_then_compacts(recency_pipeline):
    with cupel.Session(recency_pipeline) as session:
        runs = conversation(session, [[150], [150, 150], [150, 150]])
    (p1, a1, s1, b1, r1), (p2, a2, s2, b2, r2), (p3, a3, s3, b3, r3) = runs
    M = cupel.BreakpointMark
    assert (p1, a1, s1) == ([0, 1, 2], cupel.SessionAction.FIRST, (0, 0))
    assert b1 == [cupel.Breakpoint(1, 300, M.PINNED), cupel.Breakpoint(2, 450, M.END)]
    assert (p2, a2, s2) == ([0, 1, 2, 3, 4], cupel.SessionAction.APPEND, (2, 450))
    assert b2 == [cupel.Breakpoint(1, 300, M.PINNED), cupel.Breakpoint(2, 450, M.STABLE),
                  cupel.Breakpoint(4, 750, M.END)]
    # 300 + 5 x 150 + 200 > 1000: a compaction, within (1 - 0.2) x 700 for the messages.
    assert (p3, a3, s3) == ([0, 3, 4, 5, 6], cupel.SessionAction.COMPACT, (1, 300))
    assert b3 == [cupel.Breakpoint(1, 300, M.STABLE), cupel.Breakpoint(4, 750, M.END)]
    assert sum(d.tokens_added for d in r3.included if d.index not in (0, 6)) <= math.floor(0.8 * 700)
    for report, action in ((r1, "first"), (r2, "append"), (r3, "compact")):
        got = report.to_dict()["session"]
        assert got["action"] == action
    assert r3.to_dict()["session"] == {
        "action": "compact", "stablePrefixItems": 1, "stablePrefixTokens": 300,
        "breakpoints": [{"items": 1, "tokens": 300, "at": "stable"}, {"items": 4, "tokens": 750, "at": "end"}]}


def test_breakpoints_are_ascending_and_at_most_four(recency_pipeline):
    for slack in (0.0, 0.2, 0.5):
        with cupel.Session(recency_pipeline, slack=slack) as session:
            runs = conversation(session, [[150], [100, 120], [90, 200], [150, 150], [60], [300, 40], [80, 80]])
        for placed, action, prefix, breakpoints, report in runs:
            assert 1 <= len(breakpoints) <= 4
            assert [b.items for b in breakpoints] == sorted({b.items for b in breakpoints})
            assert [b.tokens for b in breakpoints] == sorted(b.tokens for b in breakpoints)
            assert all(0 < b.items <= len(placed) and isinstance(b.mark, cupel.BreakpointMark) for b in breakpoints)
            assert breakpoints[-1].mark is cupel.BreakpointMark.END
            assert json.loads(report.json)["session"]["breakpoints"] == [
                {"items": b.items, "tokens": b.tokens, "at": b.mark.name.lower()} for b in breakpoints]
            assert prefix.items <= len(placed)
        assert {a for _, a, *_ in runs[1:]} <= {cupel.SessionAction.APPEND, cupel.SessionAction.COMPACT}
        assert cupel.SessionAction.COMPACT in {a for _, a, *_ in runs}


# ---- failures, reset, the pipeline's lifetime ------------------------------------------


def test_duplicate_keys_fail_naming_both_indices_and_change_nothing(pipeline):
    with cupel.Session(pipeline) as failed, cupel.Session(pipeline) as clean, cupel.Budget(350) as budget:
        with abc_items() as items:
            assert failed.run(items, budget) == clean.run(items, budget) == [0, 1]
        with abc_items([{"tokens": 10, "score": 0.1, "content": "dup", "key": 2}]) as items:
            with pytest.raises(cupel.InvalidArgumentError) as e:
                failed.run(items, budget, report=True)
        assert isinstance(e.value, ValueError) and e.value.status is cupel.Status.INVALID_ARGUMENT
        msg = str(e.value)
        assert "key" in msg and "1" in msg and "3" in msg, msg
        # Nothing changed: the next good run is the clean session's.
        assert failed.last_action is cupel.SessionAction.FIRST and failed.stable_prefix == (0, 0)
        assert failed.breakpoints == clean.breakpoints
        extra = [{"tokens": 50, "score": 1.0, "content": "d", "key": 4}]
        with abc_items(extra) as items:
            assert failed.run(items, budget) == clean.run(items, budget) == [0, 1, 3]
        assert failed.last_action is clean.last_action is cupel.SessionAction.APPEND
        assert failed.stable_prefix == clean.stable_prefix == (2, 200)
        assert failed.breakpoints == clean.breakpoints


def test_keys_are_ignored_by_the_pipeline(pipeline):
    with abc_items([{"tokens": 10, "score": 0.1, "content": "dup", "key": 1}]) as items, \
            cupel.Budget(250) as budget:
        assert pipeline.run(items, budget) == [3, 0, 1]


def test_reset_makes_the_next_run_first(session):
    with abc_items() as items, cupel.Budget(250) as budget:
        session.slack = 0.3
        session.run(items, budget)
        session.run(items, budget)
        assert session.last_action is cupel.SessionAction.APPEND
        session.reset()
        assert session.last_action is cupel.SessionAction.FIRST
        assert session.stable_prefix == (0, 0) and session.breakpoints == []
        assert session.slack == 0.3  # the slack stays
        placed, report = session.run(items, budget, report=True)
        assert placed == [0, 1] and session.last_action is cupel.SessionAction.FIRST
        assert session.stable_prefix == (0, 0)
        assert report.to_dict()["session"]["action"] == "first"


def test_a_session_keeps_working_after_its_pipeline_is_closed():
    with cupel.Greedy() as greedy:
        pipeline = cupel.Pipeline(slicer=greedy)
    session = cupel.Session(pipeline)
    pipeline.close()
    with session, abc_items() as items, cupel.Budget(250) as budget:
        assert session.run(items, budget) == [0, 1]
        assert session.run(items, budget) == [0, 1]
        assert session.last_action is cupel.SessionAction.APPEND and session.stable_prefix == (2, 200)
    assert session.closed


def test_report_json_has_the_session_object(session):
    with abc_items() as items, cupel.Budget(250) as budget:
        placed, report = session.run(items, budget, report=True)
        assert report.to_dict()["session"] == {"action": "first", "stablePrefixItems": 0, "stablePrefixTokens": 0,
                                               "breakpoints": [{"items": 2, "tokens": 200, "at": "end"}]}
        placed, report = session.run(items, budget, report=True)
        assert report.to_dict()["session"] == {"action": "append", "stablePrefixItems": 2, "stablePrefixTokens": 200,
                                               "breakpoints": [{"items": 2, "tokens": 200, "at": "end"}]}
        assert [d.index for d in report.included] == placed == [0, 1]
    # A plain pipeline run has no session object.
    with cupel.Greedy() as greedy, cupel.Pipeline(slicer=greedy) as pipeline, abc_items() as items, \
            cupel.Budget(250) as budget:
        assert "session" not in pipeline.run(items, budget, report=True)[1].to_dict()


# ---- the slack, and argument errors ------------------------------------------------------


def test_slack(pipeline):
    with cupel.Session(pipeline) as session:
        assert session.slack == 0.2
        session.slack = 0
        assert session.slack == 0.0
        session.slack = 0.35
        assert session.slack == 0.35
        for bad, shown in ((1, "1"), (-0.1, "-0.1"), (math.nan, "NaN"), (1.5, "1.5"), (math.inf, "inf")):
            with pytest.raises(cupel.InvalidArgumentError, match=rf"slack is {shown}; it must be in \[0, 1\)"):
                session.slack = bad
            assert session.slack == 0.35
        for bad in ("0.2", None, True):
            with pytest.raises(TypeError, match="slack"):
                session.slack = bad
        assert session.slack == 0.35
    with cupel.Session(pipeline, slack=0.5) as session:
        assert session.slack == 0.5
    with pytest.raises(ValueError, match=r"slack is 1"):
        cupel.Session(pipeline, slack=1)


def test_session_argument_errors(pipeline):
    with pytest.raises(cupel.ArgumentTypeError, match="pipeline is None") as e:
        cupel.Session(None)
    assert e.value.status is cupel.Status.NULL_POINTER
    with cupel.Greedy() as greedy:
        with pytest.raises(TypeError, match="pipeline must be a Pipeline, not Greedy"):
            cupel.Session(greedy)
    with cupel.Session(pipeline) as session, abc_items() as items, cupel.Budget(250) as budget:
        with pytest.raises(TypeError, match="items is None"):
            session.run(None, budget)
        with pytest.raises(TypeError, match="budget must be a Budget, not Items"):
            session.run(items, items)
        with pytest.raises(TypeError, match="report must be a bool"):
            session.run(items, budget, report=1)
        closed = cupel.Items()
        closed.close()
        with pytest.raises(cupel.ClosedError, match="items is closed"):
            session.run(closed, budget)
        assert session.last_action is cupel.SessionAction.FIRST and session.breakpoints == []
    closed_pipeline = cupel.Pipeline(slicer=cupel.Greedy())
    closed_pipeline.close()
    with pytest.raises(cupel.ClosedError, match="pipeline is closed"):
        cupel.Session(closed_pipeline)


def test_a_closed_session(pipeline):
    session = cupel.Session(pipeline)
    session.close()
    session.close()  # idempotent
    assert session.closed
    with abc_items() as items, cupel.Budget(250) as budget:
        calls = [lambda: session.run(items, budget), lambda: session.slack, lambda: session.stable_prefix,
                 lambda: session.last_action, lambda: session.breakpoints, session.reset]
        for call in calls:
            with pytest.raises(cupel.ClosedError, match="session is closed"):
                call()

        def set_slack():
            session.slack = 0.1
        with pytest.raises(cupel.ClosedError, match="session is closed"):
            set_slack()


def test_sessions_free_their_handles(pipeline):
    before = cupel.live_handles()
    with cupel.Session(pipeline):
        assert cupel.live_handles() == before + 1
    assert cupel.live_handles() == before
