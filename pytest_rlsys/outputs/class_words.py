"""Every word the class page says (``class_report``, ``near_copies``, ``pairview``), in
English and Chinese: the page follows the batch's language (``rlsys_lang``, ``--lang``).

Only our own words are here; what a row says (a load error, a category, a reason not to
compare) comes in the batch's language from the grader's and the similarity check's own
catalogues.  Each entry's fields are filled by ``Msg.fill`` (one pass: a learner's text
is never searched for fields).
"""

from __future__ import annotations

from pytest_rlsys.messages import Msg

__all__ = ["W", "say"]

W: dict[str, Msg] = {
    # -- the page, its navigation and facts
    "title": Msg("rlsys class report", "rlsys 班级报告"),
    "nav": Msg("sections", "章节"),
    "nav_near": Msg(
        "Near copies ({flagged} flagged, {look} worth a look)",
        "相似提交（{flagged} 份被标记，{look} 份值得一看）",
    ),
    "roster": Msg("Roster", "名单"),
    "scores": Msg("Score distribution", "分数分布"),
    "categories": Msg("Hidden categories", "隐藏类别"),
    "problems": Msg("Problems", "问题"),
    "slowest": Msg("Slowest", "最慢"),
    "submissions": Msg("submissions", "提交数"),
    "graded": Msg("graded", "已评分"),
    "did not load": Msg("did not load", "未能加载"),
    "could not be graded": Msg("could not be graded", "无法评分"),
    "timed out": Msg("timed out", "超时"),
    "seed": Msg("seed", "种子"),
    "battery": Msg("battery SHA-256", "测试集 SHA-256"),
    "batteries": Msg(
        "the submissions were graded with different batteries; compare their scores with care",
        "这些提交由不同的测试集评分；比较分数时请谨慎",
    ),
    # -- score distribution
    "scores_note": Msg(
        "Graded submissions only (files that did not load score 0 and are listed below); "
        "each range includes its lower bound, and 100% falls in 90–100.",
        "仅计已评分的提交（未能加载的文件记 0 分，列在下方）；每个区间含其下界，100% 计入 90–100。",
    ),
    "overall": Msg("Overall", "总分"),
    "distribution": Msg("{title}: score distribution", "{title}：分数分布"),
    "axis": Msg("score, % of the maximum", "得分（占满分的百分比）"),
    "stats": Msg(
        "n = {n}, mean {mean}%, median {median}%, min {min}%, max {max}%",
        "n = {n}，平均 {mean}%，中位数 {median}%，最低 {min}%，最高 {max}%",
    ),
    "no_graded": Msg("no graded submission", "没有已评分的提交"),
    "hist_caption": Msg(
        "Score distribution: submissions per score range (the histograms above, as a table)",
        "分数分布：各分数区间的提交数（即上方直方图的表格形式）",
    ),
    "score_range": Msg("score range (%)", "分数区间（%）"),
    "graded_submissions": Msg("graded submissions", "已评分的提交"),
    # -- hidden categories
    "categories_head": Msg("Hidden categories most often failed", "最常未通过的隐藏类别"),
    "no_category": Msg(
        "No hidden case failed in an attempted TODO of a submission that loaded.",
        "在已加载的提交所尝试的 TODO 中，没有未通过的隐藏用例。",
    ),
    "category": Msg("category", "类别"),
    "failing": Msg("submissions failing", "未通过的提交"),
    "attempting": Msg("submissions attempting", "尝试的提交"),
    "share_failing": Msg("share failing", "未通过比例"),
    "failed_cases": Msg("failed cases / cases", "未通过用例 / 用例"),
    "top_categories": Msg(
        "The {n} hidden categories most often failed (submissions failing at least one case)",
        "最常未通过的 {n} 个隐藏类别（至少有一个用例未通过的提交数）",
    ),
    "more_categories": Msg(
        "{n} more hidden categories failed less often", "另有 {n} 个隐藏类别较少未通过"
    ),
    "other_categories": Msg(
        "The other hidden categories failed at least once", "其余至少未通过一次的隐藏类别"
    ),
    "top_table": Msg("The {n} most often failed, as a table", "最常未通过的 {n} 个（表格）"),
    "categories_note": Msg(
        "Counted over the {n} graded submissions, in the TODOs each attempted (a TODO still "
        "raising NotImplementedError or not written at all is left out, so “submissions "
        "attempting” can be fewer), over the cases that ran to an answer (timeouts are "
        "listed in the next section).",
        "统计范围：{n} 份已评分的提交中各自尝试过的 TODO（仍抛出 NotImplementedError 或完全未写的 "
        "TODO 不计，因此“尝试的提交”可能更少），且只计运行出结果的用例（超时列在下一节）。",
    ),
    # -- roster
    "no_submission": Msg("No submission.", "没有提交。"),
    "roster_caption": Msg(
        "Every submission (click a column to sort)", "全部提交（点击列标题排序）"
    ),
    "submission": Msg("submission", "提交"),
    "status": Msg("status", "状态"),
    "score": Msg("score", "得分"),
    "why": Msg("why below full marks", "未得满分的原因"),
    "similarity": Msg("similarity (flag, closest, sign)", "相似度（标记、最接近、依据）"),
    # a row's status: the CSV's own word in English (the two read side by side)
    "st_graded": Msg("graded", "已评分"),
    "st_not_loaded": Msg("not_loaded", "未能加载"),
    "st_not_graded": Msg("not_graded", "未评分"),
    # the reference's own file where a submission's name stands (similarity.REFERENCE)
    "reference": Msg("reference", "参考答案"),
    "closest_score": Msg("closest: {name}, code {score}", "最接近：{name}，代码 {score}"),
    # -- problems
    "problems_head": Msg("Submissions that did not load or timed out", "未能加载或超时的提交"),
    "no_problem": Msg(
        "Every submission loaded and none timed out.", "所有提交均已加载，且没有超时。"
    ),
    "problems_caption": Msg(
        "Submissions that did not load, could not be graded, or timed out",
        "未能加载、无法评分或超时的提交",
    ),
    "problem": Msg("problem", "问题"),
    "detail": Msg("detail", "详情"),
    "hung": Msg(
        "{hung} of {total} cases timed out ({where})", "{total} 个用例中有 {hung} 个超时（{where}）"
    ),
    "skipped": Msg("; {n} more were not run after them", "；其后另有 {n} 个未运行"),
    # -- slowest
    "slowest_head": Msg("Slowest submissions", "最慢的提交"),
    "no_timing": Msg("No timing recorded.", "没有记录耗时。"),
    "slowest_title": Msg(
        "The {n} slowest submissions (seconds to grade)", "评分最慢的 {n} 份提交（秒）"
    ),
    "seconds": Msg("seconds", "秒"),
    # -- near copies: marks and signs
    "flagged": Msg("flagged", "已标记"),
    "worth a look": Msg("worth a look", "值得一看"),
    "built at run time": Msg("built at run time", "运行时生成代码"),
    "not compared": Msg("not compared", "未比较"),
    "code": Msg("code", "代码"),
    "sentences": Msg("sentences", "参考语句"),
    "behaviour": Msg("behaviour", "行为"),
    "hidden": Msg("built at run time", "运行时生成代码"),
    "side_by_side": Msg("side by side", "并排对照"),
    "near_head": Msg("Near copies", "相似提交"),
    "near_note": Msg(
        "Each file is listed with its closest match, and with the reference too when it is "
        "over the reference's own signs. Shared code: the share of the smaller file's "
        "fingerprints (winnowed, names and layout ignored) the other has; {threshold} or more "
        "is flagged. Reference sentences: how many of the reference's own string literals "
        "(its error messages) the file holds word for word; {sentences} or more is flagged. "
        "Behaviour: the weighted share of about 60 calls on inputs the template leaves open "
        "(strings for numbers, odd fabric ids, reports missing keys) on which the file does "
        "what the other does; against the reference, {behaves} or more confirms a flag by "
        "code or sentences and alone makes the file worth a look, never flagged (a learner "
        "who studied the reference can behave like it without copying); two classmates "
        "whose shared code is under {confirmed} are flagged only if both were probed and "
        "they also reach it (a file the probes could not judge is never evidence "
        "of likeness). Flagged by: the signs that flagged the pair. A flag is a reason to "
        "read both files, not proof of copying, and says nothing of which came first: it "
        "changes no score.",
        "每个文件与其最接近的文件一同列出；若它超过参考答案自身的判据，也与参考答案一同列出。"
        "共享代码：较小文件的指纹（winnowing，忽略命名与排版）中另一文件也有的比例；"
        "{threshold} 及以上即被标记。参考语句：文件逐字包含参考答案自身字符串字面量（其错误信息）"
        "的条数；{sentences} 条及以上即被标记。行为：在模板未规定的输入上（以字符串代替数字、"
        "奇怪的 fabric id、缺少键的报告）约 60 次调用中，文件与另一方行为相同的加权比例；"
        "与参考答案相比，{behaves} 及以上可印证代码或语句的标记，单独出现时只使文件值得一看，"
        "绝不被标记（认真读过参考答案的学生不抄也可能行为与之相同）；"
        "共享代码低于 {confirmed} 的两位同学，"
        "只有在双方都被探测且也达到该比例时才被标记（探测无法判断的文件绝不作为相似的证据）。"
        "标记依据：使这一对被标记的判据。标记只是应当阅读这两个文件的理由，而非抄袭的证明，"
        "也不说明谁在先；它不改变任何分数。",
    ),
    "pairs_caption": Msg(
        "Flagged pairs (each pair once, its files in name order: a pair, not who copied whom)",
        "被标记的文件对（每对只列一次，按文件名排序：是一对，不表示谁抄了谁）",
    ),
    "file": Msg("file", "文件"),
    "shared_code": Msg("shared code", "共享代码"),
    "reference_sentences": Msg("reference sentences", "参考语句"),
    "flagged_by": Msg("flagged by", "标记依据"),
    "view": Msg("view", "查看"),
    "no_pair": Msg(
        "No {compared}submission is a near copy of the reference or of a classmate.",
        "没有{compared}提交与参考答案或同学的文件相近。",
    ),
    "no_pair_but": Msg(
        "No {compared}submission is a near copy of the reference or of a classmate by its "
        "code, sentences or behaviour (but see below).",
        "按代码、语句或行为，没有{compared}提交与参考答案或同学的文件相近（但请看下文）。",
    ),
    "compared": Msg("compared ", "已比较的"),
    "worth_look": Msg(
        "Worth a look (not flagged: shared code within {below} under the line, or over it "
        "without the behaviour that confirms it; or behaviour {behaves} or more against the "
        "reference with neither its code nor its sentences): {files}.",
        "值得一看（未被标记：共享代码低于界线不超过 {below}，或高于界线但行为未能印证；"
        "或与参考答案的行为达到 {behaves} 及以上，却没有其代码或语句）：{files}。",
    ),
    "built_files": Msg(
        "Code built at run time (the file reaches exec, eval, compile or the like, or a "
        "function it gives is named nowhere in it: its code cannot all be compared; read "
        "them yourself): {files}.",
        "运行时生成的代码（文件用到 exec、eval、compile 之类，或它提供的某个函数在文件中"
        "无处出现：其代码无法全部比较；请亲自阅读）：{files}。",
    ),
    "unread_files": Msg(
        "Not compared (not read: not a .py file, a link, a folder without one .py file, a "
        "FIFO or a file over the size limit; or its analysis went past a limit; read them "
        "yourself): {files}.",
        "未比较（未读取：不是 .py 文件、是链接、文件夹中没有唯一的 .py 文件、是 FIFO 或"
        "超过大小上限；或其分析超出限制；请亲自阅读）：{files}。",
    ),
    "views_head": Msg("Side by side", "并排对照"),
    # -- a pair side by side (pairview)
    "pair_summary": Msg("{a} and {b} side by side", "{a} 与 {b} 并排对照"),
    "highlighted": Msg("{share} highlighted", "高亮 {share}"),
    "pair_note": Msg(
        "Highlighted: runs of {k} tokens or more both files hold (names and literals "
        "ignored), not counting the template's own{cut}.",
        "高亮部分：两个文件都有的连续 {k} 个或更多词元（忽略命名与字面量），"
        "不含模板自带的部分{cut}。",
    ),
    "pair_cut": Msg(" (each file's first {kib} KiB)", "（各文件的前 {kib} KiB）"),
    "pair_reference": Msg(
        "The reference is two texts: this package's solution, shown here, and the chapter's "
        "printed reference, which ships as fingerprints only and is not shown. A file that "
        "copies the chapter's code shares less with the solution here than its shared-code "
        "figure says: read it beside the chapter's code.",
        "参考答案包含两份：此处显示的本包解答，以及章节中印出的参考答案（只以指纹形式随包提供，"
        "不显示）。抄写章节代码的文件在此处与本包解答的重合会低于其“共享代码”数值："
        "请对照章节中的代码阅读。",
    ),
    "pair_unread": Msg(
        "{name}: not shown side by side (not a readable file of at most {kib} KiB).",
        "{name}：未并排显示（不是不超过 {kib} KiB 的可读文件）。",
    ),
}


def say(key: str, lang: str, **fields: object) -> str:
    """Entry ``key`` in ``lang``, its fields filled."""
    return W[key].fill(lang, {name: str(value) for name, value in fields.items()})
