#!/usr/bin/env python3
"""Validate attnsel's advisory databases and the incident table.

Checks, for data/engines/<engine>/advisories.json:
  * the JSON Schema data/advisories.schema.json (draft 2020-12);
  * ids are unique, numbered 0001.. in order and carry the file's engine prefix;
  * the file's engine matches its directory and every entry's engine;
  * gpus name an architecture of data/gpus.json or a GPU name (catalog name or alias) when they
    look like one, kv_cache_dtype values are canonical attnsel spellings, model_families that look
    like catalog names exist in data/models.json (others are allowed: warned with --strict);
  * every evidence URL is also listed in links (issues, fix or related);
  * introduced <= fixed when both are set.

And for tests/incidents/incidents.json:
  * the structure described in tests/incidents/README.md;
  * ids unique; every advisory an incident expects exists;
  * every link is a GitHub issue or pull request URL.

Usage: tools/advisories/validate.py [--root DIR] [--strict]
Exit status 0 when everything is valid, 1 otherwise (the problems are printed).
"""
import argparse
import json
import re
import sys
from pathlib import Path

try:
    import jsonschema
except ImportError:  # pragma: no cover
    print("validate.py needs the jsonschema package (python3 -m pip install jsonschema)", file=sys.stderr)
    sys.exit(2)

GITHUB = re.compile(r"^https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/(issues|pull)/[0-9]+(#[A-Za-z0-9_-]+)?$")
KV = {"auto", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "fp4_e2m1"}
EFFECTS = {"crash", "refuses-to-start", "wrong-output", "silent-slowdown", "hang", "oom"}
PREFIX = {"sglang": "SGL", "vllm": "VLLM"}


def release_key(text):
    parts = re.findall(r"\d+", text)
    return tuple(int(p) for p in parts[:3]) + ((1 if "post" in text else 0),)


def check_advisories(root, engine_dir, schema, gpus, families, strict, problems, warnings):
    path = engine_dir / "advisories.json"
    rel = path.relative_to(root)
    doc = json.loads(path.read_text())
    validator = jsonschema.Draft202012Validator(schema)
    for err in sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path)):
        loc = "/".join(str(p) for p in err.absolute_path)
        problems.append(f"{rel}#/{loc}: {err.message}")
    engine = doc.get("engine")
    if engine != engine_dir.name:
        problems.append(f"{rel}: engine {engine!r} but the file lives in data/engines/{engine_dir.name}/")
    ids = set()
    for i, adv in enumerate(doc.get("advisories", []), 1):
        where = f"{rel}#/advisories/{i - 1}"
        want = f"{PREFIX.get(engine, '?')}-ADV-{i:04d}"
        if adv.get("id") != want:
            problems.append(f"{where}: id {adv.get('id')!r}, expected {want!r} (ids are numbered in order)")
        if adv.get("id") in ids:
            problems.append(f"{where}: duplicate id {adv.get('id')}")
        ids.add(adv.get("id"))
        if adv.get("engine") != engine:
            problems.append(f"{where}: engine {adv.get('engine')!r} differs from the file's {engine!r}")
        for g in adv.get("gpus", []):
            if re.fullmatch(r"(sm\d+|gfx\d+[a-z]?)", g):
                if g not in gpus["archs"]:
                    problems.append(f"{where}: gpu architecture {g!r} is not in data/gpus.json")
            elif g not in gpus["names"]:
                warnings.append(f"{where}: GPU name {g!r} is not in data/gpus.json (kept as reported)")
        for kv in adv.get("kv_cache_dtype", []):
            if kv not in KV:
                problems.append(f"{where}: kv_cache_dtype {kv!r} is not a canonical spelling {sorted(KV)}")
        for fam in adv.get("model_families", []):
            if fam not in families:
                warnings.append(f"{where}: model family {fam!r} is not in data/models.json")
        listed = set()
        for key in ("issues", "fix", "related"):
            listed.update(u.split("#")[0] for u in adv.get("links", {}).get(key, []))
        for ev in adv.get("evidence", []):
            if ev.get("url", "").split("#")[0] not in listed:
                problems.append(f"{where}: evidence URL {ev.get('url')} is not among its links")
        intro, fixed = adv.get("introduced"), adv.get("fixed")
        if intro and fixed and release_key(intro) > release_key(fixed):
            problems.append(f"{where}: introduced {intro} is after fixed {fixed}")
        if adv.get("status") == "fixed" and not adv.get("links", {}).get("fix"):
            problems.append(f"{where}: status fixed without a fix link")
    if strict:
        problems.extend(warnings)
        warnings.clear()
    return ids, len(doc.get("advisories", []))


INCIDENT_KEYS = {"id", "engine", "link", "release", "release_note", "gpu", "arch", "platform", "command",
                 "command_verbatim", "command_note", "what_happened", "effect", "confirmed_cause",
                 "cause_source", "expected", "in_scope", "related"}
EXPECTED_KEYS = {"verdict", "rule", "advisory", "reason", "note"}
RULES = {"backend-unsupported-on-gpu", "kv-dtype", "page-size", "model-rule", "edge-blackwell", "unknown-flag",
         "flag-conflict", "speculative", "env", "advisory", "feature", "out-of-scope", "none"}
WORKING_KEYS = {"id", "engine", "link", "release", "release_note", "gpu", "arch", "platform", "command",
                "command_verbatim", "command_note", "evidence", "expected"}


def check_incidents(root, advisory_ids, gpus, problems):
    path = root / "tests" / "incidents" / "incidents.json"
    if not path.exists():
        problems.append("tests/incidents/incidents.json is missing")
        return {}
    rel = path.relative_to(root)
    doc = json.loads(path.read_text())
    for key in ("schema_version", "incidents", "working"):
        if key not in doc:
            problems.append(f"{rel}: missing top-level key {key!r}")
    seen = set()
    counts = {"incidents": 0, "in_scope": 0, "out_of_scope": 0, "edge_blackwell_in_scope": 0, "working": 0}
    for section, keys in (("incidents", INCIDENT_KEYS), ("working", WORKING_KEYS)):
        for i, row in enumerate(doc.get(section, [])):
            where = f"{rel}#/{section}/{i}"
            extra = set(row) - keys
            if extra:
                problems.append(f"{where}: unknown keys {sorted(extra)}")
            for req in ("id", "engine", "link", "gpu", "arch", "command", "expected"):
                if req not in row:
                    problems.append(f"{where}: missing {req!r}")
            if row.get("id") in seen:
                problems.append(f"{where}: duplicate id {row.get('id')}")
            seen.add(row.get("id"))
            if row.get("engine") not in ("sglang", "vllm"):
                problems.append(f"{where}: engine {row.get('engine')!r}")
            for url in [row.get("link", "")] + row.get("related", []):
                if not GITHUB.match(url or ""):
                    problems.append(f"{where}: {url!r} is not a GitHub issue or pull request URL")
            arch = row.get("arch")
            if arch is not None and arch not in gpus["archs"]:
                problems.append(f"{where}: arch {arch!r} is not in data/gpus.json")
            exp = row.get("expected", {})
            if set(exp) - EXPECTED_KEYS:
                problems.append(f"{where}: unknown expected keys {sorted(set(exp) - EXPECTED_KEYS)}")
            if section == "incidents":
                counts["incidents"] += 1
                if row.get("effect") not in EFFECTS | {"setting-ignored"}:
                    problems.append(f"{where}: effect {row.get('effect')!r} not in {sorted(EFFECTS)}")
                if exp.get("verdict") not in ("error", "warning", "out-of-scope"):
                    problems.append(f"{where}: expected.verdict must be error, warning or out-of-scope")
                if exp.get("rule") not in RULES:
                    problems.append(f"{where}: expected.rule {exp.get('rule')!r} not in {sorted(RULES)}")
                if exp.get("rule") == "advisory" and exp.get("advisory") not in advisory_ids:
                    problems.append(f"{where}: expected advisory {exp.get('advisory')!r} does not exist")
                if exp.get("advisory") and exp.get("advisory") not in advisory_ids:
                    problems.append(f"{where}: advisory {exp.get('advisory')!r} does not exist")
                in_scope = row.get("in_scope")
                if in_scope is not (exp.get("verdict") != "out-of-scope"):
                    problems.append(f"{where}: in_scope must be false exactly when expected.verdict is out-of-scope")
                if exp.get("verdict") == "out-of-scope" and not exp.get("reason"):
                    problems.append(f"{where}: an out-of-scope incident needs expected.reason")
                if in_scope:
                    counts["in_scope"] += 1
                    if arch in ("sm110", "sm120", "sm121"):
                        counts["edge_blackwell_in_scope"] += 1
                else:
                    counts["out_of_scope"] += 1
            else:
                counts["working"] += 1
                if exp.get("verdict") != "no-error":
                    problems.append(f"{where}: a working command expects verdict no-error")
                if not row.get("evidence"):
                    problems.append(f"{where}: a working command needs the evidence that it worked")
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=str(Path(__file__).resolve().parents[2]))
    ap.add_argument("--strict", action="store_true", help="treat warnings as problems")
    args = ap.parse_args()
    root = Path(args.root)
    schema = json.loads((root / "data" / "advisories.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    gcat = json.loads((root / "data" / "gpus.json").read_text())
    gpus = {"archs": {a["arch"] for a in gcat["architectures"]},
            "names": {n for g in gcat["gpus"] for n in [g["name"], *g.get("aliases", [])]}}
    families = {f["name"] for f in json.loads((root / "data" / "models.json").read_text())["families"]}
    problems, warnings, ids = [], [], set()
    summary = []
    for engine_dir in sorted((root / "data" / "engines").iterdir()):
        if (engine_dir / "advisories.json").exists():
            got, n = check_advisories(root, engine_dir, schema, gpus, families, args.strict, problems, warnings)
            ids |= got
            summary.append(f"{engine_dir.name}: {n} advisories")
    counts = check_incidents(root, ids, gpus, problems)
    for w in warnings:
        print("warning:", w)
    for p in problems:
        print("error:", p)
    print("; ".join(summary) + "; incidents: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
