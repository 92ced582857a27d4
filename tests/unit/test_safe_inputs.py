"""Files the user names on the command line are read by the safe-read rule
(docs/threat-model.md, "Inputs that made the grader fail"): `rlsys ledger FILE` and
`--rubric FILE` refuse a FIFO, a link to /dev/zero, a YAML alias bomb and a huge value
with one short line naming the file, and exit normally."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_rlsys.ledger import EDGE_NUMBERS

ROOT = Path(__file__).parents[2]
SOLUTION = ROOT / "solutions" / "rlsys_ledger.py"
# 600 bytes that PyYAML's safe loader expands to 9**9 items.
ALIAS_BOMB = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{c}: &{c} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n"
    for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)


def _bad_input(tmp_path: Path, kind: str, suffix: str) -> Path:
    path = tmp_path / f"input{suffix}"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "devzero":
        path.symlink_to("/dev/zero")
    elif kind == "alias_bomb":
        path.write_text(ALIAS_BOMB)
    elif kind == "huge_value":  # inside the cap, a value the error quotes
        path.write_text(json.dumps({"todo1": {"visible": [1] * 60_000}}))
    elif kind == "huge_number":  # a topology whose first edge has a list for a number
        topology = json.loads((ROOT / "examples" / "topology.json").read_text())
        edge = topology["edges"][0]
        edge[next(k for k in EDGE_NUMBERS if k in edge)] = [1] * 60_000
        path.write_text(json.dumps(topology))
    elif kind == "huge_file":
        path.write_text("[" + "1," * 3_000_000 + "1]")
    return path


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_rlsys", *argv],
        capture_output=True,
        text=True,
        timeout=120,  # a hang guard, not a measurement: the fix answers at once
        check=False,
    )


def _one_short_error(done: subprocess.CompletedProcess[str], path: Path) -> None:
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert str(path) in done.stderr
    assert all(len(line) < 1000 for line in done.stderr.splitlines())


@pytest.mark.parametrize(
    ("kind", "suffix", "said"),
    [
        ("fifo", ".json", "not a regular file"),
        ("devzero", ".json", "symbolic link"),
        ("alias_bomb", ".yaml", "aliases"),
        ("huge_number", ".json", "characters"),
        ("huge_file", ".json", "is over"),
    ],
)
def test_ledger_refuses_a_hostile_topology_in_one_line(
    tmp_path: Path, kind: str, suffix: str, said: str
) -> None:
    if kind == "alias_bomb":
        pytest.importorskip("yaml")
    path = _bad_input(tmp_path, kind, suffix)
    done = _run("ledger", str(path))
    _one_short_error(done, path)
    assert said in done.stderr


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("fifo", "not a regular file"),
        ("devzero", "symbolic link"),
        ("huge_value", "characters"),
        ("huge_file", "is over"),
    ],
)
def test_a_hostile_rubric_is_refused_in_one_line(tmp_path: Path, kind: str, said: str) -> None:
    path = _bad_input(tmp_path, kind, ".json")
    done = _run("grade", str(SOLUTION), "--rubric", str(path))
    _one_short_error(done, path)
    assert said in done.stderr


def test_a_rubric_nested_past_the_parser_s_stack_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    done = _run("grade", str(SOLUTION), "--rubric", str(path))
    _one_short_error(done, path)


@pytest.mark.parametrize(
    "text",
    [
        "[todo1]\nvisible = 1e308\n",  # summed to infinity: OverflowError and a traceback
        '[weights]\n"todo1.visible.effective_rates" = 1e308\n',
        "[todo1]\nvisible = 1e17\n",  # 17-digit points on the Points line
        "[gpu_result]\nper_check = nan\n",
    ],
)
def test_a_rubric_number_out_of_range_is_refused_in_one_line(tmp_path: Path, text: str) -> None:
    path = tmp_path / "rubric.toml"
    path.write_text(text, encoding="utf-8")
    done = _run("grade", str(SOLUTION), "--rubric", str(path))
    _one_short_error(done, path)
    assert "must be a number from 0 to 1,000,000" in done.stderr
