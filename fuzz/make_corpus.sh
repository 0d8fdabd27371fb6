#!/usr/bin/env bash
# Seeds one corpus folder per fuzz target from the repository's own inputs:
#   matrix_loader  data/*.json, tests/fixtures/matrices (good and bad), tests/cases
#   launch         tests/fixtures/check and tests/fixtures/deploy (one leading byte picks the format,
#                  see fuzz/targets.hpp)
#   check_file     the same files, with check_file's leading byte
#   config         tests/fixtures/configs
#   gpu_name       every GPU and architecture name of data/gpus.json, spellings of compute capabilities
#   select         fuzz/seeds/select (requests encoded as fuzz/targets.hpp decode_request reads them)
#   backend_config fuzz/seeds/backend_config (first byte: 0 YAML file, 1 JSON file, 2 inline text)
#   yaml_budget    every YAML file under tests/fixtures and fuzz/seeds/yaml_budget
#   output_encoders tests/fixtures/hostile (the first byte is where the streaming encoder is split)
#   process_files  tests/fixtures/walk (the first byte picks Makefile, justfile, Procfile, unit, Jinja, MDX)
# Usage: fuzz/make_corpus.sh OUT_DIR        (existing files in OUT_DIR are kept: libFuzzer adds to them)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:?usage: $0 OUT_DIR}
mkdir -p "$out"/{matrix_loader,launch,check_file,config,gpu_name,select,backend_config,yaml_budget,output_encoders,process_files}
while IFS= read -r f; do
  case $f in
    *Makefile | *GNUmakefile) b='\000' ;; *.mk) b='\001' ;; *justfile) b='\002' ;; *Procfile) b='\003' ;;
    *.service) b='\004' ;; *.sh.j2) b='\005' ;; *.j2) b='\006' ;; *.mdx) b='\007' ;; *) continue ;;
  esac
  { printf "$b"; cat "$f"; } > "$out/process_files/$(echo "${f#"$root"/tests/fixtures/walk/}" | tr / _)"
done < <(find "$root/tests/fixtures/walk" -type f)
while IFS= read -r f; do
  { printf '\021'; cat "$f"; } > "$out/output_encoders/$(echo "${f#"$root"/tests/fixtures/hostile/}" | tr / _)"
done < <(find "$root/tests/fixtures/hostile" -type f ! -name manifest.json)

cp "$root"/data/*.json "$root"/tests/fixtures/matrices/*.json "$root"/tests/fixtures/matrices/bad/*.json \
   "$root"/tests/cases/*.json "$out/matrix_loader/"

# The byte before the text: 1 shell, 2 Dockerfile, 3 compose, 4 Kubernetes, 5 Markdown.
for f in "$root"/tests/fixtures/check/*; do
  [[ -f $f ]] || continue
  case $(basename "$f") in
    Dockerfile*) b='\002' ;; *compose*) b='\003' ;; *.yaml | *.yml) b='\004' ;; *.md) b='\005' ;; *) b='\001' ;;
  esac
  { printf "$b"; cat "$f"; } > "$out/launch/$(basename "$f")"
done

# The deploy fixtures in every format launch_commands and check_file read; each target has its own
# table of formats (fuzz/targets.hpp), hence two bytes per file.
while IFS= read -r f; do
  case $f in
    */helm/*templates/*) b='\013' c='\007' ;; *.py) b='\012' c='\006' ;; *.rst) b='\014' c='\010' ;;
    *.adoc) b='\015' c='\011' ;; *.md) b='\005' c='\005' ;; *Dockerfile*) b='\002' c='\002' ;;
    *compose*) b='\003' c='\003' ;; *.yaml | *.yml) b='\004' c='\004' ;; *) b='\001' c='\001' ;;
  esac
  name=$(echo "${f#"$root"/tests/fixtures/deploy/}" | tr / _)
  { printf "$b"; cat "$f"; } > "$out/launch/deploy-$name"
  { printf "$c"; cat "$f"; } > "$out/check_file/deploy-$name"
done < <(find "$root/tests/fixtures/deploy" -type f)
for f in "$out"/launch/*; do
  [[ $(basename "$f") == deploy-* ]] || cp "$f" "$out/check_file/$(basename "$f")"
done

cp "$root"/tests/fixtures/configs/*.json "$out/config/"
cp "$root"/tests/fixtures/configs/qwen3-next-dir/config.json "$out/config/qwen3-next.json"

i=0
while IFS= read -r name; do
  printf '%s' "$name" > "$out/gpu_name/name-$((i++))"
done < <(grep -o '"\(name\|arch\)": *"[^"]*"' "$root/data/gpus.json" | sed 's/.*: *"\(.*\)"/\1/' | sort -u)
for spelling in sm90 sm_90a sm100f compute_90 9.0 90 12.1 121 "NVIDIA H100 80GB HBM3" "rtx5090" \
                $'H100\n12.8' $'B200\n13.0' $'gfx942\n12.8' $'sm_9999\n12.x' $'9.0\n99999999999.1'; do
  printf '%s' "$spelling" > "$out/gpu_name/spelling-$((i++))"
done

cp "$root"/fuzz/seeds/select/* "$out/select/"
cp "$root"/fuzz/seeds/backend_config/* "$out/backend_config/"
cp "$root"/fuzz/seeds/yaml_budget/* "$out/yaml_budget/"
while IFS= read -r f; do
  cp "$f" "$out/yaml_budget/$(echo "$f" | tr / _)"
  { printf '\000'; cat "$f"; } > "$out/backend_config/yaml-$(echo "$f" | tr / _)"
done < <(cd "$root" && find tests/fixtures -type f \( -name '*.yaml' -o -name '*.yml' \))
echo "seeded $(find "$out" -type f | wc -l) files under $out"
