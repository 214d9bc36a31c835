"""The JSON contract (docs/reference/json.md) agrees with the classes that write JSON: every key it documents is produced,
and every key produced is documented (the example document, the bullets' key lists, the counterexamples)."""
from __future__ import annotations

import json
import re

from conftest import ROOT
from verify.catalog.sections import IngestFinding
from verify.witnesses import CellOutside, CellUnreached, Element, ElementsCollide, OutputUnreached, PointOutside, \
    PointsCollide, TextPosition

# objects whose keys are data (engine, check or parameter names), not fields of the contract
DATA_KEYED = {"engines", "checks", "params"}
GOLDEN = ROOT / "tests" / "golden" / "check_specs.json"  # ``check --format json`` of specs/, pinned to the code


def _section() -> str:
    return (ROOT / "docs" / "reference" / "json.md").read_text(encoding="utf-8")


def _example() -> dict:
    """The section's example document: ``{...}`` and ``[...]`` made empty, ``{..., "k": v}`` (some keys
    shown) marked with a ``"..."`` key."""
    block = re.search(r"```json\n(.*?)```", _section(), re.S).group(1)
    block = block.replace("{...}", "{}").replace("[...]", "[]").replace("{..., ", '{"...": null, ')
    return json.loads(block)


def _braces(text: str, start: int) -> str:
    """The ``{...}`` that opens at ``start``."""
    depth = 0
    for k in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[k], 0)
        if depth == 0:
            return text[start:k + 1]
    raise AssertionError(f"unbalanced braces at {text[start:start + 40]!r}")


def _keys(spec: str) -> dict:
    """``{"a","b": {"c"}, "d": {...}}`` -> ``{"a": None, "b": {"c": None}, "d": None}`` (documented keys,
    nested where the contract spells them)."""
    out: dict = {}
    k, last = 1, None
    while k < len(spec) - 1:
        ch = spec[k]
        if ch == '"':
            end = spec.index('"', k + 1)
            last = spec[k + 1:end]
            out[last] = None
            k = end + 1
            continue
        if ch == "{":
            inner = _braces(spec, k)
            if last is not None and inner != "{...}":
                out[last] = _keys(inner)
            k += len(inner)
            continue
        k += 1
    return out


def documented(anchor: str) -> dict:
    """The key list that follows ``anchor`` in the JSON contract section."""
    sec = _section()
    at = sec.index(anchor)
    return _keys(_braces(sec, sec.index("{", at + len(anchor))))


def _same(doc: dict, produced: dict, what: str, optional: set[str] = frozenset()) -> None:
    partial = "..." in doc  # the example shows some of this object's keys
    doc_keys, got = set(doc) - {"..."}, set(produced)
    assert doc_keys - optional <= got, f"{what}: documented but not produced: {sorted(doc_keys - got)}"
    assert partial or got <= doc_keys | optional, f"{what}: produced but not documented: {sorted(got - doc_keys)}"
    for k, sub in doc.items():  # an empty ``{}`` is the contract's ``{...}``: keys given elsewhere
        if k in DATA_KEYED:
            continue
        if isinstance(sub, dict) and sub and isinstance(produced.get(k), dict):
            _same(sub, produced[k], f"{what}.{k}")


def test_the_document_and_its_entries() -> None:
    ex, got = _example(), json.loads(GOLDEN.read_text(encoding="utf-8"))
    optional = {"doc_findings"}  # only with doc pages (the golden check of specs/ has none)
    _same(ex, got, "document", optional)
    assert "doc_findings" in ex
    # a layout: the example's keys, plus "params" for a family (the Families bullet)
    assert '"params"' in _section().split("* Families:")[1].split("\n* ")[0]
    fam = next(x for x in got["layouts"] if "params" in x)
    plain = next(x for x in got["layouts"] if "params" not in x)
    _same(ex["layouts"][0], plain, "layout")
    _same({**ex["layouts"][0], "params": None}, fam, "family layout")
    check = ex["layouts"][0]["checks"]["count"]
    for lay in got["layouts"]:
        for c in lay["checks"].values():
            _same(check, c, "check")
    _same(ex["findings"][0], got["findings"][0], "finding")
    _same(documented("`instructions` (when any):"), got["instructions"][0], "instruction")
    maps = documented("`maps` (when any")
    _same(maps, next(m for m in got["maps"] if "params" not in m), "map")
    _same({**maps, "params": None}, next(m for m in got["maps"] if "params" in m), "family map")


def test_doc_findings() -> None:
    f = IngestFinding("element_list", "error", "p.md", 3, 7, "a0, b1", "m", (("listed", 4),), "9.7.14.5.8", "A",
                      ("f64",))
    _same(documented("`doc_findings` (only when doc pages were given)"), f.to_json(), "doc finding")


def test_the_witness_classes() -> None:
    """Each witness class writes the keys the contract lists for its counterexample (``params`` where a
    family's member, ``mma`` for m8n8k4, as the contract says)."""
    sec = _section()
    assert '"params": {"N": 8}' in sec and '`"mma"`' in sec
    fam = {"params"}
    _same(documented("`in_range` `"), CellOutside(0, 1, "a1", None, None).to_json(), "in_range")
    _same(documented("`in_range` `"), CellOutside(0, 1, "a1", 9, 0, 1, {"N": 8}).to_json(), "in_range", fam | {"mma"})
    _same(documented("`injective` `"), ElementsCollide(Element(0, 0, "c0"), Element(1, 0, "c0"), 0, 0).to_json(),
          "injective")
    _same(documented("`surjective` `"), CellUnreached(0, 4).to_json(), "surjective")
    _same(documented("(`check: \"syntax\"`, counterexample"), TextPosition("a.toml", 1, 2).to_json(), "syntax")
    _same(documented("that the reviewed spec of its layout does not record; counterexample"),
          TextPosition("p.md", 1, 2, "element_list").to_json(), "doc_text")
    _same(documented("in_range of a map"), PointOutside({}, {"row": 0}, None).to_json(), "map in_range")
    _same(documented("injective of a map"), PointsCollide({}, {"row": 0}, {"row": 1}, {"offset": 0}).to_json(),
          "map injective")
    _same(documented("surjective of a map"), OutputUnreached({}, {"offset": 8}).to_json(), "map surjective")


def test_the_register_arithmetic_counterexamples() -> None:
    """``count``, ``elements`` and ``packing`` counterexamples as the checks write them (every one in the
    catalog's ``check --format json``; ``params`` where a family's member, ``replication`` for wmma)."""
    got = json.loads(GOLDEN.read_text(encoding="utf-8"))
    for check, extra in (("count", {"params", "replication"}), ("elements", {"params"}), ("packing", {"params"})):
        found = [f["counterexample"] for f in got["findings"] if f["check"] == check and f["counterexample"]]
        assert found, check
        for cex in found:
            _same(documented(f"`{check}`: `"), cex, check, extra)


# ----------------------------------------------------------------------------- the one JSON style

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from verify.results import dumps  # noqa: E402

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text()
_KEYS = st.text() | st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False)
_DOCS = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
                     | st.dictionaries(_KEYS, inner, max_size=4), max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(_DOCS)
def test_dumps_is_json_dumps_with_two_space_indent(doc: object) -> None:
    """``results.dumps`` writes exactly what ``json.dumps(indent=2, ensure_ascii=False)`` writes, plus a newline
    (scalars of every kind, non-string keys, tuples, unicode and control characters, NaN and infinities)."""
    assert dumps(doc) == json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def test_dumps_on_the_catalogs_outputs_and_refusals() -> None:
    text = (ROOT / "tests" / "golden" / "check_specs.json").read_text(encoding="utf-8")
    assert dumps(json.loads(text)) == text  # the golden whole-catalog check, byte for byte
    for bad in ({1: object()}, {(1, 2): 3}):
        try:
            json.dumps(bad, indent=2)
        except TypeError:
            pass
        else:
            raise AssertionError(bad)
        try:
            dumps(bad)
        except TypeError:
            continue
        raise AssertionError(f"dumps accepted {bad!r}")


def test_dumps_writes_subclasses_of_the_plain_types_as_json_does() -> None:
    """The scalars of a container are written by their exact type; a subclass (an IntEnum, a str or float
    subclass) takes the other path and is written as ``json`` writes it."""
    import enum

    class Level(enum.IntEnum):
        HIGH = 3

    class Name(str):
        pass

    class Ratio(float):
        pass

    doc = {"level": Level.HIGH, "name": Name("a\"b"), "ratios": [Ratio(0.5), Level.HIGH, Name("é")],
           Name("key"): (Ratio(2.0),), 1: True, None: [None, False]}
    assert dumps(doc) == json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    assert dumps(Level.HIGH) == "3\n" and dumps(Name("x")) == '"x"\n'
