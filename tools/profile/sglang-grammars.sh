#!/usr/bin/env bash
# Regenerates data/engines/sglang/grammar-*.json from local copies of SGLang's source in
# ${SRC:-/tmp/sglang-src} (read with the stored-source tools; see docs/engine-grammar-notes.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
SRC=${SRC:-/tmp/sglang-src}
X="python3 tools/profile/extract_argparse.py"
EXCERPT=$SRC/001067ff/python/sglang/srt/server_args.add_cli_args.excerpt.py

MERGE_001067FF="python/sglang/srt/server_args.py@001067ff prepare_server_args (line unknown; near the end of the file): if the token '--config' is in argv, ConfigArgumentMerger(parser).merge_config_with_args(argv) rewrites argv before parser.parse_args. server_args_config_parser.py@06c48ca8da0b2c8aac15df74a768e6a012444064 (an older stored version; its constructor takes boolean_actions, 001067ff passes the parser): the YAML file (.yaml/.yml, root must be a mapping) becomes ['--KEY', 'VALUE', ...] (key = flag name without '--'; true -> bare flag, false -> omitted unless the key is a boolean action, then '--KEY false'; list -> '--KEY v1 v2 ...'; empty list omitted) placed BEFORE the remaining command-line tokens (config_args + before_config + after_config, _insert_config_args), so argparse's last-wins gives CLI > config file > defaults. Only one --config; '--config=PATH' is not merged."

$X --root "$SRC/001067ff" --commit 001067fffe33427bee0ed2f007fb7551a1d76b44 --engine-version main@001067ff \
  --manual "$EXCERPT" --manual-no-lines --allow-abbrev true --config-merge "$MERGE_001067FF" \
  --source-note "(ServerArgs annotated fields, lines 1-3711 transcribed; the explicit add_argument calls of ServerArgs.add_cli_args transcribed from the same file, their lines unknown)" \
  --note "Current generation (data/engines/sglang/matrix-0.5.12.json, v0.5.12; generations.json cites server_args.py@001067ff). Only this 2026 version of server_args.py is stored. add_cli_args = add_cli_args_from_dataclass(parser, ServerArgs) + 29 explicit add_argument calls (run-time choices for the parsers, --config, deprecated aliases). The parser is argparse.ArgumentParser(prog='sglang serve') in prepare_server_args: allow_abbrev stays True (unique prefixes such as --tp and --mem-frac are accepted). --reasoning-parser/--tool-call-parser choices are ['auto'] + registry keys, computed at run time." \
  --out data/engines/sglang/grammar-0.5.12.json

$X --root "$SRC/main" --commit f489bf94330e821aa6c4861036384bf466709238 --engine-version main@f489bf9 \
  --manual "$EXCERPT" --manual-no-lines \
  --manual-label "python/sglang/srt/server_args.py@001067ff (add_cli_args; main's own server_args.py is not stored)" \
  --extra-consts "$SRC/001067ff/python/sglang/srt/server_args.py" --allow-abbrev true \
  --config-merge "Main's server_args.py is not stored; as in 001067ff: $MERGE_001067FF" \
  --source-note "(newest stored arg_groups/fields/*.py, per-file commits in note) + python/sglang/srt/arg_groups/choices.py@d9a2188f52027485c73b10ab578cd3453893f400 + arg_groups/arg_utils.py@7643e393952a3c8895bd5f1f43de99909758c260 (derivation rules) + the explicit add_argument calls of ServerArgs.add_cli_args in python/sglang/srt/server_args.py@001067fffe33427bee0ed2f007fb7551a1d76b44" \
  --note "Per-file commits (the version find_files lists for each; not compared across the many stored versions): fields/device.py@36bc6404, disagg.py@f489bf94, exec_.py@f489bf94, lora.py@8f1a937a, memory.py@09eaaf15, mm.py@09eaaf15, model.py@6074b7d5, observability.py@d39ef3c6, parallel.py@04817247, schedule.py@144437f1, serving.py@1ac331b7, spec.py@7e997c67; choices.py@d9a2188f; field_order.py@f489bf94. 'line' of a field flag is its line in 'file'. Flags are listed per namespace file (alphabetical file order, fields in source order); registration order in main follows arg_groups/field_order.py POSITIONAL_FIELD_ORDER, which only matters for --help. Fields without Arg/str metadata (reasoning_parser, tool_call_parser, kv_canary_real_data, stat_loggers, custom_sigquit_handler) and no_cli fields get no flag from the dataclass; the first three are registered by hand. Main's own server_args.py (hand-registered flags: --config, the parsers, deprecated aliases) is not stored: the 29 hand-registered flags are those of server_args.py@001067ff, with line null." \
  --out data/engines/sglang/grammar-main.json

R=$SRC/router-e46dcd87
$X --root "$R" --commit e46dcd87adca58ec70831ad7cb01a3892b2c9e50 --engine-version "main@e46dcd8 (sgl-router)" \
  --manual "$R/sgl-router/py_src/sglang_router/router_args.py" --fstring prefix=router- --drop=--host --drop=--port \
  --allow-abbrev true \
  --source-note "(RouterArgs.add_cli_args with use_router_prefix=True, exclude_host_port=True, as sgl-router/py_src/sglang_router/launch_server.py@cc42351f8624b3f339c2da02947c5cdec9267687 calls it)" \
  --note "The router flags of python -m sglang_router.launch_server, which parses them together with every ServerArgs flag (grammar-main.json) in one argparse parser, plus --router-dp-worker-base-port (int, default 31000, defined in launch_server.py). Standalone python -m sglang_router.launch_router registers the same flags without the 'router-' prefix plus --host/--port (launch_router.py not read). --worker-urls carries no prefix in either. The stored router_args.py is the version find_files lists (53 stored versions; newest by content not established). Local copy regenerated line by line from the read text with help strings shortened: lines may be off by a few. Defaults read from the environment (os.getenv('ATP_...')) are null." \
  --out data/engines/sglang/grammar-router-main.json

for f in data/engines/sglang/grammar-*.json; do python3 -m json.tool "$f" >/dev/null; done

D=$SRC/diffusion-d772b176
$X --root "$D" --commit d772b176f7755baf0ada8016c557def16f7e1533 --engine-version "main@d772b17 (multimodal_gen)" \
  --manual "$D/python/sglang/multimodal_gen/runtime/server_args.py" --allow-abbrev true \
  --source-note "(ServerArgs.add_cli_args of the diffusion runtime)" \
  --note "Diffusion runtime (sglang generate; sglang serve with a diffusers model). Only this version of multimodal_gen/runtime/server_args.py is stored (an early sgl-diffusion one). INCOMPLETE: add_cli_args also calls PipelineConfig.add_cli_args(parser) and PreprocessConfig.add_cli_args(parser) (configs/pipelines/base.py, configs/configs.py: not read), whose flags are missing here; the entry points add their own (add_multimodal_gen_serve_args / add_multimodal_gen_generate_args in multimodal_gen/runtime/entrypoints/cli/: not read). StoreBoolean is the project's own Action (multimodal_gen/utils.py, not read). prepare_server_args uses FlexibleArgumentParser (allow_abbrev not checked); sglang serve/generate build a plain argparse.ArgumentParser, so allow_abbrev is True there. --attention-backend choices are [e.name.lower() for e in AttentionBackendEnum] (runtime/platforms, not read). A config file is read in from_cli_args from the 'config' value (JSON or YAML; values given on the command line override it), but no --config flag is registered in this file. Defaults given as Enum members (.value) are null." \
  --out data/engines/sglang-diffusion/grammar-main.json
for f in data/engines/sglang/grammar-*.json; do python3 -m json.tool "$f" >/dev/null; done
