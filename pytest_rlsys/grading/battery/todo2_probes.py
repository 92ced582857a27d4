"""TODO 2, ``transfer_ledger``: probes with fixed inputs (issues 23 and 31), so that whether a
misreading shows never depends on the seed."""

from __future__ import annotations

from typing import Any

from pytest_rlsys.grading.battery.builder import BatteryBuilder
from pytest_rlsys.grading.battery.checks import CheckFactory, expect_relation, identical
from pytest_rlsys.grading.battery.generators import BAD_VALUES, edge
from pytest_rlsys.grading.battery.model import Call, plain
from pytest_rlsys.grading.battery.todo2 import EDGE_NUMBERS, FUNC, KEYS, SUMMARY
from pytest_rlsys.messages import Msg

__all__ = ["FIXED_PLACEMENT", "fixed_probes"]


# Pool names of several characters: equal ones decoded from JSON are distinct objects, so
# comparing pools with ``is`` shows (one-letter strings are shared by CPython).
FIXED_PLACEMENT = {"rollout": "pool-a", "reward": "pool-a", "learner": "pool-b", "critic": "pool-c"}
NEAR = (
    ("1e-3", 1e-3),
    ("1e-4", 1e-4),
    ("1e-5", 1e-5),
    ("1e-6", 1e-6),
    # Closer than any tolerance: "at that maximum" is ==, so even these are not tied.
    ("1e-8", 1e-8),
    ("1e-12", 1e-12),
)


def _rows_copy_fields(edges: list[dict[str, Any]]) -> CheckFactory:
    """Each row holds its edge's own fields exactly (an int stays an int)."""

    def relation(values: list[Any]) -> str | None:
        rows = values[0]["rows"]
        for index, (row, sent) in enumerate(zip(rows, edges, strict=True)):
            for key, value in plain(sent).items():
                if key not in row or not identical(value, row[key]):
                    return f"$.rows[{index}].{key}: not a copy of the edge's own field"
        return None

    return expect_relation(relation)


def fixed_probes(b: BatteryBuilder) -> None:
    """Probes with fixed inputs: whether a misreading shows never depends on the seed."""
    place = FIXED_PLACEMENT
    for label, gap in NEAR:
        # "nvlink" is the maximum by a relative gap; "ib" (sorting first) is just below.
        edges = [
            edge("rollout", "learner", "ib"),
            edge("reward", "learner", "nvlink", bytes_per_item=1000 * (1 + gap)),
        ]
        b.diff(
            f"near_tie_fabrics_{label.replace('-', '_')}",
            Msg(
                f"a fabric {label} (relative) below the maximum is not critical",
                f"比最大暴露低 {label}（相对）的互连域不是关键互连域",
            ),
            "critical",
            Call(FUNC, (edges, place)),
            ("critical_exposed_seconds_per_s", "critical_fabrics"),
        )
    small = [
        edge("rollout", "learner", "ib", bytes_per_item=2, bandwidth_bytes_per_s=1000),
        edge(
            "reward", "learner", "nvlink", bytes_per_item=2 * (1 + 1e-6), bandwidth_bytes_per_s=1000
        ),
    ]
    b.diff(
        "near_tie_small_fabrics",
        Msg(
            "a small fabric exposure 1e-6 (relative) below the maximum is not critical",
            "很小的暴露比最大值低 1e-6（相对）时也不是关键互连域",
        ),
        "critical",
        Call(FUNC, (small, place)),
        ("critical_exposed_seconds_per_s", "critical_fabrics"),
    )
    _boundary_probes(b)
    # Exposures that are not round (1/3, 3/14...): rounding shows.
    odd = [
        edge("rollout", "learner", "pcie", bandwidth_bytes_per_s=3000, overlap_fraction=0.3),
        edge(
            "learner",
            "critic",
            "ib",
            bytes_per_item=500,
            items_per_work_unit=3,
            bandwidth_bytes_per_s=7000,
        ),
        edge(
            "reward",
            "critic",
            "pcie",
            bytes_per_item=333.3,
            work_units_per_second=0.7,
            bandwidth_bytes_per_s=3000,
        ),
    ]
    b.diff(
        "non_round_exposure",
        Msg("keeps exposures unrounded (1000 / 3000)", "暴露不取整（1000 / 3000）"),
        "exposure",
        Call(FUNC, (odd, place)),
        SUMMARY,
    )
    b.diff(
        "non_round_rows",
        Msg("keeps the rows' numbers unrounded", "账本行的数值不取整"),
        "rows",
        Call(FUNC, (odd, place)),
        ("rows",),
    )
    extra = [
        edge("rollout", "learner", "pcie", note="warm-up", priority=2),
        edge("rollout", "reward", "pcie", note="local"),
        edge("critic", "learner", "ib", priority=1, overlap_fraction=0.5),
    ]
    b.diff(
        "rows_keep_extra_fields",
        Msg("rows keep every field of their edge", "账本行保留边的全部字段"),
        "rows",
        Call(FUNC, (extra, place)),
        ("rows",),
    )
    bare = [
        {k: v for k, v in edge("rollout", "learner", "pcie").items() if k != "overlap_fraction"},
        {k: v for k, v in edge("reward", "rollout", "pcie").items() if k != "overlap_fraction"},
    ]
    b.diff(
        "rows_without_overlap_field",
        Msg(
            "a row adds no overlap_fraction its edge lacks",
            "边没有 overlap_fraction 时账本行也不添加",
        ),
        "rows",
        Call(FUNC, (bare, place)),
        ("rows",),
    )
    typed = [
        edge("rollout", "learner", "pcie", items_per_work_unit=2.0, bandwidth_bytes_per_s=2048),
        edge("reward", "rollout", "pcie", bytes_per_item=64.0, bandwidth_bytes_per_s=2048),
        edge("critic", "reward", "ib", overlap_fraction=0.5, work_units_per_second=4),
    ]
    typed_call = Call(FUNC, (typed, place))
    b.anchored(
        "rows_copy_fields_exactly",
        Msg(
            "rows copy their edge's fields exactly (an int stays an int)",
            "账本行原样复制边的字段（int 仍是 int）",
        ),
        "rows",
        [typed_call],
        _rows_copy_fields(typed),
        ("rows",),
    )
    mixed = [
        edge("rollout", "learner", "pcie"),
        edge("rollout", "reward", "nvlink", bytes_per_item=4096),
    ]
    b.diff(
        "same_pool_fabric_not_listed",
        Msg(
            "a fabric named only by same-pool edges has no entry",
            "只被同池边引用的互连域不出现在汇总中",
        ),
        "totals",
        Call(FUNC, (mixed, place)),
        ("fabric_exposed_seconds_per_s", "critical_fabrics"),
    )
    # What the template asks of cross-pool edges only: a same-pool edge needs no
    # fabric_id, and its bandwidth is not held to its fabric's.
    b.diff(
        "same_pool_edge_without_fabric",
        Msg("accepts a same-pool edge without fabric_id", "接受没有 fabric_id 的同池边"),
        "fabric_id",
        Call(FUNC, ([mixed[0], {k: v for k, v in mixed[1].items() if k != "fabric_id"}], place)),
        KEYS,
    )
    b.diff(
        "same_pool_edge_other_bandwidth",
        Msg(
            "accepts a same-pool edge with another bandwidth on a used fabric",
            "接受在已用互连域上声明另一带宽的同池边",
        ),
        "bandwidths",
        Call(FUNC, ([mixed[0], dict(mixed[1], fabric_id="pcie", bandwidth_bytes_per_s=64)], place)),
        KEYS,
    )
    # Validation of what the computation skips: a same-pool edge's numbers are checked
    # like any edge's (the template lists no exception; the reference checks them).
    valid = Call(FUNC, (mixed, place))
    for name, kind in (
        ("overlap_fraction", "above_1"),
        ("overlap_fraction", "nan"),
        ("bandwidth_bytes_per_s", "zero"),
        ("bandwidth_bytes_per_s", "nan"),
        ("items_per_work_unit", "zero"),
        ("bytes_per_item", "negative"),
        ("work_units_per_second", "nan"),
    ):
        field_msg, field_rule, _ = EDGE_NUMBERS[name]
        bad_value, bad_label = BAD_VALUES[kind]
        b.refusal(
            f"same_pool_{kind}_{name}",
            Msg(
                f"refuses {bad_label.en} {field_msg.en} on a same-pool edge",
                f"拒绝同池边上{bad_label.zh}{field_msg.zh}",
            ),
            field_rule,
            valid,
            Call(FUNC, ([mixed[0], dict(mixed[1], **{name: bad_value})], place)),
        )
    b.refusal(
        "overlap_just_below_0",
        Msg("refuses an overlap of -0.25", "拒绝为 -0.25 的重叠比例"),
        "overlap",
        valid,
        Call(FUNC, ([dict(mixed[0], overlap_fraction=-0.25), mixed[1]], place)),
    )
    twins = [edge("rollout", "learner", "pcie"), edge("reward", "critic", "pcie")]
    b.refusal(
        "fabric_bandwidths_1e_6",
        Msg(
            "refuses one fabric with bandwidths 1e-6 (relative) apart",
            "拒绝同一互连域相差 1e-6（相对）的两种带宽",
        ),
        "bandwidths",
        Call(FUNC, (twins, place)),
        Call(FUNC, ([twins[0], dict(twins[1], bandwidth_bytes_per_s=1000.001)], place)),
    )


def _boundary_probes(b: BatteryBuilder) -> None:
    """The edges of the stated tolerances (issue 31): bandwidths are different beyond
    isclose(rel 1e-9, abs 1e-12) of the fabric's first cross-pool edge; exposures tie only
    when ==; fabric names sort by code point. Fixed inputs."""
    place = FIXED_PLACEMENT
    tied = [
        edge("rollout", "learner", "ib", bytes_per_item=250),
        edge("reward", "critic", "ib", bytes_per_item=500),
        edge("learner", "critic", "nvlink", bytes_per_item=750),
    ]
    b.diff(
        "exact_tie_of_sums",
        Msg(
            "a sum 0.25 + 0.5 ties a fabric at 0.75 (equal sums are tied)",
            "0.25 + 0.5 的和与 0.75 的互连域并列（相等即并列）",
        ),
        "critical",
        Call(FUNC, (tied, place)),
        ("critical_exposed_seconds_per_s", "critical_fabrics"),
    )
    large = [
        edge("rollout", "learner", "ib", bytes_per_item=10**12, bandwidth_bytes_per_s=1),
        edge("reward", "critic", "nvlink", bytes_per_item=10**12 + 1, bandwidth_bytes_per_s=1),
    ]
    b.diff(
        "near_tie_large_fabrics",
        Msg(
            "exposures 1e12 and 1e12 + 1 are not tied (== only)",
            "暴露 1e12 与 1e12 + 1 不并列（只按 == 比较）",
        ),
        "critical",
        Call(FUNC, (large, place)),
        ("critical_exposed_seconds_per_s", "critical_fabrics"),
    )
    names = [
        edge("rollout", "learner", "élink"),
        edge("reward", "critic", "alink"),
        edge("learner", "critic", "Zlink"),
    ]
    b.diff(
        "fabrics_sorted_by_code_point",
        Msg(
            "tied fabrics sorted as sorted() does ('Z' < 'a' < 'é')",
            "并列互连域按 sorted() 的方式排序（'Z' < 'a' < 'é'）",
        ),
        "critical",
        Call(FUNC, (names, place)),
        ("critical_fabrics",),
    )
    # Three cross-pool edges of one fabric, their bandwidths in the given order.
    trio = [
        edge("rollout", "learner", "pcie"),
        edge("reward", "critic", "pcie"),
        edge("learner", "critic", "pcie"),
    ]

    def widths(*values: float) -> Call:
        edges = [dict(e, bandwidth_bytes_per_s=w) for e, w in zip(trio, values, strict=True)]
        return Call(FUNC, (edges, place))

    base = 1000
    accepted: list[tuple[str, Msg, Call]] = [
        (
            "fabric_bandwidths_1e_10",
            Msg(
                "accepts one fabric with bandwidths 1e-10 (relative) apart (equal within 1e-9)",
                "接受同一互连域相差 1e-10（相对）的带宽（1e-9 以内相等）",
            ),
            widths(base, base * (1 + 1e-10), base),
        ),
        (
            "fabric_large_bandwidths",
            Msg(
                "accepts one fabric with bandwidths 1e12 and 1e12 + 1 (relative tolerance)",
                "接受同一互连域的带宽 1e12 与 1e12 + 1（相对容差）",
            ),
            widths(10**12, 10**12 + 1, 10**12),
        ),
        (
            "fabric_tiny_bandwidths",
            Msg(
                "accepts one fabric with bandwidths 2e-12 and 2.5e-12 (absolute tolerance 1e-12)",
                "接受同一互连域的带宽 2e-12 与 2.5e-12（绝对容差 1e-12）",
            ),
            widths(2e-12, 2.5e-12, 2e-12),
        ),
        (
            "fabric_bandwidths_first_in_the_middle",
            Msg(
                "compares each bandwidth with the fabric's first one (b + 0.6e-9 b first, "
                "then b, then b + 1.2e-9 b)",
                "每个带宽都与该互连域第一条跨池边的带宽比较"
                "（先 b + 0.6e-9 b，再 b，再 b + 1.2e-9 b）",
            ),
            widths(base * (1 + 0.6e-9), base, base * (1 + 1.2e-9)),
        ),
    ]
    for case_id, msg, call in accepted:
        b.diff(case_id, msg, "bandwidths", call, SUMMARY)
    same = widths(base, base, base)
    refused: list[tuple[str, Msg, Call]] = [
        (
            "fabric_bandwidths_1e_8",
            Msg(
                "refuses one fabric with bandwidths 1e-8 (relative) apart",
                "拒绝同一互连域相差 1e-8（相对）的带宽",
            ),
            widths(base, base, base * (1 + 1e-8)),
        ),
        (
            "fabric_small_bandwidths_1e_8",
            Msg(
                "refuses one fabric with bandwidths 0.002 and 0.002 * (1 + 1e-8)",
                "拒绝同一互连域的带宽 0.002 与 0.002 * (1 + 1e-8)",
            ),
            widths(0.002, 0.002 * (1 + 1e-8), 0.002),
        ),
        (
            "fabric_bandwidths_chain",
            Msg(
                "refuses b, b + 0.6e-9 b, b + 1.2e-9 b on one fabric (each next one is close, "
                "the last is not close to the first)",
                "拒绝同一互连域的 b、b + 0.6e-9 b、b + 1.2e-9 b"
                "（相邻的接近，最后一个与第一个不接近）",
            ),
            widths(base, base * (1 + 0.6e-9), base * (1 + 1.2e-9)),
        ),
    ]
    for case_id, msg, call in refused:
        b.refusal(case_id, msg, "bandwidths", same, call)
