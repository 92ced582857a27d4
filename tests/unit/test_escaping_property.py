"""One property: whatever hostile text reaches any command, every output is inert.

A hostile string (C0/C1 controls, escape sequences, bidi overrides and isolates,
zero-width characters, lone surrogates, formula prefixes, HTML/XML markup, very long
words) is planted in everything a grading can carry (case texts, the load error, the
submission's name, notes) and in a result file (a key and the model's name); then every
output is produced the way the commands produce it: the grade outputs (terminal summary,
score JSON, JUnit, Gradescope, PrairieLearn, Classroom) through the file edge, ``rlsys
batch`` (CSV, JSON, HTML, its terminal lines), ``rlsys validate``, ``result``, ``ledger``
(text and JSON), ``grade`` (a missing file), ``template``, ``rlsys closure summary`` (text
and JSON) and ``closure plot``; ``closure preflight`` (seconds a run) has its own example.  Every
text must then be printable (escaping.is_clean: nothing a terminal or a browser acts on
or reorders), valid UTF-8, and, per format: JSON parses, no markup survives in HTML or
XML, and no CSV text cell starts a formula.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import io
import json
import os
import tempfile
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rlsys_closure import cli as closure

from pytest_rlsys.cli import batch as batch_cli
from pytest_rlsys.cli import main
from pytest_rlsys.escaping import clean, is_clean, roster_name
from pytest_rlsys.grading.scoring import OUTPUT_KINDS, CaseResult, RenderOptions, ScoreReport
from pytest_rlsys.messages import Msg, said
from pytest_rlsys.outputs import registry, terminal
from pytest_rlsys.outputs.batch import BatchRow
from pytest_rlsys.outputs.files import write_atomic
from pytest_rlsys.resources import schema_dir

MARKUP = "<x-evil a='1'>"  # a tag no output of ours writes: found raw = markup survived
PIECES = [
    "\x1b[2J\x1b[H",
    "\x1b]0;pwned\x07",
    "\x9b31m",
    "\x00",
    "\r",
    "\x85\u2028\u2029",
    "\x7f",
    "\u202e001",
    "\u2066\u2067\u2068\u2069",
    "\u200b\u200d\ufeff",
    "\ud800",
    "\udfff",
    "=cmd|'/C calc'!A0",
    "+1+1",
    "-2",
    "@SUM(A1)",
    MARKUP,
    "</td></tr></table><script>alert(1)</script>",
    "]]>&amp;",
    "w" * 300,
    "\n",
    "\t",
]
HOSTILE = st.one_of(
    st.sampled_from(PIECES),
    st.lists(st.sampled_from(PIECES), min_size=1, max_size=5).map("".join),
    st.tuples(
        st.sampled_from(PIECES), st.text(st.characters(codec=None, exclude_categories=[]))
    ).map("".join),
)
RESULT_EXAMPLE = schema_dir() / "examples" / "pt-verl-closure.example.json"
TOPOLOGY = {
    "stage_rates": {"rollout": 1, "learner": 1},
    "arrival_rate": 0.1,
    "items_per_work_unit": {"rollout": 1, "learner": 1},
    "placement": {"rollout": "A", "learner": "A"},
    "edges": [],
    "memory_by_pool": {"A": 10},
    "memory_limits": {"A": 20},
    "stage_phases": {"learner": "update"},
}


def hostile_report(text: str) -> ScoreReport:
    """A report whose every text holds ``text``; the load failed for a missing module."""

    def case(visibility: Any, status: Any, section: str, kind: str) -> CaseResult:
        return CaseResult(
            id=f"{section}.{visibility}.{status}",
            section=section,
            visibility=visibility,
            max_cents=500,
            status=status,
            category=Msg(text, text),
            call=f"f({text!r})",
            claim=text,
            expected=text,
            got=text,
            kind=kind,
            note=text,
            path=text,
            exc_type=text,
            names=(text,),
        )

    return ScoreReport(
        cases=[
            case("visible", "failed", "todo1", "raised"),
            case("visible", "error", "todo2", "load_failed"),
            case("hidden", "failed", "todo2", "wrong_value"),
            case("hidden", "timeout", "todo3", "timed_out"),
            case("visible", "passed", "todo3", ""),
        ],
        seed=1,
        submission=text,
        submission_sha256=text,
        battery_sha256=text,
        notes=[said("as_is", text=text)],
        load_error=text,
        load_exc_type="ModuleNotFoundError",
    )


def file_name(text: str) -> str:
    """``text`` as a file name this file system takes (no '/', NUL or lone surrogate)."""
    kept = "".join(c for c in text if c not in "/\0" and not 0xD800 <= ord(c) < 0xE000)
    return ("s" + kept)[:40] + ".py"


@contextlib.contextmanager
def captured() -> Iterator[dict[str, io.StringIO]]:
    streams = {"out": io.StringIO(), "err": io.StringIO()}
    with contextlib.redirect_stdout(streams["out"]), contextlib.redirect_stderr(streams["err"]):
        yield streams


def run_all(text: str, work: Path) -> dict[str, str]:
    """Every output of every command, by name, for ``text`` planted everywhere."""
    out: dict[str, str] = {}
    report = hostile_report(text)
    lang_options = [RenderOptions(lang="en"), RenderOptions(lang="zh")]
    for options in lang_options:
        out[f"terminal {options.lang}"] = "\n".join(
            terminal.terminal_summary(report, options.lang, verbose=True)
        )
        for kind in OUTPUT_KINDS:  # report is the score JSON
            path = work / f"{kind}.{options.lang}"
            write_atomic(path, registry.render(kind, report, options))
            out[f"{kind} {options.lang}"] = path.read_bytes().decode("utf-8")
        out[f"points line {options.lang}"] = terminal.points_line(report)

    # rlsys batch: its writing, for rows as grading builds them (grading itself is
    # tested elsewhere; here the row's texts are hostile), in a folder of hostile names.
    folder = work / "class"
    folder.mkdir(mode=0o700)
    (folder / file_name(text)).write_text("", encoding="utf-8")

    def row(name: str, *_: object) -> batch_cli._Graded:
        # The file's own (hostile) name: the batch keys rows by it.
        hostile = dataclasses.replace(report, submission_sha256=text)
        graded = BatchRow(name, "not_loaded", hostile, seconds=0.1)
        return batch_cli._Graded(graded, f"not read: {text}")

    paths = {k: work / f"grades.{k}" for k in ("csv", "json", "html")}
    with mock.patch.object(batch_cli, "_grade_row", row), captured() as streams:
        args = [f"--{k}={p}" for k, p in paths.items()]
        assert main(["batch", str(folder), *args, "--no-progress"]) == 0
    out.update({f"batch {k}": p.read_bytes().decode("utf-8") for k, p in paths.items()})
    out["batch terminal"] = streams["err"].getvalue() + streams["out"].getvalue()

    # A result file with a hostile key (not valid) and one with a hostile model name.
    doc = json.loads(RESULT_EXAMPLE.read_text(encoding="utf-8"))
    bad, named = work / "bad.json", work / "named.json"
    bad.write_text(json.dumps({**doc, text: 1, "run_label": text}), encoding="utf-8")
    doc["workload"]["model"] = text
    named.write_text(json.dumps(doc), encoding="utf-8")
    topology = work / "topology.json"
    topology.write_text(json.dumps(TOPOLOGY), encoding="utf-8")
    commands_run = {
        "validate": (main, ["validate", str(bad), str(named)]),
        "validate json": (main, ["validate", "--json", str(bad), str(named)]),
        "result": (main, ["result", str(bad)]),
        "result named": (main, ["result", str(named)]),
        "result json": (main, ["result", "--json", str(named)]),
        "ledger": (main, ["ledger", str(topology), "--result", str(bad)]),
        "ledger json": (main, ["ledger", str(topology), "--result", str(named), "--json"]),
        "grade missing": (main, ["grade", str(work / file_name(text)) + "x"]),
        "template": (main, ["template", str(folder / file_name(text))]),
        "closure summary": (closure.main, ["summary", str(named)]),
        "closure summary json": (closure.main, ["summary", "--json", str(named)]),
        "closure summary bad": (closure.main, ["summary", str(bad)]),
        "closure plot bad": (closure.main, ["plot", str(bad), "-o", str(work / "p.png")]),
    }
    for name, (entry, argv) in commands_run.items():
        with captured() as streams:
            entry(argv)
        out[name] = streams["out"].getvalue() + streams["err"].getvalue()
        if name.endswith("json") and streams["out"].getvalue():
            json.loads(streams["out"].getvalue())
    return out


@pytest.mark.slow  # ~1 s an example on 2 loaded cores (schema validation, matplotlib)
@given(HOSTILE)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_hostile_text_leaves_every_output_of_every_command_inert(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o700)
        outputs = run_all(text, Path(tmp))
    for name, output in outputs.items():
        body = output.replace("\r\n", "\n")  # a CSV's line ends
        assert is_clean(body), (name, [c for c in body if not is_clean(c)][:5])
        body.encode("utf-8")
        if name.startswith(("report", "gradescope", "prairielearn", "batch json")):
            json.loads(output)
        if name.startswith(("junit", "batch html")):
            assert MARKUP not in output and "<script>alert" not in output, name
    cells = list(csv.DictReader(io.StringIO(outputs["batch csv"])))
    for cell in (c for r in cells for k, c in r.items() if k in ("submission", "message")):
        assert not cell.startswith(("=", "+", "-", "@")), cell
    assert cells


@pytest.mark.slow  # preflight probes the machine (torch, NVML): seconds, once
def test_closure_preflight_shows_a_hostile_model_name_escaped(tmp_path: Path) -> None:
    text = "\x1b]0;pwned\x07\x1b[2J\u202e" + MARKUP
    report = tmp_path / "preflight.json"
    argv = ["preflight", "--model", text, "--output-dir", str(tmp_path), "--json", str(report)]
    with captured() as streams:
        closure.main(argv)
    shown = streams["out"].getvalue() + streams["err"].getvalue()
    assert "\\x1b]0;pwned\\x07\\x1b[2J\\u202e" in shown and is_clean(shown)
    written = report.read_text(encoding="utf-8")
    assert is_clean(written) and json.loads(written)["model"] == clean(text)


def test_two_spellings_of_one_name_are_two_roster_rows(tmp_path: Path) -> None:
    """café.py composed and decomposed (as macOS writes it) draw the same text; the roster
    escapes the decomposed one's combining mark so the rows are told apart."""
    composed, decomposed = "caf\u00e9.py", "cafe\u0301.py"
    for name in (composed, decomposed, "zo\u00eb.py"):
        (tmp_path / name).write_text("x = 1\n", encoding="utf-8")
    names = [name for name, _, _ in batch_cli.find_submissions(tmp_path)]
    assert composed in names and "cafe\\u0301.py" in names
    assert len({unicodedata.normalize("NFC", n) for n in names}) == 3
    assert roster_name(composed) == composed  # a name in NFC is shown as it is


def test_names_that_differ_in_spaces_a_page_hides_are_told_apart(tmp_path: Path) -> None:
    """A page merges runs of spaces and drops them at the ends; a spreadsheet cell shows
    neither end: a roster named "Li Na" twice, with 100 and 0, once read as one learner."""
    spellings = ["Li Na", " Li Na", "Li Na ", "Li  Na", "Li   Na"]
    for name in spellings:
        (tmp_path / name).mkdir()
        (tmp_path / name / "mine.py").write_text("x = 1\n", encoding="utf-8")
    names = [name for name, _, _ in batch_cli.find_submissions(tmp_path)]
    seen = {" ".join(name.split()) for name in names}  # as a page draws each name
    assert len(seen) == len(spellings), names
    assert "Li Na" in names  # a name with nothing hidden is shown as it is


def test_no_name_spells_another_name_s_escape(tmp_path: Path) -> None:
    """A file named with a literal ``\\u0301`` beside a decomposed café.py, a literal
    ``\\x0a`` beside a real line feed: each pair once drew one row twice."""
    pairs = [
        ("cafe\u0301.py", "cafe\\u0301.py"),
        ("new\nline.py", "new\\x0aline.py"),
        ("\u202egnp.py", "\\u202egnp.py"),
    ]
    for real, literal in pairs:
        folder = tmp_path / str(len(real))
        folder.mkdir()
        (folder / real).write_text("x = 1\n", encoding="utf-8")
        (folder / literal).write_text("x = 1\n", encoding="utf-8")
        shown = [clean(name, newlines=False) for name, _, _ in batch_cli.find_submissions(folder)]
        assert len(set(shown)) == 2, shown
