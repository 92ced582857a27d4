"""TODO 2, ``transfer_ledger``: the chapter's assertions and the hidden cases."""

from __future__ import annotations

import random
from typing import Any

from pytest_rlsys.grading.battery.builder import BatteryBuilder
from pytest_rlsys.grading.battery.checks import (
    expect_keys,
    expect_relation,
    expect_unchanged_inputs,
    expect_value_error,
    same_keys,
)
from pytest_rlsys.grading.battery.generators import (
    BAD_VALUES,
    cross,
    gen_edges,
    num,
    shuffled,
)
from pytest_rlsys.grading.battery.model import RESULT_KEYS, Call
from pytest_rlsys.grading.comparison import numbers_match
from pytest_rlsys.messages import Msg

__all__ = ["RULES", "add_hidden", "add_visible"]

FUNC = "transfer_ledger"
KEYS = RESULT_KEYS[FUNC]
SUMMARY = tuple(k for k in KEYS if k != "rows")

RULES: dict[str, Msg] = {
    "rows": Msg(
        "rows holds one dict per edge, in edge order: a copy of the edge's own fields "
        "plus cross_pool, traffic_bytes_per_s, transfer_seconds_per_s and "
        "exposed_seconds_per_s",
        "rows 按边的顺序每条边一项：该边自身字段的副本，再加上 cross_pool、"
        "traffic_bytes_per_s、transfer_seconds_per_s 与 exposed_seconds_per_s",
    ),
    "traffic": Msg(
        "A cross-pool edge (source and target placed in different pools) carries "
        "bytes_per_item * items_per_work_unit * work_units_per_second bytes/s; a "
        "same-pool edge carries zero traffic, transfer and exposure",
        "跨池边（source 与 target 位于不同资源池）的流量为 bytes_per_item * "
        "items_per_work_unit * work_units_per_second；同池边的流量、传输与暴露均为零",
    ),
    "exposure": Msg(
        "transfer = traffic / bandwidth_bytes_per_s and exposed = transfer * "
        "(1 - overlap_fraction); an edge without overlap_fraction has overlap 0",
        "transfer = traffic / bandwidth_bytes_per_s，exposed = transfer * "
        "(1 - overlap_fraction)；没有 overlap_fraction 的边重叠比例为 0",
    ),
    "totals": Msg(
        "cross_pool_bytes_per_s is the total traffic; fabric_exposed_seconds_per_s "
        "sums the exposure of the cross-pool edges of each fabric_id",
        "cross_pool_bytes_per_s 为总流量；fabric_exposed_seconds_per_s 按 fabric_id "
        "累加其跨池边的暴露",
    ),
    "critical": Msg(
        "critical_exposed_seconds_per_s is the largest fabric exposure (0.0 when "
        "there is none) and critical_fabrics lists every fabric at that maximum, "
        "sorted by name",
        "critical_exposed_seconds_per_s 为最大的互连域暴露（没有时为 0.0），"
        "critical_fabrics 列出达到该最大值的全部互连域，按名称排序",
    ),
    "numbers": Msg(
        "Every number may be an int or a float; bytes_per_item and "
        "work_units_per_second may be 0, and a bandwidth may lie between 0 and 1",
        "每个数都可能是 int 或 float；bytes_per_item 与 work_units_per_second 可以为 0，"
        "带宽可以在 0 与 1 之间",
    ),
    "pure": Msg(
        "The arguments are never modified, and neither the order of the edges nor "
        "the order of placement's entries changes the totals",
        "不得修改任何参数；边的顺序与 placement 条目的顺序都不影响汇总结果",
    ),
    "endpoint": Msg("an endpoint has no pool in placement", "某个端点在 placement 中没有资源池"),
    "overlap": Msg(
        "overlap_fraction is NaN or outside [0, 1]", "overlap_fraction 为 NaN 或不在 [0, 1] 内"
    ),
    "positive": Msg(
        "bandwidth_bytes_per_s or items_per_work_unit is NaN, infinite, zero or negative",
        "bandwidth_bytes_per_s 或 items_per_work_unit 为 NaN、无穷、零或负数",
    ),
    "non_negative": Msg(
        "bytes_per_item or work_units_per_second is NaN, infinite or negative",
        "bytes_per_item 或 work_units_per_second 为 NaN、无穷或负数",
    ),
    "fabric_id": Msg(
        "a cross-pool edge has no fabric_id, or an empty or blank one",
        "跨池边没有 fabric_id，或 fabric_id 为空或只含空白",
    ),
    "bandwidths": Msg(
        "two cross-pool edges of one fabric declare different bandwidths (even 1000 and 1000.5)",
        "同一互连域的两条跨池边声明了不同带宽（即使是 1000 与 1000.5）",
    ),
}

EDGE_NUMBERS: dict[str, tuple[Msg, str, tuple[str, ...]]] = {
    "overlap_fraction": (
        Msg("overlap", "重叠比例"),
        "overlap",
        ("nan", "inf", "negative", "above_1"),
    ),
    "bandwidth_bytes_per_s": (
        Msg("bandwidth", "带宽"),
        "positive",
        ("nan", "inf", "zero", "negative"),
    ),
    "bytes_per_item": (
        Msg("bytes per item", "对象字节数"),
        "non_negative",
        ("nan", "inf", "negative"),
    ),
    "items_per_work_unit": (
        Msg("items per work unit", "工作单位倍率"),
        "positive",
        ("nan", "inf", "zero", "negative"),
    ),
    "work_units_per_second": (
        Msg("work units per second", "工作单位频率"),
        "non_negative",
        ("nan", "inf", "negative"),
    ),
}


def _chapter_edges() -> tuple[list[dict[str, Any]], dict[str, str]]:
    e0 = {
        "source": "rollout",
        "target": "reward",
        "bytes_per_item": 100,
        "items_per_work_unit": 2,
        "work_units_per_second": 5,
        "bandwidth_bytes_per_s": 1000,
        "overlap_fraction": 0.5,
        "fabric_id": "pcie-0",
    }
    e1 = {
        "source": "learner",
        "target": "rollout",
        "bytes_per_item": 1000,
        "items_per_work_unit": 1,
        "work_units_per_second": 1,
        "bandwidth_bytes_per_s": 2000,
        "overlap_fraction": 0.0,
        "fabric_id": "pcie-1",
    }
    e2 = {
        "source": "reward",
        "target": "learner",
        "bytes_per_item": 500,
        "items_per_work_unit": 1,
        "work_units_per_second": 1,
        "bandwidth_bytes_per_s": 2000,
        "overlap_fraction": 0.0,
        "fabric_id": "pcie-1",
    }
    e3 = {
        "source": "verifier",
        "target": "learner",
        "bytes_per_item": 1000,
        "items_per_work_unit": 1,
        "work_units_per_second": 1,
        "bandwidth_bytes_per_s": 2000,
        "overlap_fraction": 0.5,
        "fabric_id": "pcie-2",
    }
    return [e0, e1, e2, e3], {"rollout": "A", "reward": "A", "learner": "B", "verifier": "C"}


def add_visible(b: BatteryBuilder) -> None:
    """The chapter's ``test_transfer_ledger``, one case per assertion."""
    (e0, e1, e2, e3), placement = _chapter_edges()
    ledger = Call(FUNC, ([e0, e1, e2, e3], placement))
    b.visible(
        "cross_pool_bytes",
        Msg("same-pool edges excluded", "同池边排除"),
        [ledger],
        expect_keys({"cross_pool_bytes_per_s": 2500}),
        claim="report['cross_pool_bytes_per_s'] == 2500",
    )
    b.visible(
        "fabric_sums",
        Msg("shared fabric sums exposure", "共享域累加"),
        [ledger],
        expect_keys({"fabric_exposed_seconds_per_s": {"pcie-1": 0.75, "pcie-2": 0.25}}),
        claim="report['fabric_exposed_seconds_per_s'] == {'pcie-1': 0.75, 'pcie-2': 0.25}",
    )
    b.visible(
        "critical_exposure",
        Msg("critical fabric is the maximum", "关键互连取最大值"),
        [ledger],
        expect_keys({"critical_exposed_seconds_per_s": 0.75}),
        claim="report['critical_exposed_seconds_per_s'] == 0.75",
    )
    b.visible(
        "critical_fabric",
        Msg("critical fabric", "关键互连域"),
        [ledger],
        expect_keys({"critical_fabrics": ["pcie-1"]}),
        claim="report['critical_fabrics'] == ['pcie-1']",
    )
    b.visible(
        "overlap_out_of_range",
        Msg("overlap above 1 accepted", "重叠比例越界未报错"),
        [Call(FUNC, ([dict(e1, overlap_fraction=1.2)], placement))],
        expect_value_error,
        claim="raises ValueError: 非法重叠比例应失败",
    )
    b.visible(
        "fabric_two_bandwidths",
        Msg("one fabric with two bandwidths accepted", "同一互连域两种带宽未报错"),
        [Call(FUNC, ([e1, dict(e2, bandwidth_bytes_per_s=4000)], placement))],
        expect_value_error,
        claim="raises ValueError: 同一互连域使用不同带宽口径时应失败",
    )
    b.visible(
        "tied_fabrics",
        Msg("ties among fabrics", "并列关键互连域"),
        [Call(FUNC, ([e1, dict(e3, overlap_fraction=0.0)], placement))],
        expect_keys({"critical_fabrics": ["pcie-1", "pcie-2"]}),
        claim="tied['critical_fabrics'] == ['pcie-1', 'pcie-2']",
    )


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
            Msg(
                "result differs from the reference on random edges", "随机边集上结果与参考实现不同"
            ),
            "totals",
            Call(FUNC, (edges, placement)),
            SUMMARY,
        )
    edges, placement = gen_edges(rng, 4)
    b.diff(
        "rows",
        Msg("per-edge rows", "逐边账本行"),
        "rows",
        Call(FUNC, (edges, placement)),
        ("rows",),
    )
    # Same-pool edges here are valid under the strictest reading too (they name a fabric):
    # SPEC 3 forbids probing how same-pool edges are validated.
    same = {"rollout": "A", "reward": "A", "learner": "A"}
    local = [
        {
            "source": "rollout",
            "target": "reward",
            "bytes_per_item": 100,
            "items_per_work_unit": 2,
            "work_units_per_second": 4,
            "bandwidth_bytes_per_s": 1024,
            "overlap_fraction": 0.5,
            "fabric_id": "nvlink",
        },
        {
            "source": "reward",
            "target": "learner",
            "bytes_per_item": 64,
            "items_per_work_unit": 1,
            "work_units_per_second": 2,
            "bandwidth_bytes_per_s": 2048,
            "overlap_fraction": 0,
            "fabric_id": "pcie",
        },
    ]
    b.diff(
        "no_cross_pool_edges",
        Msg("no cross-pool edges", "没有跨池边"),
        "critical",
        Call(FUNC, (local, same)),
        KEYS,
    )
    b.diff(
        "empty_edges",
        Msg("no edges at all", "没有任何边"),
        "critical",
        Call(FUNC, ([], same)),
        KEYS,
    )
    edges, placement = gen_edges(rng, 3, fabrics=2, tie=True)
    b.diff(
        "tied_fabrics",
        Msg("ties among several fabrics", "多个互连域并列"),
        "critical",
        Call(FUNC, (edges, placement)),
        SUMMARY,
    )
    edges, placement = gen_edges(rng, 3)
    b.diff(
        "full_overlap",
        Msg("overlap of exactly 1 hides the transfer", "重叠比例为 1"),
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
        KEYS,
    )
    for name, what in (
        ("bytes_per_item", Msg("zero bytes per item", "对象字节数为零")),
        ("work_units_per_second", Msg("zero work units per second", "工作单位频率为零")),
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
        Msg("a bandwidth between 0 and 1", "0 与 1 之间的带宽"),
        "numbers",
        Call(FUNC, (slow, placement)),
        KEYS,
    )
    _properties(b, rng)
    _refusals(b, rng)


def _properties(b: BatteryBuilder, rng: random.Random) -> None:
    edges, placement = gen_edges(rng, 5, fabrics=3)
    b.anchored(
        "edge_order",
        Msg("edge order changed the result", "边的顺序改变了结果"),
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
    local_edge = {
        "source": pool_a,
        "target": "colocated-extra",
        "bytes_per_item": 4096,
        "items_per_work_unit": 4,
        "work_units_per_second": 5,
        "bandwidth_bytes_per_s": 1024,
        "overlap_fraction": 0,
        "fabric_id": "local",
    }
    b.anchored(
        "same_pool_edge_added",
        Msg("an added same-pool edge changed the result", "新增同池边改变了结果"),
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
    edges, placement = gen_edges(rng, 4)
    b.anchored(
        "immutability",
        Msg("input mutated", "输入被修改"),
        "pure",
        [Call(FUNC, (edges, placement))],
        expect_unchanged_inputs,
        SUMMARY,
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

    bad: list[tuple[str, Msg, str, Call]] = [
        (
            "unknown_source",
            Msg("edge endpoint without a pool accepted", "边端点缺少资源池未报错"),
            "endpoint",
            with_solo(dict(solo, source="nowhere")),
        ),
        (
            "unknown_target",
            Msg("edge endpoint without a pool accepted", "边端点缺少资源池未报错"),
            "endpoint",
            with_solo(dict(solo, target="nowhere")),
        ),
        (
            "empty_fabric",
            Msg("cross-pool edge with an empty fabric_id accepted", "跨池边 fabric_id 为空未报错"),
            "fabric_id",
            with_solo(dict(solo, fabric_id="")),
        ),
        (
            "blank_fabric",
            Msg(
                "cross-pool edge with a blank fabric_id accepted", "跨池边 fabric_id 只含空白未报错"
            ),
            "fabric_id",
            with_solo(dict(solo, fabric_id="   ")),
        ),
        (
            "missing_fabric",
            Msg("cross-pool edge without fabric_id accepted", "跨池边缺少 fabric_id 未报错"),
            "fabric_id",
            with_solo({k: v for k, v in solo.items() if k != "fabric_id"}),
        ),
    ]
    for name, (what, rule, kinds) in EDGE_NUMBERS.items():
        for kind in kinds:
            value, label = BAD_VALUES[kind]
            bad.append(
                (
                    f"{kind}_{name}",
                    Msg(f"{label.en} {what.en} accepted", f"{label.zh}{what.zh}未报错"),
                    rule,
                    with_solo(dict(solo, **{name: value})),
                )
            )
    for case_id, msg, rule, call in bad:
        b.refusal(case_id, msg, rule, valid, call)
    # One fabric, two bandwidths: the valid input declares the twin with the same one.
    twin = dict(solo, bytes_per_item=64)
    both = Call(FUNC, ([*rest, solo, twin], placement))
    width = float(solo["bandwidth_bytes_per_s"])
    for case_id, other, msg in (
        (
            "fabric_two_bandwidths",
            width * 2,
            Msg("one fabric with two bandwidths accepted", "同一互连域两种带宽未报错"),
        ),
        (
            "fabric_near_bandwidths",
            width + 0.5,
            Msg(
                "one fabric with two close bandwidths accepted (1000 and 1000.5 differ)",
                "同一互连域两种相近带宽未报错（1000 与 1000.5 不同）",
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
