#!/usr/bin/env bash
# Regenerates data/engines/vllm/grammar-*.json from local excerpts of vLLM's source in
# ${SRC:-/tmp/vllm-src} (see docs/engine-grammar-notes.md, section vLLM).
#
# Fetching the sources (vLLM cannot be installed here; nothing is imported): the files were read
# with the stored-source tools (find_files / read_file on repo vllm-project/vllm, the commits
# below) and transcribed into $SRC/v0.11/<path>, keeping every declaration verbatim (module
# aliases, dataclass field annotations and defaults, the add_cli_args bodies) and cutting
# docstrings to their first sentence and dropping method bodies. $SRC/v0.11/COMMITS lists
# path=commit for each file; the extractor copies it into "source" and each flag's "file":
#   vllm/engine/arg_utils.py=99d7eb5d6a512cfcc5a2b104f24ebf2d6cda772b      (v0.11.0-era)
#   vllm/entrypoints/openai/cli_args.py=789340fbad95a900ca3c467c9cee33b3d905fd61
#   vllm/config/model.py=18ec6629253632af0a384f2ffbb8c6b28af322e7          (later than arg_utils)
#   vllm/config/cache.py=c1d86421174a87056edc90a41dc9942391509e84
#   vllm/config/parallel.py=840e7972c6ab74061696e81e17d8a74db2aefd7e
#   vllm/config/scheduler.py=1f8758d584e8f599219d75adf658e182ed809a43
#   vllm/config/multimodal.py=55e847c01c4b10736b55f091531717e18c579817
#   vllm/config/observability.py=06d5289f8d032b0fd865000e835887db3354aee1
#   vllm/config/lora.py=a78dc92f43ae2471dd40675a47079aa1a9a157c1
#   vllm/config/load.py=e2ab420c0ba58b648a19d242fed308d0ea909f6f
# Not read (their fields fall back to the EngineArgs annotations in arg_utils.py; each such
# flag's "file" says so): vllm/config/vllm.py (VllmConfig), compilation.py, structured_outputs.py,
# vllm/entrypoints/chat_utils.py (ChatTemplateContentFormatOption).
set -euo pipefail
cd "$(dirname "$0")/../.."
SRC=${SRC:-/tmp/vllm-src}
X="python3 tools/profile/extract_vllm_args.py"

$X --src "$SRC/v0.11" --engine-version "0.11 (arg_utils.py@99d7eb5d)" --complete false \
  --source-note "(parser behaviour: vllm/utils/argparse_utils.py@c836a6feca5511c326b4369f6fd11cf72090665b and @00da11e37d1ffac917c3427fff227500302eb452, FlexibleArgumentParser)" \
  --replacement=--task=--runner \
  --replacement=--override-pooler-config=--pooler-config \
  --replacement=--guided-decoding-backend=--structured-outputs-config \
  --replacement=--guided-decoding-disable-fallback=--structured-outputs-config \
  --replacement=--guided-decoding-disable-any-whitespace=--structured-outputs-config \
  --replacement=--guided-decoding-disable-additional-properties=--structured-outputs-config \
  --replacement=--num-redundant-experts=--eplb-config \
  --replacement=--eplb-window-size=--eplb-config \
  --replacement=--eplb-step-interval=--eplb-config \
  --replacement=--eplb-log-balancedness=--eplb-config \
  --replacement=--enable-multimodal-encoder-data-parallel=--mm-encoder-tp-mode \
  --replacement=--disable-mm-preprocessor-cache=--mm-processor-cache-gb \
  --replacement=--cuda-graph-sizes=--cudagraph-capture-sizes \
  --set='--external_parameters:removed=true' \
  --set='--external_parameters:help="Declared with an underscore in this stored arg_utils.py (not in upstream release notes; SchedulerConfig.external_parameters is not in the config read). FlexibleArgumentParser rewrites --external_parameters to --external-parameters before argparse, so no spelling reaches it: vLLM answers unrecognized arguments."' \
  --note "vllm serve / python -m vllm.entrypoints.openai.api_server, v0.11-era: the stored arg_utils.py@99d7eb5d is a v0.11.0-series file (deprecations 'will be removed in v0.12.0', --compilation-config has the short alias -O, no --attention-backend/--attention-config: the attention backend is chosen only by VLLM_ATTENTION_BACKEND); cli_args.py@789340fb matches it (FrontendArgs before BaseFrontendArgs existed). The config dataclasses were read at LATER stored commits (model.py@18ec6629 etc.): choices/types of a field are those of that later file (e.g. --kv-cache-dtype lists fp8_ds_mla, --tokenizer-mode has no choices because TokenizerMode | str), and fields missing there (rope_scaling, rope_theta, num_lookahead_slots, lora_extra_vocab_size, external_parameters) use the EngineArgs annotation. complete=false: platform plugins may add flags (current_platform.pre_register_and_update(parser)) and the file/commit pairing is not a tagged release. Types: optional_<t> = optional_type(t) (accepts also '' and 'None'); human_readable_int = int or 1k/1K/25.6k/2M/1G; union_dict_and_str = any string, JSON when it looks like {...}; json for dataclass-typed flags is validated by pydantic on top of JSON syntax; those names are not checked by attnsel's loader yet. FlexibleArgumentParser (not expressible here): --under_score spellings are rewritten to dashes; dotted keys (--compilation-config.level 3, -O.level=3, --speculative-config.model X, key+ for list append) are folded into the JSON flag; --help=<keyword> is accepted. -O<n>: the v0.11 argparse_utils.py was not read (the later c836a6fe rewrites -O3/-O=3/-O 3 to --optimization-level, a flag this release does not have); argparse itself reads -O3 as -O with the value 3. 'line' is null: the local copies are excerpts." \
  --config-merge "vllm/utils/argparse_utils.py (c836a6fe, v0.12-era; v0.11's copy not read) FlexibleArgumentParser.parse_args: if the exact token --config is in argv (at most one; --config=PATH is not merged), _pull_args_from_config/load_config_file read the YAML file (.yaml/.yml, a mapping): key -> --KEY; true -> --KEY, false -> omitted (00da11e3: --no-KEY when declared), list -> --KEY v1 v2 ..., mapping -> --KEY JSON (00da11e3 only), else --KEY str(value). The words go after 'serve' and the positional model (or first, without a subcommand) and before the rest of the command line: command line > config file > defaults. Underscores in keys are then rewritten like any --flag." \
  --out data/engines/vllm/grammar-0.11.json

for f in data/engines/vllm/grammar-*.json; do python3 -m json.tool "$f" >/dev/null; done
