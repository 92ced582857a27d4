"""Time ``rlsys closure plot`` on a one-hour result file against the shipped example.

Baseline and subject in the same run: the shipped example (about 90 samples per
group) and the synthetic one-hour file of bench_result_validation.py (14,400
samples per group). For each: read + validate + build the view, then draw and
save both figures as PNG and as SVG; the ratio one-hour / example says how the
drawing scales. Also reports the size of what was written.

Run:  .venv/bin/python benchmarks/bench_plot.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "gpu"))

from bench_result_validation import build_one_hour_doc  # noqa: E402
from rlsys_closure.plot import read_view, write_figures  # noqa: E402

from pytest_rlsys.resources import schema_dir  # noqa: E402


def _median(fn: object, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        hour = work / "one_hour.json"
        hour.write_text(json.dumps(build_one_hour_doc()), encoding="utf-8")
        files = {
            "example": schema_dir() / "examples" / "pt-verl-closure.example.json",
            "one hour": hour,
        }
        results: dict[str, dict[str, float]] = {}
        # Warm-up: matplotlib's import and font cache are not the drawing's cost.
        write_figures(read_view(files["example"]), work / "warmup.png")
        for name, path in files.items():
            row: dict[str, float] = {}
            row["read"] = _median(lambda p=path: read_view(p), args.repeat)
            view = read_view(path)
            for ext in ("png", "svg"):
                out = work / f"{name.replace(' ', '_')}.{ext}"
                row[ext] = _median(lambda v=view, o=out: write_figures(v, o), args.repeat)
                written = [out, out.with_name(f"{out.stem}-peaks.{ext}")]
                row[f"{ext}_kib"] = sum(p.stat().st_size for p in written) / 1024
            results[name] = row
    print(f"{'':10} {'read (s)':>9} {'png (s)':>8} {'svg (s)':>8} {'png KiB':>8} {'svg KiB':>8}")
    for name, row in results.items():
        print(
            f"{name:10} {row['read']:9.3f} {row['png']:8.3f} {row['svg']:8.3f} "
            f"{row['png_kib']:8.0f} {row['svg_kib']:8.0f}"
        )
    base, hour_row = results["example"], results["one hour"]
    print(
        "ratio one hour / example: "
        + ", ".join(f"{k} {hour_row[k] / base[k]:.1f}x" for k in ("read", "png", "svg"))
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
