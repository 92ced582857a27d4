"""TODO 1, ``pipeline_capacity``: probes with fixed inputs (issues 23 and 31), so that whether a
misreading shows never depends on the seed."""

from __future__ import annotations

from typing import Any

from pytest_rlsys.grading.battery.builder import BatteryBuilder
from pytest_rlsys.grading.battery.checks import expect_only_keys
from pytest_rlsys.grading.battery.model import Call
from pytest_rlsys.grading.battery.todo1 import FUNC, KEYS
from pytest_rlsys.messages import Msg

__all__ = ["fixed_probes"]


# Relative gaps of a near-tie (and of an arrival just above capacity): a tie tolerance,
# a rounding or an isclose looser than the reference's 1e-9 merges the two stages.
NEAR = (
    ("1e-3", 1e-3),
    ("1e-4", 1e-4),
    ("1e-5", 1e-5),
    ("1e-6", 1e-6),
    # Just outside the reference's 1e-9: a 1e-7 or 1e-8 tolerance merges these.
    ("1e-8", 1e-8),
)


def fixed_probes(b: BatteryBuilder) -> None:
    """Probes with fixed inputs: whether a misreading shows never depends on the seed."""
    for label, gap in NEAR:
        # "critic" sorts first and is only near the minimum: a tolerant tie lists it too.
        b.diff(
            f"near_tie_{label.replace('-', '_')}",
            Msg(
                f"a stage {label} (relative) above the minimum is not a bottleneck",
                f"比最小有效速率高 {label}（相对）的阶段不是瓶颈",
            ),
            "bottlenecks",
            Call(
                FUNC,
                (
                    {"rollout": 4.5, "critic": 1.0 * (1 + gap), "reward": 1.0},
                    0.5,
                    {"rollout": 1, "critic": 0.5, "reward": 0.5},
                ),
            ),
            ("bottlenecks", "capacity"),
        )
    # The same near-tie around 0.002: an absolute tolerance or a rounding to 6 decimals
    # merges stages 2e-9 apart, which a relative one at 1e-6 would not.
    b.diff(
        "near_tie_small_rates",
        Msg(
            "a small stage rate 1e-6 (relative) above the minimum is not a bottleneck",
            "很小的速率比最小值高 1e-6（相对）时也不是瓶颈",
        ),
        "bottlenecks",
        Call(
            FUNC,
            (
                {"rollout": 0.5, "critic": 0.001 * (1 + 1e-6), "reward": 0.001},
                0.0005,
                {"rollout": 1, "critic": 0.5, "reward": 0.5},
            ),
        ),
        ("bottlenecks", "capacity"),
    )
    b.diff(
        "arrival_just_above_capacity",
        Msg(
            "an arrival 1e-6 (relative) above capacity is unstable",
            "到达率比容量高 1e-6（相对）时为积压",
        ),
        "unstable",
        Call(FUNC, ({"rollout": 80, "reward": 50}, 50 * (1 + 1e-6), {"rollout": 1, "reward": 1})),
        ("unstable_stages", "queue_stable"),
    )
    _boundary_probes(b)
    b.anchored(
        "six_keys",
        Msg("returns exactly the six documented keys", "只返回文档中的六个键"),
        "keys",
        [Call(FUNC, ({"rollout": 90, "learner": 60}, 30, {"rollout": 1, "learner": 2}))],
        expect_only_keys(KEYS),
        ("capacity",),
    )
    # Effective rates and margins that are not round (x/3, x/7...): rounding shows.
    odd = Call(
        FUNC,
        (
            {"rollout": 100, "reward": 50, "learner": 97.0},
            10.1,
            {"rollout": 3, "reward": 7, "learner": 6},
        ),
    )
    b.diff(
        "non_round_effective_rates",
        Msg("keeps effective rates unrounded (100 / 3)", "有效速率不取整（100 / 3）"),
        "effective",
        odd,
        ("effective_rates", "capacity"),
    )
    b.diff(
        "non_round_margins",
        Msg("keeps queue margins unrounded", "队列余量不取整"),
        "margins",
        odd,
        ("queue_margins",),
    )


def _boundary_probes(b: BatteryBuilder) -> None:
    """The edges of the stated tolerances (issue 31): isclose(rel 1e-9, abs 1e-12) for a
    tie, an exact ``< 0`` for a margin, sorted() for names; fixed inputs."""
    one = {"rollout": 1, "critic": 1, "reward": 1}
    ties: list[tuple[str, Msg, dict[str, Any], float]] = [
        (
            "tie_within_1e_10",
            Msg(
                "a stage 1e-10 (relative) above the minimum is a bottleneck (tied within 1e-9)",
                "比最小有效速率高 1e-10（相对）的阶段也是瓶颈（1e-9 以内为并列）",
            ),
            {"rollout": 4.5, "critic": 2.0 * (1 + 1e-10), "reward": 2.0},
            0.5,
        ),
        (
            "tie_large_rates",
            Msg(
                "rates 1e12 and 1e12 + 1 are tied (relative, not absolute, tolerance)",
                "速率 1e12 与 1e12 + 1 并列（相对容差，而非绝对容差）",
            ),
            {"rollout": 3e12, "critic": 1e12 + 1, "reward": 1e12},
            5e11,
        ),
        (
            "near_tie_large_rates",
            Msg(
                "rates 1e12 and 1e12 * (1 + 1e-8) are not tied",
                "速率 1e12 与 1e12 * (1 + 1e-8) 不并列",
            ),
            {"rollout": 3e12, "critic": 1e12 * (1 + 1e-8), "reward": 1e12},
            5e11,
        ),
        (
            "tie_tiny_rates",
            Msg(
                "rates 2e-12 and 2.5e-12 are tied (absolute tolerance 1e-12)",
                "速率 2e-12 与 2.5e-12 并列（绝对容差 1e-12）",
            ),
            {"rollout": 1.0, "critic": 2.5e-12, "reward": 2e-12},
            0,
        ),
        (
            "near_tie_tiny_rates",
            Msg(
                "rates 2e-12 and 4e-12 are not tied (more than 1e-12 apart)",
                "速率 2e-12 与 4e-12 不并列（相差超过 1e-12）",
            ),
            {"rollout": 1.0, "critic": 4e-12, "reward": 2e-12},
            0,
        ),
    ]
    for case_id, msg, rates, arrival in ties:
        b.diff(case_id, msg, "bottlenecks", Call(FUNC, (rates, arrival, one)), ("bottlenecks",))
    # Code-point order: 'Z' < 'a' < 'é'; a case-insensitive or locale sort differs.
    names = {"éclair": 5, "alpha": 5, "Zeta": 5, "Beta": 9}
    b.diff(
        "ties_sorted_by_code_point",
        Msg(
            "tied bottlenecks sorted as sorted() does ('Z' < 'a' < 'é')",
            "并列瓶颈按 sorted() 的方式排序（'Z' < 'a' < 'é'）",
        ),
        "bottlenecks",
        Call(FUNC, (names, 1, {n: 1 for n in names})),
        ("bottlenecks",),
    )
    b.diff(
        "unstable_sorted_by_code_point",
        Msg(
            "unstable stages sorted as sorted() does ('Z' < 'a' < 'é')",
            "积压阶段按 sorted() 的方式排序（'Z' < 'a' < 'é'）",
        ),
        "unstable",
        Call(FUNC, (names, 7, {n: 1 for n in names})),
        ("unstable_stages",),
    )
    margins: list[tuple[str, Msg, float, float]] = [
        (
            "arrival_1e_10_above_capacity",
            Msg(
                "an arrival 1e-10 (relative) above capacity is unstable (margins are exact)",
                "到达率比容量高 1e-10（相对）即积压（余量精确比较）",
            ),
            50.0,
            50 * (1 + 1e-10),
        ),
        (
            "arrival_1e_10_below_capacity",
            Msg(
                "an arrival 1e-10 (relative) below capacity is stable",
                "到达率比容量低 1e-10（相对）仍稳定",
            ),
            50.0,
            50 * (1 - 1e-10),
        ),
        (
            "arrival_1_above_large_capacity",
            Msg(
                "an arrival of 1e12 + 1 above a capacity of 1e12 is unstable",
                "容量 1e12、到达率 1e12 + 1 时为积压",
            ),
            1e12,
            1e12 + 1,
        ),
        (
            "arrival_just_above_tiny_capacity",
            Msg(
                "a margin of about -1e-15 is negative (no absolute tolerance)",
                "约为 -1e-15 的余量也是负的（没有绝对容差）",
            ),
            0.002,
            0.002 + 1e-15,
        ),
    ]
    for case_id, msg, rate, arrival in margins:
        b.diff(
            case_id,
            msg,
            "unstable",
            Call(
                FUNC, ({"rollout": 3 * rate, "reward": rate}, arrival, {"rollout": 1, "reward": 1})
            ),
            ("unstable_stages", "queue_stable"),
        )
