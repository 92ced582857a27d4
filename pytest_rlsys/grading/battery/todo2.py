"""TODO 2, ``transfer_ledger``: the rules its template states (``RULES``) and the chapter's
assertions (the visible cases).  The hidden cases: ``todo2_hidden``, ``todo2_probes``."""

from __future__ import annotations

from typing import Any

from pytest_rlsys.grading.battery.builder import BatteryBuilder
from pytest_rlsys.grading.battery.checks import expect_keys, expect_value_error
from pytest_rlsys.grading.battery.generators import edge
from pytest_rlsys.grading.battery.model import RESULT_KEYS, Call
from pytest_rlsys.messages import Msg

__all__ = ["EDGE_NUMBERS", "FUNC", "KEYS", "RULES", "SUMMARY", "add_visible"]


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
    e0 = edge(
        "rollout",
        "reward",
        "pcie-0",
        bytes_per_item=100,
        items_per_work_unit=2,
        work_units_per_second=5,
        overlap_fraction=0.5,
    )
    e1 = edge("learner", "rollout", "pcie-1", bandwidth_bytes_per_s=2000, overlap_fraction=0.0)
    e2 = edge(
        "reward",
        "learner",
        "pcie-1",
        bytes_per_item=500,
        bandwidth_bytes_per_s=2000,
        overlap_fraction=0.0,
    )
    e3 = edge("verifier", "learner", "pcie-2", bandwidth_bytes_per_s=2000, overlap_fraction=0.5)
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
