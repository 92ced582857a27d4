#!/usr/bin/env bash
# First GPU run of the closure runner: one script, one PASS/FAIL line per check.
#
#   bash gpu/smoke.sh [OUT_DIR]      (default /tmp/rlsys_smoke; must not hold a previous run)
#
# Needs: one GPU, nvidia-smi, verl 0.9.1 with vLLM, peft<0.21, and this project installed
# (`rlsys` on PATH, or RLSYS="python -m pytest_rlsys"). Small settings on the tiny offline
# model: expect 3-8 minutes. Exits 1 at the first failed check; logs stay in OUT_DIR.
#
# Nothing here waits unbounded: the whole script has SMOKE_TIMEOUT seconds (default 1800;
# past it: exit 124), each group of the pair GROUP_TIMEOUT (default 900) and each step
# inside a group PHASE_TIMEOUT (default 300); a stuck group ends as a failed result file
# naming the phase it was stuck in.
set -uo pipefail

SMOKE_TIMEOUT=${SMOKE_TIMEOUT:-1800}
GROUP_TIMEOUT=${GROUP_TIMEOUT:-900}
PHASE_TIMEOUT=${PHASE_TIMEOUT:-300}
if [ -z "${RLSYS_SMOKE_BOUNDED:-}" ]; then
  # Re-run this script under timeout(1): it signals the whole process group (the runner
  # then kills its groups, which live in sessions of their own) and SIGKILLs 30 s later.
  export RLSYS_SMOKE_BOUNDED=1
  timeout --kill-after=30 "$SMOKE_TIMEOUT" bash "$0" "$@"
  rc=$?
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    printf 'FAIL  %-24s %s\n' smoke-timeout "the smoke run exceeded SMOKE_TIMEOUT=${SMOKE_TIMEOUT} s (logs: ${1:-/tmp/rlsys_smoke})"
  fi
  exit "$rc"
fi

OUT=${1:-/tmp/rlsys_smoke}
RLSYS=${RLSYS:-rlsys}
PY=${PYTHON:-python}
LABEL=smoke_$(date +%Y%m%d_%H%M%S)
RESULT="$OUT/results/$LABEL.json"
# Whole-GPU memory may differ from the starting level by this much after the pair (MiB);
# the runner itself waits for the same tolerance between groups.
TOLERANCE_MB=${TOLERANCE_MB:-256}
START=$(date +%s)

pass() { printf 'PASS  %-24s %s\n' "$1" "$2"; }
fail() { printf 'FAIL  %-24s %s\n' "$1" "$2"; echo "logs: $OUT"; exit 1; }
gpu_used_mb() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i "${GPU:-0}" | head -1; }

mkdir -p "$OUT" || fail setup "cannot create $OUT"
command -v nvidia-smi >/dev/null || fail setup "nvidia-smi not found"

# 1. The tiny model (no download) and preflight against it.
$RLSYS closure tiny-model "$OUT/tiny" >"$OUT/tiny.log" 2>&1 \
  || fail tiny-model "see $OUT/tiny.log"
pass tiny-model "$OUT/tiny"
$RLSYS closure preflight --model-path "$OUT/tiny" --output-dir "$OUT" \
  --json "$OUT/preflight.json" >"$OUT/preflight.log" 2>&1
rc=$?
[ "$rc" -eq 0 ] || fail preflight "exit $rc: $(grep -i fail "$OUT/preflight.log" | head -3 | tr '\n' ' ')"
pass preflight "all checks pass"

# 2. The GPU is idle before the run (nothing left from an earlier run).
BASE=$(gpu_used_mb)
APPS=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader | grep -c . || true)
[ "$APPS" -eq 0 ] || fail gpu-idle "$APPS compute process(es) already on the GPU: $(nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader | tr '\n' ';')"
pass gpu-idle "${BASE} MiB used, no compute process"

# 3. The pair, small settings.
$RLSYS closure run --run-label "$LABEL" --output "$RESULT" --model-path "$OUT/tiny" \
  --n-prompts 4 --max-new-tokens 16 --gpu-memory-utilization 0.3 --sample-interval 0.1 \
  --group-timeout "$GROUP_TIMEOUT" --phase-timeout "$PHASE_TIMEOUT" \
  >"$OUT/run.log" 2>&1
rc=$?
[ "$rc" -eq 0 ] || fail run "exit $rc: $(tail -3 "$OUT/run.log" | tr '\n' ' ') (group logs: $OUT/results/${LABEL}_*.log)"
pass run "$RESULT"

# 4. The grader accepts the file.
$RLSYS result "$RESULT" >"$OUT/result.log" 2>&1
rc=$?
[ "$rc" -eq 0 ] || fail rlsys-result "exit $rc: $(tail -5 "$OUT/result.log" | tr '\n' ' ')"
pass rlsys-result "$(grep -m1 -iE 'score|/40' "$OUT/result.log" || echo ok)"

# 5. No driver process held GPU memory (NVML's process list at the end of each group),
#    the streamed hashes and global_steps are in the records, the artefacts hash as recorded.
$PY - "$RESULT" <<'EOF' || fail evidence "see above"
import json, sys
from pathlib import Path
from rlsys_closure.lora import adapter_sha256
result = Path(sys.argv[1])
doc = json.loads(result.read_text())
work = result.with_name(result.stem + ".work")
art = result.with_name(result.stem + ".artefacts")
problems = []
for group in ("release", "retain"):
    rec = json.loads((work / f"{group}.record.json").read_text())
    pid = rec.get("environment", {}).get("driver_pid")
    procs = rec.get("driver_gpu_processes")
    if procs is None:
        # Some virtualised setups refuse NVML's process list (preflight warned): unknown,
        # not a failure of the run.
        print(f"    warn: {group}: NVML process list unavailable "
              f"({rec.get('driver_gpu_processes_error')}); driver check skipped")
    elif any(p.get("pid") == pid for p in procs):
        problems.append(f"{group}: the driver (pid {pid}) holds GPU memory")
    elif procs and not any(Path(f"/proc/{p.get('pid')}").exists() for p in procs):
        # Inside a PID namespace NVML lists host pids: no match proves nothing here.
        print(f"    warn: {group}: NVML lists pids outside this PID namespace; "
              "the driver check is not evidence on this host")
    streamed = rec.get("streamed_lora", {})
    if streamed.get("sync", {}).get("sha256") != rec.get("updated_lora_sha256"):
        problems.append(f"{group}: the LoRA handed to verl's sender is not the updated adapter")
    if rec.get("rollout_after_update_global_steps") != [1]:
        problems.append(f"{group}: global_steps after update {rec.get('rollout_after_update_global_steps')}")
    g = doc["groups"][group]
    for label, key in (("initial", "initial_lora_sha256"), ("updated", "updated_lora_sha256")):
        if adapter_sha256(art / group / "adapters" / label) != g[key]:
            problems.append(f"{group}: artefact adapters/{label} does not hash to {key}")
    lines = [json.loads(x) for x in (art / group / "samples.jsonl").read_text().splitlines()]
    if lines != g["resource_samples"]:
        problems.append(f"{group}: samples.jsonl differs from the result's samples")
for p in problems:
    print("   ", p)
sys.exit(1 if problems else 0)
EOF
pass evidence "no driver on the GPU (unless warned above); handed to the sender = updated; global_steps 1; artefacts hash as recorded"

# 6. Nothing remains after the pair (an orphaned vLLM EngineCore would show here).
sleep 5
AFTER=$(gpu_used_mb)
LEFT=$(nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader)
[ -z "$LEFT" ] || fail gpu-released "processes still on the GPU: $(echo "$LEFT" | tr '\n' ';')"
[ "$AFTER" -le $((BASE + TOLERANCE_MB)) ] || fail gpu-released "${AFTER} MiB used after, ${BASE} MiB before (tolerance ${TOLERANCE_MB})"
pass gpu-released "${AFTER} MiB used (before: ${BASE})"

echo "smoke: all checks passed in $(( $(date +%s) - START )) s; result $RESULT"
