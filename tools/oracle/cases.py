"""The configuration space the oracle asks the engine about: GPUs, CUDA versions, model
archetypes (complete synthetic config.json files), and launch flags built from the release's own
choices (read from its parser), crossed systematically and then sampled with a fixed seed.

The model configs are written here, by attnsel, as the smallest complete configs that take each
family's special path in the engine; they are also committed beside the answers
(tests/oracle/models/) so that attnsel reads the very same files.
"""
from __future__ import annotations

import json
import os
import random
import sys

import fakeenv

SEED = 20261126

# name as attnsel's --gpu names it, torch's capability, device name, memory (MiB), platform.
GPUS = [
    {"gpu": "T4", "capability": [7, 5], "device_name": "Tesla T4", "memory_mib": 15360, "cuda": ["12.4"]},
    {"gpu": "A100", "capability": [8, 0], "device_name": "NVIDIA A100-SXM4-80GB", "memory_mib": 81920, "cuda": ["12.6", "12.9"]},
    {"gpu": "A10", "capability": [8, 6], "device_name": "NVIDIA A10", "memory_mib": 23028, "cuda": ["12.9"]},
    {"gpu": "L40S", "capability": [8, 9], "device_name": "NVIDIA L40S", "memory_mib": 46068, "cuda": ["12.9"]},
    {"gpu": "H100", "capability": [9, 0], "device_name": "NVIDIA H100 80GB HBM3", "memory_mib": 81559,
     "cuda": ["12.2", "12.6", "12.9", "13.0"]},
    {"gpu": "H20", "capability": [9, 0], "device_name": "NVIDIA H20", "memory_mib": 97871, "cuda": ["12.9"]},
    {"gpu": "B200", "capability": [10, 0], "device_name": "NVIDIA B200", "memory_mib": 183359,
     "cuda": ["12.8", "12.9", "13.0"]},
    {"gpu": "B300", "capability": [10, 3], "device_name": "NVIDIA B300 SXM6 AC", "memory_mib": 275040, "cuda": ["12.9", "13.0"]},
    {"gpu": "Jetson Thor", "capability": [11, 0], "device_name": "NVIDIA Thor", "memory_mib": 125772, "cuda": ["13.0"]},
    {"gpu": "RTX PRO 6000", "capability": [12, 0], "device_name": "NVIDIA RTX PRO 6000 Blackwell Server Edition",
     "memory_mib": 97887, "cuda": ["12.8", "12.9", "13.0"]},
    {"gpu": "RTX 5090", "capability": [12, 0], "device_name": "NVIDIA GeForce RTX 5090", "memory_mib": 32607, "cuda": ["12.9"]},
    {"gpu": "GB10", "capability": [12, 1], "device_name": "NVIDIA GB10", "memory_mib": 122502, "cuda": ["13.0"]},
    {"gpu": "MI300X", "capability": [9, 4], "device_name": "AMD Instinct MI300X", "memory_mib": 196592,
     "platform": "rocm", "gcn_arch": "gfx942:sramecc+:xnack-", "cuda": [None]},
    {"gpu": "MI355X", "capability": [9, 5], "device_name": "AMD Instinct MI355X", "memory_mib": 294896,
     "platform": "rocm", "gcn_arch": "gfx950:sramecc+:xnack-", "cuda": [None]},
]

_COMMON = {"torch_dtype": "bfloat16", "vocab_size": 32000, "max_position_embeddings": 32768,
           "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "hidden_act": "silu", "tie_word_embeddings": False,
           "bos_token_id": 1, "eos_token_id": 2, "initializer_range": 0.02, "use_cache": True}


def _cfg(**kw):
    out = dict(_COMMON)
    out.update(kw)
    return out


_DEEPSEEK = dict(hidden_size=7168, intermediate_size=18432, moe_intermediate_size=2048, num_hidden_layers=61,
                 num_attention_heads=128, num_key_value_heads=128, kv_lora_rank=512, q_lora_rank=1536,
                 qk_rope_head_dim=64, qk_nope_head_dim=128, v_head_dim=128, n_routed_experts=256,
                 n_shared_experts=1, num_experts_per_tok=8, first_k_dense_replace=3, moe_layer_freq=1,
                 n_group=8, topk_group=4, routed_scaling_factor=2.5, norm_topk_prob=True, scoring_func="sigmoid",
                 topk_method="noaux_tc", num_nextn_predict_layers=1, vocab_size=129280, max_position_embeddings=163840,
                 rope_theta=10000, rope_scaling={"type": "yarn", "factor": 40, "original_max_position_embeddings": 4096,
                                                 "beta_fast": 32, "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 1.0})

# Each archetype: the config.json, and what attnsel is told beside it (nothing: it reads the file).
MODELS = {
    "llama": _cfg(architectures=["LlamaForCausalLM"], model_type="llama", hidden_size=4096, intermediate_size=14336,
                  num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8, head_dim=128,
                  max_position_embeddings=131072, vocab_size=128256, rope_theta=500000.0),
    "qwen3": _cfg(architectures=["Qwen3ForCausalLM"], model_type="qwen3", hidden_size=4096, intermediate_size=12288,
                  num_hidden_layers=36, num_attention_heads=32, num_key_value_heads=8, head_dim=128,
                  vocab_size=151936, max_window_layers=36, sliding_window=None, use_sliding_window=False),
    "qwen3-moe": _cfg(architectures=["Qwen3MoeForCausalLM"], model_type="qwen3_moe", hidden_size=4096,
                      intermediate_size=12288, moe_intermediate_size=1536, num_experts=128, num_experts_per_tok=8,
                      num_hidden_layers=94, num_attention_heads=64, num_key_value_heads=4, head_dim=128,
                      vocab_size=151936, decoder_sparse_step=1, norm_topk_prob=True, mlp_only_layers=[]),
    "mistral-swa": _cfg(architectures=["MistralForCausalLM"], model_type="mistral", hidden_size=4096,
                        intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8,
                        head_dim=128, sliding_window=4096),
    "deepseek-v3": _cfg(architectures=["DeepseekV3ForCausalLM"], model_type="deepseek_v3", **_DEEPSEEK),
    "kimi-k2": _cfg(architectures=["DeepseekV3ForCausalLM"], model_type="deepseek_v3",
                    **dict(_DEEPSEEK, num_attention_heads=64, num_key_value_heads=64, n_routed_experts=384,
                           first_k_dense_replace=1, n_group=1, topk_group=1, vocab_size=163840,
                           num_nextn_predict_layers=0)),
    "deepseek-v2-lite": _cfg(architectures=["DeepseekV2ForCausalLM"], model_type="deepseek_v2",
                             **dict(_DEEPSEEK, hidden_size=2048, intermediate_size=10944, moe_intermediate_size=1408,
                                    num_hidden_layers=27, num_attention_heads=16, num_key_value_heads=16,
                                    q_lora_rank=None, n_routed_experts=64, n_shared_experts=2,
                                    num_experts_per_tok=6, first_k_dense_replace=1, n_group=1, topk_group=1,
                                    scoring_func="softmax", topk_method="greedy", num_nextn_predict_layers=0,
                                    vocab_size=102400, routed_scaling_factor=1.0)),
    "deepseek-v32": _cfg(architectures=["DeepseekV32ForCausalLM"], model_type="deepseek_v32",
                         **dict(_DEEPSEEK, index_topk=2048, index_n_heads=64, index_head_dim=128)),
    "glm4-moe": _cfg(architectures=["Glm4MoeForCausalLM"], model_type="glm4_moe", hidden_size=5120,
                     intermediate_size=12288, moe_intermediate_size=1536, num_hidden_layers=92,
                     num_attention_heads=96, num_key_value_heads=8, head_dim=128, n_routed_experts=160,
                     n_shared_experts=1, num_experts_per_tok=8, first_k_dense_replace=3, n_group=1, topk_group=1,
                     partial_rotary_factor=0.5, use_qk_norm=True, vocab_size=151552, num_nextn_predict_layers=1,
                     routed_scaling_factor=2.5, norm_topk_prob=True),
    "gpt-oss": _cfg(architectures=["GptOssForCausalLM"], model_type="gpt_oss", hidden_size=2880,
                    intermediate_size=2880, num_hidden_layers=36, num_attention_heads=64, num_key_value_heads=8,
                    head_dim=64, sliding_window=128, num_local_experts=128, num_experts_per_tok=4,
                    experts_per_token=4, vocab_size=201088, max_position_embeddings=131072,
                    layer_types=["sliding_attention", "full_attention"] * 18, attention_bias=True,
                    rope_scaling={"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
                                  "original_max_position_embeddings": 4096, "truncate": False}),
    "gemma3-text": _cfg(architectures=["Gemma3ForCausalLM"], model_type="gemma3_text", hidden_size=1152,
                        intermediate_size=6912, num_hidden_layers=26, num_attention_heads=4, num_key_value_heads=1,
                        head_dim=256, sliding_window=512, query_pre_attn_scalar=256, sliding_window_pattern=6,
                        rope_local_base_freq=10000.0, vocab_size=262144, hidden_activation="gelu_pytorch_tanh",
                        final_logit_softcapping=None, attn_logit_softcapping=None,
                        layer_types=(["sliding_attention"] * 5 + ["full_attention"]) * 4 + ["sliding_attention"] * 2),
    "gemma3-vl": _cfg(architectures=["Gemma3ForConditionalGeneration"], model_type="gemma3",
                      text_config={"model_type": "gemma3_text", "hidden_size": 2560, "intermediate_size": 10240,
                                   "num_hidden_layers": 34, "num_attention_heads": 8, "num_key_value_heads": 4,
                                   "head_dim": 256, "sliding_window": 1024, "query_pre_attn_scalar": 256,
                                   "sliding_window_pattern": 6, "vocab_size": 262208, "rope_theta": 1000000.0,
                                   "rope_local_base_freq": 10000.0, "max_position_embeddings": 131072,
                                   "rms_norm_eps": 1e-06, "hidden_activation": "gelu_pytorch_tanh",
                                   "torch_dtype": "bfloat16",
                                   "layer_types": (["sliding_attention"] * 5 + ["full_attention"]) * 5
                                   + ["sliding_attention"] * 4},
                      vision_config={"model_type": "siglip_vision_model", "hidden_size": 1152, "image_size": 896,
                                     "intermediate_size": 4304, "num_attention_heads": 16, "num_hidden_layers": 27,
                                     "patch_size": 14},
                      mm_tokens_per_image=256, image_token_index=262144, boi_token_index=255999,
                      eoi_token_index=256000),
    "qwen2.5-vl": _cfg(architectures=["Qwen2_5_VLForConditionalGeneration"], model_type="qwen2_5_vl",
                       hidden_size=3584, intermediate_size=18944, num_hidden_layers=28, num_attention_heads=28,
                       num_key_value_heads=4, vocab_size=152064, max_window_layers=28, sliding_window=32768,
                       use_sliding_window=False, image_token_id=151655, video_token_id=151656,
                       vision_start_token_id=151652, vision_end_token_id=151653,
                       rope_scaling={"type": "mrope", "mrope_section": [16, 24, 24]},
                       vision_config={"model_type": "qwen2_5_vl", "depth": 32, "hidden_size": 1280,
                                      "intermediate_size": 3420, "num_heads": 16, "out_hidden_size": 3584,
                                      "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2,
                                      "window_size": 112, "fullatt_block_indexes": [7, 15, 23, 31],
                                      "in_chans": 3, "hidden_act": "silu"}),
    "llama4": _cfg(architectures=["Llama4ForConditionalGeneration"], model_type="llama4",
                   text_config={"model_type": "llama4_text", "hidden_size": 5120, "intermediate_size": 8192,
                                "intermediate_size_mlp": 16384, "num_hidden_layers": 48, "num_attention_heads": 40,
                                "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 202048,
                                "max_position_embeddings": 10485760, "attention_chunk_size": 8192,
                                "num_local_experts": 16, "num_experts_per_tok": 1, "interleave_moe_layer_step": 1,
                                "no_rope_layers": [], "use_qk_norm": True, "rope_theta": 500000.0,
                                "rms_norm_eps": 1e-05, "torch_dtype": "bfloat16", "attn_temperature_tuning": True,
                                "floor_scale": 8192, "attn_scale": 0.1},
                   vision_config={"model_type": "llama4_vision_model", "hidden_size": 1408, "image_size": 336,
                                  "intermediate_size": 5632, "num_attention_heads": 16, "num_hidden_layers": 34,
                                  "patch_size": 14, "vision_output_dim": 4096, "projector_input_dim": 4096,
                                  "projector_output_dim": 4096, "pixel_shuffle_ratio": 0.5},
                   image_token_index=200092, boi_token_index=200080, eoi_token_index=200081),
    "qwen3-next": _cfg(architectures=["Qwen3NextForCausalLM"], model_type="qwen3_next", hidden_size=2048,
                       intermediate_size=5120, moe_intermediate_size=512, num_hidden_layers=48,
                       num_attention_heads=16, num_key_value_heads=2, head_dim=256, full_attention_interval=4,
                       linear_conv_kernel_dim=4, linear_key_head_dim=128, linear_value_head_dim=128,
                       linear_num_key_heads=16, linear_num_value_heads=32, num_experts=512, num_experts_per_tok=10,
                       shared_expert_intermediate_size=512, decoder_sparse_step=1, norm_topk_prob=True,
                       partial_rotary_factor=0.25, vocab_size=151936, max_position_embeddings=262144,
                       mlp_only_layers=[], layer_types=(["linear_attention"] * 3 + ["full_attention"]) * 12),
    "falcon-h1": _cfg(architectures=["FalconH1ForCausalLM"], model_type="falcon_h1", hidden_size=2048,
                      intermediate_size=8192, num_hidden_layers=36, num_attention_heads=8, num_key_value_heads=2,
                      head_dim=128, mamba_d_conv=4, mamba_d_ssm=3072, mamba_d_state=256, mamba_expand=2,
                      mamba_n_groups=1, mamba_n_heads=24, mamba_d_head=128, mamba_chunk_size=128,
                      mamba_conv_bias=True, mamba_proj_bias=False, mamba_rms_norm=False,
                      mamba_norm_before_gate=False, vocab_size=65537, attention_in_multiplier=1.0,
                      attention_out_multiplier=1.0, embedding_multiplier=1.0, lm_head_multiplier=1.0,
                      key_multiplier=1.0, mlp_multipliers=[1.0, 1.0], ssm_multipliers=[1.0] * 5,
                      ssm_in_multiplier=1.0, ssm_out_multiplier=1.0, mlp_expansion_factor=8,
                      projectors_bias=False, time_step_limit=[0.0, float("inf")]),
    "nemotron-h": _cfg(architectures=["NemotronHForCausalLM"], model_type="nemotron_h", hidden_size=4096,
                       intermediate_size=21504, num_hidden_layers=52, num_attention_heads=32, num_key_value_heads=8,
                       head_dim=128, hybrid_override_pattern="M-M-M-M*-M-M-M-M*-M-M-M-M*-M-M-M-M*-M-M-M-M*-M-M-M-M",
                       mamba_num_heads=128, mamba_head_dim=64, ssm_state_size=128, conv_kernel=4, n_groups=8,
                       chunk_size=128, mamba_hidden_act="silu", use_conv_bias=True, use_bias=False,
                       mlp_hidden_act="relu2", residual_in_fp32=False, layer_norm_epsilon=1e-05,
                       vocab_size=131072, time_step_limit=[0.0, float("inf")]),
    "minicpm3": _cfg(architectures=["MiniCPM3ForCausalLM"], model_type="minicpm3", hidden_size=2560,
                     intermediate_size=6400, num_hidden_layers=62, num_attention_heads=40, num_key_value_heads=40,
                     kv_lora_rank=256, q_lora_rank=768, qk_nope_head_dim=64, qk_rope_head_dim=32, v_head_dim=64,
                     vocab_size=73448, scale_emb=12, dim_model_base=256, scale_depth=1.4,
                     rope_scaling={"type": "longrope", "long_factor": [1.0] * 16, "short_factor": [1.0] * 16,
                                   "original_max_position_embeddings": 32768}),
}
# json cannot hold inf: the configs carry the largest double instead (the engines read a float).
for _m in MODELS.values():
    for _k, _v in list(_m.items()):
        if isinstance(_v, list) and any(x == float("inf") for x in _v if isinstance(x, float)):
            _m[_k] = [1e308 if x == float("inf") else x for x in _v]

# The flags each dimension can take; backends come from the release's own parser.
KV_DTYPES = ["auto", "fp8_e4m3", "fp8_e5m2", "bf16"]
PAGE_SIZES = [None, 1, 16, 32, 64, 128]
SPECULATIVE = [
    [],
    ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
     "--speculative-num-draft-tokens", "4"],
    ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "4",
     "--speculative-num-draft-tokens", "8"],
]


# Kernel packages not in the engine's image that a backend needs, installed by a user who names it
# (hpc_ops_backend.py@92b1d382 imports `hpc` in HPCOpsAttnBackend.__init__ and its kernels).
BACKEND_PACKAGES = {"hpc_ops": ["hpc"]}


def hardware_key(case):
    """Cases that share this are answered from one import of the engine."""
    return (case.get("platform", "cuda"), tuple(case["capability"]), case.get("cuda"), case["device_name"])


def grammar_choices(src):
    """The release's own choices for the flags the space varies, read by running its parser."""
    import subprocess
    code = f"""
import json, sys
sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
import fakeenv, argparse, logging
logging.disable(logging.CRITICAL)
fakeenv.install()
fakeenv.pin({{"platform": "cuda", "capability": [9, 0], "cuda": "12.9", "packages": ["flashinfer", "sgl_kernel"]}})
fakeenv.import_torch_now()
sys.path.insert(0, {os.path.join(src, 'python')!r})
from sglang.srt.server_args import ServerArgs
p = argparse.ArgumentParser()
ServerArgs.add_cli_args(p)
out = {{}}
for a in p._actions:
    for o in a.option_strings:
        if o.startswith("--"):
            out[o] = list(a.choices) if a.choices else None
print(json.dumps(out))
"""
    # The child runs as this interpreter does: under -S (no site-packages) too, so that a machine's own
    # torch or transformers never stands in for the stubs.
    no_site = ["-S"] if sys.flags.no_site else []
    proc = subprocess.run([sys.executable, *no_site, "-c", code], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise SystemExit(f"oracle: could not read the release's parser:\n{proc.stderr[-3000:]}")
    options = json.loads(proc.stdout.strip().splitlines()[-1])
    pick = lambda flag: [c for c in (options.get(flag) or []) if isinstance(c, str)]
    return {
        "attention_backends": pick("--attention-backend"),
        "prefill_attention_backends": pick("--prefill-attention-backend"),
        "decode_attention_backends": pick("--decode-attention-backend"),
        "kv_cache_dtypes": pick("--kv-cache-dtype"),
        "speculative_algorithms": pick("--speculative-algorithm"),
        "has_page_size": "--page-size" in options,
        "has_prefill_decode": "--prefill-attention-backend" in options,
        "linear_attn_backends": pick("--linear-attn-backend"),
        "flags": sorted(options),
    }


def _gpu_cases():
    for g in GPUS:
        for cuda in g["cuda"]:
            base = {"gpu": g["gpu"], "capability": g["capability"], "device_name": g["device_name"],
                    "memory_mib": g["memory_mib"], "platform": g.get("platform", "cuda"),
                    "packages": fakeenv.IMAGE_PACKAGES[g.get("platform", "cuda")]}
            if cuda:
                base["cuda"] = cuda
            if g.get("gcn_arch"):
                base["gcn_arch"] = g["gcn_arch"]
            yield base


# The GPUs and CUDA versions every flag combination is tried on; the others get the systematic part.
_MAIN_GPUS = {("H100", "12.9"), ("B200", "12.9"), ("RTX PRO 6000", "12.9"), ("A100", "12.9"), ("MI300X", None),
              ("B300", "13.0"), ("GB10", "13.0")}


# One model per attention kind and special path: every backend is tried on the other GPUs with these.
_REPRESENTATIVE = ("llama", "deepseek-v3", "qwen3-next", "deepseek-v32", "gpt-oss", "gemma3-vl")


def generate(choices, per_pair_random=6):
    """The cases of one release: every GPU x model with the defaults, every explicit backend, each
    KV dtype, page size and speculative setting alone; then seeded random combinations."""
    rng = random.Random(SEED)
    backends = [b for b in choices["attention_backends"]]
    kv = [k for k in KV_DTYPES if k in choices["kv_cache_dtypes"]]
    prefill = choices["prefill_attention_backends"] if choices["has_prefill_decode"] else []
    decode = choices["decode_attention_backends"] if choices["has_prefill_decode"] else []
    out, seen = [], set()

    def add(base, model, flags):
        key = (base["gpu"], base.get("cuda"), model, tuple(flags))
        if key in seen:
            return
        seen.add(key)
        case = dict(base)
        case.update({"model": model, "flags": list(flags)})
        # A backend outside the image is installed by whoever names it: its own checks then run.
        named = {flags[i + 1] for i in range(len(flags) - 1) if flags[i].endswith("-backend")}
        extra = [p for b in sorted(named) for p in BACKEND_PACKAGES.get(b, ()) if p not in case["packages"]]
        if extra and case.get("platform", "cuda") == "cuda":
            case["packages"] = list(case["packages"]) + extra
        case["id"] = f"{len(out):05d}"
        out.append(case)

    for base in _gpu_cases():
        main = (base["gpu"], base.get("cuda")) in _MAIN_GPUS
        for model in MODELS:
            add(base, model, [])
            if not main:
                if model in _REPRESENTATIVE:
                    for b in backends:
                        add(base, model, ["--attention-backend", b])
                continue
            for b in backends:
                add(base, model, ["--attention-backend", b])
            for k in kv:
                add(base, model, ["--kv-cache-dtype", k])
            if choices["has_page_size"]:
                for p in PAGE_SIZES[1:]:
                    add(base, model, ["--page-size", str(p)])
            for spec in SPECULATIVE[1:]:
                add(base, model, spec)
            for _ in range(per_pair_random):
                flags = []
                if rng.random() < 0.8 and backends:
                    if prefill and rng.random() < 0.25:
                        flags += ["--prefill-attention-backend", rng.choice(prefill),
                                  "--decode-attention-backend", rng.choice(decode)]
                    else:
                        flags += ["--attention-backend", rng.choice(backends)]
                if rng.random() < 0.5 and kv:
                    flags += ["--kv-cache-dtype", rng.choice(kv)]
                if rng.random() < 0.5 and choices["has_page_size"]:
                    flags += ["--page-size", str(rng.choice(PAGE_SIZES[1:]))]
                if rng.random() < 0.4:
                    flags += rng.choice(SPECULATIVE[1:])
                add(base, model, flags)
    return out


def write_models(folder):
    """The archetypes' config.json files, for attnsel to read the same models (tests/oracle/models)."""
    os.makedirs(folder, exist_ok=True)
    for name, config in MODELS.items():
        with open(os.path.join(folder, f"{name}.json"), "w") as f:
            json.dump(config, f, indent=1, sort_keys=True)
            f.write("\n")
