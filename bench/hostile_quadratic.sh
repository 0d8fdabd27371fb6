#!/usr/bin/env bash
# The inputs that were quadratic in `attnsel check` (issue 26), generated here: 30,000 commands in
# one file, one file named 20,000 times, one command with 100,000 `--tp` (a prefix note each),
# 50,000 unknown flags (a did-you-mean search each), a --config with 100,000 unknown keys. Wall
# time (hyperfine, median) and peak RSS (GNU time) per case, for one binary or two side by side.
# Usage: bench/hostile_quadratic.sh path/to/attnsel [path/to/baseline-attnsel] [runs]   (runs: default 5)
# A baseline without --files is given the paths plainly; it runs BASELINE_RUNS times (default 1:
# before issue 26 one case took minutes). Each run is cut off after 600 s.
set -euo pipefail

attnsel=$(realpath "${1:?usage: $0 path/to/attnsel [path/to/baseline] [runs]}")
baseline=${2:-}
[ -n "$baseline" ] && baseline=$(realpath "$baseline")
runs=${3:-5}
command -v hyperfine >/dev/null || { echo "bench/hostile_quadratic.sh needs hyperfine (apt-get install hyperfine)" >&2; exit 2; }
gnu_time=/usr/bin/time
[ -x "$gnu_time" ] || gnu_time=""
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

launch='python3 -m sglang.launch_server --model-path meta-llama/Meta-Llama-3.1-8B-Instruct'
python3 - "$launch" <<'EOF'
import sys
launch = sys.argv[1]
open("many.sh", "w").write((launch + " --attention-backend fa3\n") * 30000)
open("small.sh", "w").write((launch + " --attention-backend fa3\n") * 10)
open("tp.sh", "w").write(launch + " --tp 1" * 100000 + "\n")
open("unknown.sh", "w").write(launch + "".join(f" --no-such-flag-{i}" for i in range(50000)) + "\n")
open("choices.sh", "w").write(launch + "".join(f" --kv-cache-dtype fp8_e{i % 9}m2" for i in range(20000)) + "\n")
import os
os.makedirs("cfg", exist_ok=True)
open("cfg/keys.yaml", "w").write("".join(f"unknown-key-{i}: {i}\n" for i in range(100000)))
open("cfg/run.sh", "w").write(launch + " --config keys.yaml\n")
EOF
printf 'small.sh\n%.0s' $(seq 20000) >twenty-thousand.txt

echo "host: $(uname -srm), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
cases=("30k-commands:--format json many.sh" "one-file-20000-times:--format github small.sh"
       "100k-tp:--format json tp.sh" "50k-unknown-flags:--format text unknown.sh"
       "config-100k-keys:--format github cfg" "20k-refused-choices:--format text choices.sh")
measure() {  # measure LABEL BINARY RUNS
  local label=$1 bin=$2 runs=$3 files=""
  "$bin" check --help 2>/dev/null | grep -q -- '--files' && files="--files"
  for c in "${cases[@]}"; do
    local name=${c%%:*} args=${c#*:}
    # The flags, then --files (when the binary has it), then the paths.
    local flags=${args% *} paths=${args##* }
    [[ $name == one-file-20000-times ]] && flags="--format github" paths=$(tr '\n' ' ' <twenty-thousand.txt)
    local cmd="timeout 600 $bin check --gpu sm90 $flags $files $paths" timed
    timed=$cmd
    if [[ $name == one-file-20000-times ]]; then
      # 180 KB of words: more than one argument may hold (MAX_ARG_STRLEN, 128 KiB), so hyperfine runs
      # a script that execs the command (bash's start, a few ms, is in the time).
      echo "exec $cmd" >"$tmp/$label-$name.sh"
      timed="bash $tmp/$label-$name.sh"
    fi
    hyperfine -N -i --runs "$runs" --style none --export-json "$tmp/$label-$name.json" "$timed" >/dev/null 2>&1 || true
    local median rss=""
    median=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results'][0]; print(f\"{r['median']:.3f}\")" \
             "$tmp/$label-$name.json" 2>/dev/null || echo "?")
    if [ -n "$gnu_time" ] && [ "$label" = after ]; then  # (the baseline's minutes are not spent twice)
      # shellcheck disable=SC2086  # the command's words
      rss=$("$gnu_time" -f '%M' $cmd 2>&1 >/dev/null | tail -n 1) || true
    fi
    printf '%-10s %-22s median %8s s   peak RSS %s KiB\n' "$label" "$name" "$median" "${rss:-?}"
  done
}
measure after "$attnsel" "$runs"
if [ -n "$baseline" ]; then measure before "$baseline" "${BASELINE_RUNS:-1}"; fi
exit 0
