"""What the platform files call a case: a readable title and a stable number."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from pytest_rlsys.grading.scoring import CaseResult
from pytest_rlsys.messages import CASE_KIND, section_label
from pytest_rlsys.outputs.text import clean
from pytest_rlsys.outputs.wording import category

__all__ = ["numbered", "title"]

_SECTION_ORDER = ("todo1", "todo2", "todo3", "gpu_result")


def title(case: CaseResult, lang: str = "en") -> str:
    """``TODO 1 · hidden · lists every tied bottleneck``: the section, the kind and the category
    (a hidden case's id says nothing a learner can use; its category does)."""
    todo = section_label(case.section, lang)
    named = category(case, lang) or case.id.rsplit(".", 1)[-1]
    if case.section == "gpu_result":
        return clean(f"{todo} · {named}", newlines=False)
    kind = CASE_KIND[case.visibility].get(lang) if case.visibility in CASE_KIND else case.visibility
    return clean(f"{todo} · {kind} · {named}", newlines=False)


def numbered(cases: Sequence[CaseResult]) -> Iterator[tuple[str, CaseResult]]:
    """(``"2.5"``, case): section number, then the case's place in its section."""
    seen: dict[str, int] = {}
    for case in cases:
        if case.section not in seen:
            seen[case.section] = 0
        seen[case.section] += 1
        major = (
            _SECTION_ORDER.index(case.section) + 1
            if case.section in _SECTION_ORDER
            else len(_SECTION_ORDER) + list(seen).index(case.section) + 1
        )
        yield f"{major}.{seen[case.section]}", case
