"""The pt-verl-closure schema, the schema registry and strict result loading."""

from __future__ import annotations

import copy
import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from pytest_rlsys.resources import schema_dir
from pytest_rlsys.resultfile import checks as closure_checks
from pytest_rlsys.resultfile import schemas as schema_registry
from pytest_rlsys.resultfile.loading import (
    StrictJSONError,
    known_versions,
    load_result_file,
    loads_strict,
    validate_document,
)

SCHEMAS = schema_dir()
EXAMPLE = SCHEMAS / "examples" / "pt-verl-closure.example.json"
UNPAIRED = SCHEMAS / "examples" / "pt-verl-closure.v1-unpaired.example.json"
CLOSURE_ID = "https://rlsys.invalid/schemas/pt-verl-closure.v1.json"


def example() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    return doc


def schema_errors(doc: Any) -> list[str]:
    return schema_registry.error_lines(schema_registry.validator(CLOSURE_ID), doc)


@pytest.mark.parametrize("path", sorted(SCHEMAS.glob("*.json")), ids=lambda p: p.name)
def test_every_shipped_schema_is_a_valid_draft_2020_12_schema(path: Path) -> None:
    Draft202012Validator.check_schema(json.loads(path.read_text(encoding="utf-8")))


def test_closure_schema_id_and_version_const_carry_the_version() -> None:
    doc = schema_registry.schema("pt-verl-closure.v1.json")
    assert doc["$id"] == CLOSURE_ID
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert doc["properties"]["schema_version"] == {"const": "pt-verl-closure/1"}


def test_schema_lookup_by_id_and_by_file_name_is_the_same_object() -> None:
    assert schema_registry.schema(CLOSURE_ID) is schema_registry.schema("pt-verl-closure.v1.json")
    assert CLOSURE_ID in schema_registry.schema_ids()
    with pytest.raises(schema_registry.SchemaNotFoundError, match="shipped:"):
        schema_registry.schema("nope.v1.json")


def test_the_validator_resolves_the_shared_definitions() -> None:
    # initial_lora_sha256 is a $ref to rlsys-common.v1.json#/$defs/sha256, offline.
    doc = example()
    doc["groups"]["retain"]["initial_lora_sha256"] = "ABC"
    assert "^[0-9a-f]{64}$" in " ".join(schema_errors(doc))


def test_phase_vocabulary_in_the_schema_matches_closure_checks() -> None:
    common = schema_registry.schema("rlsys-common.v1.json")
    assert tuple(common["$defs"]["phase_name"]["enum"]) == closure_checks.PHASE_NAMES
    assert set(closure_checks.REQUIRED_PHASE_ORDER) <= set(closure_checks.PHASE_NAMES)


def test_check_names_in_the_schema_match_closure_checks() -> None:
    checks = schema_registry.schema("pt-verl-closure.v1.json")["$defs"]["system_decision"]
    assert tuple(checks["properties"]["checks"]["required"]) == closure_checks.CHECK_NAMES


@pytest.mark.parametrize("path", [EXAMPLE, UNPAIRED], ids=lambda p: p.name)
def test_both_examples_validate(path: Path) -> None:
    loaded = load_result_file(path)
    assert loaded.errors == ()
    assert loaded.ok and loaded.schema_version == "pt-verl-closure/1"
    assert loaded.schema_id == CLOSURE_ID


def test_date_time_format_is_really_checked() -> None:
    doc = example()
    doc["created_at"] = "yesterday"
    assert schema_errors(doc) == ['$.created_at: "yesterday" is not a "date-time"']


def test_error_lines_are_sorted_by_path_and_name_it() -> None:
    doc = example()
    doc["workload"]["lora_rank"] = 0
    doc["groups"]["release"]["resource_samples"][3]["gpu_used_mb"] = -5
    doc["groups"]["retain"]["initial_lora_sha256"] = "ABC"
    doc["environment"]["gpu_name"] = 7
    assert schema_errors(doc) == [
        '$.environment.gpu_name: 7 is not of types "null", "string"',
        "$.groups.release.resource_samples[3].gpu_used_mb: -5 is less than the minimum of 0",
        '$.groups.retain.initial_lora_sha256: "ABC" does not match "^[0-9a-f]{64}$"',
        "$.workload.lora_rank: 0 is less than the minimum of 1",
    ]


def test_any_of_errors_name_the_closest_alternative() -> None:
    doc = example()
    doc["groups"]["release"]["updated_lora_sha256"] = "not-a-hash"
    (line,) = schema_errors(doc)
    assert line.startswith('$.groups.release.updated_lora_sha256: "not-a-hash" is not valid')
    assert "closest:" in line


def test_long_instances_are_shortened_in_messages() -> None:
    doc = example()
    doc["groups"]["release"]["resource_samples"] = {"x": list(range(5000))}
    (line,) = schema_errors(doc)
    assert line.startswith("$.groups.release.resource_samples: ")
    assert len(line) < 400 and line.endswith("...")


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: d["groups"].pop("release"), '$.groups: "release" is a required property'),
        (
            lambda d: d["groups"]["release"]["events"][0].update(phase="warmup"),
            '$.groups.release.events[0].phase: "warmup" is not one of',
        ),
        (
            lambda d: d["groups"]["release"]["phases"].update(warmup={}),
            '$.groups.release.phases: "warmup" is not one of',
        ),
        (
            lambda d: d["groups"]["retain"]["resume_calls"].append({"t_s": 1, "tags": []}),
            "$.groups.retain.resume_calls[0].tags: [] has less than 1 item",
        ),
        (lambda d: d.update(status="failed"), '$: "failure" is a required property'),
        (
            lambda d: d.update(failure={"type": "x", "message": "y"}),
            "$.failure: not allowed here",
        ),
        (
            lambda d: d.update(run_label="../etc/passwd"),
            '$.run_label: "../etc/passwd" does not match',
        ),
        (
            lambda d: d.update(extra=1),
            "Additional properties are not allowed ('extra' was unexpected)",
        ),
        (
            lambda d: d["system_decision"]["checks"].pop("phase_events"),
            '$.system_decision.checks: "phase_events" is a required property',
        ),
        (
            lambda d: d["groups"]["retain"]["phases"]["update"].update(sampled_gpu_peak_mb=-1),
            "$.groups.retain.phases.update.sampled_gpu_peak_mb: -1 is not valid",
        ),
    ],
    ids=[
        "missing-group",
        "unknown-event-phase",
        "unknown-phase-key",
        "empty-tags",
        "failed-without-failure",
        "failure-on-completed",
        "unsafe-label",
        "typo-field",
        "missing-check",
        "negative-peak",
    ],
)
def test_schema_rejects_with_a_path_named_error(mutate: Any, expected: str) -> None:
    doc = example()
    mutate(doc)
    errors = schema_errors(doc)
    assert any(expected in line for line in errors), errors


def test_a_failed_run_with_what_it_has_still_validates() -> None:
    doc = example()
    doc["status"] = "failed"
    doc["failure"] = {
        "group": "retain",
        "phase": "update",
        "type": "OutOfMemoryError",
        "message": "CUDA OOM",
    }
    retain = doc["groups"]["retain"]
    retain["updated_lora_sha256"] = None
    retain["update_completed"] = retain["sync_completed"] = False
    assert schema_errors(doc) == []


# --------------------------------------------------------------------------- strict loading


def test_loads_strict_accepts_a_byte_order_mark() -> None:
    assert loads_strict(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}


def test_loads_strict_keeps_every_number_a_double_can_hold() -> None:
    largest = int(2.0**1023 * (2 - 2**-52))  # the largest finite double, 309 digits
    assert len(str(largest)) == 309
    assert loads_strict(f"[{largest}, -{largest}, 1e308, 1e-999]") == [
        largest,
        -largest,
        1e308,
        0.0,
    ]
    # Escaped pairs and escaped backslashes before "ud800" are ordinary text.
    assert loads_strict('["\\ud83d\\ude00", "\\\\ud800"]') == ["\U0001f600", "\\ud800"]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('{"a": NaN}', "NaN is not valid JSON"),
        ('{"a": Infinity}', "Infinity is not valid JSON"),
        ('{"a": 1e999}', "out of range"),
        ('{"a": 1, "a": 1}', "duplicate key 'a'"),
        ('{"a": {"b": 1, "b": 2}}', "duplicate key 'b'"),
        ('{"a": [1, 2', "line 1, column 12"),
        ("[" * 100000, "invalid JSON"),
        ('{"a": 1' + "0" * 5000 + "}", "(5001 digits) is too large"),
        ('{"a": -' + "9" * 400 + "}", "integer -99999999999...999999 (400 digits) is too large"),
        ('{"a": [0, ' + "2" * 309 + "]}", "(309 digits) is too large"),
        ('{"a": "\\ud800"}', "holds an unpaired UTF-16 surrogate"),
        ('{"b": {"\\uDC00x": 1}}', "holds an unpaired UTF-16 surrogate"),
        ('{"c": ["\ud800"]}', "holds an unpaired UTF-16 surrogate"),
        ("   ", "the file is empty"),
    ],
    ids=[
        "nan",
        "infinity",
        "out-of-range",
        "duplicate",
        "nested-duplicate",
        "truncated",
        "too-deep",
        "too-many-digits",
        "huge-negative-integer",
        "integer-over-the-largest-double",
        "lone-surrogate-escape",
        "lone-low-surrogate-in-a-key",
        "raw-surrogate-in-a-str",
        "blank",
    ],
)
def test_loads_strict_rejects(text: str, fragment: str) -> None:
    with pytest.raises(StrictJSONError) as info:
        loads_strict(text)
    assert fragment in str(info.value)


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ('{"a": {"b": [1, {"c": NaN}]}}', "$.a.b[1].c"),
        ('{"a": 1e999, "b": {"k": 1, "k": 2}}', "$.a"),
        ('{"a": {"k": 1, "k": 2}, "b": 1e999}', "$.a.k"),
        ('{"a b": [{"it\'s": {"k": 1, "k": 2}}]}', "$['a b'][0]['it\\'s'].k"),
        ('{"n": [0, -' + "9" * 400 + "]}", "$.n[1]"),
        ('{"a": "\\ud800"}', "$.a"),
        ('{"b": {"\\uDC00x": 1}}', "$.b"),
        ('{"a": -Infinity.0}', "$"),  # not JSON even leniently: no place to name
        ('{"a": [1, 2', "$"),
    ],
)
def test_strict_json_errors_name_the_json_path(text: str, path: str) -> None:
    with pytest.raises(StrictJSONError) as info:
        loads_strict(text)
    assert info.value.path == path


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_loads_strict_only_ever_raises_strict_json_error(data: bytes) -> None:
    try:
        loads_strict(data)
    except StrictJSONError as exc:
        assert str(exc)


def test_size_cap_is_checked(tmp_path: Path) -> None:
    target = tmp_path / "big.json"
    shutil.copy(EXAMPLE, target)
    loaded = load_result_file(target, max_bytes=1024)
    assert loaded.stage == "read"
    assert loaded.errors[0].startswith("$: the file is over the size limit of 1024 bytes")
    assert load_result_file(target, max_bytes=target.stat().st_size).ok


def test_missing_file_directory_and_fifo(tmp_path: Path) -> None:
    assert load_result_file(tmp_path / "nope.json").errors == ("$: no such file",)
    assert load_result_file(tmp_path).errors == ("$: is a directory, not a result file",)
    fifo = tmp_path / "fifo.json"
    try:
        import os

        os.mkfifo(fifo)
    except (AttributeError, OSError):
        pytest.skip("no FIFOs here")
    assert load_result_file(fifo).errors == ("$: not a regular file",)


def test_validate_document_reports_non_objects() -> None:
    assert validate_document([1]).errors == ("$: the top level must be a JSON object, not array",)
    assert validate_document(None).errors == ("$: the top level must be a JSON object, not null",)


def test_a_new_schema_version_file_just_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for path in SCHEMAS.glob("*.json"):
        shutil.copy(path, tmp_path / path.name)
    v2 = copy.deepcopy(schema_registry.schema("pt-verl-closure.v1.json"))
    v2["$id"] = "https://rlsys.invalid/schemas/pt-verl-closure.v2.json"
    v2["properties"]["schema_version"] = {"const": "pt-verl-closure/2"}
    (tmp_path / "pt-verl-closure.v2.json").write_text(json.dumps(v2), encoding="utf-8")
    monkeypatch.setattr(schema_registry, "schema_dir", lambda: tmp_path)
    schema_registry.clear_cache()
    try:
        assert known_versions() == ("pt-verl-closure/1", "pt-verl-closure/2")
        doc = example()
        assert validate_document(doc).ok  # the old file keeps validating against v1
        doc["schema_version"] = "pt-verl-closure/2"
        loaded = validate_document(doc)
        assert loaded.ok and loaded.schema_id == v2["$id"]
        doc["schema_version"] = "pt-verl-closure/3"
        assert validate_document(doc).errors == (
            '$.schema_version: unknown schema_version "pt-verl-closure/3"; '
            "known versions: pt-verl-closure/1, pt-verl-closure/2",
        )
    finally:
        monkeypatch.undo()
        schema_registry.clear_cache()
    assert known_versions() == ("pt-verl-closure/1",)


# Number literals around the largest double (and far from it): the strict parse keeps
# every one that fits a double and refuses every one that does not.
NUMBER_LITERALS = st.one_of(
    st.integers(min_value=-(10**320), max_value=10**320).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.builds(
        lambda mantissa, exponent: f"{mantissa}e{exponent}",
        st.integers(min_value=-99, max_value=99),
        st.integers(min_value=-400, max_value=400),
    ),
    st.sampled_from(
        [
            "1e308",
            "1e309",
            "-1e309",
            "1.7976931348623157e308",
            "1.8e308",
            "1e+0308",
            "9" * 308,
            "9" * 309,
            "1" + "0" * 400,
            "0." + "0" * 400 + "1",
            "1E-400",
        ]
    ),
)


@given(NUMBER_LITERALS)
@settings(max_examples=300)
def test_a_number_is_refused_exactly_when_it_does_not_fit_a_double(literal: str) -> None:
    value = json.loads(literal)
    fits = math.isfinite(float(literal))  # the text itself: inf when it overflows a double
    text = '{"samples": [1, 2.5, "x"], "a": ' + literal + "}"
    if fits:
        assert loads_strict(text)["a"] == value
    else:
        with pytest.raises(StrictJSONError, match=r"out of range|too large"):
            loads_strict(text)


def test_error_listing_is_bounded_whatever_the_file_holds() -> None:
    # One error per item of a long array (a hostile file under the size cap held 720k):
    # the first MAX_ERRORS are listed, then one line says more were left out.
    import jsonschema_rs

    from pytest_rlsys.resultfile.schemas import MAX_ERRORS, error_pairs

    checker = jsonschema_rs.validator_for({"type": "array", "items": {"type": "integer"}})
    pairs = error_pairs(checker, ["x"] * (MAX_ERRORS * 5))
    assert len(pairs) == MAX_ERRORS + 1
    assert pairs[-1][0] == "$" and "more errors" in pairs[-1][1]
    assert len(error_pairs(checker, ["x"] * 3)) == 3  # below the cap: every error


HEX = "0123456789abcdef" * 4


@pytest.mark.parametrize(
    ("where", "value", "valid"),
    [
        (("groups", "release", "initial_lora_sha256"), HEX, True),
        # ECMA-262's $ is the end of the string (Python's also matches before a final newline).
        (("groups", "release", "initial_lora_sha256"), HEX + "\n", False),
        (("groups", "release", "initial_lora_sha256"), HEX.upper(), False),
        (("run_label",), "run_1\n", False),
        (("run_label",), "a" * 129, False),
        (("created_at",), "2026-03-14T09:31:07+08:00", True),
        (("created_at",), "2026-03-14t09:31:07z", True),  # RFC 3339 allows lower case
        (("created_at",), "2026-02-30T09:31:07Z", False),
        (("created_at",), "2026-03-14T09:31:07", False),  # no offset
        (("created_at",), "2026-03-14T09:31:07Z\n", False),
        (("environment", "gpu_total_mb"), True, False),
        (("workload", "lora_rank"), 8.0, True),  # 8.0 is an integer in JSON Schema
        (("workload", "lora_rank"), 8.5, False),
    ],
)
def test_the_validator_reads_patterns_and_formats_the_json_schema_way(
    where: tuple[str, ...], value: Any, valid: bool
) -> None:
    doc = example()
    node = doc
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    assert (schema_errors(doc) == []) is valid


def test_every_format_the_schemas_use_has_a_checker() -> None:
    used = set().union(
        *(
            schema_registry.formats_used(schema_registry.schema(i))
            for i in schema_registry.schema_ids()
        )
    )
    assert used and used <= set(schema_registry.FORMAT_CHECKS)
