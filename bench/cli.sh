#!/usr/bin/env bash
# `attnsel --gpu sm90 --model mla` end to end, next to `python3 -c pass` (the floor of any
# Python-based selector), in the same run: process wall time (hyperfine, median) and peak RSS.
# Targets (issue 6): median under 2 ms, peak RSS under 10 MB.
# Usage: bench/cli.sh path/to/attnsel [runs]      (runs: default 300)
set -euo pipefail

attnsel=${1:?usage: $0 path/to/attnsel [runs]}
runs=${2:-300}
command -v hyperfine >/dev/null || { echo "bench/cli.sh needs hyperfine (apt-get install hyperfine)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "bench/cli.sh needs python3" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "host: $(uname -srm), $(nproc) CPUs; attnsel: $attnsel"
# -N: no intermediate shell, so the times are the processes' own.
hyperfine -N --warmup 30 --runs "$runs" --style basic --export-json "$tmp/times.json" \
  --command-name attnsel "$attnsel --gpu sm90 --model mla" \
  --command-name python3 "python3 -c pass" >/dev/null

# Peak RSS: the largest of several runs, from the kernel's accounting of each child (getrusage).
python3 - "$tmp/times.json" "$attnsel" <<'PY'
import json, os, resource, statistics, subprocess, sys

times, attnsel = sys.argv[1], sys.argv[2]

def peak_rss_kib(argv, runs=20):
    peak = 0
    for _ in range(runs):
        pid = os.fork()
        if pid == 0:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.execvp(argv[0], argv)
        _, _, usage = os.wait4(pid, 0)
        peak = max(peak, usage.ru_maxrss)  # KiB on Linux
    return peak

results = {r["command"]: r for r in json.load(open(times))["results"]}
rss = {"attnsel": peak_rss_kib([attnsel, "--gpu", "sm90", "--model", "mla"]),
       "python3": peak_rss_kib(["python3", "-c", "pass"])}
print(f"{'command':<34}{'median':>10}{'mean':>10}{'min':>10}{'max':>10}{'peak RSS':>12}")
for name, label in (("attnsel", "attnsel --gpu sm90 --model mla"), ("python3", "python3 -c pass")):
    r = results[name]
    print(f"{label:<34}{r['median']*1e3:>8.2f}ms{r['mean']*1e3:>8.2f}ms{r['min']*1e3:>8.2f}ms{r['max']*1e3:>8.2f}ms"
          f"{rss[name]*1024/1e6:>9.1f} MB")
a, p = results["attnsel"]["median"], results["python3"]["median"]
print(f"\nattnsel / python3 -c pass: {a/p:.2f}x the wall time (python3 is {p/a:.1f}x slower), "
      f"{rss['attnsel']/rss['python3']:.2f}x the peak RSS")
ok_time, ok_rss = a < 2e-3, rss["attnsel"] * 1024 < 10e6
print(f"targets: median < 2 ms {'met' if ok_time else 'MISSED'} ({a*1e3:.2f} ms); "
      f"peak RSS < 10 MB {'met' if ok_rss else 'MISSED'} ({rss['attnsel']*1024/1e6:.1f} MB)")
PY
