#!/usr/bin/env bash
# Issue 26's hostile inputs that were slow or large, measured: the five formerly quadratic cases
# (wall time, median of RUNS with hyperfine: bench/hostile_quadratic.sh), then the inputs that took
# more than 1 GiB (peak RSS with GNU time, and wall time, median of RUNS): a Kubernetes Pod with
# 300,000 args, a 60 MB `sh -c` string, a 60 MB Python string, a 60 MB --attention-backend value,
# a walk 5,000 directories deep. Nothing here is asserted: tests/hostile/run_hostile.py checks
# that each run ends, within 1 GiB, with the right exit status.
# Usage: bench/hostile_bench.sh path/to/attnsel [runs]   (runs: default 5)
set -euo pipefail

attnsel=$(realpath "${1:?usage: $0 path/to/attnsel [runs]}")
runs=${2:-5}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ -x /usr/bin/time ] || { echo "bench/hostile_bench.sh needs GNU time (apt-get install time)" >&2; exit 2; }

echo "== formerly quadratic (bench/hostile_quadratic.sh)"
"$here/hostile_quadratic.sh" "$attnsel" "" "$runs"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT  # (GNU rm removes a tree deeper than PATH_MAX)
cd "$tmp"
python3 - <<'EOF'
import os
launch = "python3 -m sglang.launch_server --model-path meta-llama/Meta-Llama-3.1-8B-Instruct"
mb60 = "x" * (60 << 20)
open("pod.yaml", "w").write("apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: s\n    command: [python3, -m, "
                            "sglang.launch_server]\n    args:\n" + "    - --tp\n    - '1'\n" * 150000)
open("sh-c.sh", "w").write("sh -c '" + launch + " --attention-backend flashinfr --served-model-name " + mb60 + "'\n")
open("python.py", "w").write('import subprocess\nsubprocess.run(["python3", "-m", "sglang.launch_server", "--model-path", '
                             '"m", "--attention-backend", "' + mb60 + '"])\n')
open("value.sh", "w").write(launch + " --attention-backend '" + mb60 + "'\n")
os.mkdir("deep")
fd = os.open("deep", os.O_RDONLY)
for _ in range(5000):
    os.mkdir("d", dir_fd=fd)
    inner = os.open("d", os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = inner
with open(os.open("x.sh", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as f:
    f.write(launch + " --attention-backend flashinfr\n")
os.close(fd)
EOF

echo "== formerly over 1 GiB (GNU time; median of $runs)"
echo "host: $(uname -srm), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for c in "pod-300k-args:pod.yaml" "sh-c-60MB:sh-c.sh" "python-60MB:python.py" "value-60MB:value.sh" "walk-5000-deep:deep"; do
  name=${c%%:*} path=${c#*:}
  rss=() secs=() code=""
  for ((i = 0; i < runs; i++)); do
    # %M: peak RSS in KiB; %e: wall seconds; %x: the exit status.
    read -r kib sec code < <(/usr/bin/time -f '%M %e %x' timeout 600 "$attnsel" check --gpu sm90 --format github \
                               --files "$path" 2>&1 >/dev/null | tail -n 1)
    rss+=("$kib")
    secs+=("$sec")
  done
  median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
  printf '%-16s exit %s   median %6s s   peak RSS %8s KiB (median; max %s)\n' "$name" "$code" "$(median "${secs[@]}")" \
    "$(median "${rss[@]}")" "$(printf '%s\n' "${rss[@]}" | sort -n | tail -n 1)"
done
