"""The missing-parameter note (issue 42): found through closures, factories, lambdas and
``*args, **kwargs`` wrappers, and worded in the output's language."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_rlsys.grading.grader import grade_file
from pytest_rlsys.grading.signature import missing_parameters
from pytest_rlsys.outputs.terminal import terminal_summary
from pytest_rlsys.resources import solution_path

LACKS = [("evaluate_topology", "max_exposed_s_per_s")]
SHORT = (
    "capacity_report, memory_by_pool, memory_limits, transfer_report, version_sync_ok, recovery_ok"
)

SOURCES = {
    "plain": f"def evaluate_topology({SHORT}):\n    return {{}}\n",
    "wrapper": (
        f"def _impl({SHORT}):\n    return {{}}\n"
        "def evaluate_topology(*args, **kwargs):\n    return _impl(*args, **kwargs)\n"
    ),
    "closure": (
        "def make():\n"
        f"    def inner({SHORT}):\n        return {{}}\n"
        "    return inner\n"
        "evaluate_topology = make()\n"
    ),
    "closure_behind_a_wrapper": (
        "def make():\n"
        f"    def inner({SHORT}):\n        return {{}}\n"
        "    def outer(*a, **k):\n        return inner(*a, **k)\n"
        "    return outer\n"
        "evaluate_topology = make()\n"
    ),
    "lambda": f"evaluate_topology = lambda {SHORT}: {{}}\n",
    "alias": f"def _impl({SHORT}):\n    return {{}}\nevaluate_topology = _impl\n",
}
FINE = {
    "kwargs_taken": f"def evaluate_topology({SHORT}, **options):\n    return {{}}\n",
    "wrapper_of_a_full_impl": (
        f"def _impl({SHORT}, max_exposed_s_per_s=0.1):\n    return {{}}\n"
        "def evaluate_topology(*args, **kwargs):\n    return _impl(*args, **kwargs)\n"
    ),
    "unknown_factory": "import functools\nevaluate_topology = functools.partial(print)\n",
    "self_forwarding": "def evaluate_topology(*a, **k):\n    return evaluate_topology(*a, **k)\n",
}


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_a_lacking_parameter_is_found_however_the_function_is_built(name: str) -> None:
    assert missing_parameters(SOURCES[name]) == LACKS, name


@pytest.mark.parametrize("name", sorted(FINE))
def test_a_function_that_takes_the_parameter_or_cannot_be_told_gets_no_note(name: str) -> None:
    assert missing_parameters(FINE[name]) == [], name


def test_the_note_is_in_the_output_language(tmp_path: Path) -> None:
    source = solution_path().read_text(encoding="utf-8")
    source = source.replace("    max_exposed_s_per_s: float = 0.1,\n", "")
    source = source.replace(
        '    budget = _non_negative(max_exposed_s_per_s, "max_exposed_s_per_s")',
        "    budget = 0.1",
    )
    wrapped = source.replace("def evaluate_topology(", "def _evaluate(") + (
        "\ndef evaluate_topology(*args, **kwargs):\n    return _evaluate(*args, **kwargs)\n"
    )
    path = tmp_path / "rlsys_ledger.py"
    path.write_text(wrapped, encoding="utf-8")
    report = grade_file(path, seed=1)
    zh = "\n".join(terminal_summary(report, "zh", width=200))
    en = "\n".join(terminal_summary(report, "en", width=200))
    assert "evaluate_topology() 没有参数 max_exposed_s_per_s" in zh
    assert "lacks a parameter" not in zh
    assert "evaluate_topology() has no parameter max_exposed_s_per_s" in en
