#!/usr/bin/env bash
# Seeds one corpus folder per fuzz target from the repository's own inputs:
#   matrix_loader  data/*.json, tests/fixtures/matrices (good and bad), tests/cases
#   launch         tests/fixtures/check (one leading byte picks the format, see fuzz/targets.hpp)
#   config         tests/fixtures/configs
#   gpu_name       every GPU and architecture name of data/gpus.json, spellings of compute capabilities
#   select         fuzz/seeds/select (requests encoded as fuzz/targets.hpp decode_request reads them)
# Usage: fuzz/make_corpus.sh OUT_DIR        (existing files in OUT_DIR are kept: libFuzzer adds to them)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:?usage: $0 OUT_DIR}
mkdir -p "$out"/{matrix_loader,launch,config,gpu_name,select}

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
echo "seeded $(find "$out" -type f | wc -l) files under $out"
