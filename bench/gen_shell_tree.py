#!/usr/bin/env python3
"""Writes a deterministic tree of realistic shell scripts for `attnsel check` throughput
(bench/check_throughput.sh).

Most lines are ordinary shell: variables and defaults, exports, functions, loops, case, pip
installs, echo, heredocs, comments. About one file in five also launches a server: SGLang's
`python3 -m sglang.launch_server`, `sglang serve`, `vllm serve`, with line continuations, "$@",
$EXTRA, arrays and a launch written out in a heredoc. The same seed and size give the same bytes.

Usage: gen_shell_tree.py OUT_DIR [--mb 100] [--files 3000] [--seed 16]
Prints one line: bytes, files and launch commands written (the number of launches the generator
meant; attnsel may find a few more, e.g. in heredocs, or judge them differently).
"""
import argparse
import os
import random

MODELS = ["meta-llama/Meta-Llama-3.1-8B-Instruct", "Qwen/Qwen3-30B-A3B-Instruct-2507", "deepseek-ai/DeepSeek-V3",
          "deepseek-ai/DeepSeek-R1", "mistralai/Mistral-7B-Instruct-v0.3", "Qwen/Qwen2.5-72B-Instruct",
          "google/gemma-2-27b-it", "/models/llama-70b", "$MODEL_DIR/checkpoint"]
BACKENDS = ["fa3", "flashinfer", "triton", "fa4", "flashmla", "trtllm_mla", "torch_native"]
VLLM_BACKENDS = ["FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLASHMLA"]
PACKAGES = ["numpy", "torch==2.5.1", "transformers>=4.44", "requests", "huggingface_hub[cli]", "pyyaml",
            "accelerate", "datasets", "uvloop", "orjson", "aiohttp", "pydantic>=2", "fastapi", "uvicorn"]
WORDS = ["build", "deploy", "cache", "warm", "sync", "models", "weights", "logs", "retry", "check", "node",
         "worker", "shard", "replica", "metrics", "health", "token", "port", "queue", "batch"]


def ident(r):
    return "_".join(r.choice(WORDS) for _ in range(r.randint(1, 3))).upper()


def func(r):
    return "_".join(r.choice(WORDS) for _ in range(r.randint(1, 2)))


def comment(r):
    text = " ".join(r.choice(WORDS) for _ in range(r.randint(3, 12)))
    return f"{' ' * r.choice([0, 0, 2, 4])}# {text}\n"


def ordinary_block(r):
    """A few lines of shell that launch nothing."""
    kind = r.randint(0, 13)
    v = ident(r)
    if kind == 0:
        return f'{v}=${{{v}:-{r.choice(WORDS)}-{r.randint(0, 999)}}}\n'
    if kind == 1:
        return f'export {v}="/opt/{r.choice(WORDS)}/{r.choice(WORDS)}"\nexport PATH="${v}/bin:$PATH"\n'
    if kind == 2:
        f = func(r)
        return (f"{f}() {{\n  local name=\"$1\"\n  shift\n  echo \"[$(date +%H:%M:%S)] {f}: $name $*\" >&2\n"
                f"  if [[ -z \"${{name}}\" ]]; then\n    return 1\n  fi\n}}\n")
    if kind == 3:
        return (f"for i in $(seq 1 {r.randint(2, 16)}); do\n  echo \"{r.choice(WORDS)} $i\"\n"
                f"  sleep 0.{r.randint(1, 9)}\ndone\n")
    if kind == 4:
        pkgs = " ".join(r.sample(PACKAGES, r.randint(1, 4)))
        return f"pip install --no-cache-dir {pkgs}\n"
    if kind == 5:
        return f"echo \"{' '.join(r.choice(WORDS) for _ in range(r.randint(2, 9)))}: ${{{v}}}\"\n"
    if kind == 6:
        return (f"cat > /tmp/{r.choice(WORDS)}.conf <<EOF\n[{r.choice(WORDS)}]\n{r.choice(WORDS)} = ${v}\n"
                f"{r.choice(WORDS)} = {r.randint(1, 100)}\nEOF\n")
    if kind == 7:
        return (f'case "${{{v}:-}}" in\n  {r.choice(WORDS)}) echo one ;;\n  {r.choice(WORDS)}|{r.choice(WORDS)}) '
                f'echo two ;;\n  *) echo "unknown: ${v}" >&2; exit 1 ;;\nesac\n')
    if kind == 8:
        return (f'if [ -f "/etc/{r.choice(WORDS)}" ]; then\n  source "/etc/{r.choice(WORDS)}"\n'
                f'elif command -v {r.choice(WORDS)} >/dev/null 2>&1; then\n  {r.choice(WORDS)} --{r.choice(WORDS)}\n'
                f'else\n  echo "no {r.choice(WORDS)}" >&2\nfi\n')
    if kind == 9:
        return (f"{v}=( {' '.join('--' + r.choice(WORDS) for _ in range(r.randint(1, 5)))} )\n"
                f"printf '%s\\n' \"${{{v}[@]}}\"\n")
    if kind == 10:
        return (f"curl -fsSL --retry 3 \"https://{r.choice(WORDS)}.example.com/{r.choice(WORDS)}?id={r.randint(1, 9999)}\" "
                f"\\\n  -H \"Authorization: Bearer ${{TOKEN}}\" \\\n  -o /tmp/{r.choice(WORDS)}.json\n")
    if kind == 11:
        return f"mkdir -p \"${{{v}:-/tmp}}/{r.choice(WORDS)}\" && cd \"$_\" || exit 1\n"
    if kind == 12:
        return f"while read -r line; do\n  echo \"$line\" | awk '{{print $1}}'\ndone < /tmp/{r.choice(WORDS)}.txt\n"
    return comment(r)


def launch_block(r):
    """One launch command in one of the forms scripts use."""
    kind = r.randint(0, 6)
    model = r.choice(MODELS)
    tp = r.choice([1, 2, 4, 8])
    if kind == 0:
        return (f"python3 -m sglang.launch_server \\\n  --model-path {model} \\\n  --tp {tp} \\\n"
                f"  --attention-backend {r.choice(BACKENDS)} \\\n  --port ${{PORT:-30000}} \"$@\"\n")
    if kind == 1:
        return (f'MODEL=${{MODEL:-{model}}}\nEXTRA=${{EXTRA:-}}\npython -m sglang.launch_server --model-path "$MODEL" '
                f"--tp {tp} $EXTRA\n")
    if kind == 2:
        return (f"ARGS=(\n  --model-path {model}\n  --tp {tp}\n  --attention-backend {r.choice(BACKENDS)}\n)\n"
                f'python3 -m sglang.launch_server "${{ARGS[@]}}" "$@"\n')
    if kind == 3:
        return f"sglang serve {model} --tp {tp} --attention-backend {r.choice(BACKENDS)} --port 30000 &\n"
    if kind == 4:
        return (f"vllm serve {model} \\\n  --tensor-parallel-size {tp} \\\n  --attention-backend "
                f"{r.choice(VLLM_BACKENDS)} \\\n  --max-model-len 8192\n")
    if kind == 5:
        return (f"cat > /tmp/serve.sh <<'SCRIPT'\n#!/bin/bash\npython3 -m sglang.launch_server --model-path {model} "
                f"--tp {tp}\nSCRIPT\nchmod +x /tmp/serve.sh\n")
    return (f'CMD="python3 -m sglang.launch_server --model-path {model} --attention-backend {r.choice(BACKENDS)}"\n'
            f"$CMD --tp {tp}\n")


def script(r, size):
    parts = ["#!/usr/bin/env bash\n", comment(r), "set -euo pipefail\n\n"]
    total = sum(map(len, parts))
    launches = 0
    # About one file in five starts a server, most of those once.
    wanted = 0 if r.random() < 0.8 else r.choice([1, 1, 1, 2, 3])
    at = sorted(r.randint(0, max(size - 1, 0)) for _ in range(wanted))
    while total < size:
        if at and total >= at[0]:
            at.pop(0)
            block = launch_block(r)
            launches += 1
        else:
            block = ordinary_block(r)
        parts.append(block)
        total += len(block)
    for _ in at:  # launches placed past the end
        block = launch_block(r)
        parts.append(block)
        launches += 1
    return "".join(parts), launches


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--mb", type=float, default=100.0, help="total size in MB (1e6 bytes)")
    ap.add_argument("--files", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=16)
    a = ap.parse_args()
    r = random.Random(a.seed)
    mean = a.mb * 1e6 / a.files
    total = launches = 0
    for k in range(a.files):
        folder = os.path.join(a.out, f"svc{k % 40:02d}", f"part{(k // 40) % 8}")
        os.makedirs(folder, exist_ok=True)
        size = max(200, int(r.uniform(0.2, 1.8) * mean))
        text, n = script(r, size)
        with open(os.path.join(folder, f"{func(r)}_{k:05d}.sh"), "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        total += len(text.encode())
        launches += n
    print(f"{total} bytes, {a.files} files, {launches} launch commands")


if __name__ == "__main__":
    main()
