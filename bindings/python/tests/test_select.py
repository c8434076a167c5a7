"""pytest: the one-call path, `cupel.select` (docs/policies.md, "The
one-call path"), checked against the long-hand pipeline built here by hand
on the same data: items pushed record by record, tokens counted text by
text, keep-together groups found by merging sets (not select's union-find),
timestamps, pins, priorities, hints, keys and scores set field by field."""
import dataclasses
import datetime
import gc
import json
import types

import pytest

import cupel

s = cupel.scorers


def reference_groups(messages):
    """Group numbers by merging sets of linked messages until none overlap
    (slow and obvious), numbered by their first message; 0 for none."""
    def links(m):
        out = set()
        if m.get("group"):  # None and "" are none
            out.add(("group", m["group"]))
        if m.get("tool_call_id"):
            out.add(("call", m["tool_call_id"]))
        for x in m.get("tool_call_ids") or ():
            if x:
                out.add(("call", x))
        return out

    comps = [({i}, links(m)) for i, m in enumerate(messages) if links(m)]
    merged = True
    while merged:
        merged = False
        for a in range(len(comps)):
            for b in range(a + 1, len(comps)):
                if comps[a][1] & comps[b][1]:
                    comps[a] = (comps[a][0] | comps[b][0], comps[a][1] | comps[b][1])
                    del comps[b]
                    merged = True
                    break
            if merged:
                break
    comps.sort(key=lambda c: min(c[0]))
    out = [0] * len(messages)
    for number, (members, _) in enumerate(comps, 1):
        for i in members:
            out[i] = number
    return out


def as_dict(m):
    if isinstance(m, dict):
        return m
    return {k: getattr(m, k, None) for k in ("text", "kind", "pinned", "group", "tool_call_id", "tool_call_ids",
                                               "key", "timestamp", "priority", "relevance", "score")}


def long_hand(messages, budget, pipeline, tokenizer_name):
    """The long-hand calls: what select must do, written out."""
    ms = [as_dict(m) for m in messages]
    groups = reference_groups(ms)
    stamped = any(m.get("timestamp") is not None for m in ms)
    with cupel.Tokenizer(tokenizer_name) as tok, cupel.Items() as items:
        for i, m in enumerate(ms):
            at = items.push(tok.count(m["text"]), 1.0 if m.get("score") is None else m["score"], m.get("kind"))
            assert at == i
            items.set_content(i, m["text"])
            ts = m.get("timestamp")
            if isinstance(ts, datetime.datetime):
                ts = int(ts.timestamp() * 1000)
            if stamped and ts is not None:
                items.set_timestamp(i, ts)
            elif not stamped:
                items.set_timestamp(i, i)
            if m.get("pinned"):
                items.set_pinned(i, True)
            if m.get("priority") is not None:
                items.set_priority(i, m["priority"])
            if m.get("relevance") is not None:
                items.set_relevance_hint(i, m["relevance"])
            if groups[i]:
                items.set_group(i, groups[i])
            if m.get("key"):
                items.set_key(i, m["key"])
        placed, report = pipeline.run(items, budget, report=True)
    return [messages[i] for i in placed], report


def same(a, b):
    """Two lists of the caller's objects: the same objects, in the same order."""
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def check(messages, max_tokens=None, policy=None, budget=None, tokenizer=None, policy_tokenizer=None):
    """select against the long hand, on budgets from 0 to the total (when
    max_tokens is "sweep"), or on the one given."""
    name = tokenizer if isinstance(tokenizer, str) else policy_tokenizer or "o200k_base"
    with cupel.Tokenizer(name) as tok:
        total = sum(tok.count(as_dict(m)["text"]) for m in messages)
    # About 40 budgets from 0 to past the total.
    budgets = range(0, total + 2, max(1, total // 40)) if max_tokens == "sweep" else [max_tokens]
    kept_some = set()
    for mx in budgets:
        own_budget = budget if budget is not None else cupel.Budget(mx, mx)
        if isinstance(policy, cupel.Pipeline):
            pipeline = policy
        elif policy is None:
            pipeline = cupel.Pipeline.preset("Chat")  # no policy: the Chat preset
        elif policy.lstrip().startswith("{"):
            pipeline = cupel.Pipeline.from_json(policy)
        else:
            pipeline = cupel.Pipeline.preset(policy)
        want_error = None
        try:
            want, want_report = long_hand(messages, own_budget, pipeline, name)
        except cupel.CupelError as e:  # a budget below the pinned messages: select must fail the same way
            want_error = e
        finally:
            if pipeline is not policy:
                pipeline.close()

        def call():
            if budget is not None:
                return cupel.select(messages, budget=budget, policy=policy, tokenizer=tokenizer, report=True)
            return cupel.select(messages, mx, policy, tokenizer=tokenizer, report=True)

        if want_error is not None:
            with pytest.raises(type(want_error)) as e:
                call()
            assert str(e.value) == str(want_error)
            kept_some.add("error")
            continue
        got, report = call()
        if budget is None:
            own_budget.close()
        assert same(got, want), (mx, [as_dict(m)["text"] for m in got], [as_dict(m)["text"] for m in want])
        assert report.included == want_report.included and report.excluded == want_report.excluded
        kept_some.add(len(got))
    return kept_some


SYSTEM = {"text": "You are a coding agent. Keep answers short.", "kind": "SystemPrompt", "pinned": True}

AGENT = [
    SYSTEM,
    {"text": "Find where the login token is checked and fix the expiry bug."},
    {"text": "I'll search the code and read the config.", "kind": "Message", "tool_call_ids": ["c1", "c2"]},
    {"text": "src/auth.py:42: if token.expires < now:", "kind": "ToolOutput", "tool_call_id": "c1"},
    {"text": "config.yaml: token_ttl: 3600", "kind": "ToolOutput", "tool_call_id": "c2"},
    {"text": "The comparison is inverted for refreshed tokens; let me run the tests.", "tool_call_id": "c3"},
    {"text": "FAILED tests/test_auth.py::test_refresh - AssertionError " * 8, "kind": "ToolOutput",
     "tool_call_id": "c3"},
    {"text": "Two things: flip the comparison, and add a test for refresh.", "kind": "Message"},
    {"text": "Also, what does the ttl mean?", "group": "q2"},
    {"text": "It is the token lifetime in seconds.", "group": "q2"},
]


@pytest.mark.parametrize("policy", ["Chat", "AgentLoop", "ToolUse", "codereview", "Rag", "DocumentQa"])
def test_an_agent_loop_with_tool_calls_as_the_long_hand(policy):
    kept = check(AGENT, "sweep", policy)
    assert len(kept) >= 3  # the sweep kept different numbers of messages (or failed: pinned over the budget)


def test_groups_are_transitive_and_numbered_by_first_message():
    msgs = [
        {"text": "a0"},
        {"text": "a1", "group": "x"},
        {"text": "a2", "tool_call_id": "t"},
        {"text": "a3", "group": "x", "tool_call_id": "u"},
        {"text": "a4", "tool_call_ids": ["t", "v"]},
        {"text": "a5", "tool_call_id": "v"},
        {"text": "a6", "tool_call_id": "w"},
        {"text": "a7", "group": "t"},  # a group named "t" is not the tool call "t"
        {"text": "a8", "group": "t"},
        {"text": "a9", "tool_call_id": "u"},
    ]
    assert reference_groups(msgs) == [0, 1, 2, 1, 2, 2, 3, 4, 4, 1]
    _, report = cupel.select(msgs, 1000, report=True)
    groups = {d.index: d.group for d in report.included + report.excluded}
    assert [groups[i] for i in range(10)] == [0, 1, 2, 1, 2, 2, 3, 4, 4, 1]
    check(msgs, "sweep", "Chat")
    # Every budget keeps or drops each group whole.
    for mx in range(0, 25):
        kept = {m["text"] for m in cupel.select(msgs, mx)}
        for members in (["a1", "a3", "a9"], ["a2", "a4", "a5"], ["a7", "a8"]):
            assert len(kept & set(members)) in (0, len(members)), (mx, kept)


def test_empty_ids_and_key_0_are_none_and_no_policy_is_chat():
    msgs = [
        {"text": "b0", "group": "", "key": 0},
        {"text": "b1", "tool_call_id": "", "key": None},
        {"text": "b2", "tool_call_ids": ["", None, "t"], "group": None},
        {"text": "b3", "tool_call_id": "t", "key": 0},
        {"text": "b4", "group": "g", "tool_call_ids": [""]},
        {"text": "b5", "tool_call_ids": []},
        {"text": "b6", "tool_call_id": "u"},  # alone, still a group
    ]
    assert reference_groups(msgs) == [0, 0, 1, 1, 2, 0, 3]
    _, report = cupel.select(msgs, 1000, report=True)
    groups = {d.index: d.group for d in report.included + report.excluded}
    assert [groups[i] for i in range(7)] == [0, 0, 1, 1, 2, 0, 3]
    check(msgs, "sweep")
    # No policy (absent or None) is the Chat preset.
    for mx in range(0, 100, 5):
        try:
            chat = cupel.select(AGENT, mx, "Chat")
        except cupel.CupelError:  # the pinned system prompt does not fit
            with pytest.raises(cupel.CupelError):
                cupel.select(AGENT, mx)
            continue
        assert same(cupel.select(AGENT, mx), chat)
        assert same(cupel.select(AGENT, mx, None), chat)
        assert same(cupel.select(AGENT, mx, policy=None, tokenizer=None), chat)
    check(AGENT, "sweep", None)


def test_timestamps_are_positions_unless_given():
    msgs = [{"text": f"message number {i}"} for i in range(6)]  # 4 tokens each
    # Recency alone: the newest (last) messages are kept, in the given order.
    with cupel.Pipeline.from_json('{"scorers":[{"type":"recency","weight":1}]}') as p:
        kept = cupel.select(msgs, 12, p)
        assert same(kept, msgs[-3:])
        assert same(cupel.select(msgs[::-1], 12, p), msgs[::-1][-3:])
    # Given timestamps are used as given (messages without one get none).
    stamped = [dict(m, timestamp=t) for m, t in zip(msgs, [60, 50, 40, None, 20, 10])]
    kept = cupel.select(stamped, 12, '{"scorers":[{"type":"recency","weight":1}]}')
    assert same(kept, [stamped[2], stamped[1], stamped[0]])  # the newest three, oldest first
    check(stamped, "sweep", '{"scorers":[{"type":"recency","weight":1}]}')
    # datetimes: aware, or naive as UTC.
    utc = datetime.timezone.utc
    dated = [dict(m, timestamp=datetime.datetime(2025, 1, 1, 0, 0, i, tzinfo=utc)) for i, m in enumerate(msgs)]
    dated[0]["timestamp"] = datetime.datetime(2025, 1, 1)
    check(dated, "sweep", "Chat")
    _, report = cupel.select(dated, 100, report=True)
    assert json.loads(report.json)["included"][0]["item"]["timestamp"] == "2025-01-01T00:00:00Z"


def test_priorities_hints_scores_and_keys_as_the_long_hand():
    msgs = [
        {"text": "System: be brief.", "kind": "SystemPrompt", "pinned": True, "key": 1},
        {"text": "A retrieved document about tokens and expiry times.", "kind": "Document", "relevance": 0.9,
         "priority": 3, "score": 0.2, "key": 2, "timestamp": 100},
        {"text": "A retrieved document about logging.", "kind": "Document", "relevance": 0.1, "priority": 1,
         "score": 0.9, "key": 3, "timestamp": 200},
        {"text": "An old message nobody needs.", "relevance": 0.0, "priority": 0, "score": 0.1, "key": 2 ** 64 - 1},
        {"text": "The question.", "relevance": 1.0, "priority": 5, "timestamp": 300},
    ]
    for policy in ["Rag", "Debugging", "DocumentQa", "LongRunning",
                   '{"scorers":[{"type":"given","weight":2},{"type":"priority","weight":1}],"placerType":"none"}']:
        check(msgs, "sweep", policy)


def test_a_policy_document_with_its_tokenizer_and_the_precedence():
    text = "日本語のテキストを数えます。" * 3
    msgs = [{"text": text}, {"text": "short"}]
    doc = '  {"scorers":[{"type":"recency","weight":1}],"tokenizer":"cl100k_base"}'
    with cupel.Tokenizer("o200k_base") as o200k, cupel.Tokenizer("cl100k_base") as cl100k:
        counts = {"o200k_base": o200k.count(text), "cl100k_base": cl100k.count(text)}
        assert counts["o200k_base"] != counts["cl100k_base"]

        def tokens(**kw):
            _, report = cupel.select(msgs, 1000, report=True, **kw)
            return {d.index: d.item_tokens for d in report.included}[0]

        assert tokens() == counts["o200k_base"]  # neither: o200k_base
        assert tokens(policy=doc) == counts["cl100k_base"]  # the policy's
        assert tokens(policy=doc, tokenizer="o200k_base") == counts["o200k_base"]  # the argument's
        assert tokens(policy="Chat", tokenizer=cl100k) == counts["cl100k_base"]  # a Tokenizer object
        assert tokens(policy="AgentLoop") == counts["o200k_base"]
        with cupel.Greedy() as g, cupel.Pipeline(slicer=g, tokenizer=cl100k) as p:
            assert tokens(policy=p) == counts["cl100k_base"]  # a pipeline's
        # A pipeline whose tokenizer the format cannot write (a vocabulary file).
        from test_tokenizer import PATTERN, vocab_file
        with cupel.Tokenizer.from_tiktoken(vocab_file(), PATTERN) as loaded, cupel.Greedy() as g, \
                cupel.Pipeline(slicer=g, tokenizer=loaded) as p:
            _, report = cupel.select([{"text": "ab"}], 1000, p, report=True)
            assert report.included[0].item_tokens == loaded.count("ab")
            loaded.close()
            with pytest.raises(ValueError, match="policy: the pipeline's tokenizer .* closed"):
                cupel.select([{"text": "ab"}], 1000, p)
        with cupel.Greedy() as g, cupel.CountQuota(g, {"X": (0, 1)}) as cq, cupel.Quota(cq, {"Y": (0, 50)}) as q, \
                cupel.Pipeline(slicer=q, tokenizer=cl100k) as p:  # not writable, a built-in tokenizer
            assert tokens(policy=p) == counts["cl100k_base"]
    check(msgs, "sweep", doc, policy_tokenizer="cl100k_base")
    check(AGENT, "sweep", doc, tokenizer="o200k_base")


def test_a_pipeline_object_and_a_budget_object():
    with s.Composite([(s.Kind(), 1), (s.Recency(), 1)]) as sc, cupel.Knapsack(4) as k, cupel.UShaped() as u, \
            cupel.Pipeline(scorer=sc, slicer=k, placer=u) as p:
        check(AGENT, "sweep", p)
        assert not p.closed  # select never closes the caller's pipeline
    for reserve, margin in [(0, 0), (10, 0), (5, 20)]:
        with cupel.Budget(80, 60, output_reserve=reserve, safety_margin_percent=margin,
                          reserved={"ToolOutput": 5}) as b:
            check(AGENT, None, "AgentLoop", budget=b)
            assert not b.closed
    with cupel.Budget.from_json('{"maxTokens":100,"targetTokens":70}') as b:
        check(AGENT, None, "Chat", budget=b)
        assert same(cupel.select(AGENT, b), cupel.select(AGENT, budget=b))  # a Budget in max_tokens' place


@dataclasses.dataclass
class Turn:
    text: str
    kind: str = "Message"
    tool_call_id: str = None


def test_objects_are_returned_as_given():
    # cupel.Message, a dataclass of the host's, any object with attributes, dicts: mixed.
    msgs = [cupel.Message("system", kind="SystemPrompt", pinned=True),
            Turn("call the tool", tool_call_id="t1"),
            types.SimpleNamespace(text="tool result", kind="ToolOutput", tool_call_id="t1"),
            {"text": "thanks", "role": "user"}]
    kept = cupel.select(msgs, 1000)
    assert same(kept, msgs)
    kept = cupel.select(iter(msgs), 3)  # any iterable
    assert same(kept, [msgs[0], msgs[3]])
    check(msgs, "sweep", "Chat")
    assert cupel.select([], 10) == []
    assert cupel.select(msgs[1:], 0) == []
    with pytest.raises(ValueError, match="the pinned items need 51 tokens"):  # the library's error
        cupel.select([cupel.Message("x " * 50, pinned=True)], 5)


def test_a_traced_pipeline_object_traces_select():
    events = []
    with cupel.Pipeline.preset("Chat") as p:
        p.set_trace(events.append, "full")
        kept = cupel.select(AGENT, 60, p)
    included = [e for e in events if e.kind == cupel.TraceKind.INCLUDED]
    assert len(included) == len(kept) and events[-1].name == "cupel.pipeline"


@pytest.mark.parametrize("messages, cls, message", [
    (None, TypeError, "messages is None"),
    ("hello", TypeError, "messages must be a list of messages"),
    ({"text": "x"}, TypeError, "messages must be a list"),
    ([{"text": "a"}, None], TypeError, r"messages\[1\] is None"),
    ([{"text": "a"}, "b"], TypeError, r"messages\[1\] must be a dict"),
    ([{"kind": "Message"}], TypeError, r"messages\[0\].text is None"),
    ([{"text": b"bytes"}], TypeError, r"messages\[0\].text must be a str"),
    ([{"text": "a"}, {"text": "b"}, {"text": ""}], ValueError, r"messages\[2\].text is empty"),
    ([{"text": "a\ud800"}], ValueError, r"messages\[0\].text is not valid Unicode"),
    ([{"text": "a", "kind": ""}], ValueError, r"messages\[0\].kind '' is empty"),
    ([{"text": "a", "kind": "  "}], ValueError, r"messages\[0\].kind '  ' is empty or only whitespace"),
    ([{"text": "a", "kind": 3}], TypeError, r"messages\[0\].kind must be a str"),
    ([{"text": "a", "pinned": "yes"}], TypeError, r"messages\[0\].pinned must be a bool"),
    ([{"text": "a", "score": float("nan")}], ValueError, r"messages\[0\].score is nan"),
    ([{"text": "a", "score": "high"}], TypeError, r"messages\[0\].score must be a number"),
    ([{"text": "a", "key": -1}], ValueError, r"messages\[0\].key is -1"),
    ([{"text": "a", "key": 2 ** 64}], ValueError, r"messages\[0\].key does not fit"),
    ([{"text": "a", "timestamp": "noon"}], TypeError, r"messages\[0\].timestamp must be an int"),
    ([{"text": "a", "timestamp": 2 ** 63}], ValueError, r"messages\[0\].timestamp does not fit"),
    ([{"text": "a", "priority": 1.5}], TypeError, r"messages\[0\].priority must be an int"),
    ([{"text": "a", "relevance": "x"}], TypeError, r"messages\[0\].relevance must be a number"),
    ([{"text": "a", "group": 5}], TypeError, r"messages\[0\].group must be a str"),
    ([{"text": "a", "tool_call_id": 5}], TypeError, r"messages\[0\].tool_call_id must be a str"),
    ([{"text": "a", "tool_call_ids": "c1"}], TypeError, r"messages\[0\].tool_call_ids must be a list of str"),
    ([{"text": "a", "tool_call_ids": ["c1", 7]}], TypeError, r"messages\[0\].tool_call_ids\[1\] must be a str"),
])
def test_bad_messages(messages, cls, message):
    gc.collect()
    before = cupel.live_handles()
    with pytest.raises(cls, match=message) as e:
        cupel.select(messages, 100)
    assert isinstance(e.value, cupel.CupelError)
    gc.collect()
    assert cupel.live_handles() == before


@pytest.mark.parametrize("kw, cls, message", [
    (dict(max_tokens=-1), ValueError, "max_tokens is -1; it must be >= 0"),
    (dict(max_tokens=None), TypeError, "max_tokens is None"),
    (dict(max_tokens=1.5), TypeError, "max_tokens must be an int"),
    (dict(max_tokens=2 ** 63), ValueError, "max_tokens does not fit"),
    (dict(max_tokens=10, budget="b"), ValueError, "max_tokens and budget are both given"),
    (dict(budget="b"), TypeError, "budget must be a Budget"),
    (dict(max_tokens=10, policy="Nope"), ValueError,
     "policy 'Nope' is no preset and no policy document .*; the presets are Chat, CodeReview"),
    (dict(max_tokens=10, policy=""), ValueError, "policy '' is no preset"),
    (dict(max_tokens=10, policy=3), TypeError, "policy must be a preset name"),
    (dict(max_tokens=10, policy=" {"), ValueError, r"policy: malformed JSON at line 1 column"),
    (dict(max_tokens=10, policy='{"scorers":[{"type":"recency","weight":-1}]}'), ValueError,
     r"policy \$.scorers\[0\].weight: must be positive and finite \(got -1\)"),
    (dict(max_tokens=10, tokenizer="nope"), ValueError, 'tokenizer "nope" is no known encoding'),
    (dict(max_tokens=10, tokenizer=3), TypeError, "tokenizer must be an encoding name"),
    (dict(max_tokens=10, report="yes"), TypeError, "report must be a bool"),
])
def test_bad_arguments(kw, cls, message):
    gc.collect()
    before = cupel.live_handles()
    with pytest.raises(cls, match=message) as e:
        cupel.select([{"text": "hello"}], **kw)
    assert isinstance(e.value, cupel.CupelError)
    gc.collect()
    assert cupel.live_handles() == before


def test_closed_handles():
    p = cupel.Pipeline.preset("Chat")
    p.close()
    with pytest.raises(cupel.ClosedError, match="policy is closed"):
        cupel.select([{"text": "x"}], 10, p)
    b = cupel.Budget(10)
    b.close()
    with pytest.raises(cupel.ClosedError, match="budget is closed"):
        cupel.select([{"text": "x"}], budget=b)
    t = cupel.Tokenizer("o200k_base")
    t.close()
    with pytest.raises(cupel.ClosedError, match="tokenizer is closed"):
        cupel.select([{"text": "x"}], 10, tokenizer=t)


def test_many_messages():
    msgs = [{"text": f"message {i} " + "word " * (i % 17), "tool_call_id": f"c{i // 3}" if i % 5 == 0 else None}
            for i in range(3000)]
    kept = cupel.select(msgs, 20000, "AgentLoop")
    assert 0 < len(kept) < len(msgs)
    check(msgs[:300], 900, "AgentLoop")
