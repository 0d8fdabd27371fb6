#!/usr/bin/env python3
"""The output contract (docs/output.md): every example a schema in docs/schema/ lists is run with the
built attnsel, and its stdout must be one JSON document that validates against that schema, with
the contract's envelope and an exit code that agrees with it.

Usage: validate_outputs.py ATTNSEL SCHEMA_DIR [WORK_DIR]
Exit 0 when every example validates, 1 otherwise, 77 (skipped) without python3-jsonschema.
"""
import json
import os
import pathlib
import subprocess
import sys

try:
    import jsonschema
    from jsonschema import Draft202012Validator
except ImportError:  # ctest's SKIP_RETURN_CODE
    print("python3-jsonschema is not installed: skipped")
    sys.exit(77)

# Subcommands that print a document: each needs at least one example in some schema.
REQUIRED_COMMANDS = {"select", "explain", "check", "matrix", "matrix lint", "matrix diff", "matrix --versions", "probe", "root", "rule"}


def command_of(argv):
    if not argv or argv[0].startswith("-"):
        return "root"
    if argv[0] == "matrix":
        if len(argv) > 1 and argv[1] in ("lint", "diff"):
            return "matrix " + argv[1]
        if "--versions" in argv:
            return "matrix --versions"
    return argv[0]


def main():
    attnsel, schema_dir = sys.argv[1], pathlib.Path(sys.argv[2])
    cwd = sys.argv[3] if len(sys.argv) > 3 else None
    schemas = {p.name: json.loads(p.read_text()) for p in sorted(schema_dir.glob("*.schema.json"))}
    store = {s["$id"]: s for s in schemas.values()}
    env = {k: v for k, v in os.environ.items() if k not in ("ATTNSEL_GPU", "ATTNSEL_MATRIX", "GITHUB_STEP_SUMMARY")}
    failures, runs, covered = [], 0, set()
    for name, schema in schemas.items():
        Draft202012Validator.check_schema(schema)
        resolver = jsonschema.RefResolver.from_schema(schema, store=store)
        validator = Draft202012Validator(schema, resolver=resolver)
        examples = schema.get("x-attnsel-examples", [])
        if not examples:
            failures.append(f"{name}: no x-attnsel-examples: nothing shows that attnsel prints this document")
        kind = schema["properties"]["kind"]["const"]
        for argv in examples:
            runs += 1
            if kind != "error":
                covered.add(command_of(argv))
            shown = "attnsel " + " ".join(argv)
            proc = subprocess.run([attnsel, *argv], capture_output=True, text=True, env=env, cwd=cwd, timeout=300)
            try:
                doc = json.loads(proc.stdout)
            except json.JSONDecodeError as e:
                failures.append(f"{name}: `{shown}` (exit {proc.returncode}) did not print one JSON document: {e}\n"
                                f"stdout: {proc.stdout[:400]!r}\nstderr: {proc.stderr[:400]!r}")
                continue
            errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
            for e in errors[:5]:
                where = "/" + "/".join(str(p) for p in e.absolute_path)
                failures.append(f"{name}: `{shown}`: {where}: {e.message[:300]}")
            if list(doc)[:3] != ["schema_version", "attnsel_version", "kind"]:
                failures.append(f"{name}: `{shown}`: the document does not start with schema_version, attnsel_version, kind")
            # An error document says the exit code the process returned. Every other one exits 0, 1 or
            # (probe) 3; or 2 when some input could not be read (check) and the document says not ok.
            if kind == "error" and doc.get("exit_code") != proc.returncode:
                failures.append(f"{name}: `{shown}`: exit code {proc.returncode}, document says {doc.get('exit_code')}")
            if kind != "error" and proc.returncode not in (0, 1, 3) and not (proc.returncode == 2 and doc.get("ok") is False):
                failures.append(f"{name}: `{shown}`: exit code {proc.returncode} for a {kind} document")
            if kind != "error" and "ok" in doc and doc["ok"] != (proc.returncode == 0):
                failures.append(f"{name}: `{shown}`: ok is {doc['ok']} but the exit code is {proc.returncode}")
    missing = REQUIRED_COMMANDS - covered
    if missing:
        failures.append(f"no schema example prints the JSON of: {', '.join(sorted(missing))}")
    for f in failures:
        print("FAIL", f)
    print(f"{runs} outputs checked against {len(schemas)} schemas, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
