#!/usr/bin/env bash
# On a GPU host: what attnsel's probe reports next to what nvidia-smi reports, then a selection
# with no --gpu (the probe's device 0); then the probe's fast path (/proc/driver/nvidia,
# /sys/bus/pci, data/pci-ids.json) against NVML field by field, and its time against
# `nvidia-smi --query-gpu=compute_cap` (target: at least 4x faster). Prints every output, then
# the comparisons. Exit 1 when a comparison fails.
# Usage: bench/device_check.sh path/to/attnsel path/to/attnsel_probe_compare [runs]
#        (attnsel_probe_compare: cmake -DATTNSEL_BUILD_BENCH=ON, target attnsel_probe_compare)
set -uo pipefail

attnsel=${1:?usage: $0 path/to/attnsel path/to/attnsel_probe_compare [runs]}
compare=${2:?usage: $0 path/to/attnsel path/to/attnsel_probe_compare [runs]}
runs=${3:-31}
status=0

probe_json=$("$attnsel" probe --json)
probe_rc=$?
echo "== $attnsel probe --json   (exit $probe_rc)"
echo "$probe_json"

smi_csv=$(nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv)
echo
echo "== nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv   (exit $?)"
echo "$smi_csv"

echo
echo "== $attnsel probe"
"$attnsel" probe
echo "(exit $?)"

echo
echo "== $attnsel --model mla"
"$attnsel" --model mla
echo "(exit $?)"

echo
echo "== comparison (nvidia-smi lists devices in PCI order, as NVML does)"
PROBE_JSON=$probe_json SMI_CSV=$smi_csv python3 - <<'PY'
import csv, io, json, os, sys

probe = json.loads(os.environ["PROBE_JSON"])
rows = list(csv.reader(io.StringIO(os.environ["SMI_CSV"]), skipinitialspace=True))[1:]
nvidia = [d for d in probe["devices"] if d["vendor"] == "nvidia"]
if len(nvidia) != len(rows):
    print(f"MISMATCH: attnsel found {len(nvidia)} NVIDIA devices, nvidia-smi {len(rows)}")
failed = len(nvidia) != len(rows)
for device, (name, memory, driver, cc) in zip(nvidia, rows):
    checks = [
        ("name", device["name"], name),
        ("memory MiB", str(device["memory_mib"]), memory.split()[0]),
        ("driver", device["driver_version"], driver),
        ("compute capability", device["compute_capability"], cc),
    ]
    for field, ours, theirs in checks:
        ok = ours == theirs
        failed |= not ok
        print(f"device {device['index']} {field:20s} attnsel={ours!r:32s} nvidia-smi={theirs!r:32s} {'MATCH' if ok else 'MISMATCH'}")
    print(f"device {device['index']} CUDA (driver)        attnsel={device['cuda_driver_version']!r}")
sys.exit(1 if failed else 0)
PY
rc=$?
echo "comparison exit: $rc"
(( rc == 0 )) || status=1

echo
echo "== the fast path against NVML, field by field: $compare compare"
"$compare" compare
rc=$?
echo "fast-path comparison exit: $rc"
(( rc == 0 )) || status=1

echo
echo "== probe time: the fast path, NVML, and nvidia-smi --query-gpu=compute_cap, $runs runs each (medians)"
python3 - "$compare" "$runs" <<'PY'
import statistics, subprocess, sys, time

compare, runs = sys.argv[1], int(sys.argv[2])
commands = [
    ("attnsel probe, fast path", [compare, "fast"]),
    ("attnsel probe, NVML", [compare, "nvml"]),
    ("nvidia-smi --query-gpu=compute_cap", ["nvidia-smi", "--query-gpu=compute_cap", "--format=csv"]),
]
medians = {}
for label, argv in commands:
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # warm up
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        samples.append((time.perf_counter() - start) * 1000)
    medians[label] = statistics.median(samples)
    says = " ".join(done.stdout.decode(errors="replace").split())[:50]
    print(f"{label:38s} median {medians[label]:8.2f} ms   min {min(samples):7.2f}   max {max(samples):7.2f}   says: {says}")
fast, smi = medians["attnsel probe, fast path"], medians["nvidia-smi --query-gpu=compute_cap"]
ratio = smi / fast
print(f"nvidia-smi takes {ratio:.1f}x the fast path's time; target at least 4x: {'met' if ratio >= 4 else 'MISSED'}")
sys.exit(0 if ratio >= 4 else 1)
PY
rc=$?
(( rc == 0 )) || status=1
exit $status
