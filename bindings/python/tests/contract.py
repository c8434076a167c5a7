"""The binding contract (tests/contract/contract.txt) run through the Python
package's public API: every row whose `where` names py.

    python contract.py [contract.txt]

The table is the argument, else $CUPEL_CONTRACT, else the repository's
tests/contract/contract.txt found relative to this file. Prints one line per
failed row, then "contract py: N passed, M failed"; exits non-zero when a
row fails, and with status 2 when the table has a row this runner cannot
run (an unknown op, value or expect) or its @map line for py differs from
ERRORS below. tests/python_binding.rs runs it under CPython and PyPy.
"""
import os
import re
import sys
from pathlib import Path

import cupel

LANG = "py"
LANGUAGES = ["c", "cpp", "go", "cs", "py", "js", "lua"]

# The error class of each expect category: must equal the table's @map py line.
ERRORS = {"null": TypeError, "type": TypeError, "integer": TypeError, "value": ValueError,
          "range": IndexError, "closed": ValueError}

# Where the Python API names an argument otherwise than the table: the name
# a message must give instead. (op, arg) -> Python name.
ALIASES = {
    ("items.push_many", "tokens"): "tokens",  # Items.extend_columns(tokens, scores, kinds=...)
    ("items.push_many", "score"): "scores",
    ("items.push_many", "kind"): "kinds",
    ("scorer.composite", "children"): "parts",  # scorers.Composite(parts=[(scorer, weight), ...])
    ("scorer.composite", "weights"): "parts",
    ("items.set_volatile", "is_volatile"): "volatile",  # Items.set_volatile(index, volatile=True)
    ("session.set_slack", "fraction"): "slack",  # the property: session.slack = fraction
    # cupel.policy_sensitivity(variants=[(label, pipeline), ...], items, budget): the count is the pairs'
    ("policy_sensitivity", "count"): "variants",
}

SENTINELS = ["18446744073709551615", "9223372036854775808", "9223372036854775807", "4294967295"]

# A `closed` row's message holds one of these words, in any case.
CLOSED_WORDS = ["closed", "disposed", "freed", "moved"]

FIXTURE = [  # tokens, score, kind, content, timestamp
    (100, 0.9, "Message", "alpha", 1000),
    (200, 0.5, "Document", "beta", 2000),
    (50, 0.1, "ToolOutput", "gamma", 3000),
]
SENTENCE = "Hello, world! This is libcupel counting tokens."  # 47 bytes (and str indices), 12 tokens

# The table's keep values, as this binding spells them.
KEEPS = {"head": cupel.Keep.HEAD, "tail": cupel.Keep.TAIL, "both_ends": cupel.Keep.BOTH_ENDS}
# The table's trace levels.
LEVELS = {"stages": cupel.TraceLevel.STAGES, "exclusions": cupel.TraceLevel.EXCLUSIONS, "full": cupel.TraceLevel.FULL}
# The table's JSON texts (VALUES), and the FIXTURE's documents.
JSON_VALUES = {
    "policy-null": "null",
    "policy-malformed": '{"scorers": ',
    "policy-bad-weight": '{"scorers":[{"type":"recency","weight":-1}]}',
    "policy-bad-type": '{"scorers":[{"type":"nope","weight":1}]}',
    "budget-bad": '{"maxTokens":100,"targetTokens":250}',
    "budget-missing": '{"targetTokens":1}',
}
POLICY = '{"scorers":[{"type":"recency","weight":1}],"slicerType":"greedy","placerType":"chronological"}'
BUDGET = '{"maxTokens":300,"targetTokens":250}'
# The fixture's items as messages of the one-call path (1 token each with o200k_base).
MESSAGES = [{"text": content, "kind": kind, "timestamp": ts} for _, _, kind, content, ts in FIXTURE]


class Unrunnable(Exception):
    """A row this runner cannot run: the table and the runner disagree."""


class Row:
    def __init__(self, line: str, lineno: int):
        f = line.split()
        if len(f) != 6:
            raise Unrunnable(f"contract.txt:{lineno}: not a row of six fields: {line}")
        self.id, self.op, self.arg, self.value, self.expect, self.where = f

    def langs(self):
        if self.where == "all":
            return LANGUAGES
        if self.where == "dyn":
            return ["py", "js", "lua"]
        if self.where == "handles":
            return LANGUAGES[1:]
        names = self.where.split(",")
        for n in names:
            if n not in LANGUAGES:
                raise Unrunnable(f"row {self.id}: unknown language {n!r}")
        return names


class Fixture:
    """The table's FIXTURE, made through the public API."""

    def __init__(self):
        self.items = cupel.Items.from_columns([t for t, *_ in FIXTURE], [s for _, s, *_ in FIXTURE],
                                              kinds=[r[2] for r in FIXTURE], contents=[r[3] for r in FIXTURE],
                                              timestamps=[r[4] for r in FIXTURE])
        self.budget = cupel.Budget(300, 250)
        self.greedy = cupel.Greedy()
        self.recency = cupel.scorers.Recency()
        self.priority = cupel.scorers.Priority()
        self.kind = cupel.scorers.Kind()
        self.chronological = cupel.Chronological()
        self.pipeline = cupel.Pipeline(scorer=self.recency, slicer=self.greedy, placer=self.chronological)
        self.stream = cupel.Stream(100, 0)
        self.tokenizer = cupel.Tokenizer("o200k_base")
        self.session = None  # made by the session ops, from `pipeline`
        self.kindpipe = cupel.Pipeline(scorer=cupel.scorers.Kind({"Message": 1}), slicer=self.greedy,
                                       placer=self.chronological)

    def close(self):
        if self.session is not None:
            self.session.close()
        for h in (self.kindpipe, self.tokenizer, self.stream, self.pipeline, self.chronological, self.kind, self.priority, self.recency,
                  self.greedy, self.budget, self.items):
            h.close()


def parse_value(text: str):
    """A value of the table's grammar, or a marker string for the special ones."""
    if text == "null":
        return None
    if text in ("true", "false"):
        return text == "true"
    if text in ("nan", "inf", "-inf"):
        return float(text)
    if text in ("2^63", "2^64"):
        return 2 ** int(text[2:])
    if text == "bad-utf8":
        return "\ud800"  # a lone surrogate: strings are code points
    if text in ("end", "closed", "wrong-handle", "-"):
        return Special(text)
    if text in KEEPS:
        return KEEPS[text]
    if text in LEVELS:
        return LEVELS[text]
    if text in JSON_VALUES:
        return JSON_VALUES[text]
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        return re.sub(r"\\x([0-9a-fA-F]{2})", lambda m: chr(int(m.group(1), 16)), text[1:-1])
    if re.fullmatch(r"-?[0-9]+", text):
        return int(text)
    if re.fullmatch(r"-?[0-9]*\.[0-9]+", text):
        return float(text)
    raise Unrunnable(f"unknown value {text!r}")


class Special:
    def __init__(self, name):
        self.name = name


class Args:
    """The arguments of one call: the op's defaults, with the row's `arg`
    replaced by its value. Records which arguments the op asked for, so that
    a row naming an argument the op does not have fails."""

    def __init__(self, row: Row, fixture: Fixture):
        self.row, self.f = row, fixture
        self.value = parse_value(row.value)
        self.asked = []

    def _mine(self, name):
        self.asked.append(name)
        return self.row.arg == name

    def get(self, name, default):
        """A plain value; `end` is one past the fixture's last index (3)."""
        if not self._mine(name):
            return default
        v = self.value
        if isinstance(v, Special):
            if v.name == "end":
                return len(FIXTURE)
            raise Unrunnable(f"{v.name} is not a value for {name}")
        return v

    def handle(self, name, default, wrong):
        """A handle: the fixture's `default`; `closed` closes it first,
        `wrong-handle` gives `wrong` (a handle of another type)."""
        if not self._mine(name):
            return default
        v = self.value
        if isinstance(v, Special):
            if v.name == "closed":
                default.close()
                return default
            if v.name == "wrong-handle":
                return wrong
            raise Unrunnable(f"{v.name} is not a value for handle {name}")
        return v


def fmt_indices(ix):
    """A list of numbers as the table writes results: [i,j], no spaces."""
    return "[" + ",".join(fmt_number(i) for i in ix) + "]"


def fmt_number(x):
    """A number as the table writes it: 1.0 is 1."""
    return str(int(x)) if isinstance(x, float) and x.is_integer() else str(x)


def check_item(got, index):
    """items.get's check: the item read back equals the fixture's."""
    if not 0 <= index < len(FIXTURE):
        return None
    tokens, score, kind, content, timestamp = FIXTURE[index]
    for what, want in (("tokens", tokens), ("score", score), ("kind", kind), ("content", content),
                       ("timestamp", timestamp)):
        if getattr(got, what) != want:
            return f"{what} read back as {getattr(got, what)!r}, not {want!r}"
    if not isinstance(got, cupel.Item):
        return f"items.get returned a {type(got).__name__}, not an Item"
    return None


def check_pushed_text(items):
    """items.push_text's check: a fourth item of 2 tokens, content "hello world"."""
    if len(items) != len(FIXTURE) + 1:
        return f"the list holds {len(items)} items, not {len(FIXTURE) + 1}"
    got = items.get(len(FIXTURE))
    if (got.tokens, got.content) != (2, "hello world"):
        return f"item {len(FIXTURE)} read back {got.tokens} tokens and {got.content!r}, not 2 and 'hello world'"
    return None


def check_variant(items, index, number, tokens, value, content):
    """items.add_variant's check: item `index` has one variant, number 1,
    of those tokens, value and content."""
    if number != 1:
        return f"add_variant returned {number}, not 1"
    got = items.variants(index)
    want = [cupel.Variant(tokens, value, content)]
    if got != want:
        return f"item {index} read back the variants {got!r}, not {want!r}"
    if items.get(index).variants != tuple(want):
        return f"items.get({index}).variants is {items.get(index).variants!r}, not {tuple(want)!r}"
    return None


def check_truncatable(items, index, keep, min_tokens):
    """items.set_truncatable's check: item `index` reads back truncatable,
    with that keep and min_tokens."""
    got = items.truncatable(index)
    want = cupel.Truncatable(keep, min_tokens)
    if got != want or not isinstance(got.keep, cupel.Keep):
        return f"item {index} read back {got!r}, not {want!r}"
    return None


def check_identity(items, index, key=None, volatile=None):
    """items.set_key / set_volatile's check: item `index` reads back that key or flag."""
    got = items.get(index)
    if key is not None and got.key != key:
        return f"item {index} read back the key {got.key!r}, not {key!r}"
    if volatile is not None and got.volatile is not volatile:
        return f"item {index} read back volatile={got.volatile!r}, not {volatile!r}"
    return None


def call(row: Row, f: Fixture, a: Args):
    """Runs the row's op through the public API. Returns (result text or
    None, check failure or None)."""
    s = cupel.scorers
    op = row.op
    if op == "items.push":
        a.handle("items", f.items, f.budget).push(tokens=a.get("tokens", 10), score=a.get("score", 0.5),
                                                   kind=a.get("kind", "Message"))
    elif op == "items.push_many":
        tokens, scores, kinds = [7] * 12, [0.5] * 12, ["Message"] * 12
        tokens[11], scores[11], kinds[11] = a.get("tokens", 7), a.get("score", 0.5), a.get("kind", "Message")
        a.handle("items", f.items, f.budget).extend_columns(tokens, scores, kinds=kinds)
    elif op == "items.set_content":
        f.items.set_content(index=a.get("index", 0), content=a.get("content", "hello"))
    elif op == "items.set_timestamp":
        f.items.set_timestamp(index=a.get("index", 0), unix_millis=a.get("unix_millis", 5))
    elif op == "items.set_priority":
        f.items.set_priority(index=a.get("index", 0), priority=a.get("priority", 1))
    elif op == "items.set_pinned":
        f.items.set_pinned(index=a.get("index", 0), pinned=a.get("pinned", True))
    elif op == "items.set_group":
        f.items.set_group(index=a.get("index", 0), group=a.get("group", 7))
    elif op == "items.add_tag":
        f.items.add_tag(index=a.get("index", 0), tag=a.get("tag", "t"))
    elif op == "items.set_metadata":
        f.items.set_metadata(index=a.get("index", 0), key=a.get("key", "k"), value=a.get("value", "v"))
    elif op == "items.get":
        index = a.get("index", 1)
        got = a.handle("items", f.items, f.budget).get(index=index)
        return None, check_item(got, index)
    elif op == "items.close":
        a.handle("items", f.items, f.budget).close()
    elif op == "budget.new":
        cupel.Budget(max_tokens=a.get("max_tokens", 1000), target_tokens=a.get("target_tokens", 800)).close()
    elif op == "budget.set_output_reserve":
        a.handle("budget", f.budget, f.items).set_output_reserve(output_reserve=a.get("output_reserve", 10))
    elif op == "budget.set_safety_margin":
        a.handle("budget", f.budget, f.items).set_safety_margin(percent=a.get("percent", 5))
    elif op == "budget.reserve":
        a.handle("budget", f.budget, f.items).reserve(kind=a.get("kind", "Message"), tokens=a.get("tokens", 10))
    elif op == "slicer.knapsack":
        cupel.Knapsack(bucket_size=a.get("bucket_size", 100)).close()
    elif op == "slicer.quota":
        cupel.Quota(inner=a.handle("inner", f.greedy, f.recency),
                    quotas={a.get("kind", "Message"): (a.get("require_percent", 10), a.get("cap_percent", 50))}
                    ).close()
    elif op == "slicer.count_quota":
        cupel.CountQuota(inner=a.handle("inner", f.greedy, f.recency),
                         entries={a.get("kind", "Message"): (a.get("require_count", 1), a.get("cap_count", 2))}
                         ).close()
    elif op == "scorer.kind":
        s.Kind(weights={a.get("kind", "Message"): a.get("weight", 1)}).close()
    elif op == "scorer.composite":
        parts = [(f.recency, 1), (f.priority, 1),
                 (a.handle("children", f.kind, f.greedy), a.get("weights", 1))]
        s.Composite(parts=parts).close()
    elif op == "scorer.scaled":
        s.Scaled(inner=a.handle("inner", f.recency, f.greedy)).close()
    elif op == "scorer.metadata_key":
        s.MetadataKey(key=a.get("key", "k"), value=a.get("value", "v"), boost=a.get("boost", 2)).close()
    elif op == "placer.place":
        placer = a.handle("placer", f.chronological, f.greedy)
        placed = placer.place(items=a.handle("items", f.items, f.budget), indices=[0, 1, a.get("indices", 2)],
                              scores=[0.5, 0.5, a.get("scores", 0.5)])
        return fmt_indices(placed), None
    elif op == "pipeline.new":
        cupel.Pipeline(scorer=a.handle("scorer", f.recency, f.greedy), slicer=a.handle("slicer", f.greedy, f.recency),
                       placer=a.handle("placer", f.chronological, f.greedy)).close()
    elif op == "pipeline.run":
        pipeline = a.handle("pipeline", f.pipeline, f.greedy)
        placed = pipeline.run(items=a.handle("items", f.items, f.budget), budget=a.handle("budget", f.budget, f.items))
        return fmt_indices(placed), None
    elif op == "slice":
        # Positional: the C ABI's order (slicer, items, budget, pinned_tokens).
        got = cupel.slice(a.handle("slicer", f.greedy, f.recency), a.handle("items", f.items, f.budget),
                          a.handle("budget", f.budget, f.items), a.get("pinned_tokens", 0))
        return fmt_indices(got), None
    elif op == "marginal_items":
        # Positional: the canonical order (slicer, items, budget, pinned_tokens, slack_tokens).
        got = cupel.marginal_items(a.handle("slicer", f.greedy, f.recency), a.handle("items", f.items, f.budget),
                                   a.handle("budget", f.budget, f.items), a.get("pinned_tokens", 0),
                                   a.get("slack_tokens", 150))
        return fmt_indices(got), None
    elif op == "find_min_budget":
        # Positional: the canonical order (slicer, items, pinned_tokens, target_index, search_ceiling).
        got = cupel.find_min_budget(a.handle("slicer", f.greedy, f.recency), a.handle("items", f.items, f.budget),
                                    a.get("pinned_tokens", 0), a.get("target_index", 2),
                                    a.get("search_ceiling", 1000))
        return ("none" if got is None else str(got)), None
    elif op == "stream.push":
        a.handle("stream", f.stream, f.items).push(tokens=a.get("tokens", 10), score=a.get("score", 0.5))
    elif op == "reason.name":
        return cupel.Reason(a.get("code", 0)).spec_name, None
    elif op == "tokenizer.new":
        cupel.Tokenizer(name=a.get("name", "o200k_base")).close()
    elif op == "tokenizer.count":
        n = a.handle("tokenizer", f.tokenizer, f.items).count(text=a.get("text", SENTENCE))
        return str(n), None
    elif op == "tokenizer.count_many":
        counts = a.handle("tokenizer", f.tokenizer, f.items).count_many(
            texts=[SENTENCE, a.get("texts", "hello world")])
        return fmt_indices(counts), None
    elif op == "tokenizer.truncate":
        text = a.get("text", SENTENCE)
        cut = a.handle("tokenizer", f.tokenizer, f.items).truncate(text=text, max_tokens=a.get("max_tokens", 4),
                                                                   keep=a.get("keep", cupel.Keep.HEAD))
        if cut.text != text[:cut.head_end] + text[cut.tail_start:]:
            return None, f"the kept text {cut.text!r} is not text[:{cut.head_end}] + text[{cut.tail_start}:]"
        return fmt_indices([cut.head_end, cut.tail_start, cut.tokens]), None
    elif op == "items.push_text":
        items = a.handle("items", f.items, f.budget)
        index = items.push_text(tokenizer=a.handle("tokenizer", f.tokenizer, f.items),
                                text=a.get("text", "hello world"), score=a.get("score", 0.5),
                                kind=a.get("kind", "Message"))
        if index != len(FIXTURE):
            return None, f"push_text returned index {index}, not {len(FIXTURE)}"
        return None, check_pushed_text(items)
    elif op == "items.add_variant":
        # Unbound (Items.add_variant(items, ...)): `items` may be the row's None.
        index, tokens, value = a.get("index", 0), a.get("tokens", 5), a.get("value", 0.5)
        content = a.get("content", "[cleared]")
        number = cupel.Items.add_variant(a.handle("items", f.items, f.budget), index=index, tokens=tokens,
                                         value=value, content=content)
        return None, check_variant(f.items, index, number, tokens, value, content)
    elif op == "items.set_truncatable":
        index, keep, min_tokens = a.get("index", 1), a.get("keep", cupel.Keep.HEAD), a.get("min_tokens", 1)
        cupel.Items.set_truncatable(a.handle("items", f.items, f.budget), index=index, keep=keep,
                                    min_tokens=min_tokens)
        return None, check_truncatable(f.items, index, keep, min_tokens)
    elif op == "pipeline.set_tokenizer":
        cupel.Pipeline.set_tokenizer(a.handle("pipeline", f.pipeline, f.greedy),
                                     tokenizer=a.handle("tokenizer", f.tokenizer, f.items))
    elif op == "pipeline.run_cut":
        # Before the run: item 1 truncatable (head, 1), the pipeline given `tokenizer`.
        f.items.set_truncatable(1, cupel.Keep.HEAD, 1)
        pipeline = a.handle("pipeline", f.pipeline, f.greedy)
        cupel.Pipeline.set_tokenizer(pipeline, a.handle("tokenizer", f.tokenizer, f.items))
        _, report = pipeline.run(items=a.handle("items", f.items, f.budget),
                                 budget=a.handle("budget", f.budget, f.items), report=True)
        return str(len(report.included)), None
    elif op == "items.set_key":
        # Unbound (Items.set_key(items, ...)): `items` may be the row's None.
        index, key = a.get("index", 0), a.get("key", 7)
        cupel.Items.set_key(a.handle("items", f.items, f.budget), index=index, key=key)
        return None, check_identity(f.items, index, key=key)
    elif op == "items.set_volatile":
        index, volatile = a.get("index", 0), a.get("is_volatile", True)
        cupel.Items.set_volatile(a.handle("items", f.items, f.budget), index=index, volatile=volatile)
        return None, check_identity(f.items, index, volatile=volatile)
    elif op == "session.new":
        f.session = cupel.Session(pipeline=a.handle("pipeline", f.pipeline, f.greedy))
        if f.session.last_action is not cupel.SessionAction.FIRST or f.session.slack != 0.2:
            return None, f"a new session reads back {f.session.last_action!r} and slack {f.session.slack}"
    elif op in ("session.run", "session.run_keyed", "session.run_twice"):
        # The session is made first: `pipeline` closed is closed after it.
        f.session = cupel.Session(f.pipeline)
        a.handle("pipeline", f.pipeline, f.greedy)
        session = a.handle("session", f.session, f.greedy)
        if op == "session.run_keyed":  # keys 1, 2, 3; `key` replaces the LAST one
            for i, key in enumerate([1, 2, a.get("key", 3)]):
                f.items.set_key(i, key)
        items, budget = a.handle("items", f.items, f.budget), a.handle("budget", f.budget, f.items)
        placed = session.run(items=items, budget=budget)
        if op == "session.run_twice":
            again = session.run(items, budget)
            if again != placed or session.last_action is not cupel.SessionAction.APPEND:
                return None, f"the second run placed {again} ({session.last_action!r}), the first {placed}"
            return fmt_indices(session.stable_prefix), None
        if session.last_action is not cupel.SessionAction.FIRST or session.stable_prefix != (0, 0):
            return None, f"a first run reads back {session.last_action!r}, stable prefix {session.stable_prefix}"
        return str(len(placed)), None
    elif op == "session.set_slack":
        f.session = cupel.Session(f.pipeline)
        fraction = a.get("fraction", 0.2)
        a.handle("session", f.session, f.greedy).slack = fraction
        if f.session.slack != fraction:
            return None, f"the slack reads back {f.session.slack}, not {fraction}"
    elif op == "pipeline.from_json":
        with cupel.Pipeline.from_json(json=a.get("json", POLICY)) as pipeline:
            return str(len(pipeline.run(f.items, f.budget))), None
    elif op == "pipeline.to_json":
        # Unbound (Pipeline.to_json(pipeline)): `pipeline` may be the row's None.
        text = cupel.Pipeline.to_json(a.handle("pipeline", f.pipeline, f.greedy))
        with cupel.Pipeline.from_json(text) as again:
            if again.to_json() != text:
                return None, f"read back and written again, {text!r} became {again.to_json()!r}"
    elif op == "budget.from_json":
        with cupel.Budget.from_json(json=a.get("json", BUDGET)) as budget:
            return str(len(f.pipeline.run(f.items, budget))), None
    elif op == "budget.to_json":
        text = cupel.Budget.to_json(a.handle("budget", f.budget, f.items))
        with cupel.Budget.from_json(text) as again:
            if again.to_json() != text:
                return None, f"read back and written again, {text!r} became {again.to_json()!r}"
    elif op == "pipeline.preset":
        with cupel.Pipeline.preset(name=a.get("name", "Chat")) as pipeline:
            return str(len(pipeline.run(f.items, f.budget))), None
    elif op == "policy_sensitivity":
        # (label, pipeline) pairs; count 1 passes the first pair only.
        pairs = list(zip(["a", "b"], [f.pipeline, f.kindpipe]))[: a.get("count", 2)]
        found = cupel.policy_sensitivity(pairs, items=a.handle("items", f.items, f.budget),
                                         budget=a.handle("budget", f.budget, f.items))
        return str(len(found.diffs)), None
    elif op == "report.analytics":
        _, report = cupel.Pipeline.run(a.handle("pipeline", f.pipeline, f.greedy),
                                       items=a.handle("items", f.items, f.budget),
                                       budget=a.handle("budget", f.budget, f.items), report=True)
        if abs(report.budget_utilization - 250 / 300) > 1e-9:
            return None, f"budget utilization {report.budget_utilization}, not 250/300"
        return fmt_indices([report.kind_diversity, report.timestamp_coverage]), None
    elif op == "pipeline.set_trace":
        events = []
        cupel.Pipeline.set_trace(a.handle("pipeline", f.pipeline, f.greedy), callback=a.get("callback", events.append),
                                 level=a.get("level", cupel.TraceLevel.STAGES))
        f.pipeline.run(f.items, f.budget)
        return str(len(events)), None
    elif op == "select":
        kept = cupel.select(messages=a.get("messages", MESSAGES), max_tokens=a.get("max_tokens", 2),
                            policy=a.get("policy", "Chat"))
        return str(len(kept)), None
    else:
        raise Unrunnable(f"unknown op {op}")
    return None, None


def has_word(msg: str, word: str) -> bool:
    """Whether `msg` holds `word` with no letter, digit or '_' on either side."""
    return re.search(r"(?<![A-Za-z0-9_])" + re.escape(word) + r"(?![A-Za-z0-9_])", msg) is not None


def position_of(row: Row):
    """The index or element position the message must give (0-based), or None."""
    if row.value == "end":
        return str(len(FIXTURE))
    if row.op == "items.push_many":
        return "11"
    if (row.op, row.arg) == ("tokenizer.count_many", "texts"):
        return "1"
    if (row.op, row.arg) in (("scorer.composite", "children"), ("scorer.composite", "weights"),
                             ("placer.place", "indices"), ("placer.place", "scores")):
        return "2"
    if re.fullmatch(r"-[0-9]+", row.value) and ("index" in row.arg or row.arg == "indices"):
        return row.value
    return None


def run_row(row: Row):
    """None when the row passes, else why it failed."""
    if row.expect != "ok" and not row.expect.startswith("ok=") and row.expect not in ERRORS:
        raise Unrunnable(f"row {row.id}: expect {row.expect!r} cannot be checked")
    if (row.arg == "-") != (row.value == "-"):
        raise Unrunnable(f"row {row.id}: `-` (no argument replaced) must be both the arg and the value")
    f = Fixture()
    try:
        a = Args(row, f)
        error, result, check = None, None, None
        try:
            result, check = call(row, f, a)
        except Unrunnable:
            raise
        except Exception as e:  # the outcome under test
            error = e
        if row.arg != "-" and row.arg not in a.asked:
            raise Unrunnable(f"row {row.id}: op {row.op} has no argument {row.arg}")

        if row.expect == "ok" or row.expect.startswith("ok="):
            if error is not None:
                return f"expected ok, got {type(error).__name__}: {error}"
            if check:
                return f"ok, but {check}"
            if row.expect.startswith("ok=") and result != row.expect[3:]:
                return f"expected {row.expect[3:]}, got {result}"
            return None

        want = ERRORS[row.expect]
        if error is None:
            return f"expected {want.__name__} ({row.expect}), but the call succeeded"
        if not isinstance(error, want):
            return f"expected {want.__name__} ({row.expect}), got {type(error).__name__}: {error}"
        others = {c for c in ERRORS.values() if c is not want}
        if any(isinstance(error, c) for c in others):
            return f"expected only a {want.__name__}, got {type(error).__mro__[1:-2]}: {error}"
        if not isinstance(error, cupel.CupelError):
            return f"{type(error).__name__} is not a cupel.CupelError: {error}"
        # This binding's own finer classes, beyond the @map line.
        if row.expect == "closed" and not isinstance(error, cupel.ClosedError):
            return f"expected a cupel.ClosedError, got {type(error).__name__}: {error}"
        if row.expect == "range" and not isinstance(error, cupel.IndexOutOfRangeError):
            return f"expected a cupel.IndexOutOfRangeError, got {type(error).__name__}: {error}"
        if row.expect == "null" and error.status is not cupel.Status.NULL_POINTER:
            return f"expected status NULL_POINTER for None, got {error.status!r}: {error}"
        msg = str(error)
        name = ALIASES.get((row.op, row.arg), row.arg)
        if not has_word(msg, name):
            return f"message {msg!r} does not name {name}"
        pos = position_of(row)
        if pos is not None and not has_word(msg, pos):
            return f"message {msg!r} does not give position {pos}"
        passed = a.value if isinstance(a.value, int) else None
        for sentinel in SENTINELS:
            if sentinel in msg and sentinel not in row.value and str(passed) != sentinel:
                return f"message {msg!r} shows the sentinel {sentinel}"
        if row.expect == "closed" and not any(has_word(msg.lower(), w) for w in CLOSED_WORDS):
            return f"message {msg!r} does not say the handle was closed ({'/'.join(CLOSED_WORDS)})"
        if not f.items.closed and len(f.items) != len(FIXTURE):
            return f"the items changed: {len(f.items)} items"
        return None
    finally:
        f.close()


def read_map(lines):
    for line in lines:
        fields = line.split()
        if len(fields) >= 2 and fields[0] == "@map" and fields[1] == LANG:
            return dict(zip(["null", "type", "integer", "value", "range", "closed"], fields[2:]))
    raise Unrunnable(f"no @map line for {LANG}")


def main(argv):
    path = (argv[1] if len(argv) > 1 else os.environ.get("CUPEL_CONTRACT")
            or str(Path(__file__).resolve().parents[3] / "tests" / "contract" / "contract.txt"))
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError as e:
        print(f"contract.py: cannot read the table {path}: {e} (pass its path, or set CUPEL_CONTRACT)",
              file=sys.stderr)
        return 2
    passed = failed = 0
    try:
        table_map = read_map(lines)
        mine = {k: v.__name__ for k, v in ERRORS.items()}
        if table_map != mine:
            raise Unrunnable(f"the table's @map {LANG} line {table_map} differs from this runner's {mine}")
        for n, line in enumerate(lines, 1):
            if not line.strip() or line.startswith("#") or line.startswith("@"):
                continue
            row = Row(line, n)
            if LANG not in row.langs():
                continue
            why = run_row(row)
            if why is None:
                passed += 1
            else:
                failed += 1
                print(f"FAILED {row.id}: {why}")
    except Unrunnable as e:
        print(f"contract.py: {e}", file=sys.stderr)
        print(f"contract {LANG}: {passed} passed, {failed} failed (stopped: {e})")
        return 2
    print(f"contract {LANG}: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
