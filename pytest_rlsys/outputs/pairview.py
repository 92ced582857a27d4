"""Two files side by side with the passages they share highlighted, as MOSS and copydetect
show a flagged pair.

A passage is shared when a run of ``K`` tokens, names and literals made anonymous (so a
renamed copy still matches), occurs in both files and not in the template both start from.
Each file is cut at ``MAX_BYTES``; tokenizing is one pass, every ``K``-gram is hashed once
and looked up in the other file's set, so the work is linear in the files' sizes, never
quadratic.  Everything shown is escaped (``escaping.clean_output``, then HTML): the files
are the learners'.
"""

from __future__ import annotations

import functools
import html
import io
import keyword
import tokenize
from collections.abc import Sequence

from pytest_rlsys.escaping import clean_output
from pytest_rlsys.escaping import html_text as _e
from pytest_rlsys.outputs.class_words import say
from pytest_rlsys.resources import exercise_path

__all__ = ["MAX_BYTES", "K", "pair_view", "shared_spans", "tokens"]

MAX_BYTES = 256 * 1024
K = 12  # tokens in a shared run: about one statement
_SKIPPED = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENDMARKER,
    tokenize.ENCODING,
}
Token = tuple[str, int, int]  # the anonymous token, its start and end offsets
Span = tuple[int, int]


def tokens(text: str) -> list[Token]:
    """The tokens of ``text`` (cut at MAX_BYTES), names and literals anonymous, with their
    character offsets; up to the first point that does not tokenize."""
    text = text[:MAX_BYTES]
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    out: list[Token] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in _SKIPPED:
                continue
            if tok.type == tokenize.NAME:
                kind = tok.string if keyword.iskeyword(tok.string) else "V"
            elif tok.type in (tokenize.STRING, tokenize.NUMBER):
                kind = "S" if tok.type == tokenize.STRING else "N"
            else:  # an operator as written; any other token by its type's name
                kind = tok.string if tok.type == tokenize.OP else tokenize.tok_name[tok.type]
            (row, col), (end_row, end_col) = tok.start, tok.end
            out.append((kind, starts[row - 1] + col, starts[end_row - 1] + end_col))
    except (tokenize.TokenError, SyntaxError, ValueError, IndexError):
        pass  # what tokenized so far is compared
    return out


def _grams(toks: Sequence[Token], k: int) -> list[int]:
    kinds = [t[0] for t in toks]
    return [hash(tuple(kinds[i : i + k])) for i in range(len(kinds) - k + 1)]


@functools.cache
def _template_grams(k: int) -> frozenset[int]:
    try:
        text = exercise_path().read_text(encoding="utf-8")
    except OSError:
        return frozenset()
    return frozenset(_grams(tokens(text), k))


def _spans(toks: Sequence[Token], grams: Sequence[int], other: set[int], k: int) -> list[Span]:
    """Character spans of the runs of tokens covered by a k-gram the other file has."""
    runs: list[list[int]] = []  # [first token, last token]
    for i, gram in enumerate(grams):
        if gram not in other:
            continue
        if runs and i <= runs[-1][1] + 1:
            runs[-1][1] = i + k - 1
        else:
            runs.append([i, i + k - 1])
    return [(toks[first][1], toks[last][2]) for first, last in runs]


def shared_spans(a: str, b: str, k: int = K) -> tuple[list[Span], list[Span]]:
    """The passages of ``a`` and of ``b`` (character spans, in order) made of runs of ``k``
    anonymous tokens the other file has too, the template's own runs left out."""
    ta, tb = tokens(a), tokens(b)
    ga, gb = _grams(ta, k), _grams(tb, k)
    base = _template_grams(k)
    sa, sb = set(ga) - base, set(gb) - base
    return _spans(ta, ga, sb, k), _spans(tb, gb, sa, k)


def _marked(text: str, spans: Sequence[Span]) -> str:
    """``text`` escaped, each span in a ``<mark>``."""
    text = text[:MAX_BYTES]
    out, at = [], 0
    for start, end in spans:
        out.append(html.escape(clean_output(text[at:start])))
        out.append(f"<mark>{html.escape(clean_output(text[start:end]))}</mark>")
        at = end
    out.append(html.escape(clean_output(text[at:])))
    return "".join(out)


def _share(text: str, spans: Sequence[Span]) -> str:
    size = len(text[:MAX_BYTES].strip()) or 1
    return f"{100 * sum(e - s for s, e in spans) / size:.0f}%"


def pair_view(
    ident: str,
    a: tuple[str, str | None],
    b: tuple[str, str | None],
    lang: str = "en",
    reference: bool = False,
) -> str:
    """A flagged pair side by side: ``(name, source or None when it could not be read)``
    each; the shared passages highlighted in both, neither said to be the original.
    ``reference``: ``b`` is the reference, whose second text (the chapter's) is not shown."""
    (name_a, text_a), (name_b, text_b) = a, b
    kib = MAX_BYTES // 1024
    if text_a is None or text_b is None:
        missing = name_a if text_a is None else name_b
        said = say("pair_unread", lang, name=missing, kib=kib)
        return f'<p id="{ident}" class="muted">{_e(said)}</p>'
    spans_a, spans_b = shared_spans(text_a, text_b)
    cut = any(len(t) > MAX_BYTES for t in (text_a, text_b))
    note = say("pair_note", lang, k=K, cut=say("pair_cut", lang, kib=kib) if cut else "")
    if reference:
        note += " " + say("pair_reference", lang)
    panes = "".join(
        f'<figure><figcaption>{_e(name)} <span class="nw">— '
        f"{_e(say('highlighted', lang, share=_share(text, spans)))}</span></figcaption>"
        f"<pre>{_marked(text, spans)}</pre></figure>"
        for name, text, spans in ((name_a, text_a, spans_a), (name_b, text_b, spans_b))
    )
    summary = say("pair_summary", lang, a=name_a, b=name_b)
    return (
        f'<details id="{ident}" class="pair"><summary>{_e(summary)}</summary>'
        f'<p class="muted">{_e(note)}</p><div class="sbs">{panes}</div></details>'
    )
