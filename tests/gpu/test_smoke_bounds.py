"""gpu/smoke.sh bounds its whole run; a SIGTERM'd ``rlsys closure run`` leaves no group behind.

smoke.sh runs here against fake ``rlsys`` and ``nvidia-smi`` commands (shell
scripts on PATH); the SIGTERM test runs the real CLI and runner with the real
group driver stuck (tests/gpu/hang_driver.py), only preflight and the
CPU-side preparation faked.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SMOKE = REPO / "gpu" / "smoke.sh"

pytestmark = pytest.mark.skipif(shutil.which("timeout") is None, reason="needs coreutils timeout")


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


def _fake_bin(tmp: Path, rlsys_body: str) -> dict[str, str]:
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    (bin_dir / "rlsys").write_text("#!/bin/bash\n" + textwrap.dedent(rlsys_body))
    (bin_dir / "nvidia-smi").write_text(
        '#!/bin/bash\ncase "$*" in *memory.used*) echo 100;; *) true;; esac\n'
    )
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_LOG": str(tmp / "argv")}


@pytest.mark.slow
def test_smoke_ends_by_its_own_deadline_and_kills_what_it_started(tmp_path: Path) -> None:
    env = _fake_bin(
        tmp_path,
        """
        echo $$ > "$FAKE_LOG.pid"
        sleep 600
        """,
    )
    env["SMOKE_TIMEOUT"] = "3"
    t0 = time.monotonic()
    proc = subprocess.run(
        ["bash", str(SMOKE), str(tmp_path / "out")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    took = time.monotonic() - t0
    assert proc.returncode == 124, proc.stdout + proc.stderr
    assert took < 60
    assert "FAIL  smoke-timeout" in proc.stdout and "SMOKE_TIMEOUT=3 s" in proc.stdout
    stuck = int(Path(str(tmp_path / "argv") + ".pid").read_text())
    deadline = time.monotonic() + 10
    while _alive(stuck) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(stuck)


def test_smoke_gives_the_run_its_group_and_phase_deadlines(tmp_path: Path) -> None:
    env = _fake_bin(
        tmp_path,
        """
        echo "$*" >> "$FAKE_LOG"
        case "$2" in
          run) exit 5;;
          *) exit 0;;
        esac
        """,
    )
    env.update(GROUP_TIMEOUT="77", PHASE_TIMEOUT="11")
    proc = subprocess.run(
        ["bash", str(SMOKE), str(tmp_path / "out")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1 and "FAIL  run" in proc.stdout, proc.stdout + proc.stderr
    run_line = next(
        x for x in (tmp_path / "argv").read_text().splitlines() if x.startswith("closure run")
    )
    assert "--group-timeout 77 --phase-timeout 11" in run_line


_CLI = """
import functools, sys
from pathlib import Path
from rlsys_closure import cli, runner
from rlsys_closure import preflight as pf
from rlsys_closure.config import nested_from_overrides, pair_overrides

checks = [pf.CheckResult("python", "pass", "3.11", {"version": "3.11"}),
          pf.CheckResult("model_cache", "pass", "m", {"path": sys.argv[2]})]

def run_group(spec_path, record_path, log, timeout_s):
    import json
    spec = json.loads(spec_path.read_text())
    spec["fake_mode"] = "hang_everything"
    spec_path.write_text(json.dumps(spec))
    return runner.run_group_process(spec_path, record_path, log, timeout_s,
                                    module="hang_driver", kill_grace_s=3.0)

runner.Steps = functools.partial(
    runner.Steps,
    preflight=lambda o: checks,
    make_adapter=lambda s, p: "a" * 64,
    compose_pair=lambda s: {g: nested_from_overrides(o) for g, o in pair_overrides(s).items()},
    run_group=run_group,
    gpu_used_mb=lambda: None,
    versions=lambda: {},
)
sys.exit(cli.main(["run", "--run-label", "term", "--output", sys.argv[1]]))
"""


@pytest.mark.slow
def test_a_sigterm_run_kills_its_group_and_writes_a_failed_file(tmp_path: Path) -> None:
    out = tmp_path / "term.json"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(HERE), str(REPO / "gpu"), os.environ.get("PYTHONPATH", "")]
        ),
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", _CLI, str(out), str(tmp_path / "model")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    orphan_file = tmp_path / "term.work" / "release.record.orphan"
    deadline = time.monotonic() + 120
    while not orphan_file.is_file() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert orphan_file.is_file(), "the stuck group never started"
    time.sleep(0.3)
    proc.send_signal(signal.SIGTERM)
    text, _ = proc.communicate(timeout=120)
    assert proc.returncode == 5, text
    orphan = int(orphan_file.read_text())
    assert not _alive(orphan), "a process of the group outlived the interrupted run"
    doc = json.loads(out.read_text())
    assert doc["status"] == "failed" and doc["failure"]["type"] == "Interrupted"
    assert doc["failure"]["phase"] == "initial_sync"
