#!/usr/bin/env python3
"""The machine formats of `attnsel check` against their contracts, with the built attnsel:

- SARIF 2.1.0: every output validates against the official OASIS schema vendored in
  tests/fixtures/sarif/sarif-schema-2.1.0.json (README.md there says where it comes from), each
  result's ruleIndex names its rule, every rule's helpUri lands on an anchor of docs/rules.md, and
  artifact URIs give back the file names exactly (spaces, colons, invalid UTF-8);
- GitLab Code Quality: an array of issues with the fields GitLab reads, severities from its list,
  unique fingerprints;
- concise: every finding line is read by the problem matcher .github/attnsel-problem-matcher.json
  (its regexp in JavaScript's dialect, which Python's re reads the same for this pattern);
- data/rules.json against data/rules.schema.json.

Usage: validate_formats.py ATTNSEL SOURCE_DIR. Exit 0 when everything holds, 1 otherwise.
"""
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import urllib.parse

import jsonschema  # Debian's python3-jsonschema; a missing module is a failure, never a skip

FAILURES = []


def fail(message):
    FAILURES.append(message)


def run(attnsel, args, cwd):
    env = {k: v for k, v in os.environ.items() if k not in ("ATTNSEL_GPU", "ATTNSEL_MATRIX", "GITHUB_STEP_SUMMARY")}
    env["NO_COLOR"] = "1"
    return subprocess.run([attnsel, *args], capture_output=True, cwd=cwd, env=env, timeout=300)


def anchors_of(rules_md):
    return set(re.findall(r'<a id="([^"]+)"></a>', rules_md))


def check_sarif(doc, shown, validator, anchors):
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    for e in errors[:5]:
        fail(f"{shown}: /{'/'.join(str(p) for p in e.absolute_path)}: {e.message[:300]}")
    if errors:
        return
    run_ = doc["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    for result in run_["results"]:
        index = result.get("ruleIndex")
        if index is None or index >= len(rules) or rules[index]["id"] != result["ruleId"]:
            fail(f"{shown}: result {result['ruleId']} has ruleIndex {index}, which names another rule")
    for rule in rules:
        uri = rule.get("helpUri")
        if uri is None:
            fail(f"{shown}: rule {rule['id']} has no helpUri (every built-in rule has a page)")
            continue
        anchor = uri.partition("#")[2]
        if anchor not in anchors:
            fail(f"{shown}: rule {rule['id']}: {uri} names no anchor of docs/rules.md")


def check_gitlab(doc, shown):
    if not isinstance(doc, list):
        fail(f"{shown}: a GitLab Code Quality report is a JSON array")
        return
    seen = set()
    for issue in doc:
        for key in ("description", "check_name", "fingerprint", "severity", "location"):
            if not issue.get(key):
                fail(f"{shown}: an issue without {key}: {issue}")
        if issue.get("severity") not in ("info", "minor", "major", "critical", "blocker"):
            fail(f"{shown}: severity {issue.get('severity')!r} is not one of GitLab's")
        location = issue.get("location", {})
        if not location.get("path") or not isinstance(location.get("lines", {}).get("begin"), int):
            fail(f"{shown}: an issue's location needs path and lines.begin: {location}")
        if issue.get("fingerprint") in seen:
            fail(f"{shown}: fingerprint {issue.get('fingerprint')} twice")
        seen.add(issue.get("fingerprint"))


def check_concise(text, shown, matcher):
    matched = 0
    for line in text.splitlines():
        if line.startswith("::") or "##[" in line:
            fail(f"{shown}: a line a runner would obey: {line!r}")
        finding = re.search(r": (error|warning): .* \[[^\]\s]+\]$", line) and not line.startswith("attnsel: ")
        m = matcher.match(line)
        if finding and not m:
            fail(f"{shown}: the problem matcher does not read {line!r}")
        if m:
            matched += 1
    return matched


def main():
    attnsel, source = sys.argv[1], pathlib.Path(sys.argv[2])
    schema = json.loads((source / "tests/fixtures/sarif/sarif-schema-2.1.0.json").read_text())
    jsonschema.Draft4Validator.check_schema(schema)
    validator = jsonschema.Draft4Validator(schema)
    anchors = anchors_of((source / "docs/rules.md").read_text())
    matcher_doc = json.loads((source / ".github/attnsel-problem-matcher.json").read_text())
    matcher = re.compile(matcher_doc["problemMatcher"][0]["pattern"][0]["regexp"])

    # data/rules.json against its schema.
    rules_schema = json.loads((source / "data/rules.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(rules_schema)
    for e in jsonschema.Draft202012Validator(rules_schema).iter_errors(json.loads((source / "data/rules.json").read_text())):
        fail(f"data/rules.json: /{'/'.join(str(p) for p in e.absolute_path)}: {e.message[:300]}")

    # The golden SARIF of tests/check_formats_test.cpp, as the library writes it.
    check_sarif(json.loads((source / "tests/golden/formats/serve.sarif").read_text()), "tests/golden/formats/serve.sarif",
                validator, anchors)

    runs = [
        ["check", "--gpu", "sm90,sm100,MI300X", "tests/fixtures/check/launch.sh"],
        ["check", "--gpu", "sm90,B200", "tests/fixtures/deploy"],
        ["check", "--gpu", "sm90,sm100", "tests/fixtures/formats/serve.sh", "tests/fixtures/deploy/does-not-exist.sh"],
        ["check", "--gpu", "sm90", "--", "python3", "-m", "sglang.launch_server", "--model-path",
         "deepseek-ai/DeepSeek-R1", "--attention-backend", "trtllm_mla"],
        ["check", "--gpu", "H100", "--strict", "tests/fixtures/deploy/bench/bad_block.sh"],
    ]
    concise_lines = 0
    for args in runs:
        for fmt in ("sarif", "gitlab", "concise"):
            argv = args[:1] + ["--format", fmt] + args[1:]
            shown = "attnsel " + " ".join(argv)
            proc = run(attnsel, argv, source)
            if proc.returncode not in (0, 1, 2):
                fail(f"{shown}: exit {proc.returncode}: {proc.stderr[:300]!r}")
                continue
            text = proc.stdout.decode("utf-8")
            if fmt == "concise":
                concise_lines += check_concise(text, shown, matcher)
                continue
            try:
                doc = json.loads(text)
            except json.JSONDecodeError as e:
                fail(f"{shown}: not one JSON document: {e}")
                continue
            if fmt == "sarif":
                check_sarif(doc, shown, validator, anchors)
                if "does-not-exist" in shown and doc["runs"][0]["invocations"][0]["executionSuccessful"]:
                    fail(f"{shown}: a file that cannot be read makes executionSuccessful false")
            else:
                check_gitlab(doc, shown)
    if concise_lines < 10:
        fail(f"only {concise_lines} concise lines were matched: the runs above report more findings")

    # File names as the artifact URIs must keep them: spaces, colons, percent signs, bytes that are not UTF-8.
    with tempfile.TemporaryDirectory() as tmp:
        names = [b"my serve:1%.sh", "d\u00e9ploy.sh".encode(), b"bad\xff.sh", b"#hash?.sh"]
        text = b"python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --attention-backend trtllm_mla\n"
        for name in names:
            (pathlib.Path(os.fsdecode(tmp)) / os.fsdecode(name)).write_bytes(text)
        proc = run(attnsel, ["check", "--gpu", "sm90", "--format", "sarif", "--files", *[os.fsdecode(n) for n in names]], tmp)
        doc = json.loads(proc.stdout.decode("utf-8"))
        check_sarif(doc, "hostile file names", validator, anchors)
        uris = {urllib.parse.unquote_to_bytes(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
                for r in doc["runs"][0]["results"]}
        for name in names:
            if name not in uris:
                fail(f"the file {name!r} is not among the SARIF artifact URIs, decoded: {sorted(uris)}")

    for f in FAILURES:
        print("FAIL", f)
    print(f"SARIF, GitLab and concise outputs checked; {len(FAILURES)} failures")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
