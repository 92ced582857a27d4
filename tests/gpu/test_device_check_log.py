"""gpu/device_check.py keeps its terminal report one line per section: what the libraries
print (transformers' progress bars and warnings, torch's, a child process's) goes to
``--out``/device_check.log.  Runs without torch: the sections are stand-ins that make the
libraries' kinds of noise (Python warnings, a progress bar on stderr, a C-level write to
fd 2, a child process's output)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "gpu" / "device_check.py"

DRIVER = """
import importlib.util, os, subprocess, sys, warnings
spec = importlib.util.spec_from_file_location("device_check", sys.argv[1])
dc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(dc)

def noisy(name):
    def run(report, *args):
        warnings.warn("transformers-like warning " + name)
        sys.stderr.write("Loading checkpoint shards:  50%|#####     | 1/2\\r")
        sys.stderr.flush()
        os.write(2, b"a C library writes to fd 2\\n")
        print("a library prints to stdout", flush=True)
        subprocess.run([sys.executable, "-c", "print('a child process prints')"])
        report.add(name, "cpu", name + " ran")
    return run

dc.check_environment = noisy("environment")
for fn in ("check_sampler", "check_lora_fsdp", "check_determinism", "check_cumem",
           "check_preflight"):
    setattr(dc, fn, noisy(fn.removeprefix("check_")))
sys.exit(dc.main(["--out", sys.argv[2], "--budget", "60"]))
"""


def test_the_report_is_one_line_per_section_and_the_noise_goes_to_the_log(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, str(SCRIPT), str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr  # no GPU: the degraded mode
    lines = proc.stdout.splitlines()
    sections = [line for line in lines if re.match(r"\[(pass|fail|cpu|skip) *\] ", line)]
    assert len(sections) == 6, lines
    others = [line for line in lines if line not in sections]
    assert all(line.startswith(("device_check:", "NO GPU:")) for line in others), others
    assert proc.stderr == ""
    log = (out / "device_check.log").read_text(encoding="utf-8")
    for noise in (
        "transformers-like warning environment",
        "Loading checkpoint shards",
        "a C library writes to fd 2",
        "a library prints to stdout",
        "a child process prints",
    ):
        assert noise in log and noise not in proc.stdout, noise
    assert str(out / "device_check.log") in proc.stdout  # the report says where the rest is
