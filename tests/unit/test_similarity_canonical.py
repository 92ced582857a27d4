"""The similarity report's canonical form (pytest_rlsys/similarity_canonical.py, rules in
docs/similarity.md): for each rule, two spellings of one computation print the same, and a
near miss that computes something else stays different."""

from __future__ import annotations

import ast

import pytest

from pytest_rlsys.similarity.canonical import canonical


def canon(source: str) -> str:
    return ast.unparse(canonical(ast.parse(source)))


# (rule, a spelling, the canonical spelling, a near miss that must not become the latter)
RULES = [
    (
        "import-alias",
        "import math as m\nok = m.isfinite(x)",
        "ok = math.isfinite(x)",
        "import numpy as m\nok = m.isfinite(x)",
    ),
    (
        "from-import",
        "def f(x):\n    from math import isclose\n    return isclose(x, 1)",
        "import math\ndef f(x):\n    return math.isclose(x, 1)",
        "def f(x):\n    return isclose(x, 1)",
    ),
    (
        "helper-inlined",
        "def _bad(v):\n    return not math.isfinite(v)\nok = _bad(y)",
        "def _bad(v):\n    return not math.isfinite(v)\nok = not math.isfinite(y)",
        "def _bad(v):\n    return not math.isfinite(v)\nok = _bad(y, z)",
    ),
    ("tuple-assignment", "a, b = x, y", "a = x\nb = y", "a, b = b, a"),
    ("augmented", "x = y + x", "x += y", "x = y - x"),
    ("append", "xs += [e]", "xs.append(e)", "xs += [e, f]"),
    ("de-morgan", "ok = not (a and b)", "ok = not a or not b", "ok = not a and not b"),
    (
        "not-all",
        "bad = not all(x > 0 for x in xs)",
        "bad = any(x <= 0 for x in xs)",
        "bad = all(x <= 0 for x in xs)",
    ),
    ("flipped", "ok = 0 > x or a >= b > c", "ok = x < 0 or c < b <= a", "ok = 0 < x or c < b <= a"),
    (
        "operand-order",
        "t = b * (c + 1) * f(x)\nok = (n > 0 and x == '') or not y",
        "t = f(x) * b * (1 + c)\nok = not y or ('' == x and 0 < n)",
        "t = f(x) * b * (1 - c)\nok = not y or ('' == x and 0 < n)",
    ),
    ("len-zero", "empty = len(xs) == 0", "empty = not xs", "empty = len(xs) == 1"),
    (
        "if-not-swapped",
        "if not c:\n    a()\nelse:\n    b()",
        "if c:\n    b()\nelse:\n    a()",
        "if not c:\n    a()",
    ),
    (
        "ifexp-not-swapped",
        "v = [] if not xs else xs",
        "v = xs if xs else []",
        "v = [] if xs else xs",
    ),
    (
        "if-as-assignments",
        "if c:\n    x = 1\nelif d:\n    x = 2\nelse:\n    x = 3",
        "x = 1 if c else 2 if d else 3",
        "if c:\n    x = 1\nelse:\n    y = 3",
    ),
    ("true-if-false", "ok = True if c else False", "ok = c", "ok = True if c else None"),
    ("dict-keywords", "d = dict(a=1, b=x)", "d = {'a': 1, 'b': x}", "d = dict(e, b=x)"),
    ("dict-union", "d = row | {'a': 1}", "d = {**row, 'a': 1}", "d = row | other"),
    ("list-map", "ys = list(map(float, xs))", "ys = [float(_) for _ in xs]", "ys = map(float, xs)"),
    (
        "list-argument",
        "ys = sorted([x for x in xs if x])",
        "ys = sorted((x for x in xs if x))",
        "ys = list([x for x in xs if x])",
    ),
    (
        "while-index",
        "i = 0\nwhile i < len(xs):\n    x = xs[i]\n    i = i + 1\n    f(x)",
        "for x in xs:\n    f(x)",
        "i = 0\nwhile i < len(xs):\n    x = xs[i]\n    i = i + 1\n    f(x, i)",
    ),
    (
        "append-loop",
        "ys = []\nfor x in xs:\n    if c(x):\n        ys.append(g(x))",
        "ys = [g(x) for x in xs if c(x)]",
        "ys = [0]\nfor x in xs:\n    if c(x):\n        ys.append(g(x))",
    ),
    (
        "dict-loop",
        "d = {}\nfor k, v in xs.items():\n    d[k] = v * 2",
        "d = {k: v * 2 for k, v in xs.items()}",
        "d = {}\nfor k, v in xs.items():\n    d[v] = v * 2\n    f(d)",
    ),
    (
        "raise-loop",
        "for x in xs:\n    if x < 0:\n        raise ValueError(x)",
        "if any((x < 0 for x in xs)):\n    raise ValueError(x)",
        "for x in xs:\n    if x < 0:\n        log(x)\n        raise ValueError(x)",
    ),
    (
        "flag-loop",
        "for x in xs:\n    if x < 0:\n        bad = True\n        break",
        "bad = any(x < 0 for x in xs)",
        "for x in xs:\n    if x < 0:\n        bad = False\n        break",
    ),
    ("reassignment", "x = e\nx = sorted(x)", "x = sorted(e)", "x = e\nx = f(x, x)"),
]


@pytest.mark.parametrize(
    ("rule", "spelling", "same", "different"), RULES, ids=[r[0] for r in RULES]
)
def test_each_rule_prints_two_spellings_the_same_and_a_near_miss_differently(
    rule: str, spelling: str, same: str, different: str
) -> None:
    assert canon(spelling) == canon(same), rule
    assert canon(different) != canon(same), rule


def test_nested_helper_calls_cannot_multiply_a_file() -> None:
    # Each argument is put in as written, never inlined again: 60 nested calls of a helper
    # that reads its parameter twice would otherwise make 2**60 nodes.
    source = "def _d(x):\n    return x + x\ny = " + "_d(" * 60 + "1" + ")" * 60
    before = sum(1 for _ in ast.walk(ast.parse(source)))
    after = sum(1 for _ in ast.walk(canonical(ast.parse(source))))
    assert before < after <= 3 * before


def test_a_helper_that_reads_a_parameter_three_times_is_not_inlined() -> None:
    source = "def _t(x):\n    return x + x + x\ny = _t(big(1))"
    assert "y = _t(big(1))" in canon(source)
