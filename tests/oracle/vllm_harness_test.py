#!/usr/bin/env python3
"""The vLLM oracle harness's own checks that need no vLLM tree (ctest oracle.vllm_harness):

- the vLLM-only archetypes (tests/oracle/vllm/models/*.json) are what tools/oracle/vllm_cases.py writes;
- every answer set names a release of tests/oracle/vllm/index.json with that release's commit, and
  its cases are those the generator gives for the choices in its header (same seed, same order);
- the pydantic stand-in runs a config dataclass's validators in pydantic's order and enforces
  Field constraints; fakeenv's vLLM additions are empty until the vLLM harness fills them.
"""
import dataclasses
import glob
import json
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "oracle"))

import fakeenv  # noqa: E402
import vllm_cases  # noqa: E402
import vllm_shims  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


# 1. the vLLM-only models
folder = os.path.join(ROOT, "tests", "oracle", "vllm", "models")
on_disk = {os.path.basename(p)[:-5]: json.load(open(p)) for p in glob.glob(os.path.join(folder, "*.json"))}
check(set(on_disk) == set(vllm_cases.EXTRA_MODELS), f"models differ: {sorted(set(on_disk) ^ set(vllm_cases.EXTRA_MODELS))}")
for name, config in vllm_cases.EXTRA_MODELS.items():
    check(json.loads(json.dumps(config)) == on_disk.get(name), f"tests/oracle/vllm/models/{name}.json is not what vllm_cases.py writes")

# 2. answer sets: indexed, and the space their header names
index = json.load(open(os.path.join(ROOT, "tests", "oracle", "vllm", "index.json")))
commits = {e["release"]: e["commit"] for e in index["answer_sets"]}
sets = sorted(glob.glob(os.path.join(ROOT, "tests", "oracle", "vllm", "*.jsonl")))
check(len(sets) >= 4, f"only {len(sets)} answer sets")
for path in sets:
    with open(path) as f:
        header = json.loads(f.readline())
        rows = [json.loads(line) for line in f]
    name = os.path.basename(path)
    check(header.get("release") in commits, f"{name}: release {header.get('release')} not in index.json")
    check(header.get("commit") == commits.get(header.get("release")), f"{name}: commit differs from index.json")
    cases = vllm_cases.generate(header["choices"])
    check(len(cases) == len(rows) == header["cases"], f"{name}: {len(rows)} rows, generator gives {len(cases)}")
    for case, row in zip(cases, rows):
        if (case["gpu"], case["model"], case["flags"], case.get("env")) != (row["gpu"], row["model"], row["flags"], row.get("env")):
            check(False, f"{name}: case {row['id']} is not the generator's")
            break

# 3. the pydantic stand-in and fakeenv's defaults
check(not fakeenv.ENGINE_TOPS and not fakeenv.EXTENSIONS and not fakeenv.NOT_INSTALLED,
      "fakeenv's vLLM sets must be empty until the vLLM harness fills them (SGLang's machine unchanged)")
order = []


@vllm_shims.dataclass
class Config:
    size: int = vllm_shims.Field(default=None, gt=0)
    name: str = "auto"

    @vllm_shims.field_validator("name", mode="before")
    @classmethod
    def _before(cls, value):
        order.append("before")
        return value.upper()

    def __post_init__(self):
        order.append("post_init")

    @vllm_shims.model_validator(mode="after")
    def _after(self):
        order.append("after")
        if self.size is None:
            self.size = 16
        return self


c = Config(name="x")
check(dataclasses.is_dataclass(Config), "the stand-in makes a dataclass")
check(order == ["before", "post_init", "after"] and c.name == "X" and c.size == 16, f"validator order {order}, {c}")
try:
    Config(size=0)
    check(False, "Field(gt=0) accepted 0")
except ValueError:
    pass

print(f"vllm oracle harness: {len(sets)} answer sets, {len(on_disk)} models; {len(failures)} failure(s)")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
