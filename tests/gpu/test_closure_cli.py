"""``rlsys closure``'s edges: help that states each command's exit codes, a missing output
folder refused as the other commands refuse it (exit 3, never created), and an install hint
that names what the package index has."""

from __future__ import annotations

from collections.abc import Callable
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
    """The codes of an exit-code block (a wrapped meaning's continuation lines skipped)."""
    return {int(line.split()[0]) for line in text.splitlines() if line[2:3].isdigit()}


def test_each_help_lists_the_codes_that_command_can_exit_with(
    capsys: pytest.CaptureFixture[str],
) -> None:
    top = _help(capsys)
    assert _codes(top) == {*pf.EXIT_CODES, 130}
    assert "  5   run: failed mid-way" in top
    plot = _help(capsys, "plot")
    assert _codes(plot) == {0, 1, 2, 3, 130}
    assert "matplotlib is not installed, or OUTPUT's folder does not exist" in plot
    assert "model cache" not in plot  # preflight's meanings are not plot's
    assert _codes(_help(capsys, "preflight")) == {0, 2, 3, 4, 130}


def _returned(*functions: Callable[..., object]) -> set[int]:
    """The exit codes these functions return, read from their source by name (pf.EXIT_*,
    plot's _EXIT_*), so that a help's list is held to the code, not to another list."""
    import inspect
    import re

    from rlsys_closure import plot

    names = set()
    for function in functions:
        names |= set(re.findall(r"\b_?EXIT_[A-Z_]+\b", inspect.getsource(function)))
    codes = {getattr(pf, n, None) if not n.startswith("_") else getattr(plot, n) for n in names}
    codes.discard(None)
    return {int(c) for c in codes if isinstance(c, int)}


def test_every_closure_command_says_what_it_does_and_its_true_exit_codes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Trial 5, O4: summary and tiny-model had no description and no exit codes, and the
    top-level help cited a SPEC section no user has."""
    from rlsys_closure import plot, runner

    # Besides what each function returns: argparse's 2 and main's 130 (Ctrl-C).
    returns = {
        "preflight": _returned(cli.cmd_preflight, pf.exit_code),
        "run": _returned(cli.cmd_run, runner.run, runner._preflight, runner._finish, pf.exit_code),
        "summary": _returned(cli.cmd_summary),
        "plot": _returned(cli.cmd_plot, plot.plot_main),
        "tiny-model": _returned(cli.cmd_tiny_model),
    }
    # summary returns 2 itself too: an input FILE that is not there (rlsys's one rule).
    assert returns["summary"] == {0, 1, 2} and returns["tiny-model"] == {0, 1, 3}
    parser = cli.build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a.choices, dict)]
    assert set(returns) == set(sub.choices)
    for command, codes in returns.items():
        assert cli.main([command, "--help"]) == 0
        text = capsys.readouterr().out
        head, _, block = text.partition("exit codes:\n")
        assert _codes(block) == codes | {2, 130}, command
        description = head.split("\n\n")[1]
        assert not description.startswith(("positional", "options")), command
        assert len(description.split()) >= 12, (command, description)
        for action in sub.choices[command]._actions:
            assert action.help, (command, action.dest)  # every argument and option says
    top = _help(capsys)
    assert "SPEC" not in top and _codes(top) == set().union(*returns.values()) | {2, 130}


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
