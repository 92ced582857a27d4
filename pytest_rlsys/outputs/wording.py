"""A case's words, in the output's language, from its record (``grading.scoring.CaseResult``).

The grader keeps facts: a kind from the closed vocabulary (``grading.verdicts``), a path,
an exception's class and line, the call's own text.  Every renderer asks here for the
sentence when it writes its file, so the language is an output option only and no code
reads a sentence back.  A hidden case is worded from its kind and schema path alone
(``messages.HIDDEN_WORDS``); whatever else its record held could not reach its words.
"""

from __future__ import annotations

from pytest_rlsys.grading.scoring import MAX_MESSAGE_CHARS, CaseResult, ScoreReport, bounded
from pytest_rlsys.grading.verdicts import ValueDiff
from pytest_rlsys.messages import LOAD_FAILED, TODO_OF, WITH_RULE, Msg, hidden_message

__all__ = ["category", "diff_text", "load_error_text", "message", "shared_message"]


# An exception named with its line: said by "raised" with the exception's text, by
# "raised_other" with what was due instead, and alone where many cases share it.
_RAISED = Msg("raised {exc}{at}", "抛出了 {exc}{at}")

# The words of each visible kind.  ``{exc}``, ``{at}`` (the line), ``{note}`` (the call's
# own text), ``{todo}``, ``{names}``, ``{key}``, ``{limit}`` and ``{path}`` are filled
# from the record; a kind missing here is worded by its note alone.
PROBLEM_WORDS: dict[str, Msg] = {
    "passed": Msg("", ""),
    "not_implemented": Msg(
        "{todo} not implemented yet (raises NotImplementedError)",
        "{todo} 尚未实现（抛出 NotImplementedError）",
    ),
    "raised": Msg(_RAISED.en + ": {note}", _RAISED.zh + "：{note}"),
    "not_exception": Msg(
        "raised {exc}, which is not an Exception (SystemExit, KeyboardInterrupt and the like "
        "must not escape a library function)",
        "抛出了 {exc}，它不是 Exception（库函数不应抛出 SystemExit、KeyboardInterrupt 等）",
    ),
    "timed_out": Msg("{note} (an infinite loop?)", "超时：{note}（是否有死循环？）"),
    "crashed": Msg("{note}", "进程异常结束：{note}"),
    "missing_function": Msg("{note}", "{note}"),
    "grader_setting": Msg(
        "grading could not start: {note}",
        "评分无法开始（评分器设置问题，不是提交的错误）：{note}",
    ),
    "load_failed": Msg(
        LOAD_FAILED.en.replace("{error}", "{note}"), LOAD_FAILED.zh.replace("{error}", "{note}")
    ),
    "garbled": Msg("the grader could not read the answer: {note}", "评分器无法读取返回值：{note}"),
    "wrong_order": Msg("right items, wrong order at {path}", "元素正确但顺序错误（{path}）"),
    "not_a_dict": Msg("the result is a {note}, not a plain dict", "返回值是 {note}，不是普通 dict"),
    "missing_key": Msg("the result has no key {key}", "返回值缺少键 {key}"),
    "unexpected_key": Msg("unexpected keys {names} at {path}", "{path} 处有多余的键 {names}"),
    # A type problem without its diff (the diff, when kept, says more: diff_text).
    **{
        f"wrong_type_{due}": Msg(
            f"wrong type at {{path}} (expected {words})", f"{{path}} 处的类型错误（应为 {zh}）"
        )
        for due, words, zh in (
            ("list", "list", "list"),
            ("dict", "dict", "dict"),
            ("number", "int or float", "int 或 float"),
            ("str", "str", "str"),
            ("bool", "bool", "bool"),
        )
    },
    "returned": Msg(
        "returned a result instead of raising ValueError", "应当抛出 ValueError，却返回了结果"
    ),
    "raised_other": Msg(_RAISED.en + " instead of ValueError", _RAISED.zh + "，应当是 ValueError"),
    "unreadable_args": Msg(
        "the arguments could not be read back after the call", "调用后无法读回参数"
    ),
    "mutated_input": Msg(
        "the input argument {names} was modified in place", "输入参数 {names} 被原地修改"
    ),
    "refused_valid": Msg(
        "the valid input next to the bad one (the same input with the bad field "
        "repaired) was refused; refusing the bad one earns nothing then",
        "与非法输入相邻的合法输入（修复了那个字段的同一输入）被拒绝；此时拒绝非法输入不得分",
    ),
    "twin_raised": Msg(
        _RAISED.en + " on the valid input next to the bad one (the same input with the "
        "bad field repaired), where a result was due: {note}",
        "与非法输入相邻的合法输入（修复了那个字段的同一输入）应当返回结果，却"
        + _RAISED.zh
        + "：{note}",
    ),
    "battery_bug": Msg(
        "the grader could not judge this answer (a fault of the battery, not "
        "of your code); tell your instructor",
        "评分器无法判定该答案（是题库的问题，不是你的代码的问题）；请告知教师",
    ),
    "grader_fault": Msg(
        "the grader failed while checking this case ({exc}); "
        "it scores 0 and the error is recorded for the instructor",
        "评分器在检查此用例时出错（{exc}）；此用例记 0 分，错误已记录给教师",
    ),
    "self_check": Msg(
        "not graded: the reference fails this case's self-check",
        "未评分：参考实现未通过该用例的自检",
    ),
    "over_budget": Msg(
        "not run: the submission's time budget of {limit} s is used up",
        "未运行：提交的总时间预算 {limit} 秒已用完",
    ),
    "too_many_timeouts": Msg(
        "not run: {names}() already timed out {limit} times", "未运行：{names}() 已超时 {limit} 次"
    ),
    "not_reached": Msg("not run (deselected or stopped early)", "未运行（被取消选择或提前停止）"),
}


# How a value differs, by ``comparison.MismatchHow``: ``{path}``, ``{want}``, ``{got}``
# (values as shown), ``{want_type}``, ``{got_type}`` and ``{keys}`` are filled from the
# record; the words around them are the output language's.
_TYPE_DUE = {
    "not_a_number": "int or float",
    "not_a_list": "list",
    "not_a_dict": "dict",
    "not_a_str": "str",
    "not_a_bool": "bool",
}
DIFF_WORDS: dict[str, Msg] = {
    "nonplain": Msg(
        "{path}: wrong type: got a {got_type} object, expected a plain {want_type}",
        "{path}：类型错误：得到 {got_type} 对象，应为普通的 {want_type}",
    ),
    "wrong_type": Msg(
        "{path}: wrong type: expected {due}, got {got_type} {got}",
        "{path}：类型错误：应为 {due}，得到 {got_type} {got}",
    ),
    "wrong_order": Msg("{path}: right items, wrong order", "{path}：元素正确但顺序错误"),
    "missing": Msg("missing keys {keys}", "缺少键 {keys}"),
    "extra": Msg("unexpected keys {keys}", "多余的键 {keys}"),
    "keys": Msg("{path}: {parts}", "{path}：{parts}"),
    "wrong_value": Msg(
        "{path}: wrong value: expected {want}, got {got}", "{path}：值错误：应为 {want}，得到 {got}"
    ),
}


def diff_text(diff: ValueDiff, lang: str = "en") -> str:
    """Where and how a value differs: the path, then what failed (a type, keys, the order
    or the value) in ``lang``, with the values and type names as they are."""
    fields = {
        "path": diff.path,
        "want": diff.want,
        "got": diff.got,
        "want_type": diff.want_type,
        "got_type": diff.got_type,
        "due": _TYPE_DUE.get(diff.how, ""),
    }
    how = diff.how
    if how in _TYPE_DUE:
        how = "wrong_type"
    if how == "keys":
        parts = [
            DIFF_WORDS[name].get(lang).replace("{keys}", str(list(keys)))
            for name, keys in (("missing", diff.missing), ("extra", diff.extra))
            if keys
        ]
        fields["parts"] = ("；" if lang == "zh" else ", ").join(parts)
    words = DIFF_WORDS.get(how, DIFF_WORDS["wrong_value"])
    said = words.fill(lang, fields)
    if diff.also:
        also = ("；" if lang == "zh" else "; ").join(diff_text(more, lang) for more in diff.also)
        said += f"；另外 {also}" if lang == "zh" else f"; also {also}"
    return said


def _line(line: int | None, lang: str) -> str:
    """' at line N of your file', or nothing when the line is unknown."""
    if type(line) is not int or line <= 0:
        return ""
    return f"（你的文件第 {line} 行）" if lang == "zh" else f" at line {line} of your file"


def _fill(words: Msg, case: CaseResult, lang: str) -> str:
    """``words`` in ``lang``, its fields filled from ``case``."""
    fields = {
        "exc": case.exc_type,
        "at": _line(case.line, lang),
        "todo": TODO_OF.get(case.todo, case.todo),
        "names": ", ".join(case.names),
        "key": repr(case.names[0]) if case.names else "",
        "limit": "" if case.limit is None else f"{case.limit:g}",
        "path": case.path,
        "note": case.note
        if case.said is None
        else bounded(case.said.text(lang), MAX_MESSAGE_CHARS),
    }
    return words.fill(lang, fields)


def _visible(case: CaseResult, lang: str) -> str:
    if case.diff is not None:
        return diff_text(case.diff, lang)
    words = PROBLEM_WORDS.get(case.kind)
    if words is None:
        # A related-inputs check's finding, or a result-file check's own account.
        return case.note
    return _fill(words, case, lang)


def message(case: CaseResult, lang: str = "en") -> str:
    """What went wrong in ``case``, in ``lang``; "" for a passed case."""
    if case.visibility == "hidden":
        return (
            hidden_message(case.kind, case.path, lang, case.names, case.also) if case.kind else ""
        )
    return bounded(_visible(case, lang), MAX_MESSAGE_CHARS)


def shared_message(case: CaseResult, lang: str = "en") -> str:
    """``message``, for a failure said once for many cases (a resource exhausted, a
    crash): an exception is named with its line and its text, never what this one case
    expected instead (the same exception answered where ValueError was due)."""
    if case.visibility == "visible" and case.kind in ("raised", "raised_other"):
        with_text = bool(case.kind == "raised" and case.note)
        return bounded(
            _fill(PROBLEM_WORDS["raised"] if with_text else _RAISED, case, lang), MAX_MESSAGE_CHARS
        )
    return message(case, lang)


def category(case: CaseResult, lang: str = "en") -> str:
    """The battery's name for what ``case`` checks, in ``lang``; a failed hidden case's
    names the template's rule it grades too, so its few words point at one sentence."""
    if case.visibility == "hidden" and case.status != "passed" and case.rule.get(lang):
        return WITH_RULE.fill(
            lang, {"category": case.category.get(lang), "rule": case.rule.get(lang)}
        )
    return case.category.get(lang)


def load_error_text(report: ScoreReport, lang: str = "en") -> str:
    """Why the submission could not be graded at all, in ``lang`` ("" when it was)."""
    if report.load_said is not None:
        return report.load_said.text(lang)
    return report.load_error or ""
