"""Where one grade's time goes, per fence mode and entry point, beside plain pytest.

Run: .venv/bin/python benchmarks/bench_profile.py [--repeat 7] [--profiles 3]
        [--against OTHER_PYTHON] [--modes bubblewrap,container,...]

For each fence mode (as root: bubblewrap; the container mode, namespaces refused by a
seccomp filter as tests/plugin/platform_filter.py does; the container without Landlock;
and non-root, run as uid 65534; not root: this user only), interleaved in one run:
  plain   pytest of the chapter's three tests (benchmarks/chapter_tests.py), no plugin
          autoload: the baseline;
  grade   `rlsys grade` of the chapter's reference;
  pytest  `pytest --rlsys-submission` of it (the learner's command: the plugin and
          pytest-timeout, every other installed pytest11 plugin blocked with -p no:NAME);
each started the same way (the same filter, the same user).  Printed: the median wall time
of each and its ratio to plain (targets: 1.3x for both entry points in every mode, 2x
without Landlock), then, from --profiles runs with timers (benchmarks/profile_run.py), the
median seconds of each phase.  With --against, a second Python (another build's venv) is
measured in the same loop, so before/after come from one run.
PYTHONDONTWRITEBYTECODE is dropped and each command runs once before timing, so that
imports read cached bytecode as they do from a pip install.

Measured (issues 44/45, round 5 fourth stop: main 8289416+ against 5d9a4c6, each in a lean
venv of its own (the project and its test extras, as a learner's), --repeat 11, one run,
root, 2 cores, load 0.8-1.1; median seconds, ratio to that build's plain pytest):
  mode                   plain   grade before -> after        pytest before -> after
  bubblewrap             0.21    0.252 (1.22x) -> 0.213 (1.01x)  0.389 (1.88x) -> 0.344 (1.63x)
  container              0.25    0.282 (1.12x) -> 0.257 (1.01x)  0.426 (1.69x) -> 0.394 (1.55x)
  container, no Landlock 0.25    0.291 (1.16x) -> 0.254 (1.02x)  0.435 (1.74x) -> 0.395 (1.58x)
  non-root (uid 65534)   0.21    0.201 (0.97x) -> 0.203 (0.96x)  0.332 (1.61x) -> 0.332 (1.57x)
What changed: the load request goes to the standby child as soon as the private files are
protected, so the submission's own imports (about 25 ms, mostly ``typing``) overlap the
battery's build instead of being waited for in the first case; the battery copies the
reference's values without a JSON round trip; a non-root grader no longer tries to start
an interpreter path its uid cannot exec (in a venv holding the GPU stack that cost a
failed start and a probe, 1.34x -> 1.13x).  ``rlsys grade`` is now at plain pytest's
time in every mode; ``pytest --rlsys-submission`` is not within 1.3x: what it adds to
``rlsys grade`` is pytest's own start (its import, about 0.11 s, and its configuration
with plugin autoload, about 0.03 s), which plain pytest also pays but spends on 3 tests
where the grade runs 453 cases (about 0.19 s of grading: imports 25-35 ms, battery
23 ms, the child's start 10 ms, the cases' round trips 50 ms, reports 10 ms).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
KEEP = {"pytest-rlsys", "pytest-timeout"}
ROOT_MODES = {
    "bubblewrap": [],
    "container": ["container"],
    "container-no-landlock": ["container+no-landlock"],
    "non-root": None,
}
ENTRIES = ("plain", "grade", "pytest")
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def prefix(mode: str) -> list[str]:
    """How a command is started in ``mode``."""
    if mode == "non-root" and os.geteuid() == 0:
        return NOBODY
    flt = ROOT_MODES.get(mode) or []
    if flt:
        return [sys.executable, str(ROOT / "tests" / "plugin" / "platform_filter.py"), *flt]
    return []


def readable_copy(python: str, into: Path) -> str:
    """A copy of ``python``'s pytest_rlsys that uid 65534 can read (a grade as root makes
    the battery readable by root only), for PYTHONPATH in the non-root mode."""
    code = "import pytest_rlsys, os; print(os.path.dirname(pytest_rlsys.__file__))"
    where = subprocess.run([python, "-c", code], capture_output=True, check=True, text=True)
    package = Path(where.stdout.strip())
    shutil.copytree(package, into / "pytest_rlsys")
    for data in ("exercises", "solutions", "schemas"):  # a source checkout's bundled data
        if (package.parent / data).is_dir():
            shutil.copytree(package.parent / data, into / data)
    subprocess.run(["chmod", "-R", "a+rX", str(into)], check=True)
    return str(into)


def other_plugins(python: str) -> list[str]:
    """``-p no:NAME`` for each pytest11 plugin of ``python`` but ours and pytest-timeout."""
    code = (
        "import importlib.metadata as m, json; print(json.dumps(sorted({ep.name for d in "
        f"m.distributions() if (d.metadata['Name'] or '').lower() not in {sorted(KEEP)!r} "
        "for ep in d.entry_points if ep.group == 'pytest11'})))"
    )
    names = json.loads(subprocess.run([python, "-c", code], capture_output=True, check=True).stdout)
    return [arg for name in names for arg in ("-p", f"no:{name}")]


def wall(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    began = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, check=False)
    took = time.perf_counter() - began
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stdout[-1500:]!r}")
    return took


def commands(python: str, mine: str) -> dict[str, list[str]]:
    pytest = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    return {
        "plain": [*pytest, "test_chapter.py"],
        "grade": [python, "-m", "pytest_rlsys", "grade", mine, "--seed", "1"],
        "pytest": [
            *pytest,
            *other_plugins(python),
            "--rlsys-submission",
            mine,
            "--rlsys-seed",
            "1",
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--profiles", type=int, default=3, help="0: wall times only")
    parser.add_argument("--against", help="another build's python, measured alongside")
    parser.add_argument("--modes", help="comma-separated subset of " + ",".join(ROOT_MODES))
    args = parser.parse_args()
    modes = list(ROOT_MODES) if os.geteuid() == 0 else ["non-root"]
    if args.modes:
        modes = [m for m in args.modes.split(",") if m in modes]
    builds = {"this": sys.executable, **({"other": args.against} if args.against else {})}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    from pytest_rlsys.resources import solution_path

    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp) / "run"
        cwd.mkdir()
        os.chmod(tmp, 0o755)
        os.chmod(cwd, 0o777)  # the non-root mode writes its bytecode and reports here
        (cwd / "test_chapter.py").write_text((HERE / "chapter_tests.py").read_text())
        mine = str(shutil.copy(solution_path(), cwd / "mine.py"))
        os.chmod(mine, 0o644)
        env["RLSYS_BENCH_TARGET"] = mine
        cmds = {b: commands(py, mine) for b, py in builds.items()}
        # PYTHONPATH per build in the non-root mode (as root: the installed package)
        copies = (
            {b: readable_copy(py, Path(tmp) / f"site-{b}") for b, py in builds.items()}
            if "non-root" in modes and os.geteuid() == 0
            else {}
        )
        os.chmod(tmp, 0o755)
        times: dict[tuple[str, str, str], list[float]] = {}
        for rnd in range(args.repeat + 1):  # round 0 warms the bytecode caches
            for mode in modes:
                for build, by_entry in cmds.items():
                    for entry, cmd in by_entry.items():
                        run_env = dict(env)
                        if entry == "plain":
                            run_env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
                        if mode == "non-root" and build in copies:
                            run_env["PYTHONPATH"] = copies[build]
                        took = wall([*prefix(mode), *cmd], run_env, cwd)
                        if rnd:
                            times.setdefault((mode, build, entry), []).append(took)
        profiles = {
            (mode, build, entry): profile(
                builds[build],
                mode,
                entry,
                cmds[build],
                dict(env, PYTHONPATH=copies[build]) if mode == "non-root" and copies else env,
                cwd,
                args,
            )
            for mode in modes
            for build in builds
            for entry in ("grade", "pytest", "child")
            if args.profiles
        }
    report(modes, builds, times, profiles, args.repeat)


def profile(
    python: str,
    mode: str,
    entry: str,
    cmds: dict[str, list[str]],
    env: dict[str, str],
    cwd: Path,
    args: argparse.Namespace,
) -> dict[str, tuple[float, float]]:
    """Per phase: the median over ``--profiles`` timed runs of its seconds, and of how many
    times it ran (a round trip's phase sums every call)."""
    rest = {"grade": cmds["grade"][4:], "pytest": cmds["pytest"][3:], "child": ["5"]}[entry]
    runs: list[dict[str, list[float]]] = []
    for index in range(args.profiles):
        out = cwd / f"profile-{index}.json"
        cmd = [python, str(HERE / "profile_run.py"), str(out), entry, *rest]
        wall([*prefix(mode), *cmd], env, cwd)
        runs.append(json.loads(out.read_text()))
        out.unlink()
    phases = dict.fromkeys(p for run in runs for p in run)
    return {
        p: (
            statistics.median(run.get(p, [0.0, 0])[0] for run in runs),
            statistics.median(run.get(p, [0.0, 0])[1] for run in runs),
        )
        for p in phases
    }


def report(
    modes: list[str],
    builds: dict[str, str],
    times: dict[tuple[str, str, str], list[float]],
    profiles: dict[tuple[str, str, str], dict[str, tuple[float, float]]],
    repeat: int,
) -> None:
    for how, pick in (("median", statistics.median), ("minimum", min)):
        print(f"{how} wall of {repeat} interleaved runs; ratio = entry / plain pytest, same mode")
        print(f"{'mode':24} {'build':6} {'plain':>7} {'grade':>7} {'ratio':>6} {'pytest':>7} ratio")
        for mode in modes:
            for build in builds:
                t = {e: pick(times[(mode, build, e)]) for e in ENTRIES}
                print(
                    f"{mode:24} {build:6} {t['plain']:7.3f} {t['grade']:7.3f} "
                    f"{t['grade'] / t['plain']:5.2f}x {t['pytest']:7.3f} "
                    f"{t['pytest'] / t['plain']:5.2f}x"
                )
    for (mode, build, entry), phases in profiles.items():
        print(f"\nprofile: {mode}, {build}, {entry} (median of the timed runs)")
        for phase, (seconds, count) in sorted(phases.items()):
            each = f"  {count:4.0f}x, {seconds / count * 1000:6.2f} ms each" if count > 1 else ""
            print(f"  {phase:48} {seconds:7.3f} s{each}")


if __name__ == "__main__":
    main()
