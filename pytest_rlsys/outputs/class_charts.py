"""The class page's charts: inline SVG, no script, each bar carrying its number (no chart
relies on colour); the page puts a real ``<table>`` with the same numbers next to each
(``html_table`` writes the page's tables)."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_rlsys.escaping import clean
from pytest_rlsys.escaping import html_text as _e

__all__ = ["hbar_svg", "histogram_svg", "html_table"]


def html_table(
    ident: str, caption: str, heads: Sequence[tuple[str, bool]], body: str, wide: bool = False
) -> str:
    """A table: its caption, a header row (``heads``: each column's text and whether it
    holds numbers), ``body`` its rows; ``wide``: in a box that scrolls sideways."""
    numeric = ' class="n"'
    head = "".join(f'<th scope="col"{numeric if n else ""}>{_e(text)}</th>' for text, n in heads)
    table = (
        f'<table id="{ident}"><caption>{_e(caption)}</caption>'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )
    return f'<div class="wide">{table}</div>' if wide else table


def histogram_svg(values: Sequence[int], ident: str, title: str, axis: str) -> str:
    width, height, left, bottom, top = 340, 190, 14, 34, 18
    plot_w, plot_h = width - 2 * left, height - bottom - top
    peak = max(values, default=0) or 1
    step = plot_w / max(len(values), 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-labelledby="{ident}-t">'
        f'<title id="{ident}-t">{_e(title)}</title>',
        f'<line x1="{left}" y1="{top + plot_h}" x2="{width - left}" y2="{top + plot_h}" '
        'stroke="#111"/>',
    ]
    for i, value in enumerate(values):
        bar_h = plot_h * value / peak
        x = left + i * step
        y = top + plot_h - bar_h
        parts.append(
            f'<rect x="{x + 2:.1f}" y="{y:.1f}" width="{step - 4:.1f}" '
            f'height="{bar_h:.1f}" fill="#3b3b3b"/>'
            f'<text x="{x + step / 2:.1f}" y="{y - 3:.1f}" font-size="11" '
            f'text-anchor="middle">{value}</text>'
        )
    # Ticks at the bin edges (0, 10, ... 100), as on a histogram's axis.
    for i in range(len(values) + 1):
        x = left + i * step
        parts.append(
            f'<line x1="{x:.1f}" y1="{top + plot_h}" x2="{x:.1f}" '
            f'y2="{top + plot_h + 4}" stroke="#111"/>'
            f'<text x="{x:.1f}" y="{top + plot_h + 15}" font-size="10" '
            f'text-anchor="middle">{10 * i}</text>'
        )
    parts.append(
        f'<text x="{width / 2:.1f}" y="{height - 3}" font-size="10" '
        f'text-anchor="middle">{_e(axis)}</text></svg>'
    )
    return "".join(parts)


def hbar_svg(
    labels: Sequence[str], values: Sequence[float], ident: str, title: str, fmt: str = "{:g}"
) -> str:
    row_h, label_w, width = 22, 330, 700
    height = row_h * max(len(values), 1) + 8
    plot_w = width - label_w - 70
    peak = max(values, default=0) or 1
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-labelledby="{ident}-t">'
        f'<title id="{ident}-t">{_e(title)}</title>'
    ]
    for i, (name, value) in enumerate(zip(labels, values, strict=True)):
        y = 4 + i * row_h
        bar_w = plot_w * value / peak
        name = clean(name, newlines=False)  # cut as shown: an escape is 6 characters
        shown = name if len(name) <= 52 else name[:51] + "…"
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 15}" font-size="10.5" '
            f'text-anchor="end">{_e(shown)}</text>'
            f'<rect x="{label_w}" y="{y + 3}" width="{bar_w:.1f}" height="{row_h - 6}" '
            'fill="#3b3b3b"/>'
            f'<text x="{label_w + bar_w + 5:.1f}" y="{y + 15}" font-size="11">'
            f"{_e(fmt.format(value))}</text>"
        )
    return "".join(parts) + "</svg>"
