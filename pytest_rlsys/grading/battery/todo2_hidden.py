"""TODO 2, ``transfer_ledger``: the hidden cases (random differential strata, properties,
refusals), in their fixed order; the fixed-input probes are in ``todo2_probes``."""

from __future__ import annotations

import random
from typing import Any

from pytest_rlsys.grading.battery.builder import BatteryBuilder
from pytest_rlsys.grading.battery.checks import expect_relation, expect_unchanged_inputs, same_keys
from pytest_rlsys.grading.battery.generators import (
    BAD_VALUES,
    cross,
    edge,
    gen_edges,
    num,
    shuffled,
)
from pytest_rlsys.grading.battery.model import Call
from pytest_rlsys.grading.battery.todo2 import EDGE_NUMBERS, FUNC, KEYS, SUMMARY
from pytest_rlsys.grading.battery.todo2_probes import FIXED_PLACEMENT, fixed_probes
from pytest_rlsys.grading.comparison import numbers_match
from pytest_rlsys.messages import Msg

__all__ = ["add_hidden"]


# (cross-pool edges, fabrics, tie, a same-pool edge, ints)
STRATA: tuple[tuple[int, int, bool, bool, bool], ...] = (
    (3, 2, False, True, True),
    (5, 3, False, True, False),
    (2, 1, False, False, True),
    (4, 2, True, True, False),
    (6, 3, False, False, True),
    (3, 2, True, False, False),
    (1, 1, False, True, False),
    (7, 3, False, True, True),
)


def add_hidden(b: BatteryBuilder, rng: random.Random) -> None:
    for i, (count, fabrics, tie, same_pool, ints) in enumerate(STRATA):
        edges, placement = gen_edges(
            rng, count, fabrics=fabrics, tie=tie, same_pool=same_pool, ints=ints
        )
        b.diff(
            f"differential_{i}",
            Msg("matches the reference on random edges", "随机边集上与参考实现一致"),
            "totals",
            Call(FUNC, (edges, placement)),
            SUMMARY,
        )
    edges, placement = gen_edges(rng, 4)
    b.diff(
        "rows",
        Msg("builds the per-edge rows", "生成逐边账本行"),
        "rows",
        Call(FUNC, (edges, placement)),
        ("rows",),
    )
    # Same-pool edges that name fabrics: none of those fabrics gets an entry.
    same = {"rollout": "A", "reward": "A", "learner": "A"}
    local = [
        edge(
            "rollout",
            "reward",
            "nvlink",
            bytes_per_item=100,
            items_per_work_unit=2,
            work_units_per_second=4,
            bandwidth_bytes_per_s=1024,
            overlap_fraction=0.5,
        ),
        edge(
            "reward",
            "learner",
            "pcie",
            bytes_per_item=64,
            work_units_per_second=2,
            bandwidth_bytes_per_s=2048,
        ),
    ]
    b.diff(
        "no_cross_pool_edges",
        Msg("handles a ledger with no cross-pool edge", "处理没有跨池边的账本"),
        "critical",
        Call(FUNC, (local, same)),
        KEYS,
    )
    b.diff(
        "empty_edges",
        Msg("handles a ledger with no edges", "处理没有任何边的账本"),
        "critical",
        Call(FUNC, ([], same)),
        KEYS,
    )
    edges, placement = gen_edges(rng, 3, fabrics=2, tie=True)
    b.diff(
        "tied_fabrics",
        Msg("lists every fabric tied at the maximum", "列出并列最大的全部互连域"),
        "critical",
        Call(FUNC, (edges, placement)),
        SUMMARY,
    )
    edges, placement = gen_edges(rng, 3)
    b.diff(
        "full_overlap",
        Msg("an overlap of exactly 1 hides the transfer", "重叠比例为 1 时传输完全隐藏"),
        "exposure",
        Call(FUNC, ([dict(e, overlap_fraction=1) for e in edges], placement)),
        KEYS,
    )
    edges, placement = gen_edges(rng, 3)
    bare = [{k: v for k, v in e.items() if k != "overlap_fraction"} for e in edges]
    b.diff(
        "no_overlap_field",
        Msg(
            "an edge without overlap_fraction (overlap 0)", "没有 overlap_fraction 的边（重叠为 0）"
        ),
        "exposure",
        Call(FUNC, (bare, placement)),
        SUMMARY,
    )
    for name, what in (
        ("bytes_per_item", Msg("accepts zero bytes per item", "接受为零的对象字节数")),
        (
            "work_units_per_second",
            Msg("accepts zero work units per second", "接受为零的工作单位频率"),
        ),
    ):
        edges, placement = gen_edges(rng, 3, fabrics=1, ints=name == "bytes_per_item")
        # The second cross-pool edge: the first keeps its partial overlap.
        second = [i for i, e in enumerate(edges) if cross(e, placement)][1]
        edges[second] = dict(edges[second], **{name: num(0, True)})
        b.diff(f"zero_{name}", what, "numbers", Call(FUNC, (edges, placement)), KEYS)
    edges, placement = gen_edges(rng, 3, fabrics=1, ints=False)
    slow = [dict(e, bandwidth_bytes_per_s=0.5) for e in edges]
    b.diff(
        "bandwidth_below_one",
        Msg("accepts a bandwidth between 0 and 1", "接受 0 与 1 之间的带宽"),
        "numbers",
        Call(FUNC, (slow, placement)),
        KEYS,
    )
    fixed_probes(b)
    _properties(b, rng)
    _refusals(b, rng)


def _properties(b: BatteryBuilder, rng: random.Random) -> None:
    edges, placement = gen_edges(rng, 5, fabrics=3)
    b.anchored(
        "edge_order",
        Msg("gives the same totals whatever the edge order", "汇总与边的顺序无关"),
        "pure",
        [
            Call(FUNC, (edges, placement)),
            Call(FUNC, (list(reversed(edges)), shuffled(rng, placement))),
        ],
        expect_relation(same_keys(SUMMARY)),
        SUMMARY,
    )
    edges, placement = gen_edges(rng, 4, same_pool=False)
    pool_a = next(c for c, p in placement.items() if p == "A")
    placement2 = dict(placement, **{"colocated-extra": "A"})
    local_edge = edge(
        pool_a,
        "colocated-extra",
        "local",
        bytes_per_item=4096,
        items_per_work_unit=4,
        work_units_per_second=5,
        bandwidth_bytes_per_s=1024,
    )
    b.anchored(
        "same_pool_edge_added",
        Msg("an added same-pool edge changes nothing", "新增同池边不改变结果"),
        "traffic",
        [Call(FUNC, (edges, placement2)), Call(FUNC, ([*edges, local_edge], placement2))],
        expect_relation(same_keys(SUMMARY)),
        SUMMARY,
    )
    edges, placement = gen_edges(rng, 6, fabrics=1, same_pool=False)
    fabric = edges[0]["fabric_id"]
    half = len(edges) // 2

    def additive(values: list[Any], fabric: str = fabric) -> str | None:
        whole, part1, part2 = (v["fabric_exposed_seconds_per_s"].get(fabric, 0.0) for v in values)
        if not numbers_match(float(whole), float(part1) + float(part2)):
            return "a fabric's exposure is not the sum of its edges' exposures"
        return None

    b.anchored(
        "fabric_additive",
        Msg("a fabric's exposure is the sum of its edges'", "互连域暴露应为其各边之和"),
        "totals",
        [
            Call(FUNC, (edges, placement)),
            Call(FUNC, (edges[:half], placement)),
            Call(FUNC, (edges[half:], placement)),
        ],
        expect_relation(additive),
        ("fabric_exposed_seconds_per_s",),
    )
    # Fixed input: int fields (converted in place, they change type only), a same-pool
    # edge, an edge without overlap_fraction (a default written into it shows).
    kept = [
        edge("rollout", "learner", "pcie", items_per_work_unit=2.0, bandwidth_bytes_per_s=2048),
        edge("reward", "rollout", "pcie", bytes_per_item=64.0, bandwidth_bytes_per_s=2048),
        {
            k: v
            for k, v in edge("critic", "reward", "ib", work_units_per_second=4).items()
            if k != "overlap_fraction"
        },
    ]
    b.anchored(
        "immutability",
        Msg("leaves its inputs unchanged", "不修改输入参数"),
        "pure",
        [Call(FUNC, (kept, FIXED_PLACEMENT))],
        expect_unchanged_inputs,
        ("cross_pool_bytes_per_s",),
    )


def _refusals(b: BatteryBuilder, rng: random.Random) -> None:
    """Each bad input breaks exactly one rule of a valid ledger, sent next to it.  The
    edge that is broken is the only edge of its own fabric, so a bad bandwidth can never
    trip the "one fabric, two bandwidths" rule first."""
    edges, placement = gen_edges(rng, 3, fabrics=2, same_pool=True)
    solo_index = next(i for i, e in enumerate(edges) if cross(e, placement))
    solo = dict(edges[solo_index], fabric_id="solo-link", overlap_fraction=0.5)
    rest = [e for i, e in enumerate(edges) if i != solo_index]
    valid = Call(FUNC, ([*rest, solo], placement))

    def with_solo(edge: dict[str, Any]) -> Call:
        return Call(FUNC, ([*rest, edge], placement))

    b.refusal(
        "unknown_source",
        Msg("refuses an edge endpoint without a pool", "拒绝没有资源池的边端点"),
        "endpoint",
        valid,
        with_solo(dict(solo, source="nowhere")),
    )
    b.refusal(
        "unknown_target",
        Msg("refuses an edge endpoint without a pool", "拒绝没有资源池的边端点"),
        "endpoint",
        valid,
        with_solo(dict(solo, target="nowhere")),
    )
    b.refusal(
        "empty_fabric",
        Msg("refuses a cross-pool edge with an empty fabric_id", "拒绝 fabric_id 为空的跨池边"),
        "fabric_id",
        valid,
        with_solo(dict(solo, fabric_id="")),
    )
    b.refusal(
        "blank_fabric",
        Msg("refuses a cross-pool edge with a blank fabric_id", "拒绝 fabric_id 只含空白的跨池边"),
        "fabric_id",
        valid,
        with_solo(dict(solo, fabric_id="   ")),
    )
    # A fabric_id of white space only is empty, whichever white space it is.
    for name, en, zh, fabric in (
        ("tab", "a tab", "制表符", "\t"),
        ("newline", "a newline", "换行", "\n"),
        (
            "mixed_whitespace",
            "spaces, a tab, a CR and a newline",
            "空格、制表符、回车与换行",
            " \t\r\n ",
        ),
        ("nbsp", "a no-break space (U+00A0)", "不换行空格（U+00A0）", "\u00a0"),
        ("ideographic_space", "an ideographic space (U+3000)", "全角空格（U+3000）", "\u3000"),
        ("em_space", "an em space (U+2003)", "全身空格（U+2003）", "\u2003"),
    ):
        msg = Msg(
            f"refuses a cross-pool edge whose fabric_id is only {en}",
            f"拒绝 fabric_id 只含{zh}的跨池边",
        )
        b.refusal(
            f"blank_fabric_{name}", msg, "fabric_id", valid, with_solo(dict(solo, fabric_id=fabric))
        )
    b.refusal(
        "missing_fabric",
        Msg("refuses a cross-pool edge without fabric_id", "拒绝缺少 fabric_id 的跨池边"),
        "fabric_id",
        valid,
        with_solo({k: v for k, v in solo.items() if k != "fabric_id"}),
    )
    for name, (what, rule, kinds) in EDGE_NUMBERS.items():
        for kind in kinds:
            value, label = BAD_VALUES[kind]
            b.refusal(
                f"{kind}_{name}",
                Msg(f"refuses {label.en} {what.en}", f"拒绝{label.zh}{what.zh}"),
                rule,
                valid,
                with_solo(dict(solo, **{name: value})),
            )
    # One fabric, two bandwidths: the valid input declares the twin with the same one.
    twin = dict(solo, bytes_per_item=64)
    both = Call(FUNC, ([*rest, solo, twin], placement))
    width = float(solo["bandwidth_bytes_per_s"])
    for case_id, other, msg in (
        (
            "fabric_two_bandwidths",
            width * 2,
            Msg("refuses one fabric with two bandwidths", "拒绝同一互连域的两种带宽"),
        ),
        (
            "fabric_near_bandwidths",
            width + 0.5,
            Msg(
                "refuses one fabric with two close bandwidths (1000 and 1000.5 differ)",
                "拒绝同一互连域的两种相近带宽（1000 与 1000.5 不同）",
            ),
        ),
    ):
        b.refusal(
            case_id,
            msg,
            "bandwidths",
            both,
            Call(FUNC, ([*rest, solo, dict(twin, bandwidth_bytes_per_s=other)], placement)),
        )
