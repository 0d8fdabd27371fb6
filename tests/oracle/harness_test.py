#!/usr/bin/env python3
"""The oracle harness's own checks that need no SGLang tree (ctest oracle.harness):

- the committed model archetypes (tests/oracle/models/*.json) are exactly what tools/oracle/cases.py
  generates, so attnsel and the engine read the same files;
- every answer set's cases are the ones the generator gives for the choices in its header (same
  seed, same order), so a set cannot drift from the space it claims to cover;
- the fake machine answers the device questions from the case and refuses kernel packages of another
  platform's image, and a stub that decides a branch is recorded as a probe.
"""
import glob
import json
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "oracle"))

import cases  # noqa: E402
import fakeenv  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


# 1. models in sync
folder = os.path.join(ROOT, "tests", "oracle", "models")
on_disk = {os.path.basename(p)[:-5]: json.load(open(p)) for p in glob.glob(os.path.join(folder, "*.json"))}
check(set(on_disk) == set(cases.MODELS), f"models differ: {sorted(set(on_disk) ^ set(cases.MODELS))}")
for name, config in cases.MODELS.items():
    check(json.loads(json.dumps(config)) == on_disk.get(name), f"tests/oracle/models/{name}.json is not what cases.py writes")

# 2. answer sets cover the space their header names
sets = sorted(glob.glob(os.path.join(ROOT, "tests", "oracle", "sglang", "*.jsonl")))
check(len(sets) >= 5, f"only {len(sets)} answer sets")
for path in sets:
    with open(path) as f:
        header = json.loads(f.readline())
        ids = [json.loads(line)["id"] for line in f]
    want = [c["id"] for c in cases.generate(header["choices"])]
    check(ids == want, f"{os.path.basename(path)}: {len(ids)} cases, the generator gives {len(want)} for its choices")

# 3. the fake machine
fakeenv.install()
fakeenv.pin({"platform": "cuda", "capability": [10, 0], "cuda": "12.9", "device_name": "NVIDIA B200",
             "memory_mib": 183359, "packages": fakeenv.IMAGE_PACKAGES["cuda"]})
fakeenv.import_torch_now()
import torch  # noqa: E402  (the stub)

check(torch.cuda.get_device_capability() == (10, 0), "capability")
check(torch.version.cuda == "12.9" and torch.version.hip is None, "CUDA version")
check(not hasattr(torch, "npu"), "torch.npu must be absent on CUDA")
import importlib.util  # noqa: E402

check(importlib.util.find_spec("flashinfer") is not None, "flashinfer is in the CUDA image")
check(importlib.util.find_spec("aiter") is None, "aiter is not in the CUDA image")
try:
    import aiter  # noqa: F401

    failures.append("importing aiter on CUDA must fail")
except ImportError:
    pass
import some_unknown_library as lib  # noqa: E402  (stubbed: last on the import path)

before = fakeenv.PROBE_COUNT[0]
if lib.is_available():
    failures.append("a stub is falsy")
check(fakeenv.PROBE_COUNT[0] == before + 1 and any("some_unknown_library" in p for p in fakeenv.PROBES),
      "a stub deciding a branch is recorded as a probe")
# Comparing, measuring or iterating a stub decides a branch as surely as its truth value.
for what, use in (("== a string", lambda: lib.backend == "fa3"), ("len()", lambda: len(lib.layers)),
                  ("iteration", lambda: [x for x in lib.layers])):
    before = fakeenv.PROBE_COUNT[0]
    use()
    check(fakeenv.PROBE_COUNT[0] == before + 1, f"a stub used by {what} is recorded as a probe")
check(fakeenv.PROBE_LOG[-1] == "some_unknown_library.layers", "the probe log names the stub that fed the branch")
config = fakeenv.AutoConfig.from_pretrained(os.path.join(folder, "llama.json"))
check(config.num_attention_heads == 32 and config.architectures == ["LlamaForCausalLM"], "AutoConfig reads config.json")
try:
    fakeenv.AutoConfig.from_pretrained(os.path.join(folder, "deepseek-v32.json"))
    failures.append("AutoConfig must refuse a model type transformers does not know")
except ValueError:
    pass

for f in failures:
    print("FAIL:", f)
print(f"oracle harness: {len(sets)} answer sets, {len(cases.MODELS)} models; {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
