"""The fast validator (jsonschema-rs) and the reference (jsonschema) give the same verdict.

``rlsys validate`` trusts the fast validator's "valid" without asking jsonschema,
so the two must agree on every document: the whole bad-input corpus, generated
mutations of both example files, and the edge cases where the two libraries
differ by default (``$`` before a final newline, formats).
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from pytest_rlsys.resources import schema_dir
from pytest_rlsys.resultfile import schemas as schema_registry
from pytest_rlsys.resultfile.loading import load_result_file, validate_document

pytest.importorskip("jsonschema_rs")

CLOSURE = "pt-verl-closure.v1.json"
EXAMPLES = sorted((schema_dir() / "examples").glob("*.json"))
CORPUS = Path(__file__).parents[1] / "corpora" / "result_corpus"
CORPUS_FILES = sorted(p for p in CORPUS.glob("*.json") if p.name != "expected.json")
ROOT = Path(__file__).resolve().parents[2]


def verdicts(doc: Any) -> tuple[bool, bool]:
    fast = schema_registry.fast_validator(CLOSURE)
    assert fast is not None
    reference = schema_registry.validator(CLOSURE)
    return bool(fast.is_valid(doc)), bool(reference.is_valid(doc))


def assert_agree(doc: Any) -> bool:
    fast, reference = verdicts(doc)
    assert fast == reference, f"jsonschema-rs says {fast}, jsonschema says {reference}"
    loaded = validate_document(doc)
    if isinstance(doc, dict) and doc.get("schema_version") == "pt-verl-closure/1":
        assert loaded.ok == reference
        # An invalid document still gets every error, each with its JSON path.
        assert bool(loaded.problems) == (not reference)
        assert all(p.path.startswith("$") and p.message for p in loaded.problems)
    return reference


# --------------------------------------------------------------------------- corpus


def _lenient(path: Path) -> Any:
    """The corpus file parsed as leniently as Python allows (NaN, duplicates...)."""
    return json.loads(path.read_bytes().decode("utf-8", errors="replace"))


def _finite(node: Any) -> bool:
    if isinstance(node, float):
        return node == node and node not in (float("inf"), float("-inf"))
    if isinstance(node, dict):
        return all(_finite(value) for value in node.values())
    if isinstance(node, list):
        return all(_finite(value) for value in node)
    return True


@pytest.mark.parametrize("path", [*CORPUS_FILES, *EXAMPLES], ids=lambda p: p.name)
def test_corpus_and_examples_same_verdict(path: Path) -> None:
    # The loader's verdict on the file itself: only the examples are valid.
    assert load_result_file(path).ok == (path in EXAMPLES)
    try:
        doc = _lenient(path)
    except ValueError:
        pytest.skip("not JSON even to a lenient parser; the loader stops before any schema")
    if not _finite(doc):
        pytest.skip("NaN/Infinity: the loader refuses the file before any schema sees it")
    # What the lenient parse kept (a duplicate key's last value, say) gets one verdict.
    assert_agree(doc)


# --------------------------------------------------------------------------- edge cases

HEX = "0123456789abcdef" * 4


def _set(doc: dict[str, Any], where: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    node: Any = doc
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    return doc


SHA = ("groups", "release", "initial_lora_sha256")
LABEL = ("run_label",)
CREATED = ("created_at",)


@pytest.mark.parametrize(
    ("where", "value", "valid"),
    [
        (SHA, HEX, True),
        (SHA, HEX + "\n", False),  # Python's $ matches before a final newline; ECMA's does not
        (SHA, HEX.upper(), False),
        (SHA, HEX[:-1], False),
        (LABEL, "run_1", True),
        (LABEL, "run_1\n", False),
        (LABEL, "a" * 128, True),
        (LABEL, "a" * 129, False),
        (CREATED, "2026-03-14T09:31:07+08:00", True),
        (CREATED, "2026-03-14t09:31:07z", True),  # RFC 3339 allows lower case
        (CREATED, "2026-03-14 09:31", False),
        (CREATED, "2026-02-30T09:31:07Z", False),
        (CREATED, "2026-03-14T09:31:07", False),  # no offset
        (CREATED, "2026-03-14T09:31:07Z\n", False),
        (("environment", "gpu_total_mb"), 16303.0, True),
        (("environment", "gpu_total_mb"), True, False),
        (("workload", "lora_rank"), 8.0, True),  # 8.0 is an integer in JSON Schema
        (("workload", "lora_rank"), 8.5, False),
    ],
)
def test_edge_cases_same_verdict(where: tuple[str | int, ...], value: Any, valid: bool) -> None:
    base = json.loads(EXAMPLES[0].read_text("utf-8"))
    assert assert_agree(_set(base, where, value)) is valid


def test_pattern_translation_keeps_escapes_and_classes() -> None:
    assert schema_registry.ecma_regex("^a$") == r"^a\Z"
    assert schema_registry.ecma_regex(r"^a\$[$]b$") == r"^a\$[$]b\Z"
    assert schema_registry.ecma_regex(r"^[\]$]x$") == r"^[\]$]x\Z"


def test_every_format_the_schemas_use_has_one_shared_checker() -> None:
    used = set().union(
        *(
            schema_registry.formats_used(schema_registry.schema(i))
            for i in schema_registry.schema_ids()
        )
    )
    assert used and used <= set(schema_registry.FORMAT_CHECKS)


# --------------------------------------------------------------------------- mutations


def _trimmed(path: Path) -> dict[str, Any]:
    # Fewer samples keep every structure of the file and make jsonschema quick.
    doc: dict[str, Any] = json.loads(path.read_text("utf-8"))
    for group in doc["groups"].values():
        group["resource_samples"] = group["resource_samples"][:3]
    return doc


BASES = [_trimmed(path) for path in EXAMPLES]


def _paths(node: Any, where: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    yield where
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*where, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, (*where, i))


def _small_values(node: Any) -> Iterator[Any]:
    if len(json.dumps(node)) <= 400:
        yield node
    if isinstance(node, dict):
        for value in node.values():
            yield from _small_values(value)
    elif isinstance(node, list):
        for value in node:
            yield from _small_values(value)


def _schema_literals(node: Any) -> Iterator[Any]:
    if isinstance(node, dict):
        if "const" in node:
            yield node["const"]
        if isinstance(node.get("enum"), list):
            yield from node["enum"]
        for value in node.values():
            yield from _schema_literals(value)
    elif isinstance(node, list):
        for value in node:
            yield from _schema_literals(value)


EDGE_VALUES: list[Any] = [
    None, True, False, 0, -1, 1, 0.5, -0.0, 1.0, 2**53 + 1, 1e308, -1e-300,
    "", " ", "x", "a\n", HEX, HEX + "\n", HEX.upper(), HEX[:-1], "run.label-1", "-run",
    "a" * 128, "a" * 129, "2026-03-14T09:31:07Z", "2026-03-14T09:31:07z", "2026-03-14 09:31",
    "2026-13-01T00:00:00Z", "2026-03-14T24:00:00Z", "2026-03-14T23:59:60Z", "\u00e9", "\U0001f600",
    [], {}, [1], {"x": 1},
]  # fmt: skip
LITERALS = [
    value
    for schema_id in schema_registry.schema_ids()
    for value in _schema_literals(schema_registry.schema(schema_id))
]


def _values() -> st.SearchStrategy[Any]:
    pool = [*EDGE_VALUES, *LITERALS, *(v for base in BASES for v in _small_values(base))]
    # Sampled values are shared: the mutation deep-copies whatever it inserts.
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**64), max_value=2**64),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=12),
    )
    generated = st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
        ),
        max_leaves=6,
    )
    return st.one_of(st.sampled_from(pool), generated)


VALUES = _values()
KEYS = [*(k for k in LITERALS if isinstance(k, str)), "extra"]


@st.composite
def mutated(draw: st.DrawFn) -> dict[str, Any]:
    doc = copy.deepcopy(draw(st.sampled_from(BASES)))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = list(_paths(doc))[1:]
        if not paths:
            break
        where = draw(st.sampled_from(paths))
        parent: Any = doc
        for key in where[:-1]:
            parent = parent[key]
        op = draw(st.sampled_from(["replace", "replace", "delete", "add", "duplicate"]))
        last = where[-1]
        if op == "replace":
            parent[last] = copy.deepcopy(draw(VALUES))
        elif op == "delete":
            del parent[last]
        elif op == "add" and isinstance(parent, dict):
            key = draw(st.sampled_from(KEYS))
            parent[key] = copy.deepcopy(draw(VALUES))
        elif op == "duplicate" and isinstance(parent, list):
            parent.insert(int(last), copy.deepcopy(parent[last]))
    return doc


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutations_of_the_examples_same_verdict(doc: dict[str, Any]) -> None:
    assert_agree(doc)


@pytest.mark.parametrize("valid", [True, False])
def test_the_mutations_reach_both_verdicts(valid: bool) -> None:
    # Guard against a generator that only ever breaks (or never breaks) the document.
    quick = settings(max_examples=200, database=None, phases=[Phase.generate], deadline=None)
    find(mutated(), lambda doc: verdicts(doc)[1] is valid, settings=quick)


# --------------------------------------------------------------------------- imports


def _modules_after(code: str) -> list[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "gpu")]))
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120,
        check=True,
    )  # fmt: skip
    return done.stdout.rpartition("MODULES:")[2].split()


_PROBE = """
import sys
from pytest_rlsys.cli import main
main(["validate", {path!r}])
tops = ("jsonschema", "referencing")
print("MODULES:", *sorted(m for m in sys.modules if m.split(".")[0] in tops))
"""


def test_a_valid_file_never_imports_jsonschema(tmp_path: Path) -> None:
    assert _modules_after(_PROBE.format(path=str(EXAMPLES[0]))) == []
    # The probe can see it: an invalid file does import the reference.
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_set(BASES[0], LABEL, "../x")), encoding="utf-8")
    assert "jsonschema" in _modules_after(_PROBE.format(path=str(bad)))
