"""Which optional parameters of the template's functions a submission's own definitions
lack: a fact of the submission's source alone (not of any input), said in the template's
names, so that a hidden case failing with a TypeError about a keyword can be explained
without naming anything the submission chose."""

from __future__ import annotations

import ast
import functools
import threading

from pytest_rlsys.resources import FUNCTIONS, exercise_path

__all__ = ["SIGNATURE_NOTE", "missing_parameters", "signature_notes"]

# The first words of each note (outputs show learners the notes that begin with them).
SIGNATURE_NOTE = "your function lacks a parameter of the template"


def _definitions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """The module's top-level functions by name; the last definition wins, as at import."""
    return {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in FUNCTIONS
    }


@functools.cache
def _template_optional() -> dict[str, tuple[str, ...]]:
    """Per function, the template's parameters a caller may pass by keyword alone: those
    with a default and the keyword-only ones."""
    tree = parse(exercise_path().read_text(encoding="utf-8"))
    optional = {}
    for name, node in _definitions(tree).items():
        args = node.args
        positional = [*args.posonlyargs, *args.args]
        with_default = positional[len(positional) - len(args.defaults) :]
        optional[name] = tuple(a.arg for a in [*with_default, *args.kwonlyargs])
    return optional


# CPython 3.11 keeps the AST conversion's recursion depth per interpreter, not per thread:
# two threads parsing at once (a batch's workers) can raise "SystemError: AST constructor
# recursion depth mismatch", which cost a correct file its row in a CI run.  Every parse
# a worker thread makes goes through this lock.
_PARSE_LOCK = threading.Lock()


def parse(source: str) -> ast.Module:
    """``ast.parse``, one thread at a time (see _PARSE_LOCK)."""
    with _PARSE_LOCK:
        return ast.parse(source)


def parse_expression(source: str) -> ast.Expression:
    """``ast.parse(source, mode="eval")``, one thread at a time (see _PARSE_LOCK)."""
    with _PARSE_LOCK:
        return ast.parse(source, mode="eval")


def missing_parameters(source: str) -> list[tuple[str, str]]:
    """(function, parameter) for each optional template parameter a function defined in
    ``source`` cannot take (no such name and no ``**kwargs``); [] when it does not parse."""
    try:
        tree = parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []  # the load error says what is wrong
    found = []
    for name, node in _definitions(tree).items():
        if node.args.kwarg is not None:
            continue
        names = {a.arg for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]}
        found += [(name, p) for p in _template_optional().get(name, ()) if p not in names]
    return found


def signature_notes(source: str) -> list[str]:
    """One note per parameter ``missing_parameters`` finds, in the grader's words."""
    return [
        f"{SIGNATURE_NOTE}: {function}() has no parameter {parameter}; a call that passes "
        "it raises TypeError"
        for function, parameter in missing_parameters(source)
    ]
