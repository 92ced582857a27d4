"""One submission, whole battery, isolated, vs the chapter's three tests in plain pytest.

Run: .venv/bin/python benchmarks/bench_grading.py [--repeat N] [--wheel]
Prints wall and CPU times (median and minimum of N, interleaved) for, in the same run:
  A. `pytest --rlsys-submission REF`: the plugin as installed, loaded by pytest's own
     entry-point autoload (so pytest marks the distribution for assertion rewriting, as it
     does for a user), with every other third-party plugin blocked (`-p no:NAME`); only
     pytest-timeout, a dependency of the plugin (so installed and loaded with it), stays.
  B. `pytest test_chapter.py` (benchmarks/chapter_tests.py: the chapter's 3 tests,
     in-process, same code) with no third-party plugin at all.
  C. the engine alone, in-process timing of the battery: cases/s and calls/s,
and the ratios A/B (target <= 1.3 x, issue 44, on wall time: A runs the submission in a second
process and a background thread, so its CPU time exceeds its wall time).  The minimum
is printed beside the median because these machines are shared: noise only ever adds.
As root, A is measured behind each fence (docs/threat-model.md), interleaved in the same
run: bubblewrap (where it runs), the container mode (namespaces refused by a seccomp filter,
as Docker's default profile does: Landlock + the seccomp allow-list), and the container
without Landlock (the start-up walk and the sweep), each started through
tests/plugin/platform_filter.py.
CPU time is user + sys of the pytest process and its children, from wait4.  With
--wheel the project is first built as a wheel and installed into a temporary folder
that both runs import from: the CI install, where pytest's assertion rewriting applies
(an editable install lists no modules to rewrite).
PYTHONDONTWRITEBYTECODE is kept as the environment sets it; with it set, pytest cannot
cache rewritten modules and pays for rewriting on every run.
"""

from __future__ import annotations

import argparse
import importlib.metadata
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
sys.path.insert(0, str(ROOT))

from pytest_rlsys.grading.grader import Grader  # noqa: E402
from pytest_rlsys.resources import solution_path  # noqa: E402

KEEP = {"pytest-rlsys", "pytest-timeout"}
# Fences measured besides A's own (root only): name -> platform_filter mode.
FENCES = (
    {
        "the container fence (Landlock + seccomp)": "container",
        "the container without Landlock (walk + sweep)": "container+no-landlock",
    }
    if os.geteuid() == 0
    else {}
)


def platform(mode: str) -> list[str]:
    """Start a command as the platform ``mode`` would (tests/plugin/platform_filter.py)."""
    return [sys.executable, str(ROOT / "tests" / "plugin" / "platform_filter.py"), mode]


def other_plugins() -> list[str]:
    """`-p no:NAME` for every installed pytest11 plugin that is neither ours nor pytest-timeout."""
    names: set[str] = set()
    for dist in importlib.metadata.distributions():
        if (dist.metadata["Name"] or "").lower() in KEEP:
            continue
        names.update(ep.name for ep in dist.entry_points if ep.group == "pytest11")
    return [arg for name in sorted(names) for arg in ("-p", f"no:{name}")]


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + sys, children included) of one run."""
    began = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - began
        if os.waitstatus_to_exitcode(status) != 0:
            out.seek(0)
            sys.exit(f"command failed: {' '.join(cmd)}\n{out.read()[-2000:].decode()}")
    return elapsed, usage.ru_utime + usage.ru_stime


def install_wheel(into: Path) -> Path:
    """Build this checkout as a wheel and install it (no dependencies) into ``into``."""
    dist = into / "dist"
    site = into / "site"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", str(ROOT), "-w", str(dist)], check=True)
    wheel = next(dist.glob("*.whl"))
    subprocess.run([*pip, "install", "--no-deps", "--target", str(site), str(wheel)], check=True)
    return site


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--wheel", action="store_true", help="measure the installed wheel")
    args = parser.parse_args()
    ref = solution_path()
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp) / "run"
        cwd.mkdir()
        site = install_wheel(Path(tmp)) if args.wheel else ROOT
        path = os.pathsep.join([str(site), str(ROOT / "gpu")] if not args.wheel else [str(site)])
        if args.wheel:
            ref = site / "pytest_rlsys" / "_bundled" / "solutions" / ref.name
        env = dict(os.environ, RLSYS_BENCH_TARGET=str(ref), PYTHONPATH=path)
        plain_env = dict(env, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
        # Both runs start in the same empty folder, so neither reads this repo's config
        # (and the grader refuses a submission below a pytest config: it is copied out).
        (cwd / "test_chapter.py").write_text((HERE / "chapter_tests.py").read_text())
        upload = cwd / "upload"
        upload.mkdir()
        ref = Path(shutil.copy(ref, upload / "mine.py"))
        pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        plugin = [*pytest, *other_plugins(), "--rlsys-submission", str(ref), "--rlsys-seed", "1"]
        plain = [*pytest, "test_chapter.py"]
        a, b = [], []
        fenced: dict[str, list[tuple[float, float]]] = {name: [] for name in FENCES}
        for _ in range(args.repeat):  # interleaved, so load changes hit both alike
            a.append(timed(plugin, env, cwd))
            b.append(timed(plain, plain_env, cwd))
            for name, mode in FENCES.items():
                fenced[name].append(timed([*platform(mode), *plugin], env, cwd))
    engine_times, calls = [], 0
    ref = solution_path()
    for _ in range(args.repeat):
        grader = Grader(ref, ref.read_bytes(), seed=1)
        began = time.perf_counter()
        grader.run_all()
        engine_times.append(time.perf_counter() - began)
        calls = sum(len(c.calls) for c in grader.cases)
        assert grader.report().score == 100
    cases = len(grader.cases)
    wa, wb = (statistics.median(t[0] for t in x) for x in (a, b))
    ca, cb = (statistics.median(t[1] for t in x) for x in (a, b))
    ma, mb = (min(t[0] for t in x) for x in (a, b))
    mc = statistics.median(engine_times)
    where = "installed wheel" if args.wheel else "this checkout on PYTHONPATH"
    print(
        f"code under test: {where}; PYTHONDONTWRITEBYTECODE="
        f"{os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r}"
    )
    print(
        f"A  plugin, whole battery isolated ({cases} cases): wall {wa:.3f} s, cpu {ca:.3f} s "
        f"(median of {args.repeat})"
    )
    print(f"B  chapter's 3 tests, plain pytest, no plugins:  wall {wb:.3f} s, cpu {cb:.3f} s")
    print(f"   ratio A/B: wall {wa / wb:.2f} x, cpu {ca / cb:.2f} x  [target <= 1.3 x]")
    print(f"   minimum wall: A {ma:.3f} s, B {mb:.3f} s, ratio {ma / mb:.2f} x")
    for name, runs in fenced.items():
        wf = statistics.median(t[0] for t in runs)
        print(f"A' behind {name}: wall {wf:.3f} s, ratio to B {wf / wb:.2f} x")
    print(
        f"C  engine only (child start + {cases} cases, {calls} calls): {mc:.3f} s -> "
        f"{cases / mc:.0f} cases/s, {calls / mc:.0f} calls/s through the boundary"
    )


if __name__ == "__main__":
    main()
