"""Every platform file is accepted by the parser that really consumes it.

The scenario corpus (honest, failing, hostile, unloadable) is graded here in part (the
fast scenarios; tests/corpora/test_scenarios.py checks the files of every scenario it grades), and
hypothesis drives arbitrary text (lone surrogates, noncharacters, controls, bidi) through
every renderer: none may raise, and every file must parse and validate.
Rules and their sources: tests/data/README.md.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

import pytest
import xmlschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_rlsys.grading.grader import grade_file
from pytest_rlsys.grading.scoring import (
    OUTPUT_KINDS,
    PLATFORM_VISIBILITIES,
    STATUSES,
    CaseResult,
    ScoreReport,
    as_status,
)
from pytest_rlsys.grading.verdicts import HIDDEN_KINDS, PROBLEM_KINDS
from pytest_rlsys.messages import Msg, said
from pytest_rlsys.outputs import registry, terminal
from pytest_rlsys.outputs.files import write_atomic
from pytest_rlsys.outputs.junit import points_from_suite
from pytest_rlsys.outputs.registry import MODULES, RenderOptions, renderer
from pytest_rlsys.outputs.text import clean, is_clean
from tests.corpora.test_scenarios import SEED, limits_for, load_expected, submission_path
from tests.platform_checks import (
    check_all,
    check_gradescope,
    check_junit,
    check_prairielearn,
    junit_schema,
)

# Fast scenarios covering each kind: honest, failing, hostile text, unloadable.
CORPUS = [
    "reference",
    "template",
    "mutates_inputs",
    "hidden_info",
    "fake_output",
    "lying_subclasses",
    "missing_functions",
    "sys_exit_in_call",
    "syntax_error",
    "not_utf8",
    "exit_at_import",
]
UNLOADABLE = {"syntax_error", "not_utf8", "exit_at_import"}
NASTY = [
    "\ud800",
    "\udfff",
    "a\ud83d",
    "\uffff",
    "\ufffe",
    "\ufdd0",
    "\U0010ffff",
    "\x00",
    "\x1b[2J\x1b[H",
    "\r\nPoints 100/100",
    "\u202e001/001 stnioP",
    "\u2066",
    "\u200b\u200d\ufeff",
    "\x85\u2028\u2029",
    "]]>",
    "<pre>&amp;</pre>",
    "`` ``` ",
    '"quoted" \\ backslash',
    "中文 全角：",
    "\t",
    "\x7f\x9f",
]


@pytest.fixture(scope="module")
def corpus() -> dict[str, ScoreReport]:
    return {
        name: grade_file(submission_path(name), seed=SEED, limits=limits_for(load_expected(name)))
        for name in CORPUS
    }


@pytest.mark.slow
@pytest.mark.parametrize("name", CORPUS)
def test_corpus_files_are_accepted(corpus: dict[str, ScoreReport], name: str) -> None:
    report = corpus[name]
    assert (report.load_error is not None) is (name in UNLOADABLE)
    # Both languages and both visibilities, alternating over the corpus.
    options = (
        RenderOptions(lang="en")
        if CORPUS.index(name) % 2
        else RenderOptions(lang="zh", hidden_visibility="after_due_date")
    )
    files = check_all(report, options)
    assert files["prairielearn"]["gradable"] is (name not in UNLOADABLE)


def test_unloadable_submission_is_not_gradable_on_prairielearn(
    corpus: dict[str, ScoreReport],
) -> None:
    report = corpus["syntax_error"]
    doc = check_prairielearn(registry.render("prairielearn", report), report)
    assert doc["gradable"] is False
    assert any("SyntaxError" in error for error in doc["format_errors"])
    gradescope = json.loads(registry.render("gradescope", report))
    assert gradescope["score"] == 0 and "SyntaxError" in gradescope["output"]


def test_no_cases_at_all_still_gives_valid_files() -> None:
    """A report with nothing graded (no file to load) is still a file every platform reads."""
    report = ScoreReport(
        cases=[],
        seed=None,
        submission=None,
        submission_sha256=None,
        battery_sha256=None,
        load_error="mine.py: no such file",
    )
    check_all(report, score_schema=False)


def test_result_file_section_gives_valid_files(
    corpus: dict[str, ScoreReport], tmp_path: Path
) -> None:
    """A graded closure result file adds the gpu_result section to every platform file;
    a broken one (errors, not gradable checks) too."""
    from pytest_rlsys.grading.rubric import Rubric
    from pytest_rlsys.resources import schema_dir
    from pytest_rlsys.session import grade_result

    example = schema_dir() / "examples" / "pt-verl-closure.example.json"
    broken = tmp_path / "broken.json"
    broken.write_text('{"schema_version": "\u202e", "phases": [1, 2]}', encoding="utf-8")
    for path in (example, broken):
        section = grade_result(path, Rubric())
        base = corpus["reference"]
        report = ScoreReport(
            **{**vars(base), "cases": base.cases + section.cases, "gpu_result": section.summary}
        )
        check_all(report)


# -- JUnit --------------------------------------------------------------------------------


def test_pytests_schema_rejects_testcase_properties() -> None:
    """The schema is the strict one: per-testcase <properties> are invalid (what the old
    file had), so the xunit2 layout really has to keep the points on the suite."""
    base = (
        '<testsuites><testsuite name="s" tests="1" failures="1" errors="1">'
        '<testcase name="t">{}</testcase></testsuite></testsuites>'
    )
    junit_schema().validate(base.format("<failure message='m'>x</failure><error>y</error>"))
    for inner in ('<properties><property name="points" value="1"/></properties>', "<bogus/>"):
        with pytest.raises(xmlschema.XMLSchemaValidationError):
            junit_schema().validate(base.format(inner))


def test_junit_points_recoverable(corpus: dict[str, ScoreReport]) -> None:
    report = corpus["mutates_inputs"]
    earned = sum(c.cents for c in report.cases)
    assert 0 < earned < 10_000 and earned % 100  # a score with hundredths
    modern = check_junit(registry.render("junit", report), report, RenderOptions())
    props = {p.get("name"): p.get("value", "") for p in modern.iter("property")}
    assert props["junit_family"] == "xunit2" and float(props["score"] or "") == earned / 100
    crashed = corpus["sys_exit_in_call"]
    errored = [c for c in crashed.cases if c.status in ("error", "timeout")]
    assert errored  # so an <error> element is validated too
    name = errored[0].id.partition(".")[2]
    root = check_junit(registry.render("junit", crashed), crashed, RenderOptions())
    assert root.find(f"testsuite/testcase[@name='{name}']/error") is not None


# -- Gradescope ---------------------------------------------------------------------------


def test_gradescope_names_visibility_and_format(corpus: dict[str, ScoreReport]) -> None:
    report = corpus["template"]
    options = RenderOptions(hidden_visibility="after_due_date")
    doc = check_gradescope(registry.render("gradescope", report, options), report, options)
    hidden = [
        t for t, c in zip(doc["tests"], report.cases, strict=True) if c.visibility == "hidden"
    ]
    assert hidden and all(t["visibility"] == "after_due_date" for t in hidden)
    assert all("hidden" in t["name"] and ".hidden." not in t["name"] for t in hidden)
    numbers = [t["number"] for t in doc["tests"]]
    assert len(set(numbers)) == len(numbers) and numbers[0] == "1.1"
    assert doc["test_output_format"] == "text" and doc["output_format"] == "html"


def test_gradescope_schema_rejects_a_wrong_visibility() -> None:
    from tests.platform_checks import json_validator

    validator = json_validator("gradescope-results.schema.json")
    assert validator.is_valid({"score": 1, "tests": [{"visibility": "after_due_date"}]})
    assert not validator.is_valid({"score": 1, "tests": [{"visibility": "later"}]})
    assert not validator.is_valid({"tests": [{"name": "no score anywhere"}]})
    assert not validator.is_valid({"score": 1, "output_format": "markdown"})


# -- arbitrary text through every renderer ------------------------------------------------

ANY_CHAR = st.characters(codec=None, exclude_categories=[])
TEXT = st.one_of(
    st.text(ANY_CHAR, max_size=40),
    st.sampled_from(NASTY),
    st.lists(st.sampled_from(NASTY), max_size=4).map("".join),
)


@st.composite
def case_results(draw: st.DrawFn) -> CaseResult:
    visibility = draw(st.sampled_from(["visible", "hidden"]))
    # Every field a message is worded from holds hostile text; the kind is the grader's.
    kinds = HIDDEN_KINDS if visibility == "hidden" else ("", *PROBLEM_KINDS)
    return CaseResult(
        id=draw(st.one_of(TEXT, st.sampled_from(["todo1.hidden.x", "todo2.visible.y"]))),
        section=draw(st.one_of(st.sampled_from(["todo1", "todo2", "todo3", "gpu_result"]), TEXT)),
        visibility=visibility,
        max_cents=draw(st.integers(min_value=0, max_value=10_000)),
        status=as_status(draw(st.sampled_from(STATUSES))),
        kind=draw(st.sampled_from(kinds)),
        note=draw(TEXT),
        path=draw(TEXT),
        exc_type=draw(TEXT),
        names=tuple(draw(st.lists(TEXT, max_size=2))),
        category=Msg(draw(TEXT), draw(TEXT)),
        call=draw(TEXT),
        claim=draw(TEXT),
        expected=draw(TEXT),
        got=draw(TEXT),
        seconds=draw(st.one_of(st.floats(min_value=0, max_value=1e4), st.floats())),
        not_implemented=draw(st.booleans()),
    )


@st.composite
def score_reports(draw: st.DrawFn) -> ScoreReport:
    return ScoreReport(
        # Case ids come from the battery: unique, also once cleaned.
        cases=draw(
            st.lists(case_results(), max_size=6, unique_by=lambda c: clean(c.id, newlines=False))
        ),
        seed=draw(st.one_of(st.none(), st.integers(min_value=0, max_value=2**63 - 1))),
        submission=draw(st.one_of(st.none(), TEXT)),
        submission_sha256=draw(st.one_of(st.none(), TEXT)),
        battery_sha256=draw(st.one_of(st.none(), TEXT)),
        notes=draw(st.lists(TEXT.map(lambda t: said("as_is", text=t)), max_size=3)),
        elapsed_s=draw(st.one_of(st.floats(min_value=0, max_value=1e5), st.floats())),
        gpu_result=draw(st.one_of(st.none(), st.dictionaries(TEXT, TEXT, max_size=3))),
        load_error=draw(st.one_of(st.none(), TEXT)),
    )


@given(
    score_reports(),
    st.sampled_from(["en", "zh"]),
    st.sampled_from(PLATFORM_VISIBILITIES),
)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_text_gives_parseable_valid_files(
    report: ScoreReport, lang: str, visibility: Any
) -> None:
    options = RenderOptions(lang=lang, hidden_visibility=visibility)
    check_all(report, options, score_schema=False)
    for line in terminal.terminal_lines(report, lang):
        assert is_clean(line) and line.encode("utf-8")
    for case in report.cases:
        text = terminal.failure_text(case, lang)
        assert is_clean(text) and text.encode("utf-8")


@given(TEXT)
@settings(max_examples=300, deadline=None)
def test_clean_makes_any_text_xml_and_utf8_safe(text: str) -> None:
    safe = clean(text)
    safe.encode("utf-8")
    one_line = clean(text, newlines=False)
    ET.fromstring(f"<a b={quoteattr(one_line)}>{escape(safe)}</a>")  # well-formed XML 1.0
    assert is_clean(safe) and is_clean(clean(text, newlines=False), newlines=False)
    assert clean(safe) == safe  # idempotent: cleaning twice changes nothing


def test_safe_blocks_hold_no_unsafe_code_point() -> None:
    """clean()'s fast path skips these blocks: none of their code points may need escaping
    in this Python's Unicode database."""
    import re

    from pytest_rlsys.outputs.text import SAFE_BLOCKS

    block = re.compile(f"[{SAFE_BLOCKS}]")
    inside = [chr(cp) for cp in range(0x30000) if block.match(chr(cp))]
    assert len(inside) > 30_000
    assert [c for c in inside if clean(c, newlines=False) != c] == []


def test_write_atomic_never_fails_on_content(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    write_atomic(path, '{"m": "\ud800"}')
    assert path.read_bytes() == b'{"m": "\\ud800"}'


# -- the output table ---------------------------------------------------------------------


def test_every_output_kind_has_a_renderer_and_an_option() -> None:
    from pytest_rlsys.settings import by_name

    assert tuple(MODULES) == OUTPUT_KINDS
    for kind in OUTPUT_KINDS:
        assert callable(renderer(kind))
        assert by_name(kind).output and by_name(kind).pytest and by_name(kind).help
    with pytest.raises(ValueError, match="unknown output kind 'csv'"):
        renderer("csv")


@pytest.mark.slow
def test_plugin_options_reach_the_files(pytester: pytest.Pytester, reference_source: str) -> None:
    (pytester.path / "mine.py").write_text(
        reference_source.replace(
            'decision, reasons = "reject", hard', 'decision, reasons = "reject", hard[:1]'
        ),
        encoding="utf-8",
    )
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--rlsys-submission",
        "mine.py",
        f"--rlsys-seed={SEED}",
        "--rlsys-junit",
        "j.xml",
        "--rlsys-gradescope",
        "gs.json",
        "--rlsys-hidden-visibility",
        "after_due_date",
        timeout=120,
    )
    assert result.ret == 1, result.stdout.str()
    junit = ET.parse(pytester.path / "j.xml").getroot()
    assert points_from_suite(junit.find("testsuite"))  # type: ignore[arg-type]
    gradescope = json.loads((pytester.path / "gs.json").read_text(encoding="utf-8"))
    assert {t["visibility"] for t in gradescope["tests"]} == {"visible", "after_due_date"}
    bad = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--rlsys-submission",
        "mine.py",
        "--rlsys-hidden-visibility",
        "sometimes",
        timeout=60,
    )
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    assert "--rlsys-hidden-visibility='sometimes': must be one of" in bad.stderr.str()
