"""The clean-room corpus: result files written by an adversary who saw only the docs,
the schema and the examples (tests/corpora/result_corpus/cleanroom/import_cleanroom.py says how
they were imported and which were re-classified against verl's own code).

Every faulty file is flagged (exit 1 or 3), every honest one passes (exit 0) or is an
honest failed run (exit 4), and no command raises on any of them.
"""

from __future__ import annotations

import datetime as _dt
import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest
from rlsys_closure import plot
from rlsys_closure.cli import main as closure_main

from pytest_rlsys.cli import main as rlsys
from pytest_rlsys.resultfile.checks import phases
from pytest_rlsys.resultfile.loading import load_result_file
from tests.conftest import first_of_each, sampled

HERE = Path(__file__).parent / "result_corpus" / "cleanroom"
MANIFEST: dict[str, dict[str, Any]] = json.loads((HERE / "manifest.json").read_text("utf-8"))


def _files() -> dict[str, bytes]:
    with gzip.open(HERE / "files.jsonl.gz", "rt", encoding="utf-8") as bundle:
        rows = [json.loads(line) for line in bundle if line.strip()]
    return {row["file"]: row["latin1"].encode("latin-1") for row in rows}


FILES = _files()
# The plain loop's share: two files of each kind (honest, and each fault family's prefix:
# pe, rs, us, ...), about 0.03 s a file per test; --run-slow reads every file.
SAMPLE = first_of_each(MANIFEST, lambda name: re.sub(r"[0-9].*", "", name), n=2)
PARAMS = [pytest.param(name, marks=sampled(name in SAMPLE), id=name) for name in sorted(MANIFEST)]


# The adversary wrote its files on 2026-12-01 (UTC) and dated some relative to that day:
# pe19's created_at was "~15 h in the future" then and is in the past since 2026-12-02
# 11:59Z.  Its files are judged by the clock of the day they were written, or the corpus
# would change its verdicts as the calendar moves on.
WRITTEN_AT = _dt.datetime(2026, 12, 1, 20, 0, tzinfo=_dt.UTC)


@pytest.fixture(autouse=True)
def _the_corpus_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(phases._created_at_problems, "__defaults__", (WRITTEN_AT,))


def _written(tmp_path: Path, name: str) -> Path:
    path = tmp_path / Path(name).name
    path.write_bytes(FILES[name])
    return path


def test_the_bundle_holds_every_file_the_manifest_names() -> None:
    assert sorted(FILES) == sorted(MANIFEST)
    faulty = [n for n, w in MANIFEST.items() if w["exit"] == [1, 3]]
    honest = [n for n, w in MANIFEST.items() if w["exit"] in (0, 4)]
    # 4 of the 50 honest ones are records the runner cannot write (RUNNER_IMPOSSIBLE).
    assert len(faulty) >= 100 and len(honest) >= 46


@pytest.mark.parametrize("name", PARAMS)
def test_each_file_gets_the_exit_code_its_kind_must(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    path = _written(tmp_path, name)
    code = rlsys(["result", str(path)])
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    want = MANIFEST[name]["exit"]
    if want is None:  # undetected: only that nothing crashes
        return
    allowed = want if isinstance(want, list) else [want]
    assert code in allowed, (MANIFEST[name].get("what"), out.out[-3000:])


# Drawing takes about 2 s a file: every file goes through the plot's reading and its
# guard against numbers no picture can show, and these (the adversary's own pick of odd
# times, units and failures) are drawn in full.
DRAWN = (
    "honest/h01_vllm_h100.json",
    "honest/h17_release_oom_in_resume_kv.json",
    "honest/h18_release_init_oom.json",
    "honest/h28_example_compact_sorted.json",
    "honest/h39_samples_without_reason.json",
    "faulty/pe02_everything_in_ms.json",
    "faulty/rs10_gpu_used_in_bytes.json",
    "faulty/rs03_sampler_other_clock_origin.json",
    "faulty/us09_nan_loss_literal.json",
    "faulty/ng03_integer_too_large.json",
    "faulty/rs02_sampler_stopped_at_init.json",
)


@pytest.mark.parametrize("name", PARAMS)
def test_no_command_raises_on_any_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    path = _written(tmp_path, name)
    rlsys(["validate", str(path)])
    closure_main(["summary", str(path)])
    try:
        view = plot.read_view(path)
    except plot.PlotError:
        view = None
    if view is not None:
        plot.view_of(load_result_file(path).doc or {})
        plot.undrawable(view)
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in DRAWN if n in MANIFEST])
def test_the_plot_draws_or_refuses_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    path = _written(tmp_path, name)
    assert closure_main(["plot", str(path), "-o", str(tmp_path / "t.svg")]) in (0, 1)
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
