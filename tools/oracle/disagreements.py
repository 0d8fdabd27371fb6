#!/usr/bin/python3
"""Groups the disagreements between attnsel and the engine's answers, largest group first.

    ATTNSEL_MATRIX_DIR=data ATTNSEL_ORACLE_REPORT=/tmp/report.jsonl build/tests/oracle_test
    tools/oracle/disagreements.py /tmp/report.jsonl [--release 0.5.16] [--top 40] [--allowed]

A group is one kind of disagreement with one cause: attnsel refusing for one rule where the
engine accepts, the engine refusing with one message where attnsel accepts, or the two choosing
different backends or page sizes. Each group shows one example case to reproduce with
`attnsel --gpu GPU --cuda X --model tests/oracle/models/MODEL.json --engine-version R FLAGS`.
"""
import argparse
import collections
import json
import re


def key(row):
    a = row["attnsel"]
    cls = row["class_of_disagreement"]
    if cls == "accepts-refused":
        return (cls, re.sub(r"'[^']*'", "'…'", row["error"]["message"])[:120], row["error"].get("where") or "")
    if cls == "refuses-accepted":
        return (cls, a.get("rule", ""), re.sub(r"sm\d+ \([^)]*\)", "smNN", a["why"])[:120])
    r = row.get("resolved", {})
    if cls == "different-backend":
        return (cls, f"engine {r.get('prefill')}/{r.get('decode')}", f"attnsel {a['prefill']}/{a['decode']}")
    return (cls, f"engine {r.get('prefill')} page {r.get('page_size')}", f"attnsel page {a['page_size']}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("report")
    ap.add_argument("--release")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--allowed", action="store_true", help="include the allowlisted ones")
    opts = ap.parse_args()
    groups, example = collections.Counter(), {}
    for line in open(opts.report):
        row = json.loads(line)
        if opts.release and row["release"] != opts.release:
            continue
        if row.get("allowed") and not opts.allowed:
            continue
        k = key(row)
        groups[k] += 1
        example.setdefault(k, row)
    for k, n in groups.most_common(opts.top):
        row = example[k]
        cuda = f" --cuda {row['cuda']}" if row.get("cuda") else ""
        print(f"{n:6d}  {' | '.join(k)}")
        print(f"        e.g. {row['release']}: --gpu '{row['gpu']}'{cuda} --model {row['model']} {' '.join(row['flags'])}")
    print(f"{sum(groups.values())} disagreements in {len(groups)} groups")


if __name__ == "__main__":
    main()
