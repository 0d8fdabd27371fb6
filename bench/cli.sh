#!/usr/bin/env bash
# The CLI end to end, next to `python3 -c pass` (the floor of any Python-based selector) and
# /bin/true (the floor of any process), in the same run: `attnsel --version` (start-up and the
# built-in matrix), `attnsel --gpu sm90 --model mla --json` (a whole selection); wall time
# (hyperfine, median) and peak RSS.
# Targets (issue 16): the selection at most 1.5 ms and at least 40x faster than python3 -c pass,
# --version at most 1 ms, peak RSS at most 8 MB.
# Usage: bench/cli.sh path/to/attnsel [runs]      (runs: default 300)
set -euo pipefail

attnsel=${1:?usage: $0 path/to/attnsel [runs]}
runs=${2:-300}
command -v hyperfine >/dev/null || { echo "bench/cli.sh needs hyperfine (apt-get install hyperfine)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "bench/cli.sh needs python3" >&2; exit 2; }
# GNU time for peak RSS: /usr/bin/time, else a `time` executable on PATH (a copy carried to a host without it).
gnu_time=/usr/bin/time
[ -x "$gnu_time" ] || gnu_time=$(type -P time || true)
[ -n "$gnu_time" ] || echo "bench/cli.sh: no GNU time (apt-get install time): peak RSS is not measured" >&2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "host: $(uname -srm), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); attnsel: $attnsel"
# -N: no intermediate shell, so the times are the processes' own.
hyperfine -N --warmup 30 --runs "$runs" --style basic --export-json "$tmp/times.json" \
  --command-name select "$attnsel --gpu sm90 --model mla --json" \
  --command-name version "$attnsel --version" \
  --command-name true "/bin/true" \
  --command-name python3 "python3 -c pass" >/dev/null

# Peak RSS: the largest of several runs, as GNU time reports it (%M). A child forked from this
# Python process would count Python's own pages (fork copies them) before exec.
python3 - "$tmp/times.json" "$attnsel" "$gnu_time" <<'PY'
import json, subprocess, sys

times, attnsel = sys.argv[1], sys.argv[2]
gnu_time = sys.argv[3] or None

def peak_rss_kib(argv, runs=20):
    if gnu_time is None:
        return 0
    peak = 0
    for _ in range(runs):
        done = subprocess.run([gnu_time, "-f", "%M", *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        peak = max(peak, int(done.stderr.strip().splitlines()[-1]))
    return peak

argv = {"select": [attnsel, "--gpu", "sm90", "--model", "mla", "--json"], "version": [attnsel, "--version"],
        "true": ["/bin/true"], "python3": ["python3", "-c", "pass"]}
labels = {"select": "attnsel --gpu sm90 --model mla --json", "version": "attnsel --version", "true": "/bin/true",
          "python3": "python3 -c pass"}
results = {r["command"]: r for r in json.load(open(times))["results"]}
rss = {name: peak_rss_kib(a) for name, a in argv.items()}
print(f"{'command':<40}{'median':>10}{'mean':>10}{'min':>10}{'max':>10}{'peak RSS':>12}")
for name in argv:
    r = results[name]
    print(f"{labels[name]:<40}{r['median']*1e3:>8.2f}ms{r['mean']*1e3:>8.2f}ms{r['min']*1e3:>8.2f}ms{r['max']*1e3:>8.2f}ms"
          f"{rss[name]*1024/1e6:>9.1f} MB")
s, v, p = results["select"]["median"], results["version"]["median"], results["python3"]["median"]
print(f"\npython3 -c pass takes {p/s:.1f}x the selection's time and {p/v:.1f}x --version's")
checks = [("selection median <= 1.5 ms", s <= 1.5e-3, f"{s*1e3:.2f} ms"),
          ("selection >= 40x faster than python3 -c pass", p / s >= 40, f"{p/s:.1f}x"),
          ("--version median <= 1 ms", v <= 1e-3, f"{v*1e3:.2f} ms"),
          ("peak RSS <= 8 MB", max(rss["select"], rss["version"]) * 1024 <= 8e6,
           f"{max(rss['select'], rss['version'])*1024/1e6:.1f} MB")]
for label, ok, value in checks:
    print(f"target: {label:45s} {'met' if ok else 'MISSED'} ({value})")
PY
