#!/usr/bin/env python3
"""How `attnsel check` reads a corpus of real deployment files: commands found, commands that fail,
and the GPUs and platform each command is judged on against a hand-made truth.

The corpus is read by path and never enters this repository (issue 24 asks for one of at least 50
real files):
  CORPUS/files/...       the files, as upstream wrote them
  CORPUS/sections.tsv    one row per launch command: path (from CORPUS), line of the command's
                         first line, target, evidence. target: GPU names joined with | (any-of),
                         a platform (nvidia, rocm, cpu, tpu, ascend, xpu) or a family (Hopper,
                         Blackwell), `any` (the file does not scope it) or `unsure`.

Usage: scripts/measure_targets.py path/to/attnsel CORPUS [--gpu LIST] [--json]
Each file is checked alone, without --gpu (the targets the file names), and with --gpu LIST when
given (default sm90,mi300x: the platform narrowing). A command of the truth is matched to the
check's command whose first line is within 3 lines of it (env prefixes and wrappers move it).
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys

# Architectures of the GPU names the truth uses: a target judged on another GPU of the same
# architecture gets the same verdicts.
ARCH = {
    "H100": "sm90", "H200": "sm90", "H20": "sm90", "H800": "sm90", "GH200": "sm90", "SM90": "sm90",
    "HOPPER": "sm90", "B200": "sm100", "GB200": "sm100", "SM100": "sm100", "BLACKWELL": "sm100",
    "B300": "sm103", "GB300": "sm103", "A100": "sm80", "A800": "sm80", "A30": "sm80", "SM80": "sm80",
    "AMPERE": "sm80", "A10": "sm86", "A10G": "sm86", "A40": "sm86", "L4": "sm89", "L40": "sm89",
    "L40S": "sm89", "SM89": "sm89", "SM120": "sm120", "MI300X": "gfx942", "MI325X": "gfx942",
    "MI300A": "gfx942", "GFX942": "gfx942", "MI350X": "gfx950", "MI355X": "gfx950", "GFX950": "gfx950",
    "V100": "sm70", "T4": "sm75",
}
PLATFORM_WORDS = {"nvidia": "cuda", "cuda": "cuda", "rocm": "rocm", "amd": "rocm", "cpu": "cpu",
                  "tpu": "tpu", "ascend": "npu", "npu": "npu", "xpu": "xpu", "gaudi": "hpu", "hpu": "hpu"}


def arch_of(label):
    name = re.sub(r"[-_ ](80GB|40GB|141GB|SXM|PCIE|NVL).*$", "", label.strip().upper())
    return ARCH.get(name, name.lower())


def platform_of_arch(arch):
    return "rocm" if arch.startswith("gfx") else "cuda" if arch.startswith("sm") else arch


def truth_of(target):
    """("gpus", {arch}) or ("platform", name) or (None, None) for any/unsure."""
    t = target.strip()
    if t.lower() in ("any", "unsure", ""):
        return None, None
    first = t.split()[0].lower()
    if first.startswith("tpu"):
        return "platform", "tpu"
    if first in PLATFORM_WORDS:
        return "platform", PLATFORM_WORDS[first]
    return "gpus", {arch_of(g) for g in t.split("|")}


def run(attnsel, path, gpu):
    args = [attnsel, "check", "--format", "json", "--files", path]
    if gpu:
        args[2:2] = ["--gpu", gpu]
    p = subprocess.run(args, capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"}, timeout=300)
    try:
        doc = json.loads(p.stdout) if p.stdout.strip() else {}
    except json.JSONDecodeError:
        doc = {}
    return p.returncode, doc, p.stderr


def by_line(doc, stderr):
    """line -> {"labels": set, "errors": n, "skipped": message, "warned": message}."""
    out = collections.defaultdict(lambda: {"labels": set(), "failing": False, "skipped": "", "warned": ""})
    for r in doc.get("results", []):
        if r.get("line") is not None:
            c = out[r["line"]]
            c["labels"].add(r["gpu"])
            c["failing"] = c["failing"] or r.get("verdict") == "error"
    for s in doc.get("skipped", []):
        if s.get("line") is not None and "this command runs on" in s.get("message", ""):
            out[s["line"]]["skipped"] = s["message"].split()[4]
    for w in doc.get("summary", {}).get("input_warnings", []) + stderr.splitlines():
        m = re.search(r":(\d+): this command runs on (\S+)", w)
        if m:
            out[int(m.group(1))]["warned"] = m.group(2)
    return out


def nearest(found, line):
    for d in (0, 1, -1, 2, -2, 3, -3):
        if line + d in found:
            return found[line + d]
    return None


def score(attnsel, corpus, gpu):
    truth = collections.defaultdict(list)
    with open(os.path.join(corpus, "sections.tsv"), encoding="utf-8") as f:
        for row in f:
            parts = row.rstrip("\n").split("\t")
            if len(parts) >= 3 and parts[1].isdigit():
                truth[parts[0]].append((int(parts[1]), parts[2]))
    files = sorted(os.path.relpath(os.path.join(d, n), corpus)
                   for d, _, names in os.walk(os.path.join(corpus, "files")) for n in names)
    tally = collections.Counter()
    misses = []
    for rel in files:
        path = os.path.join(corpus, rel)
        rc, doc, err = run(attnsel, path, gpu)
        tally["files"] += 1
        tally[f"exit {rc}"] += 1
        found = by_line(doc, err)
        commands = {l for l, c in found.items() if c["labels"] or c["skipped"] or c["warned"]}
        tally["commands found"] += len(commands)
        tally["commands failing"] += sum(1 for l in commands if found[l]["failing"])
        for line, target in truth.get(rel, []):
            tally["truth rows"] += 1
            c = nearest(found, line)
            if c is None:
                tally["truth rows not found"] += 1
                continue
            kind, want = truth_of(target)
            if kind is None:
                continue
            tally["scoped rows"] += 1
            judged = {arch_of(l) for l in c["labels"]}
            platforms = {platform_of_arch(a) for a in judged}
            if kind == "gpus":
                wanted_platforms = {platform_of_arch(a) for a in want}
                if gpu:  # --gpu names the GPUs: right when judged only on the part's platform
                    ok = bool(judged) and platforms <= wanted_platforms
                else:
                    ok = judged == want
            else:
                if want in ("cuda", "rocm", "cpu", "npu", "xpu"):
                    ok = bool(judged) and platforms == {want} or (not judged and bool(c["skipped"] or c["warned"]))
                else:  # a platform attnsel does not judge: told, never judged on a GPU
                    ok = not judged and bool(c["warned"] or c["skipped"])
            tally["scoped rows right"] += ok
            if not ok:
                misses.append(f"{rel}:{line}: want {target}; judged on {sorted(c['labels']) or '-'}"
                              f"{' (' + (c['skipped'] or c['warned']) + ')' if c['skipped'] or c['warned'] else ''}")
    return tally, misses


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("attnsel")
    ap.add_argument("corpus")
    ap.add_argument("--gpu", default="sm90,mi300x", help="the --gpu list of the second run ('' for none)")
    ap.add_argument("--misses", action="store_true", help="list each scoped command judged wrongly")
    a = ap.parse_args()
    for gpu in ("", a.gpu) if a.gpu else ("",):
        tally, misses = score(os.path.abspath(a.attnsel), a.corpus, gpu)
        print(f"== {'--gpu ' + gpu if gpu else 'without --gpu (the GPUs each file names)'}")
        for k in ("files", "commands found", "commands failing", "truth rows", "truth rows not found", "scoped rows",
                  "scoped rows right"):
            print(f"  {k:24} {tally[k]}")
        print("  exits                    " + ", ".join(f"{k[5:]}: {v}" for k, v in sorted(tally.items()) if k.startswith("exit ")))
        if tally["scoped rows"]:
            print(f"  scoped right             {100.0 * tally['scoped rows right'] / tally['scoped rows']:.1f}%")
        if a.misses:
            for m in misses:
                print("   ", m)


if __name__ == "__main__":
    sys.exit(main())
