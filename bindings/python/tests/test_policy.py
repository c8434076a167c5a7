"""pytest: policies as JSON, presets, policy sensitivity, report analytics
and tracing (issue 29; docs/policies.md). The one-call path is in
test_select.py, OpenTelemetry spans in test_otel.py."""
import gc
import json
import threading

import pytest

import cupel

s = cupel.scorers

POLICY = '{"scorers":[{"type":"recency","weight":1}],"slicerType":"greedy","placerType":"chronological"}'

# docs/policies.md, "Presets": scorers (type: weight), slicer, placer.
PRESETS = {
    "Chat": ([("recency", 3), ("kind", 1)], "greedy", "chronological"),
    "CodeReview": ([("kind", 2), ("priority", 2), ("recency", 1)], "greedy", "chronological"),
    "Rag": ([("reflexive", 3), ("kind", 1)], "greedy", "uShaped"),
    "DocumentQa": ([("kind", 2), ("reflexive", 2), ("priority", 1)], "knapsack", "uShaped"),
    "ToolUse": ([("kind", 2), ("recency", 2), ("priority", 1)], "greedy", "chronological"),
    "LongRunning": ([("recency", 3), ("frequency", 1), ("kind", 1)], "greedy", "chronological"),
    "Debugging": ([("priority", 3), ("kind", 2), ("recency", 1)], "greedy", "chronological"),
    "AgentLoop": ([("recency", 3), ("kind", 2), ("reflexive", 1)], "greedy", "chronological"),
}


def fixture_items():
    """The contract's fixture: tokens 100/200/50, timestamps 1000/2000/3000."""
    return cupel.Items.from_columns([100, 200, 50], [0.9, 0.5, 0.1], kinds=["Message", "Document", "ToolOutput"],
                                    contents=["alpha", "beta", "gamma"], timestamps=[1000, 2000, 3000])


def recency_pipeline():
    with s.Recency() as r, cupel.Greedy() as g, cupel.Chronological() as c:
        return cupel.Pipeline(scorer=r, slicer=g, placer=c)


# ---- policies as JSON --------------------------------------------------------------


def test_a_policy_document_makes_the_pipeline_it_describes():
    with cupel.Pipeline.from_json(POLICY) as p, recency_pipeline() as q, fixture_items() as items, \
            cupel.Budget(300, 250) as b:
        assert p.run(items, b) == q.run(items, b) == [1, 2]
        # Bytes are UTF-8 text too; enum values match case-insensitively, unknown keys are ignored.
        doc = POLICY.replace('"greedy"', '"GREEDY"').replace("{", '{"comment":"x",', 1).encode()
        with cupel.Pipeline.from_json(doc) as p2:
            assert p2.run(items, b) == [1, 2]


def test_to_json_writes_every_setting_and_reads_back_exactly():
    with cupel.Tokenizer("cl100k_base") as tok:
        pipeline = cupel.Pipeline(scorer=s.Composite([(s.Recency(), 2), (s.Kind({"Document": 3}), 1)]),
                                  slicer=cupel.Quota(cupel.Knapsack(50), {"Document": (10, 50)}),
                                  placer=cupel.UShaped(), deduplication=False, overflow=cupel.Overflow.PROCEED,
                                  tokenizer=tok)
    with pipeline:
        text = pipeline.to_json()
        doc = json.loads(text)
        assert list(doc) == sorted(doc)  # keys in alphabetical order
        assert doc["slicerType"] == "knapsack" and doc["knapsackBucketSize"] == 50
        assert doc["placerType"] == "uShaped" and doc["deduplicationEnabled"] is False
        assert doc["overflowStrategy"] == "proceed" and doc["tokenizer"] == "cl100k_base"
        assert doc["quotas"] == [{"kind": "Document", "minPercent": 10.0, "maxPercent": 50.0}]
        # The composite's weights as configured, not normalised.
        assert [(e["type"], e["weight"]) for e in doc["scorers"]] == [("recency", 2.0), ("kind", 1.0)]
        assert doc["scorers"][1]["kindWeights"] == {"Document": 3.0}
        with cupel.Pipeline.from_json(text) as again:
            assert again.to_json() == text


def test_a_pipeline_the_format_cannot_hold_is_unsupported():
    with cupel.Greedy() as g, cupel.CountQuota(g, {"Message": (1, 2)}) as cq, \
            cupel.Quota(cq, {"Document": (10, 50)}) as q, cupel.Pipeline(slicer=q) as p:
        with pytest.raises(cupel.UnsupportedError, match="QuotaSlice"):
            p.to_json()
    with cupel.Tokenizer("o200k_base") as t:
        from test_tokenizer import PATTERN, vocab_file  # a vocabulary loaded from a file
        with cupel.Tokenizer.from_tiktoken(vocab_file(), PATTERN) as loaded, cupel.Greedy() as g, \
                cupel.Pipeline(slicer=g, tokenizer=loaded) as p:
            with pytest.raises(cupel.UnsupportedError):
                p.to_json()
            p.set_tokenizer(t)
            assert json.loads(p.to_json())["tokenizer"] == "o200k_base"


@pytest.mark.parametrize("text, cls, message", [
    (None, TypeError, "json is None"),
    (3, TypeError, "json must be a str"),
    ("", ValueError, "json is empty"),
    ("null", ValueError, "json $: expected a policy object, got null"),
    ('{"scorers": ', ValueError, "json: malformed JSON at line 1 column"),
    ('{"scorers":[{"type":"recency","weight":-1}]}', ValueError,
     "json $.scorers[0].weight: must be positive and finite (got -1)"),
    ('{"scorers":[{"type":"nope","weight":1}]}', ValueError, 'json $.scorers[0].type: unknown scorer type "nope"'),
    ('{"scorers":[{"type":"recency","weight":1}],"knapsackBucketSize":5}', ValueError,
     'json $.knapsackBucketSize: only valid when slicerType is "knapsack"'),
    ('{"scorers":[{"type":"recency","weight":1}],"quotas":[{"kind":"A","minPercent":80,"maxPercent":20}]}',
     ValueError, "json $.quotas[0]: minPercent 80 exceeds maxPercent 20"),
    ("{\"scorers\":[{\"type\":\"recency\",\"weight\":1}],\"name\":\"\ud800\"}", ValueError, "json is not valid Unicode"),
    (b'{"scorers":[{"type":"recency","weight":1}],"name":"\xff"}', ValueError, "json: invalid UTF-8"),
])
def test_policy_errors_name_the_path_and_the_rule(text, cls, message):
    with pytest.raises(cls) as e:
        cupel.Pipeline.from_json(text)
    assert isinstance(e.value, cupel.CupelError)
    assert str(e.value).startswith(message), str(e.value)
    if cls is ValueError:
        assert isinstance(e.value, cupel.InvalidArgumentError)


def test_an_unknown_scorer_type_lists_the_known_ones():
    with pytest.raises(ValueError, match="known types: recency, priority, kind"):
        cupel.Pipeline.from_json('{"scorers":[{"type":"nope","weight":1}]}')


def test_to_json_on_none_or_closed():
    with pytest.raises(TypeError, match="pipeline is None"):
        cupel.Pipeline.to_json(None)
    p = recency_pipeline()
    p.close()
    with pytest.raises(cupel.ClosedError, match="pipeline is closed"):
        p.to_json()


def test_budgets_from_json_and_back():
    doc = ('{"maxTokens":1000,"targetTokens":800,"outputReserve":100,"reservedSlots":{"Tool":50},'
           '"estimationSafetyMarginPercent":5}')
    with cupel.Budget.from_json(doc) as b, \
            cupel.Budget(1000, 800, output_reserve=100, safety_margin_percent=5, reserved={"Tool": 50}) as same:
        assert b.effective() == same.effective()
        text = b.to_json()
        assert json.loads(text) == {"maxTokens": 1000, "targetTokens": 800, "outputReserve": 100,
                                    "reservedSlots": {"tool": 50}, "estimationSafetyMarginPercent": 5.0}
        assert text == same.to_json()
        with cupel.Budget.from_json(text) as again:
            assert again.to_json() == text
    with cupel.Budget.from_json('{"maxTokens":300,"targetTokens":250}') as b, recency_pipeline() as p, \
            fixture_items() as items:
        assert p.run(items, b) == [1, 2]


@pytest.mark.parametrize("text, cls, message", [
    (None, TypeError, "json is None"),
    (["x"], TypeError, "json must be a str"),
    ('{"maxTokens":100,"targetTokens":250}', ValueError, "json $"),  # the rule's words are the library's
    ('{"targetTokens":1}', ValueError, "json $.maxTokens: required"),
    ("", ValueError, "json"),
])
def test_budget_json_errors(text, cls, message):
    with pytest.raises(cls) as e:
        cupel.Budget.from_json(text)
    assert str(e.value).startswith(message), str(e.value)
    if "250" in (text or ""):
        assert "250" in str(e.value) and "100" in str(e.value), str(e.value)
    with pytest.raises(TypeError, match="budget is None"):
        cupel.Budget.to_json(None)
    b = cupel.Budget(10)
    b.close()
    with pytest.raises(cupel.ClosedError, match="budget is closed"):
        b.to_json()


# ---- presets -----------------------------------------------------------------------


def test_preset_names_are_the_table():
    assert cupel.preset_names() == cupel.Pipeline.preset_names() == list(PRESETS)


@pytest.mark.parametrize("name", list(PRESETS))
def test_presets_are_the_table(name):
    scorers, slicer, placer = PRESETS[name]
    for spelled in (name, name.lower(), name.upper()):
        with cupel.Pipeline.preset(spelled) as p:
            doc = json.loads(p.to_json())
            assert [(e["type"], e["weight"]) for e in doc["scorers"]] == scorers
            assert (doc["slicerType"], doc["placerType"]) == (slicer, placer)
            assert doc["deduplicationEnabled"] is True and doc["overflowStrategy"] == "throw"
            assert doc["name"] == name
            if slicer == "knapsack":
                assert doc["knapsackBucketSize"] == 100
            # The presets' documents are documents: they read back as themselves.
            with cupel.Pipeline.from_json(p.to_json()) as again:
                assert again.to_json() == p.to_json()
    if name == "AgentLoop":
        assert doc["sessionSlack"] == 0.2 and doc["tokenizer"] == "o200k_base"


def test_preset_errors():
    with pytest.raises(ValueError, match='name "Nope" is no preset; the presets are Chat, CodeReview'):
        cupel.Pipeline.preset("Nope")
    with pytest.raises(ValueError, match="name"):
        cupel.Pipeline.preset("")
    with pytest.raises(TypeError, match="name is None"):
        cupel.Pipeline.preset(None)
    with pytest.raises(TypeError, match="name must be a str"):
        cupel.Pipeline.preset(3)


# ---- policy sensitivity --------------------------------------------------------------


def test_sensitivity_reports_every_variant_and_the_diffs_by_index():
    with fixture_items() as items, cupel.Budget(300, 250) as b, recency_pipeline() as a, \
            cupel.Greedy() as g, cupel.Pipeline(scorer=s.Kind({"Message": 1}), slicer=g) as k:
        found = cupel.policy_sensitivity([("recency", a), ("kind", k)], items, b)
        assert [v.label for v in found.variants] == ["recency", "kind"]
        assert [d["item"]["content"] for d in found.report("recency")["included"]] == ["beta", "gamma"]
        assert found.variants[1].report["analytics"]["kindDiversity"] == 2
        assert [(d.index, d.content, d.statuses) for d in found.diffs] == [
            (0, "alpha", {"recency": "Excluded", "kind": "Included"}),
            (1, "beta", {"recency": "Included", "kind": "Excluded"}),
        ]
        assert found.diffs[0].included_by == ["kind"] and found.diffs[0].excluded_by == ["recency"]
        assert json.loads(found.json)["diffs"][0]["index"] == 0
        # A mapping is label -> pipeline, in its order.
        assert cupel.policy_sensitivity({"kind": k, "recency": a}, items, b).diffs[0].statuses == \
            {"kind": "Included", "recency": "Excluded"}
        with pytest.raises(KeyError):
            found.report("nope")


def test_two_items_of_identical_content_are_two_diffs():
    # Items 0 and 1 have the same content; one pipeline takes the first, the
    # other the second: matched by push index, they are two diffs.
    with cupel.Items.from_columns([100, 100], [0.9, 0.1], contents=["same", "same"],
                                  timestamps=[1, 2]) as items, cupel.Budget(100) as b, \
            cupel.Greedy() as g, cupel.Pipeline(slicer=g) as given, \
            cupel.Pipeline(scorer=s.Recency(), slicer=g) as recent:
        # Deduplication keeps the better-scored of the two: item 0 for the
        # pushed scores, item 1 (the newer) for recency.
        found = cupel.policy_sensitivity([("given", given), ("recency", recent)], items, b)
        assert [(d.index, d.content, d.statuses) for d in found.diffs] == [
            (0, "same", {"given": "Included", "recency": "Excluded"}),
            (1, "same", {"given": "Excluded", "recency": "Included"}),
        ]


def test_sensitivity_errors():
    with fixture_items() as items, cupel.Budget(300, 250) as b, recency_pipeline() as a, recency_pipeline() as c:
        with pytest.raises(ValueError, match="variants has 1 pipeline; policy sensitivity compares at least two"):
            cupel.policy_sensitivity([("a", a)], items, b)
        with pytest.raises(ValueError, match="variants has 0 pipelines"):
            cupel.policy_sensitivity({}, items, b)
        with pytest.raises(ValueError, match=r"variants\[1\] label 'a' is given twice"):
            cupel.policy_sensitivity([("a", a), ("a", c)], items, b)
        with pytest.raises(TypeError, match="variants is None"):
            cupel.policy_sensitivity(None, items, b)
        with pytest.raises(TypeError, match=r"variants\[0\] must be a \(label, pipeline\) pair"):
            cupel.policy_sensitivity([a, c], items, b)
        with pytest.raises(TypeError, match=r"variants\[1\] pipeline must be a Pipeline"):
            cupel.policy_sensitivity([("a", a), ("b", items)], items, b)
        with pytest.raises(TypeError, match=r"variants\[1\] label must be a str"):
            cupel.policy_sensitivity([("a", a), (2, c)], items, b)
        with pytest.raises(TypeError, match="items is None"):
            cupel.policy_sensitivity([("a", a), ("b", c)], None, b)
        with pytest.raises(TypeError, match="budget is None"):
            cupel.policy_sensitivity([("a", a), ("b", c)], items, None)
        c.close()
        with pytest.raises(cupel.ClosedError, match=r"variants\[1\] pipeline is closed"):
            cupel.policy_sensitivity([("a", a), ("b", c)], items, b)
        # A variant whose run fails fails the call, naming its label.
        with cupel.Budget(300, 10) as small, cupel.Greedy() as g, \
                cupel.Pipeline(slicer=g, overflow=cupel.Overflow.THROW) as p:
            items.set_pinned(1, True)
            with pytest.raises(cupel.OverflowError_, match=r'variant 0 \("a"\) failed: the selected items need'):
                cupel.policy_sensitivity([("a", a), ("throws", p)], items, small)
        assert len(items) == 3


def test_sensitivity_on_many_items_grows_its_buffer():
    n = 400
    contents = [f"item {i} " + "x" * (i % 50) for i in range(n)]
    with cupel.Items.from_columns([10] * n, [i / n for i in range(n)], contents=contents,
                                  timestamps=list(range(n))) as items, cupel.Budget(2000) as b, \
            cupel.Greedy() as g, cupel.Pipeline(slicer=g) as given, \
            cupel.Pipeline(scorer=s.Recency(), slicer=g) as recent:
        found = cupel.policy_sensitivity([("given", given), ("recency", recent)], items, b)
        assert len(found.report("given")["included"]) == 200
        assert found.diffs == []  # the scores rise with the index: both take the last 200


# ---- analytics ------------------------------------------------------------------------


def test_analytics_of_the_fixture():
    with fixture_items() as items, cupel.Budget(300, 250) as b, recency_pipeline() as p:
        placed, report = p.run(items, b, report=True)
        assert placed == [1, 2]
        assert report.budget_utilization == pytest.approx(250 / 300, abs=1e-12)
        assert report.kind_diversity == 2
        assert report.timestamp_coverage == 1.0
        assert report.analytics == {"budgetUtilization": report.budget_utilization, "kindDiversity": 2,
                                    "timestampCoverage": 1.0}


def test_analytics_edge_cases():
    with cupel.Greedy() as g, cupel.Pipeline(slicer=g) as p:
        # An empty report: everything 0.
        with cupel.Items() as items, cupel.Budget(100) as b:
            _, report = p.run(items, b, report=True)
            assert (report.budget_utilization, report.kind_diversity, report.timestamp_coverage) == (0.0, 0, 0.0)
        # A zero budget: utilization 0 (the peers give NaN), nothing included.
        with cupel.Items.from_columns([0, 5], [1.0, 1.0], kinds=["A", "B"]) as items, cupel.Budget(0) as b:
            placed, report = p.run(items, b, report=True)
            assert placed == []
            assert (report.budget_utilization, report.kind_diversity, report.timestamp_coverage) == (0.0, 0, 0.0)
        # A pinned item over a zero target under Overflow.PROCEED: 0, not infinity.
        with cupel.Greedy() as g2, cupel.Pipeline(slicer=g2, overflow=cupel.Overflow.PROCEED) as proceed, \
                cupel.Items([{"tokens": 5, "pinned": True, "kind": "A"}]) as items, cupel.Budget(10, 0) as b:
            placed, report = proceed.run(items, b, report=True)
            assert placed == [0]
            assert report.budget_utilization == 0.5 and report.kind_diversity == 1
        # Kinds compared case-insensitively; coverage counts timestamped included items.
        with cupel.Items([{"tokens": 10, "score": 1, "kind": "Doc", "timestamp": 5},
                          {"tokens": 10, "score": 1, "kind": "DOC"},
                          {"tokens": 10, "score": 1, "kind": "Tool"},
                          {"tokens": 10, "score": 1, "kind": "Tool", "timestamp": 6}]) as items, \
                cupel.Budget(40) as b:
            _, report = p.run(items, b, report=True)
            assert report.kind_diversity == 2
            assert report.timestamp_coverage == 0.5
            assert report.budget_utilization == 1.0


def test_analytics_with_quotas_have_rows():
    with cupel.Greedy() as g, cupel.Quota(g, {"Document": (10, 50)}) as q, cupel.Pipeline(slicer=q) as p, \
            fixture_items() as items, cupel.Budget(300, 250) as b:
        _, report = p.run(items, b, report=True)
        rows = report.analytics["quotas"]
        assert [(r["kind"], r["mode"]) for r in rows] == [("Document", "percentage")]
        assert 0.0 <= rows[0]["utilization"] <= 1.0


def test_session_reports_have_analytics():
    with fixture_items() as items, cupel.Budget(300, 250) as b, recency_pipeline() as p, \
            cupel.Session(p) as session:
        _, report = session.run(items, b, report=True)
        assert report.kind_diversity == 2 and report.timestamp_coverage == 1.0
        assert report.budget_utilization == pytest.approx(250 / 300, abs=1e-12)


# ---- tracing ------------------------------------------------------------------------------


@pytest.mark.parametrize("level, count", [(cupel.TraceLevel.STAGES, 6), ("exclusions", 7), ("FULL", 9),
                                          (1, 7)])
def test_trace_events_per_level(level, count):
    events = []
    with fixture_items() as items, cupel.Budget(300, 250) as b, recency_pipeline() as p:
        p.set_trace(events.append, level)
        assert p.run(items, b) == [1, 2]
        assert len(events) == count
        p.run(items, b)
        assert len(events) == 2 * count
        p.set_trace(None)
        p.run(items, b)
        assert len(events) == 2 * count


def test_trace_event_fields():
    events = []
    with fixture_items() as items, cupel.Budget(300, 250) as b, recency_pipeline() as p:
        p.set_trace(events.append, cupel.TraceLevel.FULL)
        p.run(items, b)
    assert [e.name for e in events] == [
        "cupel.stage.classify", "cupel.stage.score", "cupel.stage.deduplicate", "cupel.stage.slice",
        "cupel.exclusion", "cupel.stage.place", "cupel.item.included", "cupel.item.included", "cupel.pipeline"]
    K = cupel.TraceKind
    assert [e.kind for e in events] == [K.STAGE] * 4 + [K.EXCLUSION, K.STAGE, K.INCLUDED, K.INCLUDED, K.PIPELINE]
    assert all(e.verbosity == "Full" for e in events)
    stages = [e for e in events if e.kind == K.STAGE]
    assert [e.stage for e in stages] == ["classify", "score", "deduplicate", "slice", "place"]
    assert [(e.item_count_in, e.item_count_out, e.exclusion_count) for e in stages] == [
        (3, 3, 0), (3, 3, 0), (3, 3, 0), (3, 2, 1), (2, 2, 0)]
    assert all(e.item is None and e.reason is None and e.item_kind is None for e in stages)
    ex = events[4]
    assert (ex.stage, ex.item, ex.reason, ex.reason_name, ex.item_kind, ex.tokens, ex.score) == (
        "slice", 0, cupel.Reason.BUDGET_EXCEEDED, "BudgetExceeded", "Message", 100, None)
    inc = events[6:8]
    assert [(e.stage, e.item, e.item_kind, e.tokens, e.reason) for e in inc] == [
        ("place", 1, "Document", 200, None), ("place", 2, "ToolOutput", 50, None)]
    assert [e.score for e in inc] == [0.5, 1.0]
    root = events[-1]
    assert (root.stage, root.max_tokens, root.item_count_in, root.item_count_out, root.exclusion_count) == (
        None, 300, 3, 2, 1)
    # Times: the stages follow each other inside the pipeline's span; events have no duration.
    assert root.start_unix_nanos > 0
    assert all(root.start_unix_nanos <= e.start_unix_nanos <= e.end_unix_nanos <= root.end_unix_nanos
               for e in events[:-1])
    assert all(e.duration_nanos == 0 for e in events if e.kind in (K.EXCLUSION, K.INCLUDED))
    for a, b in zip(stages, stages[1:]):
        assert a.end_unix_nanos <= b.start_unix_nanos


def test_trace_verbosity_names():
    for level, name in [("stages", "StageOnly"), ("exclusions", "StageAndExclusions"), ("full", "Full")]:
        events = []
        with fixture_items() as items, cupel.Budget(300, 250) as b, recency_pipeline() as p:
            p.set_trace(events.append, level)
            p.run(items, b)
        assert {e.verbosity for e in events} == {name}


def test_a_callback_that_raises_is_reraised_after_the_run():
    seen = []

    def callback(event):
        seen.append(event.name)
        if event.name == "cupel.stage.score":
            raise KeyError("from the callback")

    with fixture_items() as items, cupel.Budget(300, 250) as b, recency_pipeline() as p:
        p.set_trace(callback, "full")
        with pytest.raises(KeyError, match="from the callback"):
            p.run(items, b)
        # The rest of that run's events were dropped; the next run starts afresh.
        assert seen == ["cupel.stage.classify", "cupel.stage.score"]
        with pytest.raises(KeyError):
            p.run(items, b, report=True)
        assert seen[2:] == ["cupel.stage.classify", "cupel.stage.score"]
        p.set_trace(lambda e: None)
        assert p.run(items, b) == [1, 2]
        # BaseExceptions too (KeyboardInterrupt in a callback stops the run's events).
        p.set_trace(lambda e: (_ for _ in ()).throw(KeyboardInterrupt()))
        with pytest.raises(KeyboardInterrupt):
            p.run(items, b)


def test_a_failed_run_sends_nothing():
    events = []
    with fixture_items() as items, cupel.Budget(300, 10) as b, cupel.Greedy() as g, \
            cupel.Pipeline(slicer=g) as p:
        items.set_pinned(1, True)  # 200 pinned tokens over a 10-token target: the run fails
        p.set_trace(events.append, "full")
        with pytest.raises(cupel.CupelError):
            p.run(items, b)
        assert events == []


def test_the_pipeline_keeps_its_callback_alive():
    counts = []
    with fixture_items() as items, cupel.Budget(300, 250) as b, recency_pipeline() as p:
        def make():
            box = []
            return lambda e: counts.append(len(box))  # a closure nobody else holds
        p.set_trace(make(), "stages")
        gc.collect()
        p.run(items, b)
        assert len(counts) == 6
        # A session copies the pipeline with its trace: it keeps the callback
        # even after the pipeline changes its own or is closed.
        session = cupel.Session(p)
        p.set_trace(None)
        p.close()
        gc.collect()
        session.run(items, b)
        assert len(counts) == 12
        session.close()


def test_a_session_reraises_its_callbacks_exception():
    def boom(event):
        raise RuntimeError("boom")

    with fixture_items() as items, cupel.Budget(300, 250) as b, recency_pipeline() as p:
        p.set_trace(boom)
        with cupel.Session(p) as session:
            with pytest.raises(RuntimeError, match="boom"):
                session.run(items, b)
            assert session.last_action is cupel.SessionAction.FIRST


def test_sensitivity_runs_are_traced_and_reraise():
    events = []
    with fixture_items() as items, cupel.Budget(300, 250) as b, recency_pipeline() as a, \
            cupel.Pipeline.from_json(POLICY) as c:
        a.set_trace(events.append)
        cupel.policy_sensitivity([("a", a), ("c", c)], items, b)
        assert len(events) in (6, 12)  # the library may run a variant more than once (buffer sizing)
        a.set_trace(lambda e: 1 / 0)
        with pytest.raises(ZeroDivisionError):
            cupel.policy_sensitivity([("a", a), ("c", c)], items, b)


def test_trace_from_several_threads():
    per_thread = {}
    lock = threading.Lock()

    def callback(event):
        with lock:
            per_thread.setdefault(threading.current_thread().name, []).append(event.name)

    with fixture_items() as items, cupel.Budget(300, 250) as b, recency_pipeline() as p:
        p.set_trace(callback, "full")
        start = threading.Barrier(4)

        def runs():
            start.wait()
            for _ in range(20):
                assert p.run(items, b) == [1, 2]

        threads = [threading.Thread(target=runs, name=f"runner {k}") for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(per_thread) == 4
    for names in per_thread.values():
        assert len(names) == 9 * 20
        assert names[8::9] == ["cupel.pipeline"] * 20


def test_set_trace_errors():
    with recency_pipeline() as p:
        with pytest.raises(ValueError, match="level is 3"):
            p.set_trace(print, 3)
        with pytest.raises(ValueError, match="level is 'loud'"):
            p.set_trace(print, "loud")
        with pytest.raises(TypeError, match="level must be"):
            p.set_trace(print, 1.5)
        with pytest.raises(TypeError, match="callback must be a callable"):
            p.set_trace("print")
    with pytest.raises(TypeError, match="pipeline is None"):
        cupel.Pipeline.set_trace(None, print)
    with pytest.raises(cupel.ClosedError, match="pipeline is closed"):
        p.set_trace(print)


def test_handles_are_freed():
    gc.collect()
    before = cupel.live_handles()
    with cupel.Pipeline.from_json(POLICY) as p, cupel.Budget.from_json('{"maxTokens":1,"targetTokens":1}'):
        assert cupel.live_handles() == before + 2
        p.set_trace(print)
    p = cupel.Pipeline.preset("Chat")
    p.set_trace(lambda e: None)
    del p
    gc.collect()
    assert cupel.live_handles() == before
    for bad in ("", "null", "{"):
        with pytest.raises(ValueError):
            cupel.Pipeline.from_json(bad)
    with pytest.raises(ValueError):
        cupel.Pipeline.preset("nope")
    gc.collect()
    assert cupel.live_handles() == before
