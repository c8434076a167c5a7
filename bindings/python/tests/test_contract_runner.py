"""pytest of the contract runner itself (tests/contract.py): it passes the
real table, and fails a table or a binding that is wrong in any way it
must notice."""
import importlib.util
from pathlib import Path

import pytest

import cupel

HERE = Path(__file__).resolve().parent
TABLE = HERE.parents[2] / "tests" / "contract" / "contract.txt"

_spec = importlib.util.spec_from_file_location("contract_runner", HERE / "contract.py")
contract = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(contract)


def py_rows(text):
    rows = [contract.Row(line, 0) for line in text.splitlines()
            if line.strip() and not line.startswith("#") and not line.startswith("@")]
    return [r for r in rows if "py" in r.langs()]


def run(tmp_path, capsys, text):
    path = tmp_path / "contract.txt"
    path.write_text(text, encoding="utf-8")
    code = contract.main(["contract.py", str(path)])
    return code, capsys.readouterr().out


def replace_row(text, row_id, **fields):
    out = []
    for line in text.splitlines():
        f = line.split()
        if f and f[0] == row_id:
            names = ["id", "op", "arg", "value", "expect", "where"]
            f = [fields.get(n, v) for n, v in zip(names, f)]
            line = "  ".join(f)
        out.append(line)
    return "\n".join(out) + "\n"


@pytest.fixture(scope="module")
def table():
    return TABLE.read_text(encoding="utf-8")


def test_the_real_table_passes(tmp_path, capsys, table):
    code, out = run(tmp_path, capsys, table)
    n = len(py_rows(table))
    assert n > 100
    assert out.strip().splitlines()[-1] == f"contract py: {n} passed, 0 failed"
    assert code == 0


def test_a_row_not_naming_py_is_skipped(tmp_path, capsys, table):
    code, out = run(tmp_path, capsys, replace_row(table, "nan-score", where="c,go"))
    assert code == 0 and f"contract py: {len(py_rows(table)) - 1} passed, 0 failed" in out


@pytest.mark.parametrize("row_id, fields, why", [
    ("order-marginal-items", {"expect": "ok=[0]"}, "expected [0], got [2]"),
    ("order-find-min-budget", {"value": "1"}, "expected 150, got 300"),
    ("nan-score", {"expect": "range"}, "expected IndexError (range), got InvalidArgumentError"),
    ("nan-score", {"value": "0.5"}, "but the call succeeded"),
    ("end-get", {"value": "0"}, "but the call succeeded"),
    ("readback-item", {"expect": "value"}, "but the call succeeded"),
    ("null-run-items", {"expect": "ok"}, "expected ok, got ArgumentTypeError"),
    ("reason-scored", {"expect": "ok=Pinned"}, "expected Pinned, got Scored"),
    ("tokenizer-count-sentence", {"expect": "ok=11"}, "expected 11, got 12"),
    ("tokenizer-count-many", {"expect": "ok=[12,2]"}, "expected [12,2], got [12,1]"),
    ("tokenizer-truncate-both", {"expect": "ok=[6,40,4]"}, "expected [6,40,4], got [6,39,4]"),
    ("tokenizer-truncate-tail", {"value": "head"}, "expected [0,28,4], got [13,47,4]"),
    ("tokenizer-unknown-name", {"value": '"cl100k_base"'}, "but the call succeeded"),
    ("tokenizer-utf8-in-many", {"expect": "null"}, "expected TypeError (null), got InvalidArgumentError"),
    ("push-text", {"value": '"hello"'}, "item 3 read back 1 tokens and 'hello'"),
    ("variant-zero-value", {"value": "0.25"}, "but the call succeeded"),
    ("variant-index-end", {"expect": "value"}, "expected ValueError (value), got IndexOutOfRangeError"),
    ("truncatable-negative-min", {"value": "0"}, "but the call succeeded"),
    ("set-tokenizer-none", {"expect": "null"}, "but the call succeeded"),
    ("run-cut-ok", {"expect": "ok=3"}, "expected 3, got 2"),
    ("run-cut-no-tokenizer", {"expect": "ok=2"}, "expected ok, got InvalidArgumentError"),
    ("reason-variant", {"expect": "ok=Truncated"}, "expected Truncated, got Variant"),
])
def test_a_wrong_row_fails(tmp_path, capsys, table, row_id, fields, why):
    code, out = run(tmp_path, capsys, replace_row(table, row_id, **fields))
    assert code == 1
    assert f"FAILED {row_id}: " in out and why in out, out
    assert f"contract py: {len(py_rows(table)) - 1} passed, 1 failed" in out


@pytest.mark.parametrize("row_id, fields, why", [
    ("nan-score", {"op": "items.pushh"}, "unknown op items.pushh"),
    ("nan-score", {"expect": "weird"}, "expect 'weird' cannot be checked"),
    ("nan-score", {"arg": "scor"}, "op items.push has no argument scor"),
    ("nan-score", {"value": "NaN?"}, "unknown value"),
    ("nan-score", {"where": "py,rust"}, "unknown language 'rust'"),
    ("tokenizer-count-sentence", {"value": '"x"'}, "`-` (no argument replaced) must be both"),
    ("tokenizer-count", {"arg": "-"}, "`-` (no argument replaced) must be both"),
    ("tokenizer-truncate-tail", {"arg": "kep"}, "op tokenizer.truncate has no argument kep"),
])
def test_a_row_the_runner_cannot_run_stops_it(tmp_path, capsys, table, row_id, fields, why):
    code, out = run(tmp_path, capsys, replace_row(table, row_id, **fields))
    assert code == 2 and "(stopped: " in out and why in out, out


def test_the_map_line_must_match(tmp_path, capsys, table):
    text = table.replace("@map py   TypeError  TypeError  TypeError  ValueError  IndexError  ValueError",
                         "@map py   TypeError  TypeError  ValueError  ValueError  IndexError  ValueError")
    assert text != table
    code, out = run(tmp_path, capsys, text)
    assert code == 2 and "differs from this runner's" in out


def test_a_binding_defect_fails_rows(tmp_path, capsys, table, monkeypatch):
    # Without the binding's own index check, an index past the end reaches C,
    # which refuses it as an invalid argument: a ValueError, not an IndexError.
    monkeypatch.setattr(cupel, "_index", lambda v, name, length: cupel._int(v, name))
    code, out = run(tmp_path, capsys, table)
    assert code == 1
    assert "FAILED end-content: expected IndexError (range), got InvalidArgumentError" in out
    # A negative index then fails in ctypes (not a CupelError at all).
    assert "FAILED negative-content-index: " in out


def test_a_tokenizer_defect_fails_rows(tmp_path, capsys, table, monkeypatch):
    # A binding that ignored keep, or lost the element position in count_many.
    monkeypatch.setattr(cupel, "_keep", lambda v: cupel.Keep.HEAD)
    code, out = run(tmp_path, capsys, table)
    assert code == 1
    assert "FAILED tokenizer-truncate-tail: expected [0,28,4], got [13,47,4]" in out
    assert "FAILED tokenizer-truncate-both: " in out
    monkeypatch.undo()
    real = cupel._Texts.__init__
    monkeypatch.setattr(cupel._Texts, "__init__", lambda self, texts, name: real(self, list(texts)[::-1], name))
    code, out = run(tmp_path, capsys, table)
    assert code == 1
    assert "FAILED tokenizer-count-many: expected [12,1], got [1,12]" in out
    assert "FAILED tokenizer-utf8-in-many: message " in out and "does not give position 1" in out


def test_a_shrink_defect_fails_rows(tmp_path, capsys, table, monkeypatch):
    # A binding that lost a variant's content, or read the keep back wrong.
    real = cupel._variant_fields
    monkeypatch.setattr(cupel, "_variant_fields", lambda t, v, c, prefix="": real(t, v, None, prefix))
    code, out = run(tmp_path, capsys, table)
    assert code == 1
    assert ("FAILED variant-ok: ok, but item 0 read back the variants "
            "[Variant(tokens=5, value=0.5, content=None)]") in out
    assert "FAILED variant-empty-content: expected ValueError (value), but the call succeeded" in out
    assert "FAILED variant-no-content: " not in out
    monkeypatch.undo()
    monkeypatch.setattr(cupel, "_truncatable_of", lambda h, i: cupel.Truncatable(cupel.Keep.HEAD, 1))
    code, out = run(tmp_path, capsys, table)
    assert code == 1
    assert "FAILED truncatable-tail: ok, but item 1 read back Truncatable(keep=<Keep.HEAD: 0>, min_tokens=1)" in out
    assert "FAILED truncatable-zero-min: " in out and "FAILED truncatable-ok: " not in out


def test_a_message_without_the_name_fails(tmp_path, capsys, table, monkeypatch):
    real = cupel._bad_type
    monkeypatch.setattr(cupel, "_bad_type", lambda name, v, wanted: real("the argument", v, wanted))
    code, out = run(tmp_path, capsys, table)
    assert code == 1 and "FAILED frac-tokens: message 'the argument must be an int" in out
