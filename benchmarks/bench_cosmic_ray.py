"""Mutation score of the battery measured by a maintained tool: cosmic-ray (pinned in the
``mutation`` extra) mutates a copy of solutions/rlsys_ledger.py with every one of its
operators, and runs benchmarks/mutation_test_command.py (the real grader, two seeds) as
the test of each mutant.

Run: pip install '.[mutation]'; .venv/bin/python benchmarks/bench_cosmic_ray.py
     [--work DIR] [--json out.json]

The copy is what is mutated: the battery's expected values come from the untouched
reference, so a mutant is graded exactly as a learner's file would be.  Reports the kill
rate, whether each kill costs points only in the mutant's own TODO, and every survivor
with the reason it is equivalent (``EQUIVALENT`` below, by operator and source line);
a survivor with no reason is printed as UNEXPLAINED and the exit status is 1.
"""

from __future__ import annotations

import argparse
import ast
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SOLUTION = HERE.parent / "solutions" / "rlsys_ledger.py"
SECTION_OF_FUNC = {
    "pipeline_capacity": "todo1",
    "transfer_ledger": "todo2",
    "evaluate_topology": "todo3",
    "_ledger_values": "todo3",
}
FULL = {"todo1": 30.0, "todo2": 35.0, "todo3": 35.0}

# Survivors that no input the template allows can tell apart from the reference, keyed by
# (operator, the mutated source line stripped), with the reason.
_MESSAGE = "only the text of an error message changes (messages are not graded)"
_CONSISTENT = (
    "the template says transfer_report is a result of transfer_ledger, whose critical "
    "exposure is the largest fabric exposure: it is above the threshold exactly when a "
    "fabric is overloaded"
)
EQUIVALENT: dict[tuple[str, str], str] = {
    **{
        (f"ReplaceBinaryOperator_BitXor_{op}", MISSING): _MESSAGE
        for op in ("Sub", "BitOr", "BitAnd")
        for MISSING in ["missing = sorted(set(stage_rates) ^ set(items_per_work_unit))"]
    },
    (
        "ReplaceComparisonOperator_Eq_GtE",
        "critical_fabrics = sorted(name for name, value in exposure.items() if value == critical)",
    ): "critical is the maximum of these values: value >= maximum exactly when equal",
    (
        "ReplaceComparisonOperator_Gt_Is",
        'if overloaded or float(transfer_report["critical_exposed_seconds_per_s"]) > budget:',
    ): _CONSISTENT,
    (
        "ReplaceOrWithAnd",
        'if overloaded or float(transfer_report["critical_exposed_seconds_per_s"]) > budget:',
    ): _CONSISTENT,
    ("ReplaceOrWithAnd", 'if unstable or not capacity_report["queue_stable"]:'): (
        "the template says capacity_report is a result of pipeline_capacity, where "
        "queue_stable is False exactly when unstable_stages is not empty"
    ),
}


def _functions(source: str) -> list[tuple[int, int, str]]:
    tree = ast.parse(source)
    return [
        (node.lineno, node.end_lineno or node.lineno, node.name)
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
    ]


def _function_at(functions: list[tuple[int, int, str]], line: int) -> str:
    for start, end, name in functions:
        if start <= line <= end:
            return name
    return "<module>"


def _scores(output: str | None) -> dict[str, dict[str, float]]:
    for line in (output or "").splitlines():
        if line.startswith("RLSYS-SCORES "):
            parsed: dict[str, dict[str, float]] = json.loads(line[len("RLSYS-SCORES ") :])
            return parsed
    return {}


def run(work: Path) -> dict[str, Any]:
    target = work / "rlsys_ledger.py"
    shutil.copyfile(SOLUTION, target)
    config = work / "cosmic-ray.toml"
    command = f"{sys.executable} {HERE / 'mutation_test_command.py'} {target}"
    config.write_text(
        "[cosmic-ray]\n"
        f'module-path = "{target}"\n'
        "timeout = 120.0\n"
        "excluded-modules = []\n"
        f'test-command = "{command}"\n\n'
        "[cosmic-ray.distributor]\n"
        'name = "local"\n',
        encoding="utf-8",
    )
    session = work / "session.sqlite"
    tool = Path(sys.executable).parent / "cosmic-ray"
    start = time.monotonic()
    subprocess.run([str(tool), "init", str(config), str(session)], check=True)
    subprocess.run([str(tool), "exec", str(config), str(session)], check=True)
    elapsed = time.monotonic() - start
    dump = subprocess.run(
        [str(tool), "dump", str(session)], check=True, capture_output=True, text=True
    ).stdout
    source_lines = SOLUTION.read_text(encoding="utf-8").splitlines()
    functions = _functions(SOLUTION.read_text(encoding="utf-8"))
    mutants: list[dict[str, Any]] = []
    for line in dump.splitlines():
        item, result = json.loads(line)
        mutation = item["mutations"][0]
        row = mutation["start_pos"][0]
        func = _function_at(functions, row)
        operator = mutation["operator_name"].split("/", 1)[1]
        outcome = (result or {}).get("test_outcome", "not run")
        scores = _scores((result or {}).get("output"))
        own = SECTION_OF_FUNC.get(func)
        lost = sorted({s for seed in scores.values() for s, v in seed.items() if v < FULL[s]})
        # cosmic-ray also rewrites the ``**`` of a dict display as if it were a power:
        # the file no longer compiles and scores 0 everywhere, in no TODO of its own.
        unloadable = bool(scores) and all(v == 0 for seed in scores.values() for v in seed.values())
        mutants.append(
            {
                "operator": operator,
                "occurrence": mutation["occurrence"],
                "line": row,
                "source": source_lines[row - 1].strip(),
                "function": func,
                "outcome": outcome,
                "lost_in": lost,
                "own_todo_only": own is not None and lost == [own],
                "does_not_load": unloadable,
            }
        )
    killed = [m for m in mutants if m["outcome"] == "killed"]
    survived = [m for m in mutants if m["outcome"] == "survived"]
    for m in survived:
        m["reason"] = EQUIVALENT.get((m["operator"], m["source"]))
    equivalent = [m for m in survived if m["reason"]]
    return {
        "tool": "cosmic-ray",
        "mutants": len(mutants),
        "killed": len(killed),
        "survived": len(survived),
        "equivalent": len(equivalent),
        "incompetent": sum(1 for m in mutants if m["outcome"] == "incompetent"),
        "kill_rate_non_equivalent": len(killed) / max(1, len(mutants) - len(equivalent)),
        "killed_in_own_todo_only": sum(1 for m in killed if m["own_todo_only"]),
        "killed_in_a_helper": sum(1 for m in killed if m["function"] not in SECTION_OF_FUNC),
        "killed_by_not_loading": sum(1 for m in killed if m["does_not_load"]),
        "elapsed_s": round(elapsed, 1),
        "survivors": survived,
        "killed_outside_own_todo": [
            m
            for m in killed
            if not m["own_todo_only"]
            and not m["does_not_load"]
            and m["function"] in SECTION_OF_FUNC
        ],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, help="session folder (default: a temporary one)")
    parser.add_argument("--json", type=Path, help="write the full result here")
    args = parser.parse_args()
    if args.work:
        args.work.mkdir(parents=True, exist_ok=True)
        result = run(args.work)
    else:
        with tempfile.TemporaryDirectory(prefix="rlsys-cosmic-ray-") as tmp:
            result = run(Path(tmp))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(
        f"cosmic-ray: {result['mutants']} mutants, {result['killed']} killed, "
        f"{result['survived']} survived ({result['equivalent']} equivalent), "
        f"{result['incompetent']} incompetent; kill rate of the non-equivalent "
        f"{100 * result['kill_rate_non_equivalent']:.1f} %; killed in their own TODO only "
        f"{result['killed_in_own_todo_only']} (+{result['killed_in_a_helper']} in shared "
        f"helpers, {result['killed_by_not_loading']} that do not compile); "
        f"{result['elapsed_s']} s"
    )
    unexplained = 0
    for m in result["survivors"]:
        tag = m["reason"] or "UNEXPLAINED"
        unexplained += m["reason"] is None
        print(f"  survived {m['function']}:{m['line']} {m['operator']}: {m['source']}  -- {tag}")
    for m in result["killed_outside_own_todo"]:
        print(
            f"  killed outside its TODO {m['function']}:{m['line']} {m['operator']} {m['lost_in']}"
        )
    return 1 if unexplained or result["killed_outside_own_todo"] else 0


if __name__ == "__main__":
    sys.exit(main())
