"""Which optional parameters of the template's functions a submission's own definitions
lack: a fact of the submission's source alone (not of any input), said in the template's
names, so that a hidden case failing with a TypeError about a keyword can be explained
without naming anything the submission chose."""

from __future__ import annotations

import ast
import functools
import threading

from pytest_rlsys.messages import Said, said
from pytest_rlsys.resources import FUNCTIONS, exercise_path

__all__ = ["missing_parameters", "signature_notes"]


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


# How many wrappers, factories and forwards are followed to the function that runs.
MAX_HOPS = 8
Scope = dict[str, ast.AST]  # a name -> the def, lambda or value bound to it


def _bindings(body: list[ast.stmt]) -> Scope:
    """Names bound by the defs and simple assignments of ``body``; the last one wins."""
    scope: Scope = {}
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            scope[node.name] = node
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                scope[target.id] = node.value
    return scope


def _forwarded(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> ast.expr | None:
    """What a ``*args, **kwargs`` wrapper hands its arguments to, unchanged: the callee of
    a call in its body that passes ``*args`` and ``**kwargs`` on; None when none does."""
    args = node.args
    if args.vararg is None or args.kwarg is None:
        return None
    star, double = args.vararg.arg, args.kwarg.arg
    body = node.body if isinstance(node.body, list) else [node.body]
    for call in (n for part in body for n in ast.walk(part) if isinstance(n, ast.Call)):
        passes_star = any(
            isinstance(a, ast.Starred) and isinstance(a.value, ast.Name) and a.value.id == star
            for a in call.args
        )
        passes_double = any(
            k.arg is None and isinstance(k.value, ast.Name) and k.value.id == double
            for k in call.keywords
        )
        if passes_star and passes_double:
            return call.func
    return None


def _returned(node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.expr | None:
    """What a factory returns (its last ``return`` at its own level)."""
    found = None
    for statement in node.body:
        if isinstance(statement, ast.Return) and statement.value is not None:
            found = statement.value
    return found


def _signature(value: ast.AST | None, scope: Scope, hops: int = 0) -> ast.arguments | None:
    """The parameters of what runs when the function bound to ``value`` is called:
    through a ``*args, **kwargs`` forward, a factory's returned closure, a lambda or a
    name bound to one; None when that cannot be told from the source."""
    if value is None or hops > MAX_HOPS:
        return None
    if isinstance(value, ast.Name):
        return _signature(scope.get(value.id), scope, hops + 1)
    if isinstance(value, ast.Lambda):
        return value.args
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        factory = scope.get(value.func.id)  # f = make(): what make returns
        if isinstance(factory, ast.FunctionDef | ast.AsyncFunctionDef):
            inner = {**scope, **_bindings(factory.body)}
            return _signature(_returned(factory), inner, hops + 1)
        return None
    if isinstance(value, ast.FunctionDef | ast.AsyncFunctionDef):
        target = _forwarded(value)
        if target is not None:
            inner = {**scope, **_bindings(value.body)}
            return _signature(target, inner, hops + 1)
        return value.args
    return None


def missing_parameters(source: str) -> list[tuple[str, str]]:
    """(function, parameter) for each optional template parameter a function defined in
    ``source`` cannot take (no such name and no ``**kwargs`` that takes it), followed
    through wrappers and factories; [] when it does not parse."""
    try:
        tree = parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []  # the load error says what is wrong
    scope = _bindings(tree.body)
    found = []
    for name in FUNCTIONS:
        try:
            args = _signature(scope.get(name), scope)
        except RecursionError:
            args = None
        if args is None or args.kwarg is not None:
            continue
        names = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
        found += [(name, p) for p in _template_optional().get(name, ()) if p not in names]
    return found


def signature_notes(source: str) -> list[Said]:
    """One note per parameter ``missing_parameters`` finds, as the grader's own fact
    (worded in the output's language when shown)."""
    return [
        said("missing_parameter", func=function, param=parameter)
        for function, parameter in missing_parameters(source)
    ]
