#!/usr/bin/env bash
# The pre-commit hooks of .pre-commit-hooks.yaml, run by pre-commit itself (offline) on a sample
# repository: a bad launch script fails the hook with its finding shown, a good one and files
# without launch commands pass.
#   tests/precommit_test.sh SOURCE_DIR ATTNSEL_BINARY
# Exit 77 (ctest's SKIP_RETURN_CODE) when pre-commit or git is missing.
set -uo pipefail

src=$(cd "$1" && pwd)
cli=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
command -v git >/dev/null 2>&1 || { echo "SKIP: git is not installed"; exit 77; }
command -v pre-commit >/dev/null 2>&1 || { echo "SKIP: pre-commit is not installed"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/attnsel-precommit.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# pre-commit and git keep their state here, never in the user's home.
export HOME="$tmp/home" XDG_CACHE_HOME="$tmp/cache" PRE_COMMIT_HOME="$tmp/pre-commit"
export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=t \
       GIT_COMMITTER_EMAIL=t@example.com NO_COLOR=1 PRE_COMMIT_COLOR=never
unset ATTNSEL_GPU ATTNSEL_MATRIX
mkdir -p "$HOME" "$tmp/bin"
ln -s "$cli" "$tmp/bin/attnsel"
export PATH="$tmp/bin:$PATH"

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
expect_code() {  # expect_code WANT GOT WHAT
  [[ "$1" == "$2" ]] || fail "$3: exit $2, expected $1"
}
expect_in() {  # expect_in TEXT PART WHAT
  [[ "$1" == *"$2"* ]] || fail "$3: output lacks '$2'"
}
expect_not_in() {
  [[ "$1" != *"$2"* ]] || fail "$3: output has '$2'"
}

# The hook repository: this checkout's hook definitions and scripts, committed (pre-commit
# clones a repository at a rev; uncommitted changes of the checkout are included this way).
hooks="$tmp/hooks"
mkdir -p "$hooks/scripts"
cp "$src/.pre-commit-hooks.yaml" "$hooks/"
cp "$src/scripts/pre-commit-hook.sh" "$src/scripts/build-cli.sh" "$hooks/scripts/"
git -C "$hooks" init -q && git -C "$hooks" add -A && git -C "$hooks" commit -qm hooks || exit 1
rev=$(git -C "$hooks" rev-parse HEAD)

# The sample repository.
repo="$tmp/sample"
mkdir -p "$repo/deploy" "$repo/docs"
cat > "$repo/deploy/good.sh" <<'SH'
#!/bin/sh
python3 -m sglang.launch_server --model-path meta-llama/Meta-Llama-3.1-8B-Instruct --attention-backend fa3
SH
cat > "$repo/deploy/bad.sh" <<'SH'
#!/bin/sh
# TensorRT-LLM MLA is Blackwell-only: wrong on sm90.
python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-R1 \
  --attention-backend trtllm_mla
SH
printf '# Notes\n\nNothing to launch here.\n' > "$repo/docs/notes.md"
printf 'name: ci\non: push\njobs: {}\n' > "$repo/ci.yaml"
printf 'not checked: %s\n' "no launch command" > "$repo/README.txt"
cat > "$repo/.pre-commit-config.yaml" <<YAML
repos:
  - repo: $hooks
    rev: $rev
    hooks:
      - id: attnsel-check
        args: [--gpu, sm90]
      - id: attnsel-check-from-source
        args: [--gpu, sm90]
YAML
git -C "$repo" init -q && git -C "$repo" add -A && git -C "$repo" commit -qm sample || exit 1
cd "$repo" || exit 1

# attnsel-check-from-source uses the built binary instead of building (the build is cmake's).
export ATTNSEL_BINARY="$cli"

out=$(pre-commit run --all-files 2>&1); code=$?
echo "$out"
expect_code 1 "$code" "pre-commit run --all-files"
expect_in "$out" "deploy/bad.sh:4  --attention-backend trtllm_mla: TensorRT-LLM MLA needs compute capability" "bad.sh"
expect_in "$out" "[cell.compute-capability]" "bad.sh"
expect_in "$out" "deploy/good.sh:2" "good.sh is checked"
expect_in "$out" "- hook id: attnsel-check-from-source" "the second hook ran"

out=$(pre-commit run --files deploy/good.sh docs/notes.md ci.yaml README.txt 2>&1); code=$?
echo "$out"
expect_code 0 "$code" "good.sh, Markdown and YAML without launch commands"
expect_in "$out" "Passed" "good files"
expect_not_in "$out" "Failed" "good files"

out=$(pre-commit run --files docs/notes.md ci.yaml 2>&1); code=$?
echo "$out"
expect_code 0 "$code" "files without launch commands only"

out=$(pre-commit run attnsel-check --files deploy/bad.sh 2>&1); code=$?
expect_code 1 "$code" "bad.sh alone"
expect_in "$out" "Failed" "bad.sh alone"
expect_in "$out" "1 command checked for sm90: 1 failing, 0 with warnings, 0 clean" "bad.sh alone"

# The same hook for another GPU: the command is good on Blackwell.
sed -i 's/sm90\]/sm100]/' .pre-commit-config.yaml
git add .pre-commit-config.yaml && git commit -qm sm100
out=$(pre-commit run attnsel-check --files deploy/bad.sh 2>&1); code=$?
expect_code 0 "$code" "bad.sh on sm100"

# try-repo: the hook straight from the repository given (its working tree, committed or not).
# Without args the GPU comes from ATTNSEL_GPU.
out=$(ATTNSEL_GPU=sm90 pre-commit try-repo "$hooks" attnsel-check --files deploy/bad.sh deploy/good.sh 2>&1); code=$?
echo "$out"
expect_code 1 "$code" "try-repo"
expect_in "$out" "deploy/bad.sh:4" "try-repo"
out=$(ATTNSEL_GPU=sm90 pre-commit try-repo "$hooks" attnsel-check --files deploy/good.sh 2>&1); code=$?
expect_code 0 "$code" "try-repo on good.sh"
# No GPU at all, for a file with a command: a broken hook configuration, said so.
out=$(pre-commit try-repo "$hooks" attnsel-check --files deploy/good.sh 2>&1); code=$?
expect_code 1 "$code" "no GPU"
expect_in "$out" "check needs the target GPUs" "no GPU"

# try-repo on this checkout itself, as a user would try it, when it is a git repository that
# tracks the hook definitions (try-repo takes uncommitted changes of tracked files, not new files).
if git -C "$src" ls-files --error-unmatch .pre-commit-hooks.yaml scripts/pre-commit-hook.sh >/dev/null 2>&1; then
  out=$(ATTNSEL_GPU=sm90 pre-commit try-repo "$src" attnsel-check --files deploy/bad.sh deploy/good.sh docs/notes.md 2>&1)
  code=$?
  expect_code 1 "$code" "try-repo on the source checkout"
  expect_in "$out" "deploy/bad.sh:4  --attention-backend trtllm_mla" "try-repo on the source checkout"
  [[ "$out" == *"deploy/bad.sh:4"* ]] || echo "$out"
fi

if ((failures > 0)); then
  echo "$failures failure(s)"
  exit 1
fi
echo "pre-commit hooks: all checks passed"
