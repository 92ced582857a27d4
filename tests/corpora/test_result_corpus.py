"""The result-file corpus: every faulty file flagged, every honest control keeps its score.

tests/corpora/result_corpus/generate.py writes one faulty file per rule a run's
evidence must satisfy (docs/result-files.md) and honest controls;
manifest.json says what the grader must conclude for each.
"""

from __future__ import annotations

import importlib.util
import json
import random
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pytest_rlsys.cli import main as rlsys
from pytest_rlsys.cli.validate import RESULT_EXIT_CODES
from pytest_rlsys.resources import schema_dir
from pytest_rlsys.resultfile.grade import grade_document, grade_result_file
from pytest_rlsys.resultfile.loading import load_result_file

CORPUS = Path(__file__).parent / "result_corpus"
MANIFEST: dict[str, Any] = json.loads((CORPUS / "manifest.json").read_text("utf-8"))
FAULTY: dict[str, dict[str, Any]] = MANIFEST["faulty"]
HONEST: dict[str, dict[str, Any]] = MANIFEST["honest"]
EXAMPLES = schema_dir() / "examples"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("corpus_generate", CORPUS / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_corpus_is_what_the_generator_writes() -> None:
    generator = _generator()
    files = generator.render()
    stale = [str(p) for p, text in files.items() if p.read_bytes() != text.encode()]
    assert stale == [], "run: python tests/corpora/result_corpus/generate.py"
    # One faulty file per rule, each a different fault, and honest controls.
    assert len(FAULTY) >= 35 and len(HONEST) >= 5


def test_every_rule_group_has_faulty_files() -> None:
    checks = {want["check"] for want in FAULTY.values() if "check" in want}
    assert checks >= {
        "config_paired",
        "update_and_sync",
        "phase_events",
        "resume_calls",
        "resource_sampling",
    }


@pytest.mark.parametrize("name", sorted(FAULTY))
def test_faulty_file_is_flagged_with_a_message_naming_the_fault(name: str) -> None:
    want = FAULTY[name]
    grade = grade_result_file(CORPUS / "faulty" / name)
    assert grade.verdict == want["verdict"]
    assert grade.score < grade.max_score == 40.0
    if "check" in want:
        (case,) = [c for c in grade.cases if c.id == f"gpu_result.{want['check']}"]
        assert case.status == "failed" and case.score == 0
        assert case.message.startswith("false claim: claimed passed but the evidence shows")
        assert want["fragment"] in case.message, case.message


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_control_keeps_its_score(name: str) -> None:
    want = HONEST[name]
    grade = grade_result_file(CORPUS / "honest" / name)
    assert grade.gradable, grade.errors
    assert (grade.verdict, grade.score) == (want["verdict"], want["score"]), [
        c.message for c in grade.cases if c.status != "passed"
    ]
    # Honest: no claim is contradicted, whatever the run achieved.
    assert not any(c.message.startswith("false claim") for c in grade.cases)


def test_shipped_examples_still_grade_40_and_25() -> None:
    full = grade_result_file(EXAMPLES / "pt-verl-closure.example.json")
    unpaired = grade_result_file(EXAMPLES / "pt-verl-closure.v1-unpaired.example.json")
    assert (full.score, full.verdict) == (40.0, "passed")
    assert (unpaired.score, unpaired.verdict) == (25.0, "failed")


@pytest.mark.parametrize(
    "path",
    [CORPUS / "faulty" / n for n in sorted(FAULTY)]
    + [CORPUS / "honest" / n for n in sorted(HONEST)],
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_every_command_handles_every_corpus_file(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rlsys_cli = pytest.importorskip("rlsys_closure.cli")
    grade = grade_result_file(path)
    assert rlsys(["result", str(path)]) == RESULT_EXIT_CODES[grade.verdict]
    out = capsys.readouterr().out
    assert f"verdict: {grade.verdict.replace('_', ' ')}" in out or "not gradable" in out
    if load_result_file(path).ok:  # a schema-valid file: the summary never tracebacks
        assert rlsys_cli.main(["summary", str(path)]) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err


def test_exit_codes_through_the_dispatcher() -> None:
    cases = {
        CORPUS / "faulty" / "retain_engine_sleep.json": 1,
        CORPUS / "faulty" / "integer_too_large.json": 3,
        CORPUS / "honest" / "failed_in_sync.json": 4,
        CORPUS / "honest" / "example_reformatted.json": 0,
    }
    for path, code in cases.items():
        done = subprocess.run(
            [sys.executable, "-m", "pytest_rlsys", "result", str(path)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == code, (path, done.stdout, done.stderr)
        assert "Traceback" not in done.stdout + done.stderr


def test_help_documents_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert rlsys(["result", "--help"]) == 0
    out = capsys.readouterr().out
    for code in ("0  every check passes", "1  the evidence", "3  not gradable", "4  an honest"):
        assert code in out
    assert rlsys(["validate", "--help"]) == 0
    assert "schema only" in capsys.readouterr().out


def test_a_file_that_cannot_be_read_is_reported_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "absent.json"
    assert rlsys(["result", str(missing)]) == 2  # rlsys's one rule for a missing input
    err = capsys.readouterr().err
    assert err.count("no such file") == 1, err


# --------------------------------------------------------------------------- reformatting


def _shuffled(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict):
        keys = list(value)
        rng.shuffle(keys)
        return {k: _shuffled(value[k], rng) for k in keys}
    if isinstance(value, list):
        return [_shuffled(v, rng) for v in value]
    return value


_REFORMAT_FILES = [
    CORPUS / "honest" / "failed_in_sync.json",
    CORPUS / "faulty" / "retain_resume_subphases.json",
    CORPUS / "faulty" / "sampling_stopped_early.json",
    EXAMPLES / "pt-verl-closure.v1-unpaired.example.json",
]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    which=st.sampled_from(_REFORMAT_FILES),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    indent=st.sampled_from([None, 0, 1, 4, "\t"]),
    ascii_only=st.booleans(),
    crlf=st.booleans(),
)
def test_reformatting_and_key_order_never_change_a_grade(
    tmp_path: Path, which: Path, seed: int, indent: Any, ascii_only: bool, crlf: bool
) -> None:
    doc = json.loads(which.read_text("utf-8"))
    text = json.dumps(_shuffled(doc, random.Random(seed)), indent=indent, ensure_ascii=ascii_only)
    path = tmp_path / "reformatted.json"
    path.write_bytes(text.replace("\n", "\r\n").encode() if crlf else text.encode())
    before = grade_document(doc, path="x")
    after = grade_result_file(path)
    assert after.verdict == before.verdict
    assert [(c.id, c.score, c.status, c.message) for c in after.cases] == [
        (c.id, c.score, c.status, c.message) for c in before.cases
    ]


def test_the_realistic_example_is_what_its_generator_writes_and_passes() -> None:
    # Written through the runner's own recorder, sampler and assemble (noise, its own
    # stretch of the clock per group, a stalled sampler, a dropped reading, details).
    script = CORPUS / "realistic.py"
    spec = importlib.util.spec_from_file_location("corpus_realistic", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path = EXAMPLES / "pt-verl-closure.v1-realistic.example.json"
    assert path.read_text(encoding="utf-8") == module.render(), f"run: python {script}"
    grade = grade_result_file(path)
    assert (grade.verdict, grade.score) == ("passed", 40.0), [
        c.message for c in grade.cases if c.score == 0
    ]
    doc = load_result_file(path).doc
    assert doc is not None
    release, retain = doc["groups"]["release"], doc["groups"]["retain"]
    assert release["events"][0]["t_s"] != retain["events"][0]["t_s"]
    assert len(release["resume_calls"]) == 4 and retain["resume_calls"] == []


def _realistic() -> ModuleType:
    spec = importlib.util.spec_from_file_location("corpus_realistic", CORPUS / "realistic.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@settings(max_examples=25, deadline=None)
@given(
    interval=st.sampled_from([0.1, 0.25, 0.5]),
    boundary=st.booleans(),
    engine=st.sampled_from(["vllm", "sglang"]),
    seeds=st.tuples(st.integers(0, 10_000), st.integers(0, 10_000)),
    # The runner starts retain after release's process exited, on the same clock
    # (runner_states.GROUP_ORDER): a group takes under a minute here.
    starts=st.tuples(st.floats(50.0, 1e6), st.floats(120.0, 1e5)).map(
        lambda p: (p[0], p[0] + p[1])
    ),
)
# Found by a random run: at 0.5 s the only reading at the rollout's level came 2 ms after
# engine_sleep began, and the sleep was judged to free too little (35/40).
@example(interval=0.5, boundary=False, engine="vllm", seeds=(7, 0), starts=(50.0, 170.0))
def test_honest_runs_through_the_runners_code_keep_full_marks(
    interval: float,
    boundary: bool,
    engine: str,
    seeds: tuple[int, int],
    starts: tuple[float, float],
) -> None:
    # Noise, a stalled sampler, a dropped reading, each engine's own wakes, any clock
    # origin, any interval the runner offers: an honest run never loses a point.
    doc = _realistic().build(
        interval=interval, boundary=boundary, engine=engine, seeds=seeds, starts=starts
    )
    grade = grade_document(doc)
    assert (grade.verdict, grade.score) == ("passed", 40.0), [
        c.message for c in grade.cases if c.score == 0
    ]
