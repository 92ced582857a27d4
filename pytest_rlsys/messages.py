"""Learner-facing wording, in English and Chinese."""

from __future__ import annotations

import locale
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

_FIELD = re.compile(r"\{(\w+)\}")
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

    def fill(self, lang: str, fields: Mapping[str, str]) -> str:
        """The words in ``lang``, each ``{name}`` in ``fields`` filled in one pass over the
        template: a value (the submission's text, say) is never searched for fields."""
        return _FIELD.sub(lambda m: fields.get(m.group(1), m.group(0)), self.get(lang))

    @classmethod
    def same(cls, text: str) -> Msg:
        """Words that are the same in both languages (a check's id, say)."""
        return cls(text, text)


def default_lang() -> str:
    """Chinese when the locale says so, English otherwise."""
    for var in ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        value = os.environ.get(var, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    code = locale.getlocale()[0] or ""
    return "zh" if code.lower().startswith("zh") else "en"


# The type due where another was returned, by the grader's name of it (the ``wrong_type_*``
# kinds; ``comparison``'s ``not_a_*`` mismatches).
TYPE_DUE = {
    **{due: Msg.same(due) for due in ("list", "dict", "str", "bool")},
    "number": Msg("int or float", "int 或 float"),
}

# Every word a hidden case may say, one per kind of the grader's closed vocabulary
# (``grading.verdicts.HiddenKind``; a test checks the two agree).  ``{path}`` is a path
# of the battery's own result schema.  Nothing here is filled from the submission.
HIDDEN_WORDS: dict[str, Msg] = {
    "passed": Msg("", ""),
    "wrong_value": Msg("wrong value at {path}", "{path} 处的值错误"),
    "wrong_order": Msg("right items, wrong order at {path}", "元素正确但顺序错误（{path}）"),
    "missing_key": Msg("missing key at {path}", "{path} 处缺少键"),
    "unexpected_key": Msg("unexpected key at {path}", "{path} 处有多余的键"),
    **{
        f"wrong_type_{due}": Msg(
            f"wrong type at {{path}} (expected {words.en})",
            f"{{path}} 处的类型错误（应为 {words.zh}）",
        )
        for due, words in TYPE_DUE.items()
    },
    "raised": Msg("raised an exception where a result was due", "应当返回结果，却抛出了异常"),
    "returned": Msg(
        "returned a result where ValueError was due", "应当抛出 ValueError，却返回了结果"
    ),
    "wrong_exception": Msg(
        "raised another exception where ValueError was due", "应当抛出 ValueError，却抛出了其他异常"
    ),
    "not_implemented": Msg("not implemented yet", "尚未实现"),
    "timed_out": Msg("no answer within the time limit", "未在时限内返回"),
    "crashed": Msg(
        "the submission's process ended during the call or its answer could not be read",
        "调用期间提交的进程异常结束，或其返回值无法读取",
    ),
    "load_failed": Msg("the submission could not be loaded", "无法加载提交文件"),
    "missing_function": Msg("the function is missing", "缺少该函数"),
    "mutated_input": Msg(
        "the input argument {path} was modified in place", "输入参数 {path} 被原地修改"
    ),
    # A refusal case's valid half (the bad input with its bad field repaired): what is
    # said of it names it, as its category names the bad input.
    "refused_valid": Msg(
        "raised ValueError on the valid input next to the bad one (the same input with "
        "the bad field repaired), where a result was due",
        "与非法输入相邻的合法输入（修复了那个字段的同一输入）应当返回结果，却抛出了 ValueError",
    ),
    "twin_raised": Msg(
        "raised an exception on the valid input next to the bad one (the same input "
        "with the bad field repaired), where a result was due",
        "与非法输入相邻的合法输入（修复了那个字段的同一输入）应当返回结果，却抛出了异常",
    ),
    "inconsistent": Msg(
        "results of related inputs do not agree as they must", "相关输入的结果不满足应有的关系"
    ),
    "grader_fault": Msg(
        "the grader could not judge this case (recorded for the instructor)",
        "评分器无法判定此用例（已记录给教师）",
    ),
    "not_graded": Msg(
        "not graded: the reference fails this case's self-check",
        "未评分：参考实现未通过该用例的自检",
    ),
    "over_budget": Msg(
        "not run: the submission's time budget is used up", "未运行：提交的总时间预算已用完"
    ),
    "too_many_timeouts": Msg(
        "not run: this function already timed out too often", "未运行：该函数已多次超时"
    ),
    "not_run": Msg("not run (deselected or stopped early)", "未运行（被取消选择或提前停止）"),
}


# A key problem whose keys may be named (``Verdict.shown_names``): the template's own
# field names only (a key missing, or the one a key the submission added is, where it does
# not belong, or misspells: a template name added to a row whose edge lacks it is the first).
HIDDEN_NAMED: dict[str, Msg] = {
    "missing_key": Msg("missing key {names} at {path}", "{path} 处缺少键 {names}"),
    "unexpected_key": Msg(
        "unexpected key at {path} (a misplaced or misspelled {names}?)",
        "{path} 处有多余的键（是否放错了位置或拼错了 {names}？）",
    ),
}


ALSO_AT = Msg("; also at {paths}", "；另外 {paths} 处也不同")


def hidden_message(
    kind: str, path: str, lang: str, names: tuple[str, ...] = (), also: tuple[str, ...] = ()
) -> str:
    """A hidden case's message: its kind's words, with the schema path where one is due,
    the keys where they may be named, and the other schema paths that differ."""
    words = HIDDEN_NAMED[kind] if names and kind in HIDDEN_NAMED else HIDDEN_WORDS[kind]
    said = words.fill(lang, {"path": path or "$", "names": ", ".join(map(repr, names))})
    return said + (ALSO_AT.fill(lang, {"paths": ", ".join(also)}) if also else "")


# How a hidden case's category names the rule of the template it grades.
WITH_RULE = Msg("{category} (rule: “{rule}”)", "{category}（规则：“{rule}”）")
# A list of failure kinds says a rule that several kinds grade once, then by its number.
RULE_FIRST = Msg("{category} (rule {n}: “{rule}”)", "{category}（规则 {n}：“{rule}”）")
RULE_AGAIN = Msg("{category} (rule {n}, above)", "{category}（规则 {n}，见上）")
# What went wrong after a kind's category, in the parentheses of its language.
IN_PARENS = Msg(" ({text})", "（{text}）")


# A visible case's words, by its kind (``grading.verdicts.ProblemKind``; a test checks the
# two agree).  ``{exc}``, ``{at}`` (``AT_LINE``), ``{note}`` (the call's own text, or a
# ``Said`` of the grader's), ``{todo}``, ``{names}``, ``{key}``, ``{limit}`` and ``{path}``
# are filled from the record (``outputs.wording``).  Where a hidden kind says the same,
# its entry is shared.
RAISED = Msg("raised {exc}{at}", "抛出了 {exc}{at}")  # also alone, for a failure many share
AT_LINE = Msg(" at line {line} of your file", "（你的文件第 {line} 行）")
PROBLEM_WORDS: dict[str, Msg] = {
    **{
        kind: HIDDEN_WORDS[kind]
        for kind in ("passed", "wrong_value", "wrong_order", "inconsistent", "returned")
    },
    **{kind: words for kind, words in HIDDEN_WORDS.items() if kind.startswith("wrong_type_")},
    "self_check": HIDDEN_WORDS["not_graded"],
    "not_reached": HIDDEN_WORDS["not_run"],
    "not_implemented": Msg(
        "{todo} not implemented yet (raises NotImplementedError)",
        "{todo} 尚未实现（抛出 NotImplementedError）",
    ),
    "raised": Msg("raised {exc}{at}: {note}", "抛出了 {exc}{at}：{note}"),
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
    "load_failed": Msg("the submission could not be loaded: {note}", "无法加载提交文件：{note}"),
    "garbled": Msg("the grader could not read the answer: {note}", "评分器无法读取返回值：{note}"),
    "not_a_dict": Msg("the result is a {note}, not a plain dict", "返回值是 {note}，不是普通 dict"),
    "missing_key": Msg("the result has no key {key}", "返回值缺少键 {key}"),
    "unexpected_key": Msg("unexpected keys {names} at {path}", "{path} 处有多余的键 {names}"),
    "raised_other": Msg(
        "raised {exc}{at} instead of ValueError", "抛出了 {exc}{at}，应当是 ValueError"
    ),
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
        "raised {exc}{at} on the valid input next to the bad one (the same input with the "
        "bad field repaired), where a result was due: {note}",
        "与非法输入相邻的合法输入（修复了那个字段的同一输入）应当返回结果，"
        "却抛出了 {exc}{at}：{note}",
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
    "over_budget": Msg(
        "not run: the submission's time budget of {limit} s is used up",
        "未运行：提交的总时间预算 {limit} 秒已用完",
    ),
    "too_many_timeouts": Msg(
        "not run: {names}() already timed out {limit} times", "未运行：{names}() 已超时 {limit} 次"
    ),
}

# How a value differs, by ``comparison.MismatchHow`` (the type kinds: ``wrong_type``, with
# ``{due}``; a dict's keys: by which of them are wrong).  ``{path}``, ``{want}``, ``{got}``
# (values as shown), ``{want_type}``, ``{got_type}``, ``{missing}`` and ``{extra}`` are
# filled from the record (``outputs.wording.diff_text``).
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
    "keys_missing": Msg("{path}: missing keys {missing}", "{path}：缺少键 {missing}"),
    "keys_extra": Msg("{path}: unexpected keys {extra}", "{path}：多余的键 {extra}"),
    "keys_both": Msg(
        "{path}: missing keys {missing}, unexpected keys {extra}",
        "{path}：缺少键 {missing}；多余的键 {extra}",
    ),
    "wrong_value": Msg(
        "{path}: wrong value: expected {want}, got {got}", "{path}：值错误：应为 {want}，得到 {got}"
    ),
    "also": Msg("; also {also}", "；另外 {also}"),  # the next differences, joined by "and"
    "and": Msg("; ", "；"),
}

# The terminal's words, in English and Chinese (``labels``).
LABELS: dict[str, Msg] = {
    "title": Msg("rlsys score", "rlsys 得分"),
    "section": Msg("section", "部分"),
    "score": Msg("score", "得分"),
    "cases": Msg("cases", "通过用例"),
    "total": Msg("total", "总分"),
    "points": Msg("points", "分"),
    "points_line": Msg("Points {points}", "得分 {points}"),  # the terminal's last line
    # In place of the Points line when the run was interrupted (Ctrl-C): no grade at all.
    "interrupted": Msg(
        "Interrupted: no score is recorded and no file is written",
        "已中断：不记录分数，也不写任何文件",
    ),
    "input": Msg("input", "输入"),
    "claim": Msg("chapter check", "章节断言"),
    "expected": Msg("expected", "期望"),
    "got": Msg("got", "实际"),
    "ungraded": Msg(
        "{p:g} points not graded: {n} cases did not run (deselected, stopped early or out "
        "of time); they count as 0",
        "{p:g} 分未评：{n} 个用例未运行（被取消选择、提前停止或超出时间），按 0 分计",
    ),
    "hidden_failed": Msg(
        "hidden cases failed (category only): {n}", "未通过的隐藏用例（只显示类别）：{n}"
    ),
    "not_run": Msg("not run", "未运行"),
    "visible_failed": Msg(
        "failed visible cases (the chapter's checks): {n}", "未通过的公开用例（章节断言）：{n} 个"
    ),
    "same_failure": Msg(
        "{n} cases ({where}) failed the same way:", "{n} 个用例（{where}）以同样方式失败："
    ),
    "not_implemented": Msg(
        "{todo}: not implemented yet ({n} cases score 0)", "{todo}：尚未实现（{n} 个用例计 0 分）"
    ),
    "note": Msg("note", "说明"),
    "warning": Msg("warning", "警告"),
    "more": Msg("(-v shows every detail)", "（-v 显示全部细节）"),
    "output": Msg(
        "output of the submission (captured, first {n} characters)",
        "提交文件的输出（已捕获，前 {n} 个字符）",
    ),
    "result_error": Msg("result file", "结果文件"),
    "result_note": Msg("result file note", "结果文件说明"),
    "hidden_later": Msg(
        "hidden cases ({n} cases, {p:g} points): results shown {when}",
        "隐藏用例（{n} 个，{p:g} 分）：结果{when}显示",
    ),
    "of_kinds": Msg("{n} cases of {k} kinds", "{n} 个，共 {k} 类"),
    "of_one_kind": Msg("{n} cases of one kind", "{n} 个，共 1 类"),
    "n_cases": Msg("{n}", "{n} 个"),
    "stdlib_only": Msg("only the standard library is available", "只能使用 Python 标准库"),
    "after_due_date": Msg("after the due date", "在截止日期之后"),
    "after_published": Msg("when grades are published", "在成绩发布之后"),
    # Gradescope still shows the learner the whole score: say so, or "total 32.29 / 34"
    # above reads as a contradiction of the 94.42 beside it.
    "hidden": Msg(
        "to instructors only (your score includes their points)",
        "只向教师（你的总分包含这部分分数）",
    ),
    # The run's header (``header_lines``): what is graded, and behind which fence.
    "head_submission": Msg("rlsys: submission {path}", "rlsys：提交文件 {path}"),
    "head_battery": Msg(
        "rlsys: seed {seed}, {n} cases, max {p} points, sha256 {sha}",
        "rlsys：种子 {seed}，{n} 个用例，满分 {p}，sha256 {sha}",
    ),
    "head_not_read": Msg("none (not read)", "无（未读取）"),
    "head_fence": Msg("rlsys: fence {fence}", "rlsys：隔离 {fence}"),
    "head_open": Msg("; not protected: {what}", "；未防护：{what}"),  # grading.fence
    "head_result": Msg("rlsys: result file {path}", "rlsys：结果文件 {path}"),
    "missing": Msg("(missing)", "（缺失）"),
}
# The platform files' words (``outputs.cases``, ``outputs.fenceline``, ``outputs.text``).
CLIPPED = Msg("\n… ({n} more characters not shown)", "\n…（另有 {n} 个字符未显示）")
CASE_KIND = {"visible": Msg("visible", "公开"), "hidden": Msg("hidden", "隐藏")}
FENCE = Msg("Graded behind the fence: {fence}", "评分时的隔离：{fence}")
NO_FENCE = Msg("no fence recorded (nothing of the submission ran)", "未记录隔离（提交未运行）")
# ``rlsys template PATH``, said to the learner who asked for the template.
WROTE = Msg(
    "wrote {path}; grade it with: pytest --rlsys-submission {path}",
    "已写入 {path}；用以下命令评分：pytest --rlsys-submission {path}",
)


# The pytest plugin's own lines (``pytest_rlsys.plugin``), said before any report exists.
PLUGIN_WORDS: dict[str, Msg] = {
    "way_out": Msg(
        "rlsys: pytest stops on this project's own settings ({cause}) before the grading "
        "starts; `rlsys grade {file}` grades the file without them",
        "rlsys：pytest 在评分开始前就因本项目自己的设置（{cause}）而停止；"
        "`rlsys grade {file}` 不使用这些设置为该文件评分",
    ),
    "no_import": Msg("{where} does not import", "{where} 无法导入"),
    "no_plugin": Msg("no installed plugin takes {args}", "没有已安装的插件接受 {args}"),
    "set_aside": Msg(
        "rlsys: this project's pytest settings ({files}) are set aside: the grade is made "
        "by a clean pytest of its own, without the folder's addopts, plugins or conftest.py",
        "rlsys：本项目的 pytest 设置（{files}）已被搁置：评分由一个干净的 pytest 完成，"
        "不使用该文件夹的 addopts、插件或 conftest.py",
    ),
    "kept": Msg("; kept: {keys}", "；保留：{keys}"),
    "not_kept": Msg(
        "; not kept (limits, and a rubric file outside the graded file's folder, come "
        "from the command line): {keys}",
        "；未保留（限制以及被评分文件所在文件夹之外的评分细则文件只来自命令行）：{keys}",
    ),
    "cache_set_aside": Msg(
        "rlsys: {args} set aside: the clean pytest keeps no cache, so every case is graded",
        "rlsys：已忽略 {args}：干净的 pytest 不使用缓存，因此所有用例都会评分",
    ),
    "xdist_set_aside": Msg(
        "rlsys: {args} set aside: a grading runs in one pytest process (the submission in "
        "a child of its own), so the cases are graded as without it",
        "rlsys：已忽略 {args}：评分在一个 pytest 进程中进行（提交在它自己的子进程中运行），"
        "因此按未使用该选项的方式评分",
    ),
    "named_tests": Msg(
        "pytest read {files} from this folder, so the grading runs in a clean pytest of "
        "its own; run the tests named here ({named}) in a pytest run of their own, without "
        "--rlsys-submission",
        "pytest 从此文件夹读取了 {files}，因此评分在一个干净的 pytest 中进行；"
        "请在不带 --rlsys-submission 的单独 pytest 运行中运行这里指定的测试（{named}）",
    ),
}

LOAD_FAILED = Msg("the submission could not be loaded: {error}", "无法加载提交文件：{error}")
HIDDEN_NOTE = Msg("hidden case: only its category is shown", "隐藏用例：只显示类别")
HIDDEN_GROUP = Msg("{n} of {total} hidden cases failed", "{total} 个隐藏用例中有 {n} 个未通过")
NOT_IMPLEMENTED = HIDDEN_WORDS["not_implemented"]

# The chapter's check texts ("claims") that are prose, keyed by the battery's text of the
# claim, whole: a claim without an entry is the chapter's code, the same in both languages.
# A test checks that every visible case's prose claim has one, and that none is stale.
CLAIMS: dict[str, Msg] = {
    f"raises ValueError: {zh}": Msg(f"raises ValueError: {en}", f"应抛出 ValueError：{zh}")
    for zh, en in (
        ("阶段集合不一致时应失败", "mismatched stage sets must fail"),
        ("非有限阶段速率应失败", "a non-finite stage rate must fail"),
        ("非法重叠比例应失败", "an overlap fraction outside [0, 1] must fail"),
        (
            "同一互连域使用不同带宽口径时应失败",
            "one fabric given two different bandwidths must fail",
        ),
        ("非有限显存账本应失败", "a non-finite memory ledger must fail"),
    )
}


def claim_text(claim: str, lang: str) -> str:
    """A visible case's check, in ``lang`` (the chapter's code stays as it is)."""
    return CLAIMS[claim].get(lang) if claim in CLAIMS else claim


_CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")


def has_cjk(text: str) -> bool:
    return _CJK.search(text) is not None


@dataclass(frozen=True)
class Said:
    """One of the grader's own sentences as a fact: its key in ``SAID_WORDS`` and the
    values it names (a limit, a function, a line, an exit code; a nested ``Said``; or the
    submission's own text, kept as data).  Worded by ``text`` only when an output is
    written, so the language is an output option and no code reads a sentence back."""

    key: str
    values: tuple[tuple[str, str | Said], ...] = ()

    def text(self, lang: str) -> str:
        fields = {k: v.text(lang) if isinstance(v, Said) else v for k, v in self.values}
        return SAID_WORDS[self.key].fill(lang, fields)


def said(key: str, **values: str | int | float | Said) -> Said:
    """``Said(key, values)``, numbers written as the grader writes limits (``5``, ``0.5``)."""
    if key not in SAID_WORDS:
        raise KeyError(key)
    return Said(
        key,
        tuple(
            (k, v if isinstance(v, str | Said) else f"{v:g}" if isinstance(v, float) else str(v))
            for k, v in values.items()
        ),
    )


# The sandbox's and the grader's own sentences (``Said``), one entry per kind of fact.
SAID_WORDS: dict[str, Msg] = {
    "timeout": Msg("no answer within {limit} s", "{limit} 秒内没有返回"),
    "load_timeout": Msg("loading did not finish within {limit} s", "加载未在 {limit} 秒内完成"),
    # A load or call cut short because the submission's time budget ended (grading.grader
    # scores its case "not run: over budget").
    "budget_ended": Msg(
        "the submission's time budget of {limit} s ended", "提交的总时间预算 {limit} 秒已用完"
    ),
    "stopped_answering": Msg("the submission's process stopped answering", "提交的进程不再应答"),
    "died": Msg(
        "the submission's process died: {signal} ({hint})", "提交的进程被终止：{signal}（{hint}）"
    ),
    "SIGSEGV": Msg("a segmentation fault, usually runaway recursion", "段错误，通常是递归失控"),
    "SIGXCPU": Msg("the CPU-time limit was exceeded", "超出了 CPU 时间限制"),
    "SIGKILL": Msg(
        "killed, by the system's out-of-memory killer or by the submission itself",
        "被系统的内存耗尽保护或提交自身杀死",
    ),
    "SIGXFSZ": Msg("the file-size limit was exceeded", "超出了文件大小限制"),
    "SIGABRT": Msg("the interpreter aborted, often memory exhaustion", "解释器中止，常因内存耗尽"),
    "signal": Msg("terminated by a signal", "被信号终止"),
    "fence_failed": Msg(
        "the grader could not fence the submission's process (a fault of this machine)",
        "评分器无法隔离提交的进程（这台机器的问题）",
    ),
    "channel_lost": Msg(
        "the submission closed or replaced the grader's request or reply channel (exit code "
        "{code})",
        "提交关闭或替换了评分器的请求或应答通道（退出码 {code}）",
    ),
    "exited": Msg(
        "the submission's process exited with code {code} (sys.exit / os._exit?)",
        "提交的进程以退出码 {code} 结束（是否调用了 sys.exit 或 os._exit？）",
    ),
    "died_loading": Msg("{died} while loading", "加载时{died}"),
    "no_python": Msg("Python could not be started ({error})", "无法启动 Python（{error}）"),
    "garbled_load": Msg("garbled load reply: {error}", "无法解析加载应答：{error}"),
    "garbled": Msg("garbled reply: {error}", "无法解析应答：{error}"),
    "reply_too_large": Msg(
        "the answer is too large to send to the grader", "返回值太大，无法发送给评分器"
    ),
    "reply_not_sent": Msg(
        "the answer could not be sent to the grader ({exc})", "返回值无法发送给评分器（{exc}）"
    ),
    "empty_reply": Msg("reply has neither a value nor an error", "应答中既没有返回值也没有错误"),
    "reload_failed": Msg(
        "the submission did not load again after its process was restarted (its first load "
        "succeeded; what it printed or raised then is not shown, as calls had already run)",
        "提交的进程重启后未能再次加载（首次加载成功；调用已经运行过，因此不显示它当时打印或抛出的内容）",
    ),
    # A failed import: the exception's class and its own text (data, quoted in Chinese).
    "load_raised": Msg("{exc}: {message}", "{exc}：“{message}”"),
    "load_raised_at": Msg(
        "{exc}: {message} — line {line} reads: {text}",
        "{exc}：“{message}” — 第 {line} 行是：`{text}`",
    ),
    "memory_too_low": Msg(
        "the grader's address-space limit ({limit} MiB) is too low to start the submission's "
        "process; this is the instructor's setting (--rlsys-memory-mb, default 1024), not a "
        "fault of the submission",
        "评分器的地址空间限制（{limit} MiB）太低，无法启动提交的进程；这是教师的设置"
        "（--rlsys-memory-mb，默认 1024），不是提交的问题",
    ),
    "missing_function": Msg(
        "the submission defines no function {func}()", "提交中没有定义函数 {func}()"
    ),
    "output_sealed": Msg(
        "... [what the submission printed once hidden cases began is not shown]",
        "……［隐藏用例开始后提交打印的内容不予显示］",
    ),
    "not_utf8": Msg(
        "the file is not UTF-8 text (byte 0x{byte} on line {line}); save it as UTF-8",
        "文件不是 UTF-8 文本（第 {line} 行有字节 0x{byte}）；请另存为 UTF-8",
    ),
    "empty_file": Msg(
        "the file is empty: write TODO 1-3 in it (`rlsys template FILE` writes the template)",
        "文件是空的：请在其中完成 TODO 1-3（`rlsys template FILE` 会写出模板）",
    ),
    "too_complex": Msg(
        "Python cannot compile the file: it is too deeply nested or too large ({exc}); "
        "split long expressions and deep nesting into smaller steps",
        "Python 无法编译该文件：嵌套太深或规模太大（{exc}）；"
        "请把过长的表达式和过深的嵌套拆成较小的步骤",
    ),
    "compile_failed": Msg(
        "Python cannot compile the file ({exc})", "Python 无法编译该文件（{exc}）"
    ),
    "nul_bytes": Msg(
        "the file contains NUL bytes; is it really a Python file?",
        "文件含有 NUL 字节；它真的是 Python 文件吗？",
    ),
    "as_is": Msg("{text}", "{text}"),  # text that is not the grader's own
    # Why a submission's path was refused (``grading.grader.read_submission``).
    "linked_folder": Msg(
        "{path}: the folder {folder} is a symbolic link; the grader follows no links: "
        "give the real path",
        "{path}：文件夹 {folder} 是符号链接；评分器不跟随链接：请给出真实路径",
    ),
    "file_missing": Msg("{path}: no such file", "{path}：文件不存在"),
    "file_directory": Msg(
        "{path} is a directory; give the path of your .py file",
        "{path} 是文件夹；请给出你的 .py 文件的路径",
    ),
    "file_link": Msg(
        "{path} is a symbolic link; the grader reads only a regular file: "
        "submit the .py file itself",
        "{path} 是符号链接；评分器只读取普通文件：请提交 .py 文件本身",
    ),
    "file_special": Msg(
        "{path} is not a regular file (a FIFO, device or socket); submit the .py file itself",
        "{path} 不是普通文件（而是 FIFO、设备或套接字）；请提交 .py 文件本身",
    ),
    "file_too_big": Msg(
        "{path} is over {mib} MiB; a submission may be at most {mib} MiB of Python source",
        "{path} 超过 {mib} MiB；提交的 Python 源文件最多 {mib} MiB",
    ),
    "file_bad_name": Msg("{path}: not a usable file name", "{path}：文件名不可用"),
    "file_unreadable": Msg("{path}: cannot be read ({detail})", "{path}：无法读取（{detail}）"),
    "ran_as": Msg("the submission ran as {user}", "提交以 {user} 的身份运行"),
    # ``grading.grader``: the grader failed around a case (it scores 0).
    "grader_fault_note": Msg(
        "internal grader error in case {case}: {exc}", "评分器内部错误（用例 {case}）：{exc}"
    ),
    # ``grading.alone``: a failed case passed when run again, in a fresh process.
    "keeps_state": Msg(
        "{func}() seems to keep state between calls: a case it failed passes when run "
        "again in a fresh process (a module-level cache, counter or mutable default?)",
        "{func}() 似乎在调用之间保留了状态：它未通过的一个用例在新进程中重新运行时通过了"
        "（是否使用了模块级缓存、计数器或可变默认参数？）",
    ),
    # ``grading.signature``: a fact of the submission's source, said to learners.
    "missing_parameter": Msg(
        "your function lacks a parameter of the template: {func}() has no parameter "
        "{param}; a call that passes it raises TypeError",
        "你的函数缺少模板中的一个参数：{func}() 没有参数 {param}；传入该参数的调用会抛出 TypeError",
    ),
    "fresh_uid": Msg("a fresh unprivileged uid", "一个新的非特权 uid"),
    # ``grading.isolation``: how the child ran, for instructors (``ScoreReport.notes``).
    "root_fallback": Msg(
        "no Python executable by {user}; the child runs as root",
        "{user} 无法执行 Python；子进程以 root 身份运行",
    ),
    "cleanup_failed": Msg(
        "cleanup after the submission failed ({exc})", "提交运行后的清理失败（{exc}）"
    ),
}
