"""``rlsys closure preflight | run | summary | tiny-model``."""

from __future__ import annotations

import argparse
import re
import signal
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_rlsys.escaping import say
from pytest_rlsys.option_values import argparse_type, positive_float, positive_int, positive_number
from pytest_rlsys.outputs.files import write_atomic
from pytest_rlsys.outputs.text import dump_json
from pytest_rlsys.resultfile.checks.vocabulary import MAX_INTERVAL_S
from pytest_rlsys.safe_read import missing_inputs
from rlsys_closure import preflight as pf

RUN_DESCRIPTION = """\
Run the release/retain pair of verl {verl} on one GPU and write one
pt-verl-closure/1 result file.

The pair: two groups, each in a fresh process, that differ ONLY in
actor_rollout_ref.rollout.free_cache_engine:
  release  free_cache_engine=true   the rollout engine sleeps after generating
                                    (weights offloaded, KV cache freed) and is
                                    resumed during the weight sync
                                    (resume weights -> transfer -> resume KV cache)
  retain   free_cache_engine=false  the engine keeps weights and KV cache
                                    resident; no resume call, the new LoRA
                                    weights are still transferred
Both groups use the same model, the same initial LoRA adapter (created once,
seeded, hashed), the same frozen prompts, sampling parameters and seeds, and
run: initial sync, generate, engine sleep, score, one supervised update with
verl's sft_loss, weight sync, generate and score again. Phase events share one
monotonic clock (initialisation recorded apart); whole-GPU (NVML) and host
memory are sampled every --sample-interval seconds plus at every phase
boundary; actor memory is read at the boundaries.

Nothing runs on the GPU until preflight and the CPU-side preparation (adapter,
rollout source, both configs composed and diffed) have passed. If the only
preflight failure is the model cache, the pinned revision is fetched first.
Result files are records: a label that already has one is refused.

No wait is unbounded: each step inside a group has --phase-timeout, each
group's process --group-timeout; a group that runs past either ends as a
failed result file naming the phase it was stuck in, and every process the
group started (Ray, the vLLM engine and its children) is killed before the
next group starts.
"""


# What each command can exit with, in the layout `rlsys --help` uses; a test holds each
# command's list to the codes its function returns.
_EXITS: dict[str, tuple[tuple[int, str], ...]] = {
    "closure": (
        (0, "done (preflight: ready; run: completed; plot, summary, tiny-model: written)"),
        (
            1,
            "bad input: a file that is not a valid result file, or one that cannot be "
            "drawn; tiny-model: OUT_DIR cannot be written",
        ),
        (2, "bad arguments, or an input FILE that is not there (rlsys's one rule)"),
        (3, "not ready: a failed preflight check, a missing output folder, or a missing package"),
        (4, "preflight, run: ready except for the model cache"),
        (5, "run: failed mid-way; a result file marked failed was written"),
        (6, "run: a result file for this run label exists; nothing is overwritten"),
        (130, "interrupted"),
    ),
    "preflight": (
        (0, "ready"),
        (2, "bad arguments"),
        (3, "not ready (see the failed checks), or the --json file cannot be written there"),
        (4, "ready except for the model cache (run fetches the pinned revision)"),
    ),
    "run": (
        (0, "completed: both groups ran; the result file and the raw artefacts are written"),
        (2, "bad arguments (a bad --override included)"),
        (3, "not ready: a preflight check or the CPU-side preparation failed; no GPU work"),
        (4, "the model cache is missing and --no-fetch was given, or fetching it failed"),
        (5, "failed mid-way: a result file marked failed (naming the phase) was written"),
        (6, "a result file for this run label exists; nothing is overwritten"),
    ),
    "summary": (
        (0, "the view was printed (whatever the checks say: it is a view, not a grade)"),
        (
            1,
            "the file cannot be summarised: over the size limit, or not a "
            "valid result file (the message says why)",
        ),
        (2, "bad arguments, or FILE is not there"),
    ),
    "tiny-model": (
        (0, "the model and its tokenizer were written to OUT_DIR"),
        (1, "OUT_DIR cannot be written"),
        (2, "bad arguments"),
        (3, "torch, transformers or tokenizers is not installed"),
    ),
    "plot": (
        (0, "both pictures written"),
        (1, "the file cannot be drawn (not a valid result file; the message says why)"),
        (2, "bad arguments (e.g. OUTPUT not .png or .svg), or FILE is not there"),
        (3, "matplotlib is not installed, or OUTPUT's folder does not exist"),
    ),
}


def _interval(text: str) -> float:
    """A sampling interval the grader takes: a sampler reading less often than every
    MAX_INTERVAL_S seconds cannot see a phase, and the grader refutes such a file."""
    value = positive_number(text)
    if value > MAX_INTERVAL_S:
        raise ValueError(
            f"must be at most {MAX_INTERVAL_S:g} s (a coarser sampler cannot see a phase, "
            "and the grader refuses its file; docs/result-files.md)"
        )
    return value


sample_interval = argparse_type(_interval, "sampling interval in seconds")


def _exit_epilog(command: str) -> str:
    rows = [*_EXITS[command], *([(130, "interrupted")] if command != "closure" else [])]
    lines = ["exit codes:"]
    for code, text in rows:  # wrapped for an 80-column terminal, as rlsys --help is
        lines += textwrap.wrap(text, 78, initial_indent=f"  {code:<3} ", subsequent_indent=" " * 6)
    return "\n".join(lines)


_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def _label(text: str) -> str:
    if not _LABEL.match(text):
        raise argparse.ArgumentTypeError(
            "a run label is 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    return text


def _engine(text: str) -> str:
    if text in pf.ENGINE_MODULES:
        return text
    supported = ", ".join(sorted(pf.ENGINE_MODULES))
    if text == "sglang":
        # verl has an SGLang adapter, but this runner has no install recipe, CPU test or
        # probe for it (and its level-1 sleep keeps the weights): refused, not half-run.
        raise argparse.ArgumentTypeError(
            f"SGLang is not supported by the closure runner yet (no install recipe, test or "
            f"probe for it); supported: {supported}"
        )
    raise argparse.ArgumentTypeError(f"unknown engine {text!r}; supported: {supported}")


def _model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--engine",
        type=_engine,
        default="vllm",
        help="rollout engine; only vllm is supported (default vllm)",
    )
    p.add_argument(
        "--model",
        default=pf.DEFAULT_MODEL,
        help=f"Hugging Face model id (default {pf.DEFAULT_MODEL})",
    )
    p.add_argument(
        "--model-revision",
        default=pf.DEFAULT_MODEL_REVISION,
        help="pinned model revision (commit) to use and fetch",
    )
    p.add_argument(
        "--model-path",
        type=Path,
        default=None,
        help="a local model folder instead of the cache (e.g. from tiny-model)",
    )


class _Parser(argparse.ArgumentParser):
    """argparse writing through the terminal edge (``say``): its usage errors quote what
    was typed (an escape sequence, a carriage return, a bidi override) and must show it
    escaped, as every other line of ``rlsys`` does (docs/threat-model.md, "Output edges").
    Its subcommands' parsers are of this class too (argparse uses the parent's)."""

    def _print_message(self, message: str, file: Any = None) -> None:
        if message:
            say(message, end="", to=file if file is not None else sys.stderr)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="rlsys closure",
        description="The verl release/retain closure experiment on one GPU: check this\n"
        "machine (preflight), run the pair and write a pt-verl-closure result file\n"
        "(run), read one (summary, plot; 'rlsys result FILE' grades it), and build a\n"
        "tiny model for offline smoke runs (tiny-model). README.md, 'For lab operators',\n"
        "walks through it; docs/result-files.md says how a result file is graded.",
        epilog=_exit_epilog("closure"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "preflight",
        help="check this machine is ready for the run",
        description="Check Python, the C compiler and Python.h Triton builds with,\n"
        "CUDA/NVML and the GPU mechanisms, verl, the rollout engine, dependency\n"
        "versions, disk, memory and the model cache.",
        epilog=_exit_epilog("preflight"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _model_args(p)
    p.add_argument(
        "--json",
        type=Path,
        default=None,
        metavar="PATH",
        help="also write every check as JSON to PATH (its folder must exist)",
    )
    p.add_argument(
        "--output-dir",
        type=Path,
        default=Path("."),
        help="where results will go (its free disk space is checked)",
    )

    r = sub.add_parser(
        "run",
        help="run the release/retain pair and write the result file",
        description=RUN_DESCRIPTION.format(verl=pf.VERL_VERSION),
        epilog=_exit_epilog("run"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    r.add_argument(
        "--run-label",
        type=_label,
        required=True,
        help="the experiment's label; a label that has a result is refused",
    )
    r.add_argument(
        "--output",
        type=Path,
        default=None,
        help="result file (default results/pt_verl_closure/LABEL.json)",
    )
    _model_args(r)
    r.add_argument("--lora-rank", type=positive_int, default=16, help="LoRA rank (default 16)")
    r.add_argument("--lora-alpha", type=positive_int, default=32, help="LoRA alpha (default 32)")
    r.add_argument(
        "--sample-interval",
        type=sample_interval,
        default=0.25,
        help="seconds between memory samples (default 0.25, at most 10)",
    )
    r.add_argument(
        "--no-boundary-samples",
        action="store_true",
        help="do not take a sample at every phase boundary",
    )
    r.add_argument(
        "--group-timeout",
        type=positive_float,
        default=3600.0,
        metavar="SECONDS",
        help="deadline of each group's process (default 3600); past it the group's "
        "processes are killed and the run ends as a failed result file naming the "
        "phase it was stuck in",
    )
    r.add_argument(
        "--phase-timeout",
        type=positive_float,
        default=900.0,
        metavar="SECONDS",
        help="deadline of each step inside a group (each phase, engine start and weight "
        "sync included; default 900); a step past it fails the group with that step named",
    )
    r.add_argument(
        "--n-prompts", type=positive_int, default=8, help="prompts per rollout (default 8)"
    )
    r.add_argument(
        "--max-new-tokens",
        type=positive_int,
        default=64,
        help="tokens generated per prompt at most (default 64)",
    )
    r.add_argument(
        "--gpu-memory-utilization",
        type=positive_float,
        default=0.4,
        help="the rollout engine's share of the GPU's memory (default 0.4)",
    )
    r.add_argument(
        "--seed", type=int, default=1234, help="seed of the adapter, prompts and sampling"
    )
    r.add_argument(
        "--no-fetch",
        action="store_true",
        help="never download the model, even when only the cache is missing",
    )
    r.add_argument(
        "--override",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an extra verl override applied to BOTH groups (repeatable)",
    )

    s = sub.add_parser(
        "summary",
        help="print the system view of a result file",
        description="Print the system view of a pt-verl-closure result file: each check\n"
        "as the file claims it and as re-derived from its evidence (a false claim is\n"
        "marked), each group's phases (duration, samples, sampled peak), whole-run\n"
        "peaks and resume calls. It grades nothing: 'rlsys result FILE' does.",
        epilog=_exit_epilog("summary"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument("file", type=Path, help="the result file (JSON)")
    s.add_argument("--view", choices=["system"], default="system", help="the view (only: system)")
    s.add_argument("--json", action="store_true", help="print the view as JSON")

    g = sub.add_parser(
        "plot",
        help="draw a result file's memory timeline and per-phase peaks",
        description="Draw two pictures from a pt-verl-closure result file (nothing is\n"
        "re-run; a failed run's partial file works too): the memory timeline to\n"
        "OUTPUT and the per-phase peaks next to it as STEM-peaks.EXT.\n"
        "Needs matplotlib: pip install matplotlib (from a checkout of this\n"
        "project, pip install '.[plot]' installs the pinned version).",
        epilog=_exit_epilog("plot"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    g.add_argument("file", type=Path, help="the result file (JSON)")
    g.add_argument(
        "-o",
        "--output",
        default=None,
        metavar="OUTPUT",
        help="the timeline picture, .png or .svg (default RUN_LABEL-timeline.png)",
    )

    t = sub.add_parser(
        "tiny-model",
        help="build a tiny random Qwen2 for offline smoke runs",
        description="Write a tiny, randomly initialised Qwen2 model (bfloat16) and its\n"
        "tokenizer to OUT_DIR, so that 'run --model-path OUT_DIR' can exercise the\n"
        "whole pipeline without downloading a model. Needs torch, transformers and\n"
        "tokenizers. Its outputs are noise: a smoke run tests the plumbing only.",
        epilog=_exit_epilog("tiny-model"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    t.add_argument("out_dir", type=Path, metavar="OUT_DIR", help="the folder to write (created)")
    t.add_argument("--layers", type=positive_int, default=2, help="hidden layers (default 2)")
    t.add_argument("--seed", type=int, default=0, help="seed of the weights (default 0)")
    return parser


def _missing_folder(flag: str, path: Path) -> bool:
    """Say so when ``path``'s folder does not exist (never created: a typo must not
    scatter files), as the other commands do."""
    if path.parent.is_dir():
        return False
    say(f"{flag} {path}: folder {path.parent} does not exist; create it first", err=True)
    return True


def cmd_preflight(args: argparse.Namespace) -> int:
    if args.json is not None and _missing_folder("preflight: --json", args.json):
        return pf.EXIT_NOT_READY
    opts = pf.PreflightOptions(
        engine=args.engine,
        model=args.model,
        model_revision=args.model_revision,
        model_path=args.model_path,
        output_dir=args.output_dir,
    )
    results = pf.run_checks(opts)
    say(pf.format_results(results))
    report = pf.report(results, opts)
    if args.json is not None:
        try:
            write_atomic(args.json, dump_json(report))
        except OSError as exc:
            say(f"preflight: cannot write {args.json}: {exc.strerror or exc}", err=True)
            return pf.EXIT_NOT_READY if report["exit_code"] == 0 else int(report["exit_code"])
    return int(report["exit_code"])


def cmd_run(args: argparse.Namespace) -> int:
    from rlsys_closure.runner import RunOptions, run

    for item in args.override:
        key = item.partition("=")[0].lstrip("+~")
        if "=" not in item or key == "actor_rollout_ref.rollout.free_cache_engine":
            say(f"run: bad --override {item!r} (KEY=VALUE, and never the paired flag)", err=True)
            return pf.EXIT_USAGE
    output = args.output or Path("results") / "pt_verl_closure" / f"{args.run_label}.json"
    opts = RunOptions(
        run_label=args.run_label,
        output=output,
        model=args.model,
        model_revision=args.model_revision,
        model_path=args.model_path,
        engine=args.engine,
        lora_rank=args.lora_rank,
        lora_alpha=args.lora_alpha,
        sample_interval_s=args.sample_interval,
        boundary_samples=not args.no_boundary_samples,
        n_prompts=args.n_prompts,
        max_new_tokens=args.max_new_tokens,
        gpu_memory_utilization=args.gpu_memory_utilization,
        seed=args.seed,
        fetch=not args.no_fetch,
        group_timeout_s=args.group_timeout,
        phase_timeout_s=args.phase_timeout,
        extra_overrides=tuple(args.override),
    )
    # smoke.sh's timeout(1) and schedulers stop with SIGTERM: make it unwind like
    # Ctrl-C, so the groups (in sessions of their own) are killed, not orphaned.
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        return run(opts)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def cmd_summary(args: argparse.Namespace) -> int:
    from rlsys_closure.summary import SummaryError, format_summary, read_summary

    for missing in missing_inputs([args.file]):  # rlsys's one rule: a usage error
        say(f"summary: {missing}", err=True)
        return pf.EXIT_USAGE
    try:
        view = read_summary(args.file, args.view)
    except SummaryError as exc:
        say(f"summary: {exc}", err=True)
        return pf.EXIT_ERROR
    if args.json:
        say(dump_json(view), end="")
    else:
        say(format_summary(view))
    return pf.EXIT_OK


def cmd_plot(args: argparse.Namespace) -> int:
    from rlsys_closure.plot import plot_main

    for missing in missing_inputs([args.file]):  # rlsys's one rule: a usage error
        say(f"plot: {missing}", err=True)
        return pf.EXIT_USAGE
    output: str | None = args.output
    if output is not None and (output.endswith(("/", "\\")) or Path(output).is_dir()):
        if not Path(output).is_dir():
            say(f"plot: -o {output}: folder does not exist; create it first", err=True)
            return pf.EXIT_NOT_READY
        say(
            f"plot: -o {output} is a folder; name the picture, e.g. -o "
            f"{Path(output) / 'timeline.png'}",
            err=True,
        )
        return pf.EXIT_USAGE
    if output is not None and _missing_folder("plot: -o", Path(output)):
        return pf.EXIT_NOT_READY
    return plot_main(args.file, None if output is None else Path(output))


def cmd_tiny_model(args: argparse.Namespace) -> int:
    from rlsys_closure.tiny_model import TinySpec, build_tiny_model

    try:
        facts = build_tiny_model(
            args.out_dir, TinySpec(num_hidden_layers=args.layers, seed=args.seed)
        )
    except ImportError as exc:
        say(f"tiny-model: needs torch, transformers and tokenizers: {exc}", err=True)
        return pf.EXIT_NOT_READY
    except OSError as exc:
        say(f"tiny-model: cannot write {args.out_dir}: {exc.strerror or exc}", err=True)
        return pf.EXIT_ERROR
    say(
        f"tiny-model: wrote {facts['path']} ({facts['parameters']} parameters, "
        f"vocab {facts['vocab_size']}); use it with --model-path {facts['path']}"
    )
    return pf.EXIT_OK


def main(argv: Sequence[str]) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as exc:  # argparse exits 0 for --help, 2 for bad arguments
        return int(exc.code) if isinstance(exc.code, int) else pf.EXIT_USAGE
    if args.command is None:
        parser.print_help()
        return pf.EXIT_USAGE
    handlers = {
        "preflight": cmd_preflight,
        "run": cmd_run,
        "summary": cmd_summary,
        "tiny-model": cmd_tiny_model,
        "plot": cmd_plot,
    }
    try:
        return handlers[args.command](args)
    except KeyboardInterrupt:
        say(f"{args.command}: interrupted", err=True)
        return 130
