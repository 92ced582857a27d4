"""pytest does not rewrite the assertions of the harness's own modules (plugin/norewrite.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pytest_rlsys.plugin.norewrite import stop_rewriting
from pytest_rlsys.resources import schema_dir

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = schema_dir() / "examples" / "pt-verl-closure.example.json"

# Registered before the rlsys plugin; marks both packages the way pytest marks
# every package of an installed (non-editable) pytest11 distribution, then
# reports which of them pytest's import hook loaded.
PROBE = """
import sys

def pytest_addoption(parser, pluginmanager):
    pluginmanager.rewrite_hook.mark_rewrite("pytest_rlsys", "rlsys_closure")

def pytest_unconfigure(config):
    from _pytest.assertion.rewrite import AssertionRewritingHook
    ours = sorted(n for n in sys.modules if n.split(".")[0] in ("pytest_rlsys", "rlsys_closure"))
    hooked = [n for n in ours if isinstance(sys.modules[n].__loader__, AssertionRewritingHook)]
    print("LOADED:", *ours)
    print("REWRITTEN:", *hooked)
"""


def _run(tmp_path: Path, *args: str) -> dict[str, list[str]]:
    (tmp_path / "rlsys_probe.py").write_text(PROBE, encoding="utf-8")
    env = dict(
        os.environ,
        PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
        PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT), str(ROOT / "gpu")]),
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "rlsys_probe", *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    found = {}
    for line in done.stdout.splitlines():
        key, sep, rest = line.partition(":")
        if sep and key in ("LOADED", "REWRITTEN"):
            found[key] = rest.split()
    return found


def test_grading_modules_are_not_rewritten(tmp_path: Path) -> None:
    found = _run(tmp_path, "-p", "pytest_rlsys.plugin", "--rlsys-result", str(EXAMPLE))
    # The grading run did import the result-file path...
    assert {"pytest_rlsys.plugin.run", "pytest_rlsys.resultfile.loading"} <= set(found["LOADED"])
    # ...and pytest rewrote none of it: only what the plugin module imports
    # before its first hook runs went through pytest's hook.
    assert set(found["REWRITTEN"]) <= {
        "pytest_rlsys",
        "pytest_rlsys.plugin",
        "pytest_rlsys.plugin.norewrite",
        "pytest_rlsys.settings",
        "pytest_rlsys.option_values",  # the settings table's value parsers
    }


def test_stop_rewriting_unmarks_only_own_packages() -> None:
    class Hook:
        def __init__(self) -> None:
            self._must_rewrite = {"pytest_rlsys", "rlsys_closure.cli", "pytest_rlsys_x", "other"}
            self._marked_for_rewrite_cache = {"pytest_rlsys.plugin.run": True, "other.x": True}

    class Manager:
        rewrite_hook = Hook()

    manager = Manager()
    assert stop_rewriting(manager) == ["pytest_rlsys", "rlsys_closure.cli"]
    assert manager.rewrite_hook._must_rewrite == {"pytest_rlsys_x", "other"}
    assert manager.rewrite_hook._marked_for_rewrite_cache == {"other.x": True}
    # A pytest without these attributes: nothing to do, no error.
    assert stop_rewriting(object()) == []
