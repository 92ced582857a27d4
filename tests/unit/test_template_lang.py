"""``rlsys template --lang`` (issue 42): one language's prose, the same code."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pytest_rlsys.cli import ExitCode, main
from pytest_rlsys.cli.template import in_language
from pytest_rlsys.messages import has_cjk
from pytest_rlsys.resources import exercise_path

TEMPLATE = exercise_path().read_text(encoding="utf-8")


def _docstrings(text: str) -> list[str]:
    tree = ast.parse(text)
    nodes = [tree, *(n for n in tree.body if isinstance(n, ast.FunctionDef))]
    return [ast.get_docstring(n, clean=False) or "" for n in nodes]


def _code(text: str) -> str:
    tree = ast.parse(text)
    for node in [tree, *(n for n in tree.body if isinstance(n, ast.FunctionDef))]:
        node.body = node.body[1:]  # the docstring
    return ast.dump(tree)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_one_language_s_prose_and_the_same_code(lang: str) -> None:
    text = in_language(TEMPLATE, lang)
    assert _code(text) == _code(TEMPLATE)
    for doc in _docstrings(text):
        prose = [p for p in doc.split("\n\n") if p.strip() and not p.startswith("        ")]
        prose = [p for p in prose if "--rlsys-submission" not in p]
        assert prose and all(has_cjk(p) == (lang == "zh") for p in prose), prose
    assert "pytest --rlsys-submission rlsys_ledger.py" in text


def test_both_is_the_template_itself() -> None:
    assert in_language(TEMPLATE, "both") == TEMPLATE


def test_the_command_writes_it_and_says_so_in_that_language(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "mine.py"
    assert main(["template", "--lang", "zh", str(target)]) == ExitCode.OK
    assert "已写入" in capsys.readouterr().out
    assert "--rlsys-submission mine.py" in target.read_text("utf-8")
    assert not any(
        not has_cjk(p) and "PT-RL-SYSTEM" in p for p in _docstrings(target.read_text("utf-8"))
    )
