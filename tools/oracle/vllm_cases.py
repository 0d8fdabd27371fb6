"""The space of cases the vLLM oracle runs: platforms and GPUs, model archetypes, flags."""
from __future__ import annotations

import json

import os
import random

import cases as sglang_cases  # the GPUs and model archetypes are shared with the SGLang oracle


def engine_versions(src):
    """The transformers the release runs with: 4.57 (the last 4.x), or 5 where vLLM refuses 4."""
    versions = {}
    tf = "4.57.1"  # the last transformers 4, which releases pinned below 5 ran with
    config = os.path.join(src, "vllm/transformers_utils/config.py")
    if os.path.exists(config) and "Support for Transformers v4 is deprecated" in open(config).read():
        tf = "5.14.1"  # vLLM refuses transformers 4 from here on
    versions["transformers"] = tf
    return {"versions": versions, "transformers_version": tf}

SEED = 20261126

# The archetypes: the shared config.json files (tests/oracle/models), and what each model's
# attention layers pass to the selector beyond what ModelConfig says (the model file's contract):
# sinks (gpt-oss passes `sinks=`), the sparse indexer (DeepSeek V3.2: `index_topk` in the config
# makes deepseek_v2.py build the indexer and pass use_sparse), a sliding window on layer 0.
LAYERS = {
    "gpt-oss": {"sinks": True, "sliding_first": True},
    "gemma3-text": {"sliding_first": True},
    "gemma3-vl": {"sliding_first": True},
    "mistral-swa": {"sliding_first": True},
    "deepseek-v32": {"sparse": True},
}

# vLLM-only archetypes: head sizes the FlashAttention versions split on (FA4 above 256 on 9.x).
EXTRA_MODELS = {
    "llama-hd512": dict(sglang_cases.MODELS["llama"], head_dim=512, hidden_size=4096, num_attention_heads=8,
                        num_key_value_heads=8),
    "llama-hd96": dict(sglang_cases.MODELS["llama"], head_dim=96, hidden_size=3072, num_attention_heads=32,
                       num_key_value_heads=8),
}

def models():
    out = dict(sglang_cases.MODELS)
    out.update(EXTRA_MODELS)
    return out

def write_models(folder):
    """The vLLM-only archetypes' config.json files (tests/oracle/vllm/models), for attnsel to read."""
    os.makedirs(folder, exist_ok=True)
    for name, config in EXTRA_MODELS.items():
        with open(os.path.join(folder, f"{name}.json"), "w") as f:
            json.dump(config, f, indent=1, sort_keys=True)
            f.write("\n")

# name as attnsel's --gpu names it (the catalog), the fake machine's answers.
def platforms():
    out = []
    for g in sglang_cases.GPUS:
        if g["gpu"] in ("H20", "RTX 5090", "A10"):
            continue
        hw = {"gpu": g["gpu"], "capability": g["capability"], "device_name": g["device_name"],
              "memory_mib": g["memory_mib"], "platform": g.get("platform", "cuda")}
        if hw["platform"] == "cuda":
            hw["cuda"] = "13.0" if g["capability"][0] >= 11 else "12.9"
            hw["packages"] = ["flashinfer"]
        else:
            hw["gcn_arch"] = g["gcn_arch"]
            hw["packages"] = ["aiter", "flash_attn"]  # the ROCm image builds upstream (CK) flash-attn
        out.append(hw)
    out.append({"gpu": "Intel Data Center GPU Max 1550", "capability": [0, 0], "device_name": "Intel(R) Data Center GPU Max 1550",
                "memory_mib": 65536, "platform": "xpu", "packages": []})
    out.append({"gpu": "CPU", "capability": [0, 0], "device_name": "cpu", "memory_mib": 0, "platform": "cpu",
                "packages": []})
    return out

MAIN = {"H100", "B200", "RTX PRO 6000", "MI300X"}
# Every explicit backend is tried with these on the main GPUs, and with CROSSED on the others.
REPRESENTATIVE = ("llama", "deepseek-v3", "deepseek-v32", "gpt-oss", "gemma3-vl", "qwen3-next", "llama-hd512")
CROSSED = ("llama", "deepseek-v3", "deepseek-v32")
KV = ("auto", "bfloat16", "float16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_ds_mla", "nvfp4", "fp8_per_token_head")
BLOCKS = ("16", "32", "64", "128", "256", "1")
TPS = ("2", "4", "8")

def hardware_key(case):
    return (case["gpu"], case.get("cuda"))

def generate(choices):
    """The cases of one release: every platform x model with the defaults and every explicit
    backend; on the main GPUs also each KV dtype, block size and TP size alone, then seeded random
    combinations."""
    rng = random.Random(SEED)
    backends = list(choices["backends"])
    kv = [k for k in KV if k in choices["kv_cache_dtypes"]]
    blocks = [b for b in BLOCKS if not choices["block_sizes"] or b in choices["block_sizes"]]
    out, seen = [], set()

    def backend_flags(b):
        if choices["backend_flag"]:
            return [choices["backend_flag"], b], {}
        return [], {"VLLM_ATTENTION_BACKEND": b}

    def add(hw, model, flags, env=None):
        key = (hw["gpu"], model, tuple(flags), tuple(sorted((env or {}).items())))
        if key in seen:
            return
        seen.add(key)
        case = dict(hw)
        case.update({"model": model, "flags": list(flags)})
        if env:
            case["env"] = dict(env)
        case["id"] = f"{len(out):05d}"
        out.append(case)

    for hw in platforms():
        main = hw["gpu"] in MAIN
        for model in models():
            add(hw, model, [])
            for tp in TPS:
                add(hw, model, ["--tensor-parallel-size", tp])
            if model in (REPRESENTATIVE if main else CROSSED):
                for b in backends:
                    add(hw, model, *backend_flags(b))
            if not main:
                continue
            for k in kv:
                add(hw, model, ["--kv-cache-dtype", k])
            for bs in blocks:
                add(hw, model, ["--block-size", bs])
            for _ in range(5):
                flags, env = [], {}
                if rng.random() < 0.7 and backends:
                    f, env = backend_flags(rng.choice(backends))
                    flags += f
                if rng.random() < 0.5 and kv:
                    flags += ["--kv-cache-dtype", rng.choice(kv)]
                if rng.random() < 0.4:
                    flags += ["--block-size", rng.choice(blocks)]
                if rng.random() < 0.3:
                    flags += ["--tensor-parallel-size", rng.choice(TPS)]
                add(hw, model, flags, env)
    return out
