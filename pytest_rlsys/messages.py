"""Learner-facing wording, in English and Chinese."""

from __future__ import annotations

import locale
import os
from dataclasses import dataclass

from pytest_rlsys.grading.isolation import CallOutcome

TODO_OF = {"todo1": "TODO 1", "todo2": "TODO 2", "todo3": "TODO 3", "gpu_result": "GPU result"}


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


def outcome_problem(outcome: CallOutcome, section: str) -> tuple[str, Msg]:
    """Status and message for a call that did not return a value."""
    todo = TODO_OF.get(section, section)
    kind = outcome.kind
    if kind == "raised" and outcome.not_implemented:
        return "failed", Msg(f"{todo} not implemented yet (raises NotImplementedError)",
                             f"{todo} 尚未实现（抛出 NotImplementedError）")
    if kind == "raised" and outcome.is_exception:
        return "failed", Msg(f"raised {outcome.exc_type}: {outcome.message}",
                             f"抛出了 {outcome.exc_type}：{outcome.message}")
    if kind == "raised":
        return "error", Msg(
            f"raised {outcome.exc_type}, which is not an Exception (SystemExit, "
            "KeyboardInterrupt and the like must not escape a library function)",
            f"抛出了 {outcome.exc_type}，它不是 Exception（库函数不应抛出 SystemExit、"
            "KeyboardInterrupt 等）")
    if kind == "timeout":
        return "timeout", Msg(f"{outcome.message} (an infinite loop?)",
                              f"超时：{outcome.message}（是否有死循环？）")
    if kind == "crashed":
        return "error", Msg(outcome.message, f"进程异常结束：{outcome.message}")
    if kind == "missing":
        return "error", Msg(outcome.message, f"缺少函数：{outcome.message}")
    if kind == "grader_error":
        return "error", Msg(f"grading could not start: {outcome.message}",
                            f"评分无法开始（评分器设置问题，不是提交的错误）：{outcome.message}")
    if kind == "load_failed":
        return "error", Msg(f"the submission could not be loaded: {outcome.message}",
                            f"无法加载提交文件：{outcome.message}")
    return "error", Msg(f"the grader could not read the answer: {outcome.message}",
                        f"评分器无法读取返回值：{outcome.message}")


HIDDEN_NOTE = Msg("hidden case: only its category is shown", "隐藏用例：只显示类别")
NOT_IMPLEMENTED = Msg("not implemented yet", "尚未实现")
