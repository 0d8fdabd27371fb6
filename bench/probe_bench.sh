#!/usr/bin/env bash
# Wall time of `attnsel probe --json` (NVML) and of the probe's fast path (procfs/sysfs, through
# bench/probe_compare.cpp when given) next to nvidia-smi and PyTorch answering the same question
# (the compute capability). Each command runs once to warm up, then RUNS times; medians and ratios.
# Needs only bash and python3.
# Usage: bench/probe_bench.sh path/to/attnsel [runs] [path/to/attnsel_probe_compare]
#        (runs: default 21, at least 15)
set -euo pipefail

attnsel=${1:?usage: $0 path/to/attnsel [runs]}
runs=${2:-21}
compare=${3:-}
if (( runs < 15 )); then
  echo "runs must be at least 15 (got $runs)" >&2
  exit 2
fi

echo "host: $(uname -srm)"
if command -v nvidia-smi >/dev/null; then
  # Without persistence mode every NVML client pays the driver's initialisation: say which case this is.
  echo "gpu:  $(nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader | head -1)"
fi

python3 - "$attnsel" "$runs" "$compare" <<'PY'
import shutil, statistics, subprocess, sys, time

attnsel, runs, compare = sys.argv[1], int(sys.argv[2]), sys.argv[3]
commands = [
    ("attnsel probe --json", [attnsel, "probe", "--json"]),
] + ([("attnsel probe, fast path", [compare, "fast"])] if compare else []) + [
    ("nvidia-smi --query-gpu=compute_cap", ["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"]),
    ("torch.cuda.get_device_capability()",
     [sys.executable, "-c", "import torch; print(torch.cuda.get_device_capability())"]),
]

def once(argv):
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return time.perf_counter() - start, done

medians = {}
for label, argv in commands:
    if shutil.which(argv[0]) is None:
        print(f"{label}: {argv[0]} not found, skipped")
        continue
    _, done = once(argv)
    if done.returncode != 0:
        print(f"{label}: exit {done.returncode}, skipped: {done.stderr.decode(errors='replace')[-400:]}")
        continue
    samples = sorted(once(argv)[0] * 1000 for _ in range(runs))
    medians[label] = statistics.median(samples)
    answer = " ".join(done.stdout.decode(errors="replace").split())[:60]
    print(f"{label:38s} median {medians[label]:9.1f} ms   min {samples[0]:8.1f}   max {samples[-1]:8.1f}"
          f"   n={runs}   says: {answer}")

for base_label in ("attnsel probe --json", "attnsel probe, fast path"):
    base = medians.get(base_label)
    if not base:
        continue
    for label, median in medians.items():
        if not label.startswith("attnsel"):
            print(f"ratio: {label} takes {median / base:.1f}x the time of {base_label}")
PY
