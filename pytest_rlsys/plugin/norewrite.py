"""Keep pytest from rewriting the assertions of this distribution's own modules.

pytest marks every top-level package of a ``pytest11`` distribution for
assertion rewriting (``pytest_rlsys`` and ``rlsys_closure`` here), so each
module the grading run imports is read, parsed, rewritten and compiled from
source by pytest's import hook instead of loading the interpreter's cached
bytecode. Where pytest cannot write its own cache (a read-only install,
``PYTHONDONTWRITEBYTECODE``) that happens on every run. The harness's modules
hold no test assertions to report on, so the rewriting buys nothing.

A ``PYTEST_DONT_REWRITE`` docstring does not avoid the cost: pytest parses and
compiles the module before it reads the docstring. Unmarking the packages
does: pytest's hook then hands them to the normal import system. Measured in
``benchmarks/bench_grading.py`` (``--wheel``).

The plugin calls this first thing in its ``pytest_addoption``, the first hook
pytest calls on a plugin as it is registered, before any other module of ours
is imported (the option help texts import the records that hold the defaults). The marks live in
private attributes of pytest's hook; if a later pytest renames them, this does
nothing and pytest simply keeps rewriting.
"""

from __future__ import annotations

from typing import Any

__all__ = ["OWN_PACKAGES", "stop_rewriting"]

OWN_PACKAGES = ("pytest_rlsys", "rlsys_closure")


def _own(name: str) -> bool:
    return any(name == top or name.startswith(top + ".") for top in OWN_PACKAGES)


def stop_rewriting(pluginmanager: Any) -> list[str]:
    """Unmark this distribution's packages in pytest's rewrite hook; return the names unmarked."""
    hook = getattr(pluginmanager, "rewrite_hook", None)
    marked = getattr(hook, "_must_rewrite", None)
    if not isinstance(marked, set):
        return []
    ours = sorted(name for name in marked if isinstance(name, str) and _own(name))
    marked.difference_update(ours)
    cache = getattr(hook, "_marked_for_rewrite_cache", None)
    if isinstance(cache, dict):
        for name in [name for name in cache if _own(name)]:
            del cache[name]
    return ours
