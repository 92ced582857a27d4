"""TODO 2, ``transfer_ledger``: the chapter's assertions and the hidden cases."""

from __future__ import annotations

import random
from typing import Any

from pytest_rlsys.grading.battery.builder import BatteryBuilder
from pytest_rlsys.grading.battery.checks import (
    CheckFactory,
    expect_keys,
    expect_relation,
    expect_unchanged_inputs,
    expect_value_error,
    identical,
    same_keys,
)
from pytest_rlsys.grading.battery.generators import (
    BAD_VALUES,
    cross,
    gen_edges,
    num,
    shuffled,
)
from pytest_rlsys.grading.battery.model import RESULT_KEYS, Call, plain
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
        "sums the exposure of the cross-pool edges of each fabric_id (a fabric named "
        "only by same-pool edges has no entry)",
        "cross_pool_bytes_per_s 为总流量；fabric_exposed_seconds_per_s 按 fabric_id "
        "累加其跨池边的暴露（只被同池边引用的互连域没有条目）",
    ),
    "critical": Msg(
        "critical_exposed_seconds_per_s is the largest fabric exposure (0.0 when "
        "there is none) and critical_fabrics lists every fabric at that maximum (==), "
        "sorted by name",
        "critical_exposed_seconds_per_s 为最大的互连域暴露（没有时为 0.0），"
        "critical_fabrics 列出达到该最大值（==）的全部互连域，按名称排序",
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
        "a cross-pool edge declares a bandwidth different from that of the first "
        "cross-pool edge of its fabric (even 1000 and 1000.5)",
        "某条跨池边声明的带宽与其互连域第一条跨池边的带宽不同（即使是 1000 与 1000.5）",
    ),
    "names": Msg(
        "Pool and endpoint names are used exactly as given: pools 'A' and 'A ' are different pools",
        "资源池与端点名称按原样使用：资源池 'A' 与 'A ' 是不同的资源池",
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
        Msg("excludes same-pool edges from the traffic", "同池边不计入流量"),
        [ledger],
        expect_keys({"cross_pool_bytes_per_s": 2500}),
        claim="report['cross_pool_bytes_per_s'] == 2500",
    )
    b.visible(
        "fabric_sums",
        Msg("sums exposure per shared fabric", "按共享互连域累加暴露"),
        [ledger],
        expect_keys({"fabric_exposed_seconds_per_s": {"pcie-1": 0.75, "pcie-2": 0.25}}),
        claim="report['fabric_exposed_seconds_per_s'] == {'pcie-1': 0.75, 'pcie-2': 0.25}",
    )
    b.visible(
        "critical_exposure",
        Msg("takes the largest fabric exposure as critical", "关键暴露取各互连域的最大值"),
        [ledger],
        expect_keys({"critical_exposed_seconds_per_s": 0.75}),
        claim="report['critical_exposed_seconds_per_s'] == 0.75",
    )
    b.visible(
        "critical_fabric",
        Msg("names the critical fabric", "给出关键互连域"),
        [ledger],
        expect_keys({"critical_fabrics": ["pcie-1"]}),
        claim="report['critical_fabrics'] == ['pcie-1']",
    )
    b.visible(
        "overlap_out_of_range",
        Msg("refuses an overlap above 1", "拒绝大于 1 的重叠比例"),
        [Call(FUNC, ([dict(e1, overlap_fraction=1.2)], placement))],
        expect_value_error,
        claim="raises ValueError: 非法重叠比例应失败",
    )
    b.visible(
        "fabric_two_bandwidths",
        Msg("refuses one fabric with two bandwidths", "拒绝同一互连域的两种带宽"),
        [Call(FUNC, ([e1, dict(e2, bandwidth_bytes_per_s=4000)], placement))],
        expect_value_error,
        claim="raises ValueError: 同一互连域使用不同带宽口径时应失败",
    )
    b.visible(
        "tied_fabrics",
        Msg("lists every tied fabric", "列出全部并列关键互连域"),
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
    _fixed_probes(b)
    _properties(b, rng)
    _refusals(b, rng)


def _edge(source: str, target: str, fabric: str, **fields: Any) -> dict[str, Any]:
    """A valid edge with plain default numbers; ``fields`` override or add fields."""
    edge: dict[str, Any] = {
        "source": source,
        "target": target,
        "bytes_per_item": 1000,
        "items_per_work_unit": 1,
        "work_units_per_second": 1,
        "bandwidth_bytes_per_s": 1000,
        "overlap_fraction": 0,
        "fabric_id": fabric,
    }
    edge.update(fields)
    return edge


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
        for index, (row, edge) in enumerate(zip(rows, edges, strict=True)):
            for key, value in plain(edge).items():
                if key not in row or not identical(value, row[key]):
                    return f"$.rows[{index}].{key}: not a copy of the edge's own field"
        return None

    return expect_relation(relation)


def _fixed_probes(b: BatteryBuilder) -> None:
    """Probes with fixed inputs: whether a misreading shows never depends on the seed."""
    place = FIXED_PLACEMENT
    for label, gap in NEAR:
        # "nvlink" is the maximum by a relative gap; "ib" (sorting first) is just below.
        edges = [
            _edge("rollout", "learner", "ib"),
            _edge("reward", "learner", "nvlink", bytes_per_item=1000 * (1 + gap)),
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
        _edge("rollout", "learner", "ib", bytes_per_item=2, bandwidth_bytes_per_s=1000),
        _edge(
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
        _edge("rollout", "learner", "pcie", bandwidth_bytes_per_s=3000, overlap_fraction=0.3),
        _edge(
            "learner",
            "critic",
            "ib",
            bytes_per_item=500,
            items_per_work_unit=3,
            bandwidth_bytes_per_s=7000,
        ),
        _edge(
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
        _edge("rollout", "learner", "pcie", note="warm-up", priority=2),
        _edge("rollout", "reward", "pcie", note="local"),
        _edge("critic", "learner", "ib", priority=1, overlap_fraction=0.5),
    ]
    b.diff(
        "rows_keep_extra_fields",
        Msg("rows keep every field of their edge", "账本行保留边的全部字段"),
        "rows",
        Call(FUNC, (extra, place)),
        ("rows",),
    )
    bare = [
        {k: v for k, v in _edge("rollout", "learner", "pcie").items() if k != "overlap_fraction"},
        {k: v for k, v in _edge("reward", "rollout", "pcie").items() if k != "overlap_fraction"},
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
        _edge("rollout", "learner", "pcie", items_per_work_unit=2.0, bandwidth_bytes_per_s=2048),
        _edge("reward", "rollout", "pcie", bytes_per_item=64.0, bandwidth_bytes_per_s=2048),
        _edge("critic", "reward", "ib", overlap_fraction=0.5, work_units_per_second=4),
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
        _edge("rollout", "learner", "pcie"),
        _edge("rollout", "reward", "nvlink", bytes_per_item=4096),
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
        Call(
            FUNC,
            (
                [mixed[0], {k: v for k, v in mixed[1].items() if k != "fabric_id"}],
                place,
            ),
        ),
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
    twins = [_edge("rollout", "learner", "pcie"), _edge("reward", "critic", "pcie")]
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
        _edge("rollout", "learner", "ib", bytes_per_item=250),
        _edge("reward", "critic", "ib", bytes_per_item=500),
        _edge("learner", "critic", "nvlink", bytes_per_item=750),
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
        _edge("rollout", "learner", "ib", bytes_per_item=10**12, bandwidth_bytes_per_s=1),
        _edge("reward", "critic", "nvlink", bytes_per_item=10**12 + 1, bandwidth_bytes_per_s=1),
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
        _edge("rollout", "learner", "élink"),
        _edge("reward", "critic", "alink"),
        _edge("learner", "critic", "Zlink"),
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
        _edge("rollout", "learner", "pcie"),
        _edge("reward", "critic", "pcie"),
        _edge("learner", "critic", "pcie"),
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
        _edge("rollout", "learner", "pcie", items_per_work_unit=2.0, bandwidth_bytes_per_s=2048),
        _edge("reward", "rollout", "pcie", bytes_per_item=64.0, bandwidth_bytes_per_s=2048),
        {
            k: v
            for k, v in _edge("critic", "reward", "ib", work_units_per_second=4).items()
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

    bad: list[tuple[str, Msg, str, Call]] = [
        (
            "unknown_source",
            Msg("refuses an edge endpoint without a pool", "拒绝没有资源池的边端点"),
            "endpoint",
            with_solo(dict(solo, source="nowhere")),
        ),
        (
            "unknown_target",
            Msg("refuses an edge endpoint without a pool", "拒绝没有资源池的边端点"),
            "endpoint",
            with_solo(dict(solo, target="nowhere")),
        ),
        (
            "empty_fabric",
            Msg("refuses a cross-pool edge with an empty fabric_id", "拒绝 fabric_id 为空的跨池边"),
            "fabric_id",
            with_solo(dict(solo, fabric_id="")),
        ),
        (
            "blank_fabric",
            Msg(
                "refuses a cross-pool edge with a blank fabric_id",
                "拒绝 fabric_id 只含空白的跨池边",
            ),
            "fabric_id",
            with_solo(dict(solo, fabric_id="   ")),
        ),
    ]
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
        bad.append(
            (f"blank_fabric_{name}", msg, "fabric_id", with_solo(dict(solo, fabric_id=fabric)))
        )
    bad.append(
        (
            "missing_fabric",
            Msg("refuses a cross-pool edge without fabric_id", "拒绝缺少 fabric_id 的跨池边"),
            "fabric_id",
            with_solo({k: v for k, v in solo.items() if k != "fabric_id"}),
        )
    )
    for name, (what, rule, kinds) in EDGE_NUMBERS.items():
        for kind in kinds:
            value, label = BAD_VALUES[kind]
            bad.append(
                (
                    f"{kind}_{name}",
                    Msg(f"refuses {label.en} {what.en}", f"拒绝{label.zh}{what.zh}"),
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
