"""JUnit XML in pytest's default layout (``junit_family = xunit2``).

Valid against the schema pytest validates its own output with
(testing/example_scripts/junit-10.xsd).  That schema allows ``<properties>`` only on the
suite, so the points are suite properties keyed by case (``points:<case id>`` =
``"earned/max"``; ``points_from_suite`` reads them back).

Failures are ``<failure>``, errors and timeouts ``<error type="error|timeout">``, cases
that did not run ``<skipped>``.

Every text goes through ``clean`` first: no character that XML 1.0 forbids can appear.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from pytest_rlsys.grading.scoring import CaseResult, ScoreReport
from pytest_rlsys.outputs import terminal
from pytest_rlsys.outputs.fenceline import fence_name
from pytest_rlsys.outputs.registry import RenderOptions
from pytest_rlsys.outputs.text import clean, clip, seconds
from pytest_rlsys.outputs.wording import load_error_text, message

__all__ = ["points_from_suite", "render"]

MAX_MESSAGE = 1000
MAX_TEXT = 4000


def _num(cents: int) -> str:
    return f"{cents / 100:g}" if cents % 100 == 0 else f"{cents / 100:.2f}"


def _attr(text: object, lang: str = "en") -> str:
    return clip(clean(text, newlines=False), MAX_MESSAGE, lang)


def _case(suite: ET.Element, case: CaseResult, options: RenderOptions) -> None:
    section, _, name = case.id.partition(".")
    element = ET.SubElement(
        suite,
        "testcase",
        classname=_attr(f"rlsys.{section}"),
        name=_attr(name or case.id),
        time=f"{seconds(case.seconds):.3f}",
    )
    lang = options.lang
    body = clip(clean(terminal.failure_text(case, lang)), MAX_TEXT, lang)
    said = _attr(message(case, lang), lang)
    if case.status == "failed":
        ET.SubElement(element, "failure", type="failed", message=said).text = body
    elif case.status in ("error", "timeout"):
        ET.SubElement(element, "error", type=case.status, message=said).text = body
    elif case.status == "not_run":
        ET.SubElement(element, "skipped", type="not_run", message=said)


def render(report: ScoreReport, options: RenderOptions) -> str:
    failures = sum(c.status == "failed" for c in report.cases)
    errors = sum(c.status in ("error", "timeout") for c in report.cases)
    skipped = sum(c.status == "not_run" for c in report.cases)
    root = ET.Element("testsuites", name="rlsys")
    suite = ET.SubElement(
        root,
        "testsuite",
        name="rlsys",
        tests=str(len(report.cases)),
        failures=str(failures),
        errors=str(errors),
        skipped=str(skipped),
        time=f"{seconds(report.elapsed_s):.3f}",
    )
    props = ET.SubElement(suite, "properties")
    earned = sum(c.cents for c in report.cases)
    total = sum(c.max_cents for c in report.cases)
    for name, value in (
        ("score", _num(earned)),
        ("max_score", _num(total)),
        ("seed", str(report.seed)),
        ("junit_family", "xunit2"),
        ("battery_sha256", str(report.battery_sha256)),
        ("submission_sha256", str(report.submission_sha256)),
    ):
        ET.SubElement(props, "property", name=name, value=_attr(value))
    if report.load_error is not None:
        said = load_error_text(report, options.lang)
        ET.SubElement(props, "property", name="load_error", value=_attr(said, options.lang))
    if report.fence is not None:  # the fence that graded (fenceline), for whoever reads it
        ET.SubElement(props, "property", name="fence", value=_attr(fence_name(report.fence)))
    for case in report.cases:
        ET.SubElement(
            props,
            "property",
            name=_attr(f"points:{case.id}"),
            value=f"{_num(case.cents)}/{_num(case.max_cents)}",
        )
    for case in report.cases:
        _case(suite, case, options)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def points_from_suite(suite: ET.Element) -> dict[str, tuple[float, float]]:
    """Case id -> (earned, max) from an xunit2 suite's properties (the inverse of render)."""
    out: dict[str, tuple[float, float]] = {}
    for prop in suite.iter("property"):
        name, value = prop.get("name", ""), prop.get("value", "")
        if name.startswith("points:") and "/" in value:
            earned, _, most = value.partition("/")
            out[name[len("points:") :]] = (float(earned), float(most))
    return out
