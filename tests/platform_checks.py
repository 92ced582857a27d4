"""Check a platform file the way its consumer reads it (rules and their sources: data/README.md).

Used by tests/unit/test_interop.py, and by tests/corpora/test_scenarios.py for every report of the
scenario corpus.  Each ``check_*`` parses the text as the consumer does, validates it
against the consumer's schema, and checks that the grade it carries is the report's.
"""

from __future__ import annotations

import functools
import html
import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import xmlschema

from pytest_rlsys.grading.scoring import OUTPUT_KINDS, ScoreReport
from pytest_rlsys.messages import LOAD_FAILED
from pytest_rlsys.outputs import registry, terminal
from pytest_rlsys.outputs.junit import points_from_suite
from pytest_rlsys.outputs.prairielearn import MAX_BYTES
from pytest_rlsys.outputs.registry import RenderOptions
from pytest_rlsys.outputs.text import js_number
from pytest_rlsys.outputs.wording import category

DATA = Path(__file__).parent / "data"

__all__ = [
    "DATA",
    "check_all",
    "check_gradescope",
    "check_junit",
    "check_prairielearn",
    "check_score_json",
]


@functools.cache
def json_validator(name: str) -> jsonschema.protocols.Validator:
    schema = json.loads((DATA / name).read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator: jsonschema.protocols.Validator = cls(schema)
    return validator


@functools.cache
def junit_schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(str(DATA / "junit-10.xsd"))


def _schema_errors(name: str, doc: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in json_validator(name).iter_errors(doc)
    ]


def _utf8(text: str) -> bytes:
    """The bytes the file holds; strict UTF-8 (a lone surrogate would raise here)."""
    data = text.encode("utf-8")
    data.decode("utf-8")
    return data


def _cents(report: ScoreReport) -> tuple[int, int]:
    return (sum(c.cents for c in report.cases), sum(c.max_cents for c in report.cases))


def _hundredths(value: float) -> bool:
    return abs(value * 100 - round(value * 100)) < 1e-6


def check_score_json(text: str, report: ScoreReport, *, schema: bool = True) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(_utf8(text))
    if schema:
        from tests.conftest import validate_score_report

        validate_score_report(doc)
    earned, total = _cents(report)
    assert round(doc["score"] * 100) == earned and round(doc["max_score"] * 100) == total
    return doc


def check_gradescope(text: str, report: ScoreReport, options: RenderOptions) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(_utf8(text))
    assert _schema_errors("gradescope-results.schema.json", doc) == []
    earned, _ = _cents(report)
    tests = doc["tests"]
    assert len(tests) == len(report.cases)
    # Hundredths everywhere, and the top-level score is the sum of the tests' scores.
    assert all(_hundredths(t["score"]) and _hundredths(t["max_score"]) for t in tests)
    assert round(doc["score"] * 100) == earned == sum(round(t["score"] * 100) for t in tests)
    assert doc["score"] == round(math.fsum(t["score"] for t in tests), 2)
    # The table renders: escaped HTML in <pre>, tests as plain text.
    assert doc["output_format"] == "html" and doc["output"].startswith("<pre>")
    assert "<" not in doc["output"][len("<pre>") : -len("</pre>")]
    if options.hidden_visibility != "visible":
        # The top-level output is always visible: no hidden result in it (no hidden
        # category, no total or section score that counts hidden points).
        body = html.unescape(doc["output"][len("<pre>") : -len("</pre>")])
        held = [c for c in report.cases if c.visibility == "hidden"]
        for case in held:
            if case.status not in ("passed", "not_run") and category(case, options.lang):
                assert f"{category(case, options.lang)} (" not in body, category(case, options.lang)
        label = terminal.labels(options.lang)
        assert label["hidden_failed"].split("{")[0] not in body
        if held:
            shown = sum(c.max_cents for c in report.cases if c.visibility != "hidden")
            total = next(line for line in body.splitlines() if line.startswith(label["total"]))
            assert abs(float(total.split("/")[-1]) - shown / 100) < 0.005, total
    for test, case in zip(tests, report.cases, strict=True):
        assert test["status"] == ("passed" if case.status == "passed" else "failed")
        want = options.hidden_visibility if case.visibility == "hidden" else "visible"
        assert test["visibility"] == want, (case.id, test["visibility"])
        if (
            case.visibility == "hidden"
            and "." in case.id
            and case.section in ("todo1", "todo2", "todo3")
        ):
            assert case.id not in test["name"]
    return doc


def pl_make_grading_result(raw: bytes) -> dict[str, Any]:
    """What PrairieLearn's makeGradingResult (externalGraderCommon.ts) does with the
    grader's reply {succeeded: true, results: <results.json>}: parse, replace NUL,
    require a numeric score, normalise format_errors."""
    text = raw.decode("utf-8").replace("\0", "\ufffd")
    results = json.loads(text)
    data = {"succeeded": True, "results": results}
    score = results.get("score")
    if not (score is None and results.get("gradable") is False):
        assert type(score) in (int, float) and math.isfinite(score), (
            f'score "{score}" was not a number.'
        )
    errors = results.get("format_errors", [])
    format_errors = [errors] if isinstance(errors, str) else list(errors)
    return {"score": score or 0, "feedback": data, "format_errors": format_errors}


def check_prairielearn(text: str, report: ScoreReport) -> dict[str, Any]:
    raw = _utf8(text)
    assert len(raw) <= MAX_BYTES, f"{len(raw)} bytes: PrairieLearn's limit is 1 MB"
    doc: dict[str, Any] = json.loads(raw)
    assert _schema_errors("prairielearn-results.schema.json", doc) == []
    grading = pl_make_grading_result(raw)
    earned, total = _cents(report)
    if report.load_error is not None:
        assert doc["gradable"] is False and grading["format_errors"]
        # The reason in the message too, as the learner's terminal says it (trial r5 M3).
        said = grading["format_errors"][0][:200]  # either may be clipped further on
        heads = tuple(LOAD_FAILED.get(lang).split("{")[0] for lang in ("en", "zh"))
        assert doc["message"].startswith(heads) and said in doc["message"], doc["message"]
    else:
        assert doc["gradable"] is True
        assert 0.0 <= doc["score"] <= 1.0
        assert doc["score"] == (earned / total if total else 0.0)
    assert round(sum(t["points"] for t in doc["tests"]) * 100) == earned
    assert round(sum(t["max_points"] for t in doc["tests"]) * 100) == total
    return doc


def check_junit(text: str, report: ScoreReport, options: RenderOptions) -> ET.Element:
    raw = _utf8(text)
    root = ET.fromstring(raw)  # well-formed XML 1.0 (expat), or ParseError
    suite = root.find("testsuite")
    assert root.tag == "testsuites" and suite is not None
    cases = suite.findall("testcase")
    assert len(cases) == len(report.cases) == int(suite.get("tests", "-1"))
    earned, total = _cents(report)
    junit_schema().validate(raw.decode("utf-8"))
    points = points_from_suite(suite)
    assert len(points) == len({c.id for c in report.cases})
    assert round(sum(p for p, _ in points.values()) * 100) == earned
    assert round(sum(m for _, m in points.values()) * 100) == total
    assert not any(case.find("properties") is not None for case in cases)
    return root


def check_all(
    report: ScoreReport, options: RenderOptions | None = None, *, score_schema: bool = True
) -> dict[str, Any]:
    """Render ``report`` with every renderer and check each file as its consumer would."""
    options = options or RenderOptions()
    out: dict[str, Any] = {}
    for kind in OUTPUT_KINDS:
        text = registry.render(kind, report, options)
        if kind == "report":
            out[kind] = check_score_json(text, report, schema=score_schema)
        elif kind == "gradescope":
            out[kind] = check_gradescope(text, report, options)
        elif kind == "prairielearn":
            out[kind] = check_prairielearn(text, report)
        else:
            out[kind] = check_junit(text, report, options)
    # The terminal's last line (and the Actions kit's notice): the exact total.
    earned, total = _cents(report)
    want = f"Points {js_number(earned / 100)}/{js_number(total / 100)}"
    assert terminal.points_line(report) == want
    return out
