"""OpenTelemetry spans for libcupel's pipeline runs (the specification's
OpenTelemetry chapter), when the host has the OpenTelemetry API installed:
`pip install libcupel[otel]` (which brings `opentelemetry-api`; the host
configures its SDK and exporters as usual).

    import cupel, cupel.otel
    pipeline = cupel.Pipeline.preset("Chat")
    cupel.otel.instrument(pipeline, level="exclusions")
    pipeline.run(items, budget)   # one cupel.pipeline span with five stage spans

Each successful run of an instrumented pipeline (and of a `Session` made
from it afterwards) becomes, on the tracer named "cupel":

- a root span `cupel.pipeline` (a child of the span current when the run
  was made, if any) with `cupel.budget.max_tokens` and `cupel.verbosity`
  ("StageOnly", "StageAndExclusions" or "Full");
- five child spans `cupel.stage.classify`, `.score`, `.deduplicate`,
  `.slice`, `.place` with `cupel.stage.name`, `cupel.stage.item_count_in`,
  `cupel.stage.item_count_out` and, from the exclusions level on,
  `cupel.exclusion.count`;
- from the exclusions level on, a `cupel.exclusion` span event per excluded
  item on its stage's span (`cupel.exclusion.reason`, `.item_kind`,
  `.item_tokens`); at the full level a `cupel.item.included` event per
  included item on the place span (`cupel.item.kind`, `.tokens`,
  `.score`).

The spans are built when the run has returned its events, with the start
and end times the library measured (explicit `start_time` / `end_time`, in
Unix nanoseconds). Never content or metadata.

This module imports OpenTelemetry only when `instrument` is called: `import
cupel` never does, and without the API installed `instrument` raises an
ImportError that says how to install it.
"""

from __future__ import annotations

import threading
from typing import Any, List, Optional, Union

from . import Pipeline, TraceEvent, TraceKind, TraceLevel, _bad_type, _level, _ptr, version

__all__ = ["TRACER_NAME", "instrument", "uninstrument"]

TRACER_NAME = "cupel"
"""The name of the tracer the spans are made on (the spec's Rust companion's
source name; the .NET one is "Wollax.Cupel")."""


def _api():
    try:
        from opentelemetry import trace
    except ImportError as e:
        raise ImportError("cupel.otel needs the OpenTelemetry API: pip install 'libcupel[otel]' "
                          "(or opentelemetry-api)") from e
    return trace


class _SpanBuilder:
    """The trace callback: collects one run's events (per thread: runs on
    different threads do not mix) and, at the pipeline's event (the last),
    makes the spans."""

    def __init__(self, tracer, trace_api) -> None:
        self._tracer, self._trace = tracer, trace_api
        self._local = threading.local()

    def __call__(self, event: TraceEvent) -> None:
        events = getattr(self._local, "events", None)
        if events is None:
            events = self._local.events = []
        if event.kind != TraceKind.PIPELINE:
            events.append(event)
            return
        self._local.events = []
        self._emit(event, events)

    def _emit(self, root_event: TraceEvent, events: List[TraceEvent]) -> None:
        tracer, trace = self._tracer, self._trace
        root = tracer.start_span(
            root_event.name,
            start_time=root_event.start_unix_nanos,
            attributes={
                "cupel.budget.max_tokens": root_event.max_tokens,
                "cupel.verbosity": root_event.verbosity,
            },
        )
        parent = trace.set_span_in_context(root)
        exclusions = root_event.verbosity != "StageOnly"
        stage = None
        for e in events:
            if e.kind == TraceKind.STAGE:
                if stage is not None:
                    stage[0].end(end_time=stage[1])
                attributes = {
                    "cupel.stage.name": e.stage,
                    "cupel.stage.item_count_in": e.item_count_in,
                    "cupel.stage.item_count_out": e.item_count_out,
                }
                if exclusions:
                    attributes["cupel.exclusion.count"] = e.exclusion_count
                span = tracer.start_span(e.name, context=parent, start_time=e.start_unix_nanos,
                                         attributes=attributes)
                stage = (span, e.end_unix_nanos)
            elif stage is not None and e.kind == TraceKind.EXCLUSION:
                stage[0].add_event(e.name, attributes={
                    "cupel.exclusion.reason": e.reason_name,
                    "cupel.exclusion.item_kind": e.item_kind,
                    "cupel.exclusion.item_tokens": e.tokens,
                }, timestamp=e.start_unix_nanos)
            elif stage is not None and e.kind == TraceKind.INCLUDED:
                stage[0].add_event(e.name, attributes={
                    "cupel.item.kind": e.item_kind,
                    "cupel.item.tokens": e.tokens,
                    "cupel.item.score": e.score,
                }, timestamp=e.start_unix_nanos)
        if stage is not None:
            stage[0].end(end_time=stage[1])
        root.end(end_time=root_event.end_unix_nanos)


def instrument(pipeline: Pipeline, level: Union[TraceLevel, str] = TraceLevel.STAGES,
               tracer_provider: Optional[Any] = None) -> None:
    """Makes every successful run of `pipeline` an OpenTelemetry trace (see
    the module's documentation) at `level` (`TraceLevel.STAGES`,
    `EXCLUSIONS`, `FULL` or "stages", "exclusions", "full"), on the tracer
    "cupel" of `tracer_provider` (None: the global one). Replaces the
    pipeline's trace callback (`Pipeline.set_trace`); `uninstrument` turns
    it off. An exception from the SDK surfaces from the run, as a trace
    callback's does."""
    _ptr(pipeline, Pipeline, "pipeline")
    lv = _level(level)
    trace = _api()
    if tracer_provider is not None and not hasattr(tracer_provider, "get_tracer"):
        raise _bad_type("tracer_provider", tracer_provider, "an OpenTelemetry TracerProvider (or None)")
    tracer = trace.get_tracer(TRACER_NAME, version(), tracer_provider=tracer_provider)
    pipeline.set_trace(_SpanBuilder(tracer, trace), lv)


def uninstrument(pipeline: Pipeline) -> None:
    """Turns the pipeline's tracing off (`pipeline.set_trace(None)`)."""
    pipeline.set_trace(None)
