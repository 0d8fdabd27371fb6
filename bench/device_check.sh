#!/usr/bin/env bash
# On a GPU host: what attnsel's probe reports next to what nvidia-smi reports, then a selection
# with no --gpu (the probe's device 0). Prints every output, then a field-by-field comparison.
# Usage: bench/device_check.sh path/to/attnsel
set -uo pipefail

attnsel=${1:?usage: $0 path/to/attnsel}

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
echo "comparison exit: $?"
