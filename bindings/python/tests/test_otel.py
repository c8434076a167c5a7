"""pytest: cupel.otel, OpenTelemetry spans from a pipeline's trace, checked
with the SDK's InMemorySpanExporter against the names of the
specification's OpenTelemetry chapter.

The SDK is a test dependency (tests/python_binding.rs installs the wheel
with its `otel` extra and opentelemetry-sdk into each venv): with CI=true
or CUPEL_TEST_OTEL=1 a missing SDK FAILS these tests; elsewhere they are
skipped."""
import os
import subprocess
import sys

import pytest

import cupel

try:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    MISSING = None
except ImportError as e:  # pragma: no cover - depends on the environment
    MISSING = e

REQUIRED = os.environ.get("CI") == "true" or os.environ.get("CUPEL_TEST_OTEL") == "1"


@pytest.fixture
def exporter():
    if MISSING is not None:
        if REQUIRED:
            pytest.fail(f"OpenTelemetry's SDK is not installed ({MISSING}); CI needs it: "
                        f"pip install 'libcupel[otel]' opentelemetry-sdk")
        pytest.skip("OpenTelemetry's SDK is not installed")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    exporter.provider = provider
    return exporter


def fixture():
    """The contract's fixture: tokens 100/200/50, recency, greedy,
    chronological, budget 300/250: item 0 is excluded (BudgetExceeded)."""
    items = cupel.Items.from_columns([100, 200, 50], [0.9, 0.5, 0.1], kinds=["Message", "Document", "ToolOutput"],
                                     contents=["alpha", "beta", "gamma"], timestamps=[1000, 2000, 3000])
    with cupel.scorers.Recency() as r, cupel.Greedy() as g, cupel.Chronological() as c:
        pipeline = cupel.Pipeline(scorer=r, slicer=g, placer=c)
    return items, cupel.Budget(300, 250), pipeline


STAGES = ["classify", "score", "deduplicate", "slice", "place"]


def spans_of(exporter):
    spans = exporter.get_finished_spans()
    by_name = {s.name: s for s in spans}
    assert len(by_name) == len(spans) == 6, [s.name for s in spans]
    return by_name


@pytest.mark.parametrize("level, verbosity", [(cupel.TraceLevel.STAGES, "StageOnly"),
                                              ("exclusions", "StageAndExclusions"), ("full", "Full")])
def test_a_run_is_a_pipeline_span_with_five_stage_spans(exporter, level, verbosity):
    import cupel.otel
    items, budget, pipeline = fixture()
    with items, budget, pipeline:
        cupel.otel.instrument(pipeline, level=level, tracer_provider=exporter.provider)
        # The events the spans are made from, seen through a second pipeline's plain callback.
        events = []
        with cupel.Pipeline.from_json(pipeline.to_json()) as twin:
            twin.set_trace(events.append, level)
            twin.run(items, budget)
        assert pipeline.run(items, budget) == [1, 2]
    spans = spans_of(exporter)
    root = spans["cupel.pipeline"]
    assert root.parent is None
    assert root.instrumentation_scope.name == "cupel"
    assert dict(root.attributes) == {"cupel.budget.max_tokens": 300, "cupel.verbosity": verbosity}
    assert root.start_time < root.end_time
    counts = {"classify": (3, 3, 0), "score": (3, 3, 0), "deduplicate": (3, 3, 0), "slice": (3, 2, 1),
              "place": (2, 2, 0)}
    previous_end = root.start_time
    for stage in STAGES:
        span = spans[f"cupel.stage.{stage}"]
        assert span.parent.span_id == root.context.span_id
        assert span.context.trace_id == root.context.trace_id
        assert span.instrumentation_scope.name == "cupel"
        want = {"cupel.stage.name": stage, "cupel.stage.item_count_in": counts[stage][0],
                "cupel.stage.item_count_out": counts[stage][1]}
        if verbosity != "StageOnly":
            want["cupel.exclusion.count"] = counts[stage][2]
        assert dict(span.attributes) == want
        # Explicit times from the library's measurements: in order, inside the root.
        assert previous_end <= span.start_time <= span.end_time <= root.end_time
        previous_end = span.end_time
    exclusions = spans["cupel.stage.slice"].events
    included = spans["cupel.stage.place"].events
    if verbosity == "StageOnly":
        assert all(not spans[f"cupel.stage.{s}"].events for s in STAGES)
    else:
        assert [(e.name, dict(e.attributes)) for e in exclusions] == [
            ("cupel.exclusion", {"cupel.exclusion.reason": "BudgetExceeded", "cupel.exclusion.item_kind": "Message",
                                 "cupel.exclusion.item_tokens": 100})]
        assert spans["cupel.stage.slice"].start_time <= exclusions[0].timestamp <= spans["cupel.stage.slice"].end_time
        assert all(not spans[f"cupel.stage.{s}"].events for s in STAGES if s not in ("slice", "place"))
    if verbosity == "Full":
        assert [(e.name, dict(e.attributes)) for e in included] == [
            ("cupel.item.included", {"cupel.item.kind": "Document", "cupel.item.tokens": 200,
                                     "cupel.item.score": 0.5}),
            ("cupel.item.included", {"cupel.item.kind": "ToolOutput", "cupel.item.tokens": 50,
                                     "cupel.item.score": 1.0})]
    else:
        assert included == () or list(included) == []
    # The twin's trace: as many events as the spans carry, and the same counts.
    assert len(events) == 6 + len(exclusions) + len(included)


def test_spans_are_made_after_the_fact_with_the_librarys_times(exporter):
    import cupel.otel
    items, budget, pipeline = fixture()
    recorded = []
    with items, budget, pipeline:
        cupel.otel.instrument(pipeline, "full", exporter.provider)
        builder = pipeline._trace.callback

        def both(event):  # the instrument's callback, watched
            recorded.append(event)
            builder(event)

        pipeline.set_trace(both, "full")
        pipeline.run(items, budget)
    spans = spans_of(exporter)
    by_name = {e.name: e for e in recorded if e.kind != cupel.TraceKind.EXCLUSION
               and e.kind != cupel.TraceKind.INCLUDED}
    for name, span in spans.items():
        assert (span.start_time, span.end_time) == (by_name[name].start_unix_nanos, by_name[name].end_unix_nanos)
    ex = next(e for e in recorded if e.kind == cupel.TraceKind.EXCLUSION)
    assert spans["cupel.stage.slice"].events[0].timestamp == ex.start_unix_nanos


def test_the_pipeline_span_is_a_child_of_the_hosts_span(exporter):
    import cupel.otel
    items, budget, pipeline = fixture()
    host = exporter.provider.get_tracer("host")
    with items, budget, pipeline:
        cupel.otel.instrument(pipeline, tracer_provider=exporter.provider)
        with host.start_as_current_span("request") as request:
            pipeline.run(items, budget)
            cupel.select([{"text": "hello"}], 10, pipeline)
    spans = exporter.get_finished_spans()
    roots = [s for s in spans if s.name == "cupel.pipeline"]
    assert len(roots) == 2
    for root in roots:
        assert root.parent.span_id == request.get_span_context().span_id
    assert len(spans) == 1 + 2 * 6


def test_sessions_and_threads_trace_too(exporter):
    import threading

    import cupel.otel
    items, budget, pipeline = fixture()
    with items, budget, pipeline:
        cupel.otel.instrument(pipeline, "exclusions", exporter.provider)
        with cupel.Session(pipeline) as session:
            session.run(items, budget)
        assert len(exporter.get_finished_spans()) == 6
        threads = [threading.Thread(target=lambda: [pipeline.run(items, budget) for _ in range(10)])
                   for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    spans = exporter.get_finished_spans()
    assert len(spans) == 6 * 31
    roots = {s.context.span_id for s in spans if s.name == "cupel.pipeline"}
    assert len(roots) == 31
    # Every stage span's parent is a root of its own run: runs on several threads never mix.
    children = {}
    for s in spans:
        if s.name != "cupel.pipeline":
            assert s.parent.span_id in roots
            children.setdefault(s.parent.span_id, []).append(s.name)
    assert all(sorted(c) == sorted(f"cupel.stage.{x}" for x in STAGES) for c in children.values())


def test_uninstrument_and_the_global_provider(exporter):
    import cupel.otel
    items, budget, pipeline = fixture()
    with items, budget, pipeline:
        cupel.otel.instrument(pipeline, tracer_provider=exporter.provider)
        cupel.otel.uninstrument(pipeline)
        pipeline.run(items, budget)
        assert exporter.get_finished_spans() == ()
        # None: the global provider (the API's proxy when none is set, which records nothing).
        cupel.otel.instrument(pipeline)
        pipeline.run(items, budget)
        with pytest.raises(TypeError, match="tracer_provider must be"):
            cupel.otel.instrument(pipeline, tracer_provider="provider")
        with pytest.raises(ValueError, match="level is 'loud'"):
            cupel.otel.instrument(pipeline, "loud")
    with pytest.raises(cupel.ClosedError, match="pipeline is closed"):
        cupel.otel.instrument(pipeline)
    with pytest.raises(TypeError, match="pipeline is None"):
        cupel.otel.instrument(None)


def test_an_sdk_error_surfaces_from_the_run(exporter):
    import cupel.otel

    class Broken:
        def get_tracer(self, *args, **kwargs):
            return self

        def start_span(self, *args, **kwargs):
            raise RuntimeError("exporter down")

    items, budget, pipeline = fixture()
    with items, budget, pipeline:
        cupel.otel.instrument(pipeline, tracer_provider=Broken())
        with pytest.raises(RuntimeError, match="exporter down"):
            pipeline.run(items, budget)


def test_without_the_api_instrument_says_how_to_install_it(monkeypatch):
    import cupel.otel
    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # as if not installed
    with cupel.Pipeline.preset("Chat") as p:
        with pytest.raises(ImportError, match=r"pip install 'libcupel\[otel\]'"):
            cupel.otel.instrument(p)


def test_import_cupel_never_imports_opentelemetry():
    code = "import sys, cupel, cupel.otel; print('opentelemetry' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_tracer_name():
    import cupel.otel
    assert cupel.otel.TRACER_NAME == "cupel"
