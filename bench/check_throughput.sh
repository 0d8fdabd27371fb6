#!/usr/bin/env bash
# `attnsel check` end to end on a tree of shell scripts (bench/gen_shell_tree.py): wall time
# (hyperfine, median, warm page cache) and MB/s (1e6 bytes) of the scripts' bytes. With a second
# binary (a baseline build), both run in the same hyperfine session, interleaved by its rounds.
# Target (issue 16): at least 200 MB/s.
#
# Usage: bench/check_throughput.sh path/to/attnsel [path/to/baseline/attnsel]
# Environment: MB (default 100), FILES (3000), SEED (16), RUNS (10), FORMAT (text), GPU (sm90),
#              TREE (an existing tree to read instead of generating one; kept afterwards).
set -euo pipefail

attnsel=${1:?usage: $0 path/to/attnsel [path/to/baseline/attnsel]}
baseline=${2:-}
mb=${MB:-100}
files=${FILES:-3000}
seed=${SEED:-16}
runs=${RUNS:-10}
format=${FORMAT:-text}
gpu=${GPU:-sm90}
here=$(cd "$(dirname "$0")" && pwd)
python=$(command -v python3)
command -v hyperfine >/dev/null || { echo "$0 needs hyperfine (apt-get install hyperfine)" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tree=${TREE:-}
if [ -z "$tree" ]; then
  tree=$tmp/tree
  "$python" "$here/gen_shell_tree.py" "$tree" --mb "$mb" --files "$files" --seed "$seed" >"$tmp/gen.txt"
fi
bytes=$(find "$tree" -type f -name '*.sh' -printf '%s\n' | awk '{s += $1} END {print s}')
count=$(find "$tree" -type f -name '*.sh' | wc -l)

# What one run finds (also warms the page cache): the check exits 1 when a command is bad.
"$attnsel" check --gpu "$gpu" --format json "$tree" >"$tmp/out.json" 2>/dev/null || true
commands=$("$python" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["results"]))' "$tmp/out.json")

echo "host: $(uname -srm), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "tree: $tree: $bytes bytes in $count files, $commands commands found (--gpu $gpu, one result each)"
set -- --command-name new "$attnsel check --gpu $gpu --format $format $tree"
[ -n "$baseline" ] && set -- "$@" --command-name baseline "$baseline check --gpu $gpu --format $format $tree"
# -N: no intermediate shell; -i: a check that finds a bad command exits 1.
hyperfine -N -i --warmup 1 --runs "$runs" --style basic --export-json "$tmp/times.json" "$@" >/dev/null

"$python" - "$tmp/times.json" "$bytes" <<'PY'
import json, sys

results = json.load(open(sys.argv[1]))["results"]
size = int(sys.argv[2])
print(f"{'binary':<10}{'median':>10}{'min':>10}{'max':>10}{'MB/s (median)':>16}")
rate = {}
for r in results:
    rate[r["command"]] = size / r["median"] / 1e6
    print(f"{r['command']:<10}{r['median']:>9.3f}s{r['min']:>9.3f}s{r['max']:>9.3f}s{rate[r['command']]:>16.1f}")
if "baseline" in rate:
    print(f"speed-up: {rate['new'] / rate['baseline']:.2f}x")
ok = rate["new"] >= 200
print(f"target >= 200 MB/s: {'met' if ok else 'MISSED'} ({rate['new']:.1f} MB/s)")
PY
