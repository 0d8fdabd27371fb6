#!/usr/bin/env bash
# scripts/github-action.sh (the logic of action.yml) run as GitHub would run it: fake GITHUB_*
# files, a prebuilt attnsel, fixture files. Asserts the annotations, the exit code, the step
# summary and the step outputs.
#   tests/github_action_test.sh SOURCE_DIR ATTNSEL_BINARY
set -uo pipefail

src=$(cd "$1" && pwd)
cli=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
action="$src/scripts/github-action.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attnsel-action.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
unset ATTNSEL_GPU ATTNSEL_MATRIX ATTNSEL_GPUS ATTNSEL_PATHS ATTNSEL_RELEASE ATTNSEL_ENGINE ATTNSEL_STRICT \
      ATTNSEL_FORMAT ATTNSEL_VERSION ATTNSEL_ARGS GITHUB_OUTPUT GITHUB_STEP_SUMMARY
export NO_COLOR=1 RUNNER_TEMP="$tmp/runner"
mkdir -p "$RUNNER_TEMP"

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
expect_eq() { [[ "$1" == "$2" ]] || fail "$3: '$1', expected '$2'"; }
expect_in() { [[ "$1" == *"$2"* ]] || fail "$3: lacks '$2'"; }
expect_not_in() { [[ "$1" != *"$2"* ]] || fail "$3: has '$2'"; }
output() { sed -n "s/^$1=//p" "$GITHUB_OUTPUT" | tail -n 1; }  # the last value a step set
count() { grep -c "^$1" <<<"$2"; }

# The workspace: the check fixture, a clean script, and a file name GitHub's escapes must survive.
ws="$tmp/workspace"
mkdir -p "$ws/deploy" "$ws/docs"
cp "$src/tests/fixtures/check/launch.sh" "$ws/deploy/launch.sh"
printf 'python3 -m sglang.launch_server --model-path meta-llama/Meta-Llama-3.1-8B-Instruct --attention-backend fa3\n' \
  >"$ws/deploy/good.sh"
printf '# Serving\n\n```sh\nsglang serve deepseek-ai/DeepSeek-R1 --attention-backend trtllm_mla\n```\n' >"$ws/docs/a,b:c%.md"
cd "$ws" || exit 1

run_action() {  # run_action VAR=VALUE...: stdout in $out, status in $code
  export GITHUB_OUTPUT="$tmp/output" GITHUB_STEP_SUMMARY="$tmp/summary.md"
  : >"$GITHUB_OUTPUT"
  printf '# An earlier step wrote this\n' >"$GITHUB_STEP_SUMMARY"
  out=$(env ATTNSEL_BINARY="$cli" "$@" "$action" 2>"$tmp/stderr")
  code=$?
}

# 1. A script with failing commands, on two GPUs.
run_action ATTNSEL_GPUS=sm90,sm100 ATTNSEL_PATHS="deploy/launch.sh"
echo "$out"
expect_eq "$code" 1 "exit code"
expect_in "$out" "::error file=deploy/launch.sh,line=15,col=70,endLine=15,endColumn=89,title=attnsel cell.compute-capability::[sm90] --attention-backend trtllm_mla" "annotation with a column"
expect_in "$out" "::warning file=deploy/launch.sh,line=39,col=34,endLine=39,endColumn=50,title=attnsel flashmla-fp8-kv::" "warning"
# launch.sh:8 and :18 also match known-bug advisories on sm100 (warnings: their ranges are not known).
expect_in "$out" "attnsel: 8 commands checked for sm90, sm100: 4 failing, 3 with warnings, 1 clean" "summary line"
expect_eq "$(output exit-code)" 1 "exit-code output"
expect_eq "$(output commands)" 8 "commands output"
expect_eq "$(output failing)" 4 "failing output"
expect_eq "$(output errors)" "$(count '::error ' "$out")" "errors output = ::error lines"
expect_eq "$(output warnings)" "$(count '::warning ' "$out")" "warnings output = ::warning lines"
expect_eq "$(output notes)" "$(count '::notice ' "$out")" "notes output = ::notice lines"
expect_eq "$(output errors)" 4 "errors output"
report=$(output report)
[[ -s "$report" ]] || fail "the JSON report $report is empty"
expect_in "$(head -c 200 "$report")" '"kind": "check"' "the JSON report"
summary=$(cat "$GITHUB_STEP_SUMMARY")
expect_eq "$(head -n 1 "$GITHUB_STEP_SUMMARY")" "# An earlier step wrote this" "the summary is appended to"
expect_in "$summary" "## ❌ attnsel check: 4 of 8 commands fail" "summary heading"
expect_in "$summary" '| `deploy/launch.sh:15:70` | sm90 | ❌ error | `cell.compute-capability` |' "summary finding"
expect_in "$summary" '| ❌ | `deploy/launch.sh:15` |' "summary command"

# 2. Clean: exit 0, nothing annotated, outputs at zero.
run_action ATTNSEL_GPUS=H100 ATTNSEL_PATHS="deploy/good.sh"
expect_eq "$code" 0 "clean exit code"
expect_eq "$(count '::' "$out")" 0 "no annotation for a clean script"
expect_eq "$(output errors)" 0 "clean errors"
expect_eq "$(output failing)" 0 "clean failing"
expect_in "$(cat "$GITHUB_STEP_SUMMARY")" "## ✅ attnsel check: no command fails" "clean summary"

# 3. Globs, Markdown, and a file name with , : % in it: escaped in the annotation's properties.
run_action ATTNSEL_GPUS=sm90 ATTNSEL_PATHS="deploy/**/*.sh
docs/*.md"
expect_eq "$code" 1 "glob exit code"
expect_in "$out" "::error file=docs/a%2Cb%3Ac%25.md,line=4,col=" "escaped file name"
expect_eq "$(output commands)" 10 "glob commands (8 + 1 + 1)"

# 4. --strict: the FlashMLA FP8 caveat of launch.sh:38 alone... fails the step.
printf 'python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-R1 --attention-backend flashmla --kv-cache-dtype fp8_e4m3\n' \
  >"$ws/deploy/caveat.sh"
run_action ATTNSEL_GPUS=sm90 ATTNSEL_PATHS=deploy/caveat.sh
expect_eq "$code" 0 "a warning passes"
expect_eq "$(output warnings)" 2 "the caveat and advisory SGL-ADV-0001 (FlashMLA with FP8 KV)"
run_action ATTNSEL_GPUS=sm90 ATTNSEL_PATHS=deploy/caveat.sh ATTNSEL_STRICT=true
expect_eq "$code" 1 "a warning fails with strict"
expect_eq "$(output failing)" 1 "strict failing"

# 5. More findings than GitHub annotates: a notice with the totals, pointing at the step summary.
for i in $(seq 1 12); do
  printf 'python3 -m sglang.launch_server --model-path meta-llama/Meta-Llama-3.1-8B-Instruct --port %s --attention-backend flashinfr\n' "$((8000 + i))"
done >"$ws/deploy/many.sh"
run_action ATTNSEL_GPUS=sm90 ATTNSEL_PATHS=deploy/many.sh
expect_eq "$(count '::error ' "$out")" 12 "all errors are in the log"
expect_in "$out" "::notice title=attnsel%3A more findings than GitHub annotates::attnsel found 12 errors" "the totals notice"
expect_in "$out" "All of them: the job's step summary, or" "points at the step summary"
expect_eq "$(grep -c '^| `deploy/many.sh:' "$GITHUB_STEP_SUMMARY")" 12 "every finding in the summary"

# 6. Broken configurations: exit 2 with an error annotation.
run_action ATTNSEL_GPUS=sm90 ATTNSEL_PATHS="nothing/*.sh"
expect_eq "$code" 2 "paths matching nothing"
expect_in "$(cat "$tmp/stderr")" "'nothing/*.sh' matches no file" "paths matching nothing"
run_action ATTNSEL_PATHS=deploy/good.sh
expect_eq "$code" 2 "no gpus"
expect_in "$out" "::error title=attnsel action::the input gpus is required" "no gpus"
run_action ATTNSEL_GPUS=sm90 ATTNSEL_BINARY="$tmp/none"
expect_eq "$code" 2 "missing binary"
run_action ATTNSEL_GPUS=sm90 ATTNSEL_ENGINE=tgi ATTNSEL_RELEASE=0.15.0 ATTNSEL_PATHS=deploy/good.sh
expect_eq "$code" 2 "a release of an unknown engine"
expect_in "$out" "engine is sglang or vllm" "a release of an unknown engine"
run_action ATTNSEL_GPUS=sm99 ATTNSEL_PATHS=deploy/good.sh
expect_eq "$code" 2 "unknown GPU"
expect_eq "$(output exit-code)" 2 "exit-code output of a broken run"

# 7. A release, extra arguments, another format; and attnsel from PATH.
mkdir -p "$tmp/bin" && ln -s "$cli" "$tmp/bin/attnsel"
export GITHUB_OUTPUT="$tmp/output" GITHUB_STEP_SUMMARY="$tmp/summary.md"
: >"$GITHUB_OUTPUT"
out=$(PATH="$tmp/bin:$PATH" ATTNSEL_VERSION=path ATTNSEL_GPUS=sm90 ATTNSEL_PATHS=deploy/good.sh ATTNSEL_RELEASE=0.5.5 \
      ATTNSEL_ARGS="--cuda 12.8" ATTNSEL_FORMAT=text "$action" 2>&1)
code=$?
expect_eq "$code" 0 "text format from PATH"
expect_in "$out" "CUDA 12.8" "extra arguments reach attnsel"
expect_eq "$(output commands)" 1 "text format outputs"

# 8. Hostile file names from a pull request: none is an option, none turns the step green, none
# swaps the matrix, none forges a workflow command in the log (stdout or stderr).
hostile="$tmp/hostile"
mkdir -p "$hostile"
cd "$hostile" || exit 1
printf 'python3 -m sglang.launch_server --model-path meta-llama/Meta-Llama-3.1-8B-Instruct --attention-backend flashinfr\n' >bad.sh
# A matrix that would accept anything, and files that try to load it or end the options.
printf '{"schema_version": 1}\n' >evil.json
for name in --help -h --version --matrix=evil.json --format=json --json -- - --files --strict=false \
            '--gpu=cpu' '--engine-version=0.0.1' '-' '--unknown-model=note'; do
  : >"./$name"
done
printf 'x' >'--stdin-filename=a.md'
ln -s /nonexistent $'dangling\n::error title=forged::p.sh'
ln -s /nonexistent $'mask\n::add-mask::secret.sh'
printf 'python3 -m sglang.launch_server --attention-backend x\n' >$'esc\x1b]52;c;QUJD\x07\xe2\x80\xae##[error]x.sh'
for pattern in '*' '**' './*' '* bad.sh'; do
  run_action ATTNSEL_GPUS=sm90 ATTNSEL_PATHS="$pattern"
  ((code != 0)) || fail "hostile names ($pattern): exit 0"
  log="$out"$'\n'"$(cat "$tmp/stderr")"
  forged=$(grep -E '^[[:space:]]*::' <<<"$log" | grep -vE '^::(error|warning|notice) (file=[^,]*,)?(line=[0-9]+,)?(col=[0-9]+,)?(endLine=[0-9]+,endColumn=[0-9]+,)?title=attnsel[ %]' |
           grep -v '^::error title=attnsel action::')
  [[ -z "$forged" ]] || fail "hostile names ($pattern): a forged workflow command: $forged"
  expect_not_in "$log" "##[" "hostile names ($pattern): ##["
  expect_not_in "$log" $'\x1b' "hostile names ($pattern): ESC"
  expect_not_in "$log" $'\xe2\x80\xae' "hostile names ($pattern): U+202E"
  expect_not_in "$log" "Usage:" "hostile names ($pattern): a file became --help"
done
run_action ATTNSEL_GPUS=sm90 ATTNSEL_PATHS='*'
expect_eq "$(output exit-code)" "$code" "hostile names: exit-code output"
expect_in "$out" "flashinfr" "hostile names: bad.sh is still checked against the built-in matrix"
cd "$ws" || exit 1

if ((failures > 0)); then
  echo "$failures failure(s)"
  exit 1
fi
echo "GitHub Action script: all checks passed"
