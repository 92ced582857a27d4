"""Learner-facing wording, in English and Chinese."""

from __future__ import annotations

import locale
import os
import re
from dataclasses import dataclass

TODO_OF = {"todo1": "TODO 1", "todo2": "TODO 2", "todo3": "TODO 3", "gpu_result": "GPU result"}
_SECTION_ZH = {"gpu_result": "GPU 结果"}


def section_label(section: str, lang: str) -> str:
    """'TODO 1' (the same in both languages), 'GPU result' / 'GPU 结果'."""
    if lang == "zh" and section in _SECTION_ZH:
        return _SECTION_ZH[section]
    return TODO_OF.get(section, section)


@dataclass(frozen=True)
class Msg:
    en: str
    zh: str

    def get(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en


def default_lang() -> str:
    """Chinese when the locale says so, English otherwise."""
    for var in ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        value = os.environ.get(var, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    code = locale.getlocale()[0] or ""
    return "zh" if code.lower().startswith("zh") else "en"


HIDDEN_NOTE = Msg("hidden case: only its category is shown", "隐藏用例：只显示类别")
HIDDEN_GROUP = Msg("{n} of {total} hidden cases failed", "{total} 个隐藏用例中有 {n} 个未通过")
NOT_IMPLEMENTED = Msg("not implemented yet", "尚未实现")
WRONG_VALUE = Msg("wrong value", "值错误")

# The chapter's own check texts ("claims") are Chinese where they are prose; English
# feedback shows them through this table, keyed by the chapter's text.  A test checks that
# every visible case's claim is covered.
CLAIMS_EN = {
    "阶段集合不一致时应失败": "mismatched stage sets must fail",
    "非有限阶段速率应失败": "a non-finite stage rate must fail",
    "非法重叠比例应失败": "an overlap fraction outside [0, 1] must fail",
    "同一互连域使用不同带宽口径时应失败": "one fabric given two different bandwidths must fail",
    "非有限显存账本应失败": "a non-finite memory ledger must fail",
}

_CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")


def has_cjk(text: str) -> bool:
    return _CJK.search(text) is not None


def claim_text(claim: str, lang: str) -> str:
    """A visible case's check, in ``lang`` (the chapter's code stays as it is)."""
    if lang == "zh":
        return claim
    for zh, en in CLAIMS_EN.items():
        claim = claim.replace(zh, en)
    return claim
