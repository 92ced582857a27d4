"""Rewrites a module's syntax tree into one canonical form, so that the rewrites a disguiser
makes statement by statement (aliased imports, helpers, loop forms, flipped or swapped
operands, De Morgan, swapped branches) print the same as the code they disguise.

Only for fingerprinting (pytest_rlsys/similarity.py): the result is never run, so a rule may
ignore what only NaN or side effects would tell apart (``not a < b`` becomes ``a >= b``).
Each rule and why: docs/similarity.md, "Canonical form".
"""

from __future__ import annotations

import ast
import builtins
import copy
from collections import Counter
from collections.abc import Callable

_NEGATED: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.GtE,
    ast.LtE: ast.Gt,
    ast.Gt: ast.LtE,
    ast.GtE: ast.Lt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_FUNCTION = (ast.FunctionDef, ast.AsyncFunctionDef)
_FLIPPED: dict[type[ast.cmpop], type[ast.cmpop]] = {ast.Gt: ast.Lt, ast.GtE: ast.LtE}
_BUILTINS = frozenset(dir(builtins))
_BODIES = ("body", "orelse", "finalbody")
# The most nodes a helper may have to be inlined (``not math.isfinite(x)`` has 6).
_SMALL = 40


def canonical(tree: ast.Module) -> ast.Module:
    """``tree`` in canonical form (rewritten in place and returned)."""
    aliases = _imported_names(tree)
    _inline_helpers(tree)
    tree = _Expressions(aliases).visit(tree)
    _walk_blocks(tree, _canonical_block)
    # once more: the block rules make expressions the first pass has not seen
    done: ast.Module = _Expressions({}).visit(tree)
    return done


def _name(node: ast.AST) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


def _loads(tree: ast.AST) -> Counter[str]:
    return Counter(
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    )


def _replace_names(tree: ast.AST, values: dict[str, ast.expr]) -> ast.AST:
    """``tree`` with each loaded name in ``values`` replaced by a copy of its expression."""

    class Replace(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.expr:
            if isinstance(node.ctx, ast.Load) and node.id in values:
                return copy.deepcopy(values[node.id])
            return node

    replaced: ast.AST = Replace().visit(tree)
    return replaced


def _walk_blocks(node: ast.AST, rewrite: Callable[[list[ast.stmt]], list[ast.stmt]]) -> None:
    """Applies ``rewrite`` to every statement list, innermost first (only statements hold
    statements, so expressions are never walked)."""
    for field in (*_BODIES, "handlers", "cases"):
        block = getattr(node, field, None)
        if not isinstance(block, list):
            continue
        for child in block:
            _walk_blocks(child, rewrite)
        if block and isinstance(block[0], ast.stmt):
            kept = rewrite(block)
            setattr(node, field, kept or ([ast.Pass()] if field == "body" else []))


def _all_statements(node: ast.AST) -> list[ast.AST]:
    """Every statement under ``node`` (and its except and case clauses)."""
    out: list[ast.AST] = []
    stack = [node]
    while stack:
        here = stack.pop()
        out.append(here)
        for field in (*_BODIES, "handlers", "cases"):
            block = getattr(here, field, None)
            if isinstance(block, list):
                stack += block
    return out


def _imported_names(tree: ast.Module) -> dict[str, ast.expr]:
    """What each imported name stands for: ``import math as m`` makes ``m`` ``math``, ``from
    math import isclose`` makes ``isclose`` ``math.isclose`` (where the import sits does not
    matter; the statements themselves go in _canonical_block)."""
    aliases: dict[str, ast.expr] = {}
    for node in _all_statements(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = ast.parse(alias.name, mode="eval").body
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name != "*":
                    full = ast.parse(f"{node.module}.{alias.name}", mode="eval").body
                    aliases[alias.asname or alias.name] = full
    return aliases


def _single_return(node: ast.stmt) -> tuple[list[str], ast.expr] | None:
    """A small function that is one ``return expr`` over plain positional parameters, each
    read at most twice (so inlining it can never make a file more than a few times larger)."""
    if not isinstance(node, _FUNCTION) or node.decorator_list:
        return None
    args = node.args
    body = [s for s in node.body if not is_docstring(s)]
    if args.vararg or args.kwarg or args.kwonlyargs or args.defaults or args.posonlyargs:
        return None
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return None
    reads = _loads(body[0].value)
    if sum(1 for _ in ast.walk(body[0].value)) > _SMALL or any(reads[a.arg] > 2 for a in args.args):
        return None
    return [a.arg for a in args.args], body[0].value


def is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)


def _inline_helpers(tree: ast.Module) -> None:
    """A call to a small helper that is a single ``return expr`` becomes that expression with
    the arguments in place of the parameters (``_bad(x)`` is ``not math.isfinite(x)``).  The
    arguments and the body put in are not inlined again: nested calls cannot multiply."""
    helpers = {
        node.name: found
        for node in _all_statements(tree)
        if isinstance(node, _FUNCTION) and (found := _single_return(node))
    }

    class Inline(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            helper = helpers.get(_name(node.func) or "")
            if (
                helper is None
                or node.keywords
                or len(node.args) != len(helper[0])
                or any(isinstance(a, ast.Starred) for a in node.args)
            ):
                return self.generic_visit(node)
            body = copy.deepcopy(helper[1])
            return _replace_names(body, dict(zip(helper[0], node.args, strict=True)))

    if helpers:
        Inline().visit(tree)


def _split_tuple_assignments(block: list[ast.stmt]) -> list[ast.stmt]:
    """``a, b = x, y`` is ``a = x`` then ``b = y`` when no name of the left is read on the
    right."""
    out: list[ast.stmt] = []
    for stmt in block:
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Tuple)
            and isinstance(stmt.value, ast.Tuple)
            and len(stmt.targets[0].elts) == len(stmt.value.elts)
            and all(_name(t) for t in stmt.targets[0].elts)
            and not {_name(t) for t in stmt.targets[0].elts} & set(_loads(stmt.value))
        ):
            out += [
                ast.Assign(targets=[t], value=v, lineno=stmt.lineno)
                for t, v in zip(stmt.targets[0].elts, stmt.value.elts, strict=True)
            ]
        else:
            out.append(stmt)
    return out


def _negate(node: ast.expr) -> ast.expr:
    """``not node`` with the ``not`` pushed inwards (De Morgan, negated comparisons)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return node.operand
    if isinstance(node, ast.BoolOp):
        op: ast.boolop = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        return _ordered(ast.BoolOp(op=op, values=[_negate(v) for v in node.values]))
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        negated = ast.Compare(node.left, [_NEGATED[type(node.ops[0])]()], node.comparators)
        return _ordered(_flip(negated))
    quantifier = _quantifier(node)
    if quantifier and isinstance(node, ast.Call):
        generator = node.args[0]
        assert isinstance(generator, ast.GeneratorExp)
        other = "any" if quantifier == "all" else "all"
        inner = ast.GeneratorExp(_negate(generator.elt), generator.generators)
        return ast.Call(ast.Name(other, ast.Load()), [inner], [])
    return ast.UnaryOp(ast.Not(), node)


def _quantifier(node: ast.expr) -> str | None:
    if (
        isinstance(node, ast.Call)
        and _name(node.func) in {"any", "all"}
        and len(node.args) == 1
        and isinstance(node.args[0], ast.GeneratorExp)
        and not node.keywords
    ):
        return _name(node.func)
    return None


def _flip(node: ast.Compare) -> ast.Compare:
    """``a > b`` is ``b < a`` (a chain too, when every link points the same way)."""
    if all(type(op) in _FLIPPED for op in node.ops):
        terms = [node.left, *node.comparators][::-1]
        ops: list[ast.cmpop] = [_FLIPPED[type(op)]() for op in node.ops[::-1]]
        return ast.Compare(terms[0], ops, terms[1:])
    return node


def _shape(node: ast.AST) -> str:
    """``node`` as the fingerprints see it (names and literals anonymous): the order in which
    commutative operands are put, so swapping them changes nothing."""
    if isinstance(node, ast.Name):
        return node.id if node.id in _BUILTINS else "V"
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or node.value is None:
            return repr(node.value)
        return "S" if isinstance(node.value, str | bytes) else "N"
    if isinstance(node, ast.JoinedStr):
        return "S"
    if isinstance(node, ast.Attribute):
        return f"{_shape(node.value)}.{node.attr}"
    inner = ",".join(_shape(child) for child in ast.iter_child_nodes(node))
    return f"{type(node).__name__}({inner})"


def _operands(node: ast.expr, op: type[ast.operator]) -> list[ast.expr]:
    """The terms of a chain of one operator (``a + b + c``), left to right, without recursion
    (a hostile chain may be thousands long)."""
    out: list[ast.expr] = []
    stack = [node]
    while stack:
        term = stack.pop()
        if isinstance(term, ast.BinOp) and isinstance(term.op, op):
            stack += [term.right, term.left]
        else:
            out.append(term)
    return out


def _ordered(node: ast.expr) -> ast.expr:
    """The operands of ``and``, ``or``, ``==`` and ``!=`` in one order (``+`` and ``*``:
    _Expressions.visit_BinOp); evaluation order and short-circuits are ignored."""
    if isinstance(node, ast.BoolOp):
        node.values.sort(key=_shape)
    elif (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], ast.Eq | ast.NotEq)
    ):
        left, right = sorted((node.left, node.comparators[0]), key=_shape)
        node.left, node.comparators = left, [right]
    return node


def _is_len_zero(node: ast.expr) -> ast.expr | None:
    """``len(x) == 0`` (or ``0 == len(x)``): its ``x``."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
        return None
    if not isinstance(node.ops[0], ast.Eq):
        return None
    for call, zero in ((node.left, node.comparators[0]), (node.comparators[0], node.left)):
        if (
            isinstance(call, ast.Call)
            and _name(call.func) == "len"
            and len(call.args) == 1
            and isinstance(zero, ast.Constant)
            and zero.value == 0
        ):
            return call.args[0]
    return None


class _Expressions(ast.NodeTransformer):
    """Expression rules, innermost first; ``aliases``: _imported_names."""

    def __init__(self, aliases: dict[str, ast.expr]) -> None:
        self.aliases = aliases

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if isinstance(node.ctx, ast.Load) and node.id in self.aliases:
            return copy.deepcopy(self.aliases[node.id])
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        self.generic_visit(node)
        empty = _is_len_zero(node)
        return _negate(empty) if empty is not None else _ordered(_flip(node))

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        self.generic_visit(node)
        return _negate(node.operand) if isinstance(node.op, ast.Not) else node

    def visit_IfExp(self, node: ast.IfExp) -> ast.expr:
        self.generic_visit(node)
        yes, no = (
            v.value if isinstance(v, ast.Constant) else None for v in (node.body, node.orelse)
        )
        if yes is True and no is False:  # ``True if c else False`` is ``c``
            return node.test
        if yes is False and no is True:
            return _negate(node.test)
        if isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not):
            return ast.IfExp(node.test.operand, node.orelse, node.body)
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.expr:
        self.generic_visit(node)
        return _ordered(node)

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        if isinstance(node.op, ast.Add | ast.Mult):
            # a chain of ``+`` or ``*`` at once, its terms in one order: ``b * a + c`` is
            # ``c + a * b`` (``str + str`` is ignored)
            op = type(node.op)
            terms: list[ast.expr] = [self.visit(term) for term in _operands(node, op)]
            terms.sort(key=_shape)
            chain = terms[0]
            for term in terms[1:]:
                chain = ast.BinOp(chain, op(), term)
            return chain
        self.generic_visit(node)
        if isinstance(node.op, ast.BitOr) and isinstance(node.right, ast.Dict):
            # ``row | {...}`` is ``{**row, ...}``
            return ast.Dict([None, *node.right.keys], [node.left, *node.right.values])
        return node

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        func = _name(node.func)
        if func == "dict" and not node.args and all(k.arg for k in node.keywords):
            # ``dict(a=1)`` is ``{'a': 1}``
            keys: list[ast.expr | None] = [ast.Constant(k.arg) for k in node.keywords]
            return ast.Dict(keys, [k.value for k in node.keywords])
        if func == "list" and not node.args and not node.keywords:
            return ast.List([], ast.Load())
        if (
            func == "list"
            and len(node.args) == 1
            and isinstance(call := node.args[0], ast.Call)
            and _name(call.func) == "map"
            and len(call.args) == 2
            and not call.keywords
        ):
            # ``list(map(f, xs))`` is ``[f(_) for _ in xs]``
            item = ast.Name("_", ast.Load())
            loop = ast.comprehension(ast.Name("_", ast.Store()), call.args[1], [], 0)
            return ast.ListComp(ast.Call(call.args[0], [item], []), [loop])
        if len(node.args) == 1 and isinstance(node.args[0], ast.ListComp) and func != "list":
            # ``sorted([x for ...])`` is ``sorted(x for ...)``
            comp = node.args[0]
            node.args = [ast.GeneratorExp(comp.elt, comp.generators)]
        return node


def _canonical_block(block: list[ast.stmt]) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for stmt in _split_tuple_assignments(block):
        if not isinstance(stmt, ast.Import | ast.ImportFrom):  # _imported_names read them
            out += _canonical_statement(stmt)
    return _merge_loops(out)


def _canonical_statement(stmt: ast.stmt) -> list[ast.stmt]:
    if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.BinOp):
        stmt = _augmented(stmt, stmt.value)
    if (
        isinstance(stmt, ast.AugAssign)
        and isinstance(stmt.op, ast.Add)
        and isinstance(stmt.value, ast.List)
        and len(stmt.value.elts) == 1
    ):
        # ``xs += [e]`` is ``xs.append(e)``
        append = ast.Attribute(copy.deepcopy(stmt.target), "append", ast.Load())
        return [ast.Expr(ast.Call(append, [stmt.value.elts[0]], []))]
    if isinstance(stmt, ast.If) and stmt.orelse:
        if isinstance(stmt.test, ast.UnaryOp) and isinstance(stmt.test.op, ast.Not):
            # ``if not c: A else: B`` is ``if c: B else: A``
            stmt = ast.If(stmt.test.operand, stmt.orelse, stmt.body)
        return _if_as_assignments(stmt) or [stmt]
    if isinstance(stmt, ast.For):
        return [_loop_as_any(stmt) or stmt]
    return [stmt]


def _augmented(stmt: ast.Assign, value: ast.BinOp) -> ast.stmt:
    """``x = x + y`` is ``x += y`` (and ``x = y + x``: the operands were put in order)."""
    target = _name(stmt.targets[0]) if len(stmt.targets) == 1 else None
    op = type(value.op)
    terms = _operands(value, op) if op in (ast.Add, ast.Mult) else [value.left, value.right]
    names = [_name(term) for term in terms]
    if target is None or target not in (names if op in (ast.Add, ast.Mult) else names[:1]):
        return stmt
    del terms[names.index(target)]
    rest = terms[0]
    for term in terms[1:]:
        rest = ast.BinOp(rest, op(), term)
    return ast.AugAssign(ast.Name(target, ast.Store()), op(), rest)


def _assigned(block: list[ast.stmt]) -> list[str] | None:
    names = [
        _name(s.targets[0]) if isinstance(s, ast.Assign) and len(s.targets) == 1 else None
        for s in block
    ]
    return None if None in names else names  # type: ignore[return-value]


def _if_as_assignments(stmt: ast.If) -> list[ast.stmt] | None:
    """``if c: x = a else: x = b`` is ``x = a if c else b`` (an ``elif`` chain too, and any
    number of names assigned in the same order on both sides)."""
    names = _assigned(stmt.body)
    if not names or names != _assigned(stmt.orelse):
        return None
    return [
        ast.Assign(
            [ast.Name(name, ast.Store())], ast.IfExp(stmt.test, yes.value, no.value), lineno=0
        )
        for name, yes, no in zip(names, stmt.body, stmt.orelse, strict=True)
        if isinstance(yes, ast.Assign) and isinstance(no, ast.Assign)
    ]


def _loop_as_any(loop: ast.For) -> ast.stmt | None:
    """``for x in xs: if c: raise E`` is ``if any(c for x in xs): raise E``, and
    ``for x in xs: if c: found = True; break`` is ``found = any(c for x in xs)``."""
    if loop.orelse or len(loop.body) != 1:
        return None
    test = loop.body[0]
    if not isinstance(test, ast.If) or test.orelse:
        return None
    found = ast.Call(
        ast.Name("any", ast.Load()),
        [ast.GeneratorExp(test.test, [ast.comprehension(loop.target, loop.iter, [], 0)])],
        [],
    )
    then = [s for s in test.body if not isinstance(s, ast.Break)]
    if len(then) != 1:
        return None
    if isinstance(then[0], ast.Raise):
        return ast.If(found, then, [])
    if (
        isinstance(then[0], ast.Assign)
        and _name(then[0].targets[0])
        and isinstance(then[0].value, ast.Constant)
        and then[0].value.value is True
    ):
        return ast.Assign(then[0].targets, found, lineno=0)
    return None


def _is_constant(node: ast.AST, value: object) -> bool:
    return isinstance(node, ast.Constant) and node.value == value


def _counted(first: ast.stmt, loop: ast.stmt) -> tuple[str, ast.expr] | None:
    """(index, sequence) when ``first; loop`` is ``i = 0; while i < len(xs): ...``."""
    if not (isinstance(first, ast.Assign) and isinstance(loop, ast.While) and not loop.orelse):
        return None
    index, test = _name(first.targets[0]), loop.test
    if not (index and _is_constant(first.value, 0) and isinstance(test, ast.Compare)):
        return None
    if _name(test.left) != index or len(test.ops) != 1 or not isinstance(test.ops[0], ast.Lt):
        return None
    size = test.comparators[0]
    if not (isinstance(size, ast.Call) and _name(size.func) == "len" and len(size.args) == 1):
        return None
    return index, size.args[0]


def _while_as_for(first: ast.stmt, loop: ast.stmt) -> ast.For | None:
    """``i = 0; while i < len(xs): x = xs[i]; i += 1; ...`` is ``for x in xs: ...``."""
    counted = _counted(first, loop)
    if counted is None:
        return None
    assert isinstance(loop, ast.While)
    index, sequence = counted
    item: ast.expr | None = None
    rest: list[ast.stmt] = []
    for stmt in loop.body:
        if isinstance(stmt, ast.AugAssign) and _name(stmt.target) == index:
            if _is_constant(stmt.value, 1):
                continue
        elif item is None and isinstance(stmt, ast.Assign):
            value = stmt.value
            if (
                isinstance(value, ast.Subscript)
                and _name(value.slice) == index
                and ast.dump(value.value) == ast.dump(sequence)
            ):
                item = stmt.targets[0]
                continue
        rest.append(stmt)
    if item is None or _loads(ast.Module(rest, []))[index]:
        return None
    return ast.For(item, sequence, rest or [ast.Pass()], [], lineno=loop.lineno)


def _empty_collection(first: ast.stmt, loop: ast.stmt) -> str | None:
    """The name ``first`` binds to an empty list or dict, when ``loop`` is a plain ``for``
    of one statement."""
    if not (isinstance(first, ast.Assign) and isinstance(first.value, ast.List | ast.Dict)):
        return None
    empty = not getattr(first.value, "elts", None) and not getattr(first.value, "keys", None)
    plain = isinstance(loop, ast.For) and not loop.orelse and len(loop.body) == 1
    return _name(first.targets[0]) if empty and plain else None


def _appended(body: ast.stmt, target: str) -> ast.expr | None:
    """``e`` when ``body`` is ``target.append(e)``."""
    call = body.value if isinstance(body, ast.Expr) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
        return None
    if call.func.attr != "append" or _name(call.func.value) != target or len(call.args) != 1:
        return None
    return call.args[0]


def _as_comprehension(first: ast.stmt, loop: ast.stmt) -> ast.Assign | None:
    """``xs = []; for ...: [if c:] xs.append(e)`` is ``xs = [e for ... if c]``; the same for
    ``d = {}; for ...: d[k] = v`` and a dict comprehension."""
    target = _empty_collection(first, loop)
    if target is None:
        return None
    assert isinstance(first, ast.Assign) and isinstance(loop, ast.For)
    body, tests = loop.body[0], []
    while isinstance(body, ast.If) and not body.orelse and len(body.body) == 1:
        tests.append(body.test)
        body = body.body[0]
    generators = [ast.comprehension(loop.target, loop.iter, tests, 0)]
    element = _appended(body, target) if isinstance(first.value, ast.List) else None
    if element is not None:
        return ast.Assign([first.targets[0]], ast.ListComp(element, generators), lineno=0)
    if isinstance(first.value, ast.Dict) and (
        isinstance(body, ast.Assign)
        and isinstance(key := body.targets[0], ast.Subscript)
        and _name(key.value) == target
    ):
        return ast.Assign(
            [first.targets[0]], ast.DictComp(key.slice, body.value, generators), lineno=0
        )
    return None


def _merge_loops(block: list[ast.stmt]) -> list[ast.stmt]:
    """Loop rewrites that join two neighbouring statements, and ``x = e; x = f(x)`` with ``x``
    read once is ``x = f(e)``."""
    out: list[ast.stmt] = []
    for stmt in block:
        previous = out[-1] if out else None
        if previous is not None:
            merged: ast.stmt | None = _while_as_for(previous, stmt)
            if merged is not None:
                out[-1] = stmt = merged
                continue
            merged = _as_comprehension(previous, stmt)
            if merged is not None:
                out[-1] = merged
                continue
            if (
                isinstance(previous, ast.Assign)
                and isinstance(stmt, ast.Assign)
                and (name := _name(previous.targets[0]))
                and _name(stmt.targets[0]) == name
                and _loads(stmt.value)[name] == 1
            ):
                stmt.value = _replace_names(stmt.value, {name: previous.value})  # type: ignore[assignment]
                out[-1] = stmt
                continue
        out.append(stmt)
    return out
