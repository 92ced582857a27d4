"""The fence that graded, in one line for an instructor: every kit records it where an
instructor sees it (PrairieLearn's ``message``, Gradescope's instructor-only script
output, the Actions job summary, Classroom 50's ``release-body.md``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_rlsys.messages import FENCE, NO_FENCE

__all__ = ["fence_name", "fence_text"]


def fence_name(fence: Mapping[str, Any]) -> str:
    """'bubblewrap (bubblewrap, seccomp-allow-list, ...)' from ``Fence.record()``."""
    level = str(fence.get("level", "?"))
    mechanisms = ", ".join(str(m) for m in fence.get("mechanisms") or ())
    return f"{level} ({mechanisms})" if mechanisms else level


def fence_text(fence: Mapping[str, Any] | None, lang: str = "en") -> str:
    """'Graded behind the fence: bubblewrap (...)' from ``Fence.record()``
    (``ScoreReport.fence``, the score report's ``fence``)."""
    if not isinstance(fence, Mapping):
        return NO_FENCE.get(lang)
    return FENCE.fill(lang, {"fence": fence_name(fence)})
