"""``rlsys closure``'s edges: help that states each command's exit codes, a missing output
folder refused as the other commands refuse it (exit 3, never created), and an install hint
that names what the package index has."""

from __future__ import annotations

from pathlib import Path

import pytest
from rlsys_closure import cli
from rlsys_closure import preflight as pf
from rlsys_closure.plot import PLOT_INSTALL_HINT

EXAMPLE = Path(__file__).resolve().parents[2] / "schemas" / "examples"


def _help(capsys: pytest.CaptureFixture[str], *command: str) -> str:
    assert cli.main([*command, "--help"]) == 0
    return capsys.readouterr().out.split("exit codes:\n", 1)[1]


def _codes(text: str) -> set[int]:
    return {int(line.split()[0]) for line in text.splitlines() if line.startswith("  ")}


def test_each_help_lists_the_codes_that_command_can_exit_with(
    capsys: pytest.CaptureFixture[str],
) -> None:
    top = _help(capsys)
    assert _codes(top) == {*pf.EXIT_CODES, 130}
    assert "  5   run: failed mid-way" in top
    plot = _help(capsys, "plot")
    assert _codes(plot) == {0, 1, 2, 3}
    assert "matplotlib is not installed, or OUTPUT's folder does not exist" in plot
    assert "model cache" not in plot  # preflight's meanings are not plot's
    assert _codes(_help(capsys, "preflight")) == {0, 2, 3, 4}


@pytest.mark.parametrize("output", ["missing/t.png", "missing/"])
def test_plot_into_a_missing_folder_says_so_and_exits_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], output: str
) -> None:
    example = next(EXAMPLE.glob("*.json"))
    target = f"{tmp_path}/{output}"
    assert cli.main(["plot", str(example), "-o", target]) == pf.EXIT_NOT_READY
    err = capsys.readouterr().err
    assert err.startswith("plot: -o ") and "does not exist; create it first" in err
    assert "matplotlib" not in err and "Traceback" not in err
    assert not (tmp_path / "missing").exists()


def test_plot_into_an_existing_folder_asks_for_a_file_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    example = next(EXAMPLE.glob("*.json"))
    assert cli.main(["plot", str(example), "-o", f"{tmp_path}/"]) == pf.EXIT_USAGE
    assert "is a folder; name the picture" in capsys.readouterr().err


def test_preflight_json_into_a_missing_folder_is_refused_not_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "missing" / "pf.json"
    assert cli.main(["preflight", "--json", str(target)]) == pf.EXIT_NOT_READY
    err = capsys.readouterr().err
    assert f"folder {target.parent} does not exist; create it first" in err
    assert not target.parent.exists()


def test_the_matplotlib_hint_names_a_package_the_index_has() -> None:
    assert "pip install matplotlib" in PLOT_INSTALL_HINT
    assert "pytest-rlsys[plot]" not in PLOT_INSTALL_HINT  # not on the index yet
