"""`rlsys closure run`: help, refusal to overwrite, and the orchestration with fakes."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from fakes import LORA0, simulate_group
from rlsys_closure import cli, runner
from rlsys_closure import preflight as pf
from rlsys_closure.config import RunSettings, nested_from_overrides, pair_overrides

from pytest_rlsys.resultfile.loading import load_result_file


def test_run_help_describes_the_pair(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["run", "--help"]) == 0
    out = capsys.readouterr().out
    assert "differ ONLY in" in out
    assert "actor_rollout_ref.rollout.free_cache_engine" in out
    assert "release  free_cache_engine=true" in out and "retain   free_cache_engine=false" in out
    for word in (
        "same initial LoRA adapter",
        "sft_loss",
        "--sample-interval",
        "--lora-rank",
        "--run-label",
        "refused",
        "exit codes",
    ):
        assert word in out


def test_run_refuses_an_existing_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "v1.json"
    out.write_text('{"kept": true}\n')
    rc = cli.main(["run", "--run-label", "v1", "--output", str(out)])
    assert rc == pf.EXIT_EXISTS
    assert json.loads(out.read_text()) == {"kept": True}
    assert "already exists" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [
        ["run"],
        ["run", "--run-label", "../escape"],
        ["run", "--run-label", "ok", "--sample-interval", "0"],
        ["run", "--run-label", "ok", "--sample-interval", "nan"],
        # the grader refuses a sampler coarser than 10 s: the runner never writes one
        ["run", "--run-label", "ok", "--sample-interval", "10.5"],
        ["run", "--run-label", "ok", "--lora-rank", "0"],
    ],
)
def test_bad_arguments_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(argv) == pf.EXIT_USAGE
    assert "Traceback" not in capsys.readouterr().err


def test_the_flag_cannot_be_overridden(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = cli.main(
        [
            "run",
            "--run-label",
            "x",
            "--output",
            str(tmp_path / "x.json"),
            "--override",
            "actor_rollout_ref.rollout.free_cache_engine=False",
        ]
    )
    assert rc == pf.EXIT_USAGE
    assert "never the paired flag" in capsys.readouterr().err


def test_no_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == pf.EXIT_USAGE
    assert "preflight" in capsys.readouterr().out


# -- the orchestration, with fakes for verl and the GPU -------------------------
def _checks(model_path: Path, cache_ok: bool = True, env_ok: bool = True) -> list[pf.CheckResult]:
    return [
        pf.CheckResult("python", "pass", "3.11", {"version": "3.11.7"}),
        pf.CheckResult(
            "nvml",
            "pass" if env_ok else "fail",
            "gpu",
            {"driver_version": "580", "gpus": [{"name": "FakeGPU", "memory_total_mb": 16000}]},
        ),
        pf.CheckResult("attention", "warn", "sdpa", {"impl": "sdpa"}),
        pf.CheckResult(
            "model_cache", "pass" if cache_ok else "fail", "model", {"path": str(model_path)}
        ),
    ]


class Fakes:
    def __init__(self, tmp: Path, fail_group: str | None = None) -> None:
        self.tmp = tmp
        self.model = tmp / "model"
        self.groups_run: list[str] = []
        self.fail_group = fail_group
        self.preflights = 0
        self.cache_present = True
        self.fetches = 0

    def preflight(self, opts: pf.PreflightOptions) -> list[pf.CheckResult]:
        self.preflights += 1
        return _checks(self.model, cache_ok=self.cache_present)

    def fetch(self, repo: str, rev: str) -> Path:
        self.fetches += 1
        self.cache_present = True
        return self.model

    def compose(self, settings: RunSettings) -> dict[str, dict[str, Any]]:
        return {g: nested_from_overrides(ov) for g, ov in pair_overrides(settings).items()}

    def run_group(self, spec_path: Path, record_path: Path, log: Path, timeout: float) -> int:
        spec = json.loads(spec_path.read_text())
        group = spec["group"]
        self.groups_run.append(group)
        assert spec["initial_lora_sha256"] == LORA0
        record = simulate_group(
            group,
            config=nested_from_overrides(spec["overrides"]),
            fail_in="sync" if group == self.fail_group else None,
        )
        record["rollout_source_sha256"] = spec["rollout_source_sha256"]
        record_path.write_text(json.dumps(record))
        return 5 if group == self.fail_group else 0

    def steps(self) -> runner.Steps:
        return runner.Steps(
            preflight=self.preflight,
            fetch_model=self.fetch,
            make_adapter=lambda s, p: LORA0,
            compose_pair=self.compose,
            run_group=self.run_group,
            versions=lambda: {"verl": "0.9.1"},
        )


def _opts(tmp: Path, label: str = "cpu_pair_v2") -> runner.RunOptions:
    return runner.RunOptions(run_label=label, output=tmp / "results" / f"{label}.json")


def test_run_writes_a_valid_completed_result(tmp_path: Path) -> None:
    fakes = Fakes(tmp_path)
    opts = _opts(tmp_path)
    out = io.StringIO()
    assert runner.run(opts, fakes.steps(), out) == pf.EXIT_OK
    assert fakes.groups_run == ["release", "retain"]
    loaded = load_result_file(opts.output)
    assert loaded.ok, loaded.errors
    assert loaded.doc is not None and loaded.doc["status"] == "completed"
    assert all(c["passed"] for c in loaded.doc["system_decision"]["checks"].values())
    # Both groups got the same spec but for the group, the flag and its override.
    specs = {
        g: json.loads((opts.work_dir / f"{g}.spec.json").read_text()) for g in ("release", "retain")
    }
    diff = {k for k in specs["release"] if specs["release"][k] != specs["retain"][k]}
    assert diff == {"group", "free_cache_engine", "overrides"}
    assert "sdpa" in " ".join(specs["release"]["overrides"])
    # A second run with the same label is refused and changes nothing.
    before = opts.output.read_bytes()
    assert runner.run(opts, fakes.steps(), io.StringIO()) == pf.EXIT_EXISTS
    assert opts.output.read_bytes() == before
    assert fakes.groups_run == ["release", "retain"]


def test_a_failed_group_still_writes_a_failed_result(tmp_path: Path) -> None:
    fakes = Fakes(tmp_path, fail_group="release")
    opts = _opts(tmp_path, "cpu_pair_failed")
    assert runner.run(opts, fakes.steps(), io.StringIO()) == pf.EXIT_RUN_FAILED
    assert fakes.groups_run == ["release"], "no GPU time spent on the other group"
    loaded = load_result_file(opts.output)
    assert loaded.ok, loaded.errors
    doc = loaded.doc
    assert doc is not None and doc["status"] == "failed"
    assert doc["failure"]["group"] == "release" and doc["failure"]["phase"] == "sync"
    assert doc["groups"]["release"]["update_completed"] is True
    assert doc["groups"]["retain"]["events"] == []


def test_environment_not_ready_starts_no_gpu_work(tmp_path: Path) -> None:
    fakes = Fakes(tmp_path)
    steps = fakes.steps()
    steps.preflight = lambda o: _checks(fakes.model, env_ok=False)
    opts = _opts(tmp_path)
    assert runner.run(opts, steps, io.StringIO()) == pf.EXIT_NOT_READY
    assert fakes.groups_run == [] and not opts.output.exists()


def test_missing_model_cache_is_fetched_then_run(tmp_path: Path) -> None:
    fakes = Fakes(tmp_path)
    fakes.cache_present = False
    opts = _opts(tmp_path)
    assert runner.run(opts, fakes.steps(), io.StringIO()) == pf.EXIT_OK
    assert fakes.fetches == 1 and fakes.preflights == 2


def test_missing_model_cache_without_fetch_exits_4(tmp_path: Path) -> None:
    fakes = Fakes(tmp_path)
    fakes.cache_present = False
    opts = _opts(tmp_path)
    opts.fetch = False
    assert runner.run(opts, fakes.steps(), io.StringIO()) == pf.EXIT_MODEL_CACHE
    steps = fakes.steps()
    steps.fetch_model = lambda r, v: (_ for _ in ()).throw(OSError("no network"))
    opts.fetch = True
    out = io.StringIO()
    assert runner.run(opts, steps, out) == pf.EXIT_MODEL_CACHE
    assert "could not fetch" in out.getvalue()
    assert fakes.groups_run == []


def test_unpaired_configs_stop_before_the_gpu(tmp_path: Path) -> None:
    fakes = Fakes(tmp_path)
    steps = fakes.steps()

    def bad_compose(settings: RunSettings) -> dict[str, dict[str, Any]]:
        raise ValueError("configs are not paired: actor_rollout_ref.model.lora_rank differs")

    steps.compose_pair = bad_compose
    out = io.StringIO()
    assert runner.run(_opts(tmp_path), steps, out) == pf.EXIT_NOT_READY
    assert "no GPU work started" in out.getvalue() and fakes.groups_run == []


def test_driver_main_records_a_failure_and_exits_5(tmp_path: Path) -> None:
    from rlsys_closure import driver

    spec = {
        "group": "retain",
        "free_cache_engine": False,
        "overrides": [],
        "rollout_source_sha256": "0" * 64,
        "initial_lora_sha256": LORA0,
    }
    spec_path, record_path = tmp_path / "spec.json", tmp_path / "rec.json"
    spec_path.write_text(json.dumps(spec))

    class Boom:
        def __init__(self, spec: dict[str, Any], record: Any) -> None:
            self.record = record

        def run(self) -> None:
            self.record.data["status"] = "failed"
            self.record.data["failure"] = {
                "type": "ImportError",
                "message": "no vllm",
                "phase": None,
            }
            self.record.flush()
            raise ImportError("no vllm")

    assert driver.main([str(spec_path), str(record_path)], driver_factory=Boom) == 5
    rec = json.loads(record_path.read_text())
    assert rec["status"] == "failed" and rec["group"] == "retain"
    assert driver.main(["only-one-arg"]) == 2


def test_a_group_started_with_sigint_ignored_can_still_be_interrupted(tmp_path: Path) -> None:
    """The watchdog's interrupt is a SIGINT: a group that inherited SIGINT ignored (its
    run started with `nohup ... &`) once lost it and waited for the hard stop."""
    import signal

    from rlsys_closure import driver

    spec_path, record_path = tmp_path / "spec.json", tmp_path / "rec.json"
    spec = {
        "group": "retain",
        "free_cache_engine": False,
        "overrides": [],
        "rollout_source_sha256": "0" * 64,
        "initial_lora_sha256": LORA0,
    }
    spec_path.write_text(json.dumps(spec))
    seen: list[Any] = []

    class Looks:
        def __init__(self, spec: dict[str, Any], record: Any) -> None:
            pass

        def run(self) -> None:
            seen.append(signal.getsignal(signal.SIGINT))

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # as the group inherits it
    try:
        assert driver.main([str(spec_path), str(record_path)], driver_factory=Looks) == 0
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN  # its caller's, restored
    finally:
        signal.signal(signal.SIGINT, previous)
    assert seen == [signal.default_int_handler]
