"""ctypes declarations of libcupel's C ABI (include/cupel.h), loaded from the
library bundled in this package (or $CUPEL_LIB). Private: the public API is
the `cupel` package, which checks every argument before it gets here."""

import ctypes as C
import os
import sys
from pathlib import Path

_NAME = {"darwin": "libcupel.dylib", "win32": "cupel.dll"}.get(sys.platform, "libcupel.so")
lib = C.CDLL(os.environ.get("CUPEL_LIB") or str(Path(__file__).resolve().parent / _NAME))

status = C.c_int
size_t = C.c_size_t
p = C.c_void_p
pp = C.POINTER(C.c_void_p)
i64 = C.c_int64
u64 = C.c_uint64
f64 = C.c_double
s = C.c_char_p


class Decision(C.Structure):
    _fields_ = [
        ("item_index", size_t),
        ("score", f64),
        ("reason", C.c_int32),
        ("item_tokens", i64),
        ("available_tokens", i64),
        ("related_index", size_t),
        ("group", u64),
        ("group_tokens", i64),
    ]


class Breakpoint(C.Structure):  # cupel_breakpoint
    _fields_ = [("items", size_t), ("tokens", i64), ("mark", C.c_int32)]


class Weight(C.Structure):  # cupel_kind_weight and cupel_tag_weight
    _fields_ = [("name", s), ("weight", f64)]


class DecayWindow(C.Structure):
    _fields_ = [("max_age_secs", f64), ("score", f64)]


class QuotaEntry(C.Structure):
    _fields_ = [("kind", s), ("require_percent", f64), ("cap_percent", f64)]


class CountEntry(C.Structure):
    _fields_ = [("kind", s), ("require_count", C.c_uint32), ("cap_count", C.c_uint32)]


class TraceEvent(C.Structure):  # cupel_trace_event; strings as addresses (item_kind is ptr + len, no NUL)
    _fields_ = [
        ("kind", C.c_int),
        ("name", p),
        ("stage", p),
        ("verbosity", p),
        ("item_count_in", size_t),
        ("item_count_out", size_t),
        ("exclusion_count", size_t),
        ("item", size_t),
        ("reason", C.c_int32),
        ("reason_name", p),
        ("item_kind", p),
        ("item_kind_len", size_t),
        ("tokens", i64),
        ("score", f64),
        ("max_tokens", i64),
        ("start_unix_nanos", u64),
        ("duration_nanos", u64),
    ]


# cupel_trace_fn: void (*)(void *user_data, const cupel_trace_event *event)
TraceFn = C.CFUNCTYPE(None, p, C.POINTER(TraceEvent))


def _decl(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)


for _name, _res, _args in [
    ("cupel_last_error", s, []),
    ("cupel_status_str", s, [C.c_int]),
    ("cupel_version", s, []),
    ("cupel_abi_version", C.c_uint32, []),
    ("cupel_reason_str", s, [C.c_int]),
    ("cupel_live_handles", size_t, []),
    ("cupel_items_new", status, [pp]),
    ("cupel_items_free", None, [p]),
    ("cupel_items_push", status, [p, i64, f64, s]),
    ("cupel_items_push_many", status, [p, size_t, C.POINTER(i64), C.POINTER(f64), C.POINTER(s)]),
    ("cupel_items_push_many_packed", status, [p, size_t, C.POINTER(i64), C.POINTER(f64), s, size_t]),
    ("cupel_items_set_contents_packed", status, [p, size_t, size_t, s, size_t]),
    ("cupel_items_len", size_t, [p]),
    ("cupel_items_clear", None, [p]),
    ("cupel_items_set_source", status, [p, size_t, s]),
    ("cupel_items_set_content", status, [p, size_t, s]),
    ("cupel_items_set_pinned", status, [p, size_t, C.c_bool]),
    ("cupel_items_tokens", status, [p, size_t, C.POINTER(i64)]),
    ("cupel_items_score", status, [p, size_t, C.POINTER(f64)]),
    ("cupel_items_kind", status, [p, size_t, pp, C.POINTER(size_t)]),
    ("cupel_items_content", status, [p, size_t, pp, C.POINTER(size_t)]),
    ("cupel_items_source", status, [p, size_t, pp, C.POINTER(size_t)]),
    ("cupel_items_timestamp", status, [p, size_t, C.POINTER(C.c_bool), C.POINTER(i64)]),
    ("cupel_items_priority", status, [p, size_t, C.POINTER(C.c_bool), C.POINTER(i64)]),
    ("cupel_items_relevance_hint", status, [p, size_t, C.POINTER(C.c_bool), C.POINTER(f64)]),
    ("cupel_items_pinned", status, [p, size_t, C.POINTER(C.c_bool)]),
    ("cupel_items_group", status, [p, size_t, C.POINTER(u64)]),
    ("cupel_items_tag_count", status, [p, size_t, C.POINTER(size_t)]),
    ("cupel_items_tag", status, [p, size_t, size_t, pp, C.POINTER(size_t)]),
    ("cupel_items_metadata_count", status, [p, size_t, C.POINTER(size_t)]),
    ("cupel_items_metadata_entry", status, [p, size_t, size_t, pp, C.POINTER(size_t), pp, C.POINTER(size_t)]),
    ("cupel_items_add_tag", status, [p, size_t, s]),
    ("cupel_items_set_metadata", status, [p, size_t, s, s]),
    ("cupel_items_set_timestamp", status, [p, size_t, i64]),
    ("cupel_items_set_priority", status, [p, size_t, i64]),
    ("cupel_items_set_relevance_hint", status, [p, size_t, f64]),
    ("cupel_items_set_group", status, [p, size_t, u64]),
    ("cupel_items_set_contents", status, [p, size_t, size_t, C.POINTER(s)]),
    ("cupel_items_set_timestamps", status, [p, size_t, size_t, C.POINTER(i64)]),
    ("cupel_items_set_priorities", status, [p, size_t, size_t, C.POINTER(i64)]),
    ("cupel_items_set_pinned_many", status, [p, size_t, size_t, C.POINTER(C.c_bool)]),
    ("cupel_items_set_relevance_hints", status, [p, size_t, size_t, C.POINTER(f64)]),
    ("cupel_items_set_groups", status, [p, size_t, size_t, C.POINTER(u64)]),
    ("cupel_budget_new", status, [i64, i64, pp]),
    ("cupel_budget_free", None, [p]),
    ("cupel_budget_set_output_reserve", status, [p, i64]),
    ("cupel_budget_set_safety_margin", status, [p, f64]),
    ("cupel_budget_reserve", status, [p, s, i64]),
    ("cupel_budget_effective", status, [p, i64, C.POINTER(i64), C.POINTER(i64)]),
    ("cupel_slicer_new_greedy", status, [pp]),
    ("cupel_slicer_new_knapsack", status, [i64, pp]),
    ("cupel_slicer_new_quota", status, [p, C.POINTER(QuotaEntry), size_t, pp]),
    ("cupel_slicer_new_count_quota", status, [p, C.POINTER(CountEntry), size_t, C.c_int, pp]),
    ("cupel_slicer_new_count_constrained_knapsack", status, [i64, C.POINTER(CountEntry), size_t, C.c_int, pp]),
    ("cupel_slicer_set_memory_limit", status, [p, size_t]),
    ("cupel_slicer_memory_limit", size_t, [p]),
    ("cupel_slicer_free", None, [p]),
    ("cupel_scorer_new_given", status, [pp]),
    ("cupel_scorer_new_recency", status, [pp]),
    ("cupel_scorer_new_priority", status, [pp]),
    ("cupel_scorer_new_frequency", status, [pp]),
    ("cupel_scorer_new_reflexive", status, [pp]),
    ("cupel_scorer_new_kind", status, [C.POINTER(Weight), size_t, pp]),
    ("cupel_scorer_new_tag", status, [C.POINTER(Weight), size_t, pp]),
    ("cupel_scorer_new_composite", status, [C.POINTER(p), C.POINTER(f64), size_t, pp]),
    ("cupel_scorer_new_scaled", status, [p, pp]),
    ("cupel_scorer_new_metadata_trust", status, [f64, pp]),
    ("cupel_scorer_new_metadata_key", status, [s, s, f64, pp]),
    ("cupel_scorer_new_decay", status, [C.c_int, f64, C.POINTER(DecayWindow), size_t, i64, f64, pp]),
    ("cupel_scorer_free", None, [p]),
    ("cupel_scorer_score", status, [p, p, C.POINTER(f64), size_t, C.POINTER(size_t)]),
    ("cupel_placer_new_chronological", status, [pp]),
    ("cupel_placer_new_u_shaped", status, [pp]),
    ("cupel_placer_free", None, [p]),
    ("cupel_placer_place", status, [p, p, C.POINTER(size_t), C.POINTER(f64), size_t, C.POINTER(size_t), size_t,
                                    C.POINTER(size_t)]),
    ("cupel_pipeline_new", status, [p, p, p, pp]),
    ("cupel_pipeline_set_deduplication", status, [p, C.c_bool]),
    ("cupel_pipeline_set_overflow", status, [p, C.c_int]),
    ("cupel_pipeline_free", None, [p]),
    ("cupel_pipeline_run", status, [p, p, p, C.POINTER(size_t), size_t, C.POINTER(size_t), p]),
    ("cupel_slice", status, [p, p, p, i64, C.POINTER(size_t), size_t, C.POINTER(size_t), p]),
    ("cupel_marginal_items", status, [p, p, p, i64, i64, C.POINTER(size_t), size_t, C.POINTER(size_t)]),
    ("cupel_find_min_budget", status, [p, p, i64, size_t, i64, C.POINTER(i64)]),
    ("cupel_stream_new", status, [i64, size_t, pp]),
    ("cupel_stream_free", None, [p]),
    ("cupel_stream_push", status, [p, i64, f64, C.POINTER(C.c_bool)]),
    ("cupel_stream_push_grouped", status, [p, i64, f64, u64, C.POINTER(C.c_bool)]),
    ("cupel_stream_finish", status, [p, C.POINTER(size_t), size_t, C.POINTER(size_t)]),
    ("cupel_report_new", status, [pp]),
    ("cupel_report_free", None, [p]),
    ("cupel_report_included_count", size_t, [p]),
    ("cupel_report_included", status, [p, size_t, C.POINTER(Decision)]),
    ("cupel_report_excluded_count", size_t, [p]),
    ("cupel_report_excluded", status, [p, size_t, C.POINTER(Decision)]),
    ("cupel_report_total_candidates", i64, [p]),
    ("cupel_report_total_tokens_considered", i64, [p]),
    ("cupel_report_tokens_over_budget", i64, [p]),
    ("cupel_report_effective_max_tokens", i64, [p]),
    ("cupel_report_effective_target_tokens", i64, [p]),
    ("cupel_report_selected_tokens", i64, [p]),
    ("cupel_report_shortfall_count", size_t, [p]),
    ("cupel_report_shortfall", status, [p, size_t, pp, C.POINTER(C.c_uint32), C.POINTER(C.c_uint32)]),
    ("cupel_report_cap_excluded_count", size_t, [p]),
    ("cupel_report_cap_excluded", status, [p, size_t, C.POINTER(size_t)]),
    ("cupel_report_json", status, [p, p, C.c_char_p, size_t, C.POINTER(size_t)]),
    ("cupel_tokenizer_new", status, [s, pp]),
    ("cupel_tokenizer_from_tiktoken", status, [s, size_t, s, pp]),
    ("cupel_tokenizer_free", None, [p]),
    ("cupel_tokenizer_count", status, [p, s, size_t, C.POINTER(i64)]),
    # Texts go in as addresses into one packed buffer (see cupel._texts).
    ("cupel_tokenizer_count_many", status, [p, size_t, pp, C.POINTER(size_t), C.POINTER(i64)]),
    ("cupel_tokenizer_truncate", status, [p, s, size_t, i64, C.c_int, C.POINTER(size_t), C.POINTER(size_t),
                                          C.POINTER(i64)]),
    ("cupel_items_push_text", status, [p, p, s, size_t, f64, s]),
    ("cupel_items_push_texts", status, [p, p, size_t, pp, C.POINTER(size_t), C.POINTER(f64), C.POINTER(s)]),
    ("cupel_items_truncate", status, [p, size_t]),
    # Items that shrink: variants, truncation, and what a run chose.
    ("cupel_items_add_variant", status, [p, size_t, i64, f64, s]),
    ("cupel_items_set_truncatable", status, [p, size_t, C.c_int, i64]),
    ("cupel_items_clear_truncatable", status, [p, size_t]),
    ("cupel_items_variant_count", status, [p, size_t, C.POINTER(size_t)]),
    ("cupel_items_variant", status, [p, size_t, size_t, C.POINTER(i64), C.POINTER(f64), pp, C.POINTER(size_t)]),
    ("cupel_items_truncatable", status, [p, size_t, C.POINTER(C.c_bool), C.POINTER(C.c_int), C.POINTER(i64)]),
    ("cupel_pipeline_set_tokenizer", status, [p, p]),
    ("cupel_report_included_variant", status, [p, size_t, C.POINTER(size_t), C.POINTER(i64)]),
    ("cupel_report_included_cut", status, [p, size_t, C.POINTER(size_t), C.POINTER(size_t)]),
    # Sessions: item identity (keys, volatile items) and cache-stable selection across turns.
    ("cupel_items_set_key", status, [p, size_t, u64]),
    ("cupel_items_set_volatile", status, [p, size_t, C.c_bool]),
    ("cupel_items_set_keys", status, [p, size_t, size_t, C.POINTER(u64)]),
    ("cupel_items_set_volatile_many", status, [p, size_t, size_t, C.POINTER(C.c_bool)]),
    ("cupel_items_key", status, [p, size_t, C.POINTER(u64)]),
    ("cupel_items_volatile", status, [p, size_t, C.POINTER(C.c_bool)]),
    ("cupel_session_new", status, [p, pp]),
    ("cupel_session_free", None, [p]),
    ("cupel_session_set_slack", status, [p, f64]),
    ("cupel_session_slack", status, [p, C.POINTER(f64)]),
    ("cupel_session_run", status, [p, p, p, C.POINTER(size_t), size_t, C.POINTER(size_t), p]),
    ("cupel_session_stable_prefix", status, [p, C.POINTER(size_t), C.POINTER(i64)]),
    ("cupel_session_reset", status, [p]),
    ("cupel_session_last_action", status, [p, C.POINTER(C.c_int)]),
    ("cupel_session_breakpoints", status, [p, C.POINTER(Breakpoint), size_t, C.POINTER(size_t)]),
    # Policies as data, presets, sensitivity, analytics, tracing. JSON texts go
    # in with their length (a ctypes buffer), out through caller buffers.
    ("cupel_pipeline_from_json", status, [p, size_t, pp]),
    ("cupel_pipeline_to_json", status, [p, p, size_t, C.POINTER(size_t)]),
    ("cupel_budget_from_json", status, [p, size_t, pp]),
    ("cupel_budget_to_json", status, [p, p, size_t, C.POINTER(size_t)]),
    ("cupel_pipeline_preset", status, [s, pp]),
    ("cupel_preset_count", size_t, []),
    ("cupel_preset_name", s, [size_t]),
    ("cupel_pipeline_tokenizer_name", s, [p]),
    ("cupel_policy_sensitivity", status, [C.POINTER(p), C.POINTER(s), size_t, p, p, p, size_t, C.POINTER(size_t)]),
    ("cupel_report_budget_utilization", status, [p, C.POINTER(f64)]),
    ("cupel_report_kind_diversity", status, [p, p, C.POINTER(size_t)]),
    ("cupel_report_timestamp_coverage", status, [p, p, C.POINTER(f64)]),
    ("cupel_pipeline_set_trace", status, [p, C.c_int, TraceFn, p]),
]:
    _decl(_name, _res, *_args)
