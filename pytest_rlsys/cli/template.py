"""``rlsys template --lang``: the learner template with its prose in one language.

The template's docstrings say every rule twice, English paragraphs then Chinese ones.
``--lang zh`` keeps the Chinese prose (and the code: the grading command, the
signatures, the TODO markers the chapter's skeleton keeps); ``--lang en`` the English.
Only docstring paragraphs are chosen, by whether they hold CJK text, so the code the
grader loads is the same in every language.
"""

from __future__ import annotations

import ast

from pytest_rlsys.messages import has_cjk

__all__ = ["LANGS", "in_language"]

LANGS = ("both", "en", "zh")


def _keep(paragraph: str, lang: str, base: int) -> bool:
    """Whether a docstring paragraph stays: code (every line indented past the prose's
    ``base`` indent, e.g. the grading command) always; prose when it is in ``lang``."""
    lines = [line for line in paragraph.splitlines() if line.strip()]
    if not lines or all(len(line) - len(line.lstrip()) >= base + 4 for line in lines):
        return True
    return has_cjk(paragraph) == (lang == "zh")


def _indent(paragraphs: list[str]) -> int:
    """The prose's indent: the least of every line after the docstring's first."""
    lines = [line for p in paragraphs[1:] for line in p.splitlines() if line.strip()]
    return min((len(line) - len(line.lstrip()) for line in lines), default=0)


def _docstrings(tree: ast.Module) -> list[ast.Constant]:
    nodes: list[ast.Module | ast.FunctionDef] = [
        tree,
        *(n for n in tree.body if isinstance(n, ast.FunctionDef)),
    ]
    found = []
    for node in nodes:
        first = node.body[0] if node.body else None
        value = first.value if isinstance(first, ast.Expr) else None
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            found.append(value)
    return found


def in_language(text: str, lang: str) -> str:
    """``text`` (the template) with its docstrings' prose in ``lang`` only; as it is for
    "both", or when a docstring cannot be rebuilt exactly (it then keeps both)."""
    if lang == "both":
        return text
    lines = text.splitlines(keepends=True)
    for node in reversed(_docstrings(ast.parse(text))):
        start, end = node.lineno - 1, node.end_lineno or node.lineno
        original = "".join(lines[start:end])
        head = original[: original.index('"""')]
        value = str(node.value)
        if original != f'{head}"""{value}"""\n':
            continue  # escapes or another quoting: not rebuilt, both languages kept
        paragraphs = value.split("\n\n")
        base = _indent(paragraphs)
        kept = [p for p in paragraphs if _keep(p, lang, base)]
        if not kept:
            continue
        # The first paragraph follows the opening quotes; a code paragraph starts a line.
        first = (
            kept[0].lstrip()
            if kept[0] is paragraphs[0] or not kept[0][:1].isspace()
            else "\n" + kept[0]
        )
        body = "\n\n".join([first, *kept[1:]])
        if body.rsplit("\n", 1)[-1].strip() or "\n" not in body:
            body = body.rstrip(" ") + "\n" + head  # the closing quotes on a line of their own
        lines[start:end] = [f'{head}"""{body}"""\n']
    return "".join(lines)
