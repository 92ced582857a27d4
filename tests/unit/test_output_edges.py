"""Escaping by construction: no module writes text but through the two edges.

Every text a command writes passes ``escaping.say`` (the terminal) or
``outputs.files.write_atomic`` (every file), which apply the one escaping rule.  This test
walks the package's syntax tree (and the closure's, ``gpu/rlsys_closure``) and fails on
any other way of writing text: ``print``, a ``.write``/``.write_text``/``.write_line``
call, or ``open`` in a text writing mode.  What remains outside the edges is listed below,
each with why it is not a text a command shows (or is built clean before it gets there).
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EDGES = {"pytest_rlsys/escaping.py", "pytest_rlsys/outputs/files.py"}
WRITES = {"write", "write_text", "write_line", "write_sep", "writelines", "print"}

# (file, call) -> how many such calls, and why they may write without the edge.
_VERL = "runs in verl's interpreter, where pytest_rlsys is not importable"
_RECORD = "ASCII JSON (json.dumps' default): exact values, nothing a terminal acts on"
_STEP_SUMMARY = "$GITHUB_STEP_SUMMARY: Markdown, a reason escaped (reports._md)"
_KIT_FILES = "the kits' platform files: JSON, numbers, Markdown with reasons escaped"
_C50 = "standard library only (before the install): our own words and the seed's digits"
EXCEPTIONS: dict[tuple[str, str], tuple[int, str]] = {
    ("gpu/rlsys_closure/assemble.py", "open('w')"): (1, _RECORD),
    ("gpu/rlsys_closure/assemble.py", "open('x')"): (1, _RECORD),
    ("gpu/rlsys_closure/assemble.py", "write"): (2, _RECORD),
    ("gpu/rlsys_closure/driver.py", "write"): (5, _VERL + "; its log"),
    ("gpu/rlsys_closure/group_record.py", "write_text"): (1, _VERL + "; " + _RECORD),
    ("gpu/rlsys_closure/gpu_probe.py", "write"): (1, _VERL + "; " + _RECORD),
    ("gpu/rlsys_closure/gpu_probe.py", "write_text"): (1, "a Triton kernel's source, ASCII"),
    ("gpu/rlsys_closure/machine_probes.py", "write_text"): (1, "a C probe's source, ASCII"),
    ("gpu/rlsys_closure/sample_child.py", "open('x')"): (1, _VERL + "; " + _RECORD),
    ("gpu/rlsys_closure/sample_child.py", "write"): (1, _VERL + "; " + _RECORD),
    ("gpu/rlsys_closure/runner.py", "open('a')"): (1, "the group's log: the runner's own words"),
    ("gpu/rlsys_closure/runner.py", "open('w')"): (1, _RECORD),
    ("gpu/rlsys_closure/runner.py", "write"): (5, "the group's log (4); " + _RECORD + " (1)"),
    ("gpu/rlsys_closure/runner.py", "write_text"): (1, _RECORD),
    ("gpu/rlsys_closure/tiny_model.py", "write_text"): (1, _RECORD),
    ("pytest_rlsys/cli/commands.py", "write_text"): (1, "rlsys template: the packaged file"),
    ("pytest_rlsys/outputs/kits/__init__.py", "write_text"): (1, "a kit's packaged files"),
    ("pytest_rlsys/similarity/analyse.py", "write"): (2, "the analysis child's pipe: data"),
    ("pytest_rlsys/outputs/kits/reports.py", "open('a')"): (1, _STEP_SUMMARY),
    ("pytest_rlsys/outputs/kits/reports.py", "write"): (1, _STEP_SUMMARY),
    ("pytest_rlsys/outputs/kits/reports.py", "write_text"): (4, _KIT_FILES),
    # Classroom 50's entrypoint runs in the runner's Python, where rlsys is not installed
    # yet: the stop-commands lines and a private copy of the seed (digits).
    ("pytest_rlsys/outputs/kits/scripts/classroom50-autograder.py", "print"): (3, _C50),
    ("pytest_rlsys/outputs/kits/scripts/classroom50-autograder.py", "fdopen('w')"): (1, _C50),
    ("pytest_rlsys/outputs/kits/scripts/classroom50-autograder.py", "write"): (1, _C50),
    # pytest's terminal reporter: every line is built by outputs' terminal text, or
    # cleaned with escaping.clean where it is written.
    ("pytest_rlsys/plugin/run.py", "write_line"): (1, "pytest's terminal: the session's lines"),
}


def _mode(call: ast.Call, index: int) -> str:
    args = [*call.args[index : index + 1], *(k.value for k in call.keywords if k.arg == "mode")]
    value = args[0] if args else None
    return value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else "r"


def _writes(tree: ast.AST) -> list[str]:
    """The text-writing calls in ``tree``, by name."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        on_os = isinstance(func, ast.Attribute) and getattr(func.value, "id", "") == "os"
        if name in WRITES and not on_os:  # os.write: bytes to a pipe, never text
            found.append(name)
        elif name in ("open", "fdopen"):
            # open(path, mode) / os.fdopen(fd, mode) / Path.open(mode)
            index = 0 if isinstance(func, ast.Attribute) and name == "open" else 1
            if on_os:
                index = 1
            mode = _mode(node, index)
            if set(mode) & set("wax+") and "b" not in mode:
                found.append(f"{name}({mode!r})")
    return found


def _package_writes() -> Counter[tuple[str, str]]:
    files = [*ROOT.glob("pytest_rlsys/**/*.py"), *ROOT.glob("gpu/rlsys_closure/*.py")]
    seen: Counter[tuple[str, str]] = Counter()
    for path in files:
        rel = path.relative_to(ROOT).as_posix()
        if rel in EDGES:
            continue
        for name in _writes(ast.parse(path.read_text(encoding="utf-8"))):
            seen[(rel, name)] += 1
    return seen


def test_no_text_is_written_outside_the_edges() -> None:
    seen = _package_writes()
    unexplained = {k: n for k, n in seen.items() if n != EXCEPTIONS.get(k, (0, ""))[0]}
    assert not unexplained, (
        "text written outside escaping.say / outputs.files.write_atomic (use them, or list "
        f"the call in EXCEPTIONS with why): {unexplained}"
    )
    stale = set(EXCEPTIONS) - set(seen)
    assert not stale, f"EXCEPTIONS lists calls that are gone: {stale}"


def test_the_walk_finds_each_kind_of_write() -> None:
    source = (
        "print(x)\nsys.stdout.write(x)\np.write_text(x)\nopen(p, 'w')\nopen(p, mode='a')\n"
        "p.open('x')\nos.fdopen(fd, 'w')\nopen(p, 'wb')\nopen(p)\nos.open(p, flags)\n"
        "os.write(fd, data)\n"
    )
    assert _writes(ast.parse(source)) == [
        "print", "write", "write_text", "open('w')", "open('a')", "open('x')", "fdopen('w')",
    ]  # fmt: skip
