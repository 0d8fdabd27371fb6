#!/usr/bin/env bash
# ctest package.artifact: the release artifact used end to end on a machine with no compiler.
# scripts/release.sh packages this build (cpack TGZ and DEB, SHA256SUMS, a pin), then, with a PATH
# that holds no compiler, cmake or apt, scripts/install.sh installs it, the pre-commit hook and the
# GitHub Action script run the installed attnsel, and every refusal path is taken: a tampered
# artifact, a pin without this platform, a corrupt pin.
#   tests/package/artifact_test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail

src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
cli="$build/tools/attnsel/attnsel"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attnsel-artifact.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
unset ATTNSEL_GPU ATTNSEL_MATRIX ATTNSEL_GPUS ATTNSEL_PATHS ATTNSEL_RELEASE ATTNSEL_ENGINE ATTNSEL_STRICT \
      ATTNSEL_FORMAT ATTNSEL_VERSION ATTNSEL_ARGS ATTNSEL_BINARY ATTNSEL_PIN ATTNSEL_CACHE_DIR \
      ATTNSEL_SGLANG_VERSION ATTNSEL_VLLM_VERSION GITHUB_OUTPUT GITHUB_STEP_SUMMARY
export NO_COLOR=1

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
expect_eq() { [[ "$1" == "$2" ]] || fail "$3: '$1', expected '$2'"; }
expect_in() { [[ "$1" == *"$2"* ]] || fail "$3: lacks '$2'"; }
expect_not_in() { [[ "$1" != *"$2"* ]] || fail "$3: has '$2'"; }

version=$("$cli" --version | sed -n '1s/^attnsel //p')
arch=$(uname -m)
tgz="attnsel-$version-linux-$arch.tar.gz"

# 1. release.sh: a build that is not portable is refused unless the packaging alone is under test.
dist="$tmp/dist"
out=$("$src/scripts/release.sh" --no-build --build-dir "$build" --out "$dist" 2>&1)
code=$?
if grep -q '^ATTNSEL_PORTABLE:BOOL=ON$' "$build/CMakeCache.txt"; then
  expect_eq "$code" 0 "release.sh on a portable build"
else
  expect_eq "$code" 2 "release.sh on a build that is not portable"
  expect_in "$out" "is not a portable build" "release.sh says why"
  out=$("$src/scripts/release.sh" --no-build --allow-dynamic --build-dir "$build" --out "$dist" \
        --pin "file://$dist/{file}" --pin-file "$tmp/pin" 2>&1)
  code=$?
  expect_eq "$code" 0 "release.sh --allow-dynamic: $out"
fi
[[ -f "$dist/$tgz" ]] || fail "no $tgz in $dist: $(ls "$dist")"
(cd "$dist" && sha256sum -c --quiet SHA256SUMS) || fail "SHA256SUMS does not verify"
expect_in "$(cat "$tmp/pin")" "sha256 $(cut -d' ' -f1 < <(sha256sum "$dist/$tgz")) $tgz" "the pin holds the tar.gz's digest"
expect_in "$(tar -tzf "$dist/$tgz")" "attnsel-$version-linux-$arch/bin/attnsel" "the tar.gz's layout"
expect_not_in "$(tar -tzf "$dist/$tgz")" "include/attnsel" "the tar.gz is the command line only"

# 2. A machine with no compiler: a PATH of the few tools the scripts use, and attnsel's tests prove
# that no compiler, cmake, make, apt or dpkg is on it.
nobin="$tmp/nobin"
mkdir -p "$nobin"
for tool in bash sh env uname id mktemp rm cp mv mkdir chmod cat cut head tail sed grep tar gzip sha256sum \
            dirname basename xargs printf getconf sort wc; do
  p=$(type -P "$tool") || { fail "the test needs $tool"; continue; }
  ln -sf "$p" "$nobin/$tool"
done
for tool in cc c++ gcc g++ clang cmake make apt-get dpkg-query pip python3 curl wget attnsel; do
  PATH="$nobin" command -v "$tool" >/dev/null 2>&1 && fail "the no-compiler PATH has $tool"
done
run() {  # run VAR=VALUE... COMMAND...: output (stdout and stderr) in $out, status in $code
  out=$(env PATH="$nobin" HOME="$tmp/home" "$@" 2>&1)
  code=$?
}

# 3. install.sh from the pin: the binary, its man page and completions; a second run reuses them.
run "$src/scripts/install.sh" --pin "$tmp/pin" --prefix "$tmp/prefix"
expect_eq "$code" 0 "install: $out"
expect_eq "$(tail -n 1 <<<"$out")" "$tmp/prefix/bin/attnsel" "install prints the binary's path"
expect_eq "$("$tmp/prefix/bin/attnsel" --version)" "$("$cli" --version)" "the installed attnsel is the build's"
[[ -f "$tmp/prefix/share/bash-completion/completions/attnsel" ]] || fail "install: no bash completion"
run "$src/scripts/install.sh" --pin "$tmp/pin" --prefix "$tmp/prefix"
expect_eq "$code" 0 "install again"
expect_in "$out" "already installed" "install again reuses the prefix"
# The Dockerfile's way: a directory and its SHA256SUMS.
run "$src/scripts/install.sh" --from "$dist" --sha256sums "$dist/SHA256SUMS" --prefix "$tmp/prefix-sums"
expect_eq "$code" 0 "install --sha256sums: $out"

# 4. Refusals. A tampered artifact: exit 2, nothing installed.
mkdir -p "$tmp/evil"
cp "$dist/$tgz" "$tmp/evil/$tgz" && printf 'x' >>"$tmp/evil/$tgz"
run "$src/scripts/install.sh" --pin "$tmp/pin" --from "$tmp/evil" --prefix "$tmp/prefix-evil"
expect_eq "$code" 2 "a tampered artifact"
expect_in "$out" "checksum mismatch" "a tampered artifact"
[[ -e "$tmp/prefix-evil/bin/attnsel" ]] && fail "a tampered artifact was installed"
# No artifact pinned for this platform, or nothing at the URL: exit 1 (a caller may build).
grep -v '^sha256 ' "$tmp/pin" >"$tmp/pin-none"
run "$src/scripts/install.sh" --pin "$tmp/pin-none" --prefix "$tmp/prefix-none"
expect_eq "$code" 1 "no artifact pinned"
expect_in "$out" "no artifact of attnsel $version is pinned for linux-$arch" "no artifact pinned"
run "$src/scripts/install.sh" --pin "$tmp/pin" --from "$tmp/nowhere" --prefix "$tmp/prefix-none"
expect_eq "$code" 1 "nothing at the URL"
# A corrupt pin: exit 2 with its line.
printf 'version 0.1.0\nsha256 zz %s\n' "$tgz" >"$tmp/pin-bad"
run "$src/scripts/install.sh" --pin "$tmp/pin-bad" --prefix "$tmp/prefix-none"
expect_eq "$code" 2 "a corrupt pin"
expect_in "$out" "pin-bad:2: sha256 takes a 64-digit hex digest" "a corrupt pin names its line"
run "$src/scripts/install.sh" --prefix
expect_eq "$code" 2 "--prefix without a value"

# 5. The pre-commit hook with no compiler: installs once into its cache, then checks as the build's
# attnsel does.
ws="$tmp/ws"
mkdir -p "$ws"
cp "$src/tests/fixtures/check/launch.sh" "$ws/launch.sh"
want=$(cd "$ws" && "$cli" check --gpu sm90 launch.sh 2>&1)
want_code=$?
cd "$ws" || exit 1
run ATTNSEL_PIN="$tmp/pin" ATTNSEL_CACHE_DIR="$tmp/hook-cache" "$src/scripts/pre-commit-hook.sh" --gpu sm90 launch.sh
expect_eq "$code" "$want_code" "pre-commit hook exit"
expect_in "$out" "installed attnsel $version" "pre-commit hook installs"
expect_in "$out" "$want" "pre-commit hook output"
run ATTNSEL_PIN="$tmp/pin" ATTNSEL_CACHE_DIR="$tmp/hook-cache" "$src/scripts/pre-commit-hook.sh" --gpu sm90 launch.sh
expect_eq "$out" "$want" "pre-commit hook, second run: the cached binary, nothing else said"
run ATTNSEL_PIN="$tmp/pin-none" ATTNSEL_CACHE_DIR="$tmp/hook-cache2" "$src/scripts/pre-commit-hook.sh" --gpu sm90 launch.sh
expect_eq "$code" 2 "pre-commit hook without an artifact or a compiler"
expect_in "$out" "building attnsel for pre-commit" "pre-commit hook falls back to building"

# 6. The GitHub Action script with no compiler: the pinned artifact by default.
action() {  # action VAR=VALUE...
  mkdir -p "$tmp/runner"
  : >"$tmp/output"
  run RUNNER_TEMP="$tmp/runner" GITHUB_OUTPUT="$tmp/output" ATTNSEL_GPUS=sm90 ATTNSEL_PATHS=launch.sh "$@" \
      "$src/scripts/github-action.sh"
}
want=$("$cli" check --gpu sm90 --format github --files launch.sh 2>/dev/null)
action ATTNSEL_PIN="$tmp/pin"
expect_eq "$code" "$want_code" "action exit"
expect_in "$out" "installed attnsel $version" "action installs the pinned artifact"
expect_in "$out" "$want" "action annotations"
expect_in "$(cat "$tmp/output")" "exit-code=$want_code" "action outputs"
# No artifact for the runner: it builds, and here the build cannot run.
action ATTNSEL_PIN="$tmp/pin-none"
expect_eq "$code" 2 "action without an artifact or a compiler"
expect_in "$out" "no prebuilt attnsel can be used on this runner" "action says why it builds"
expect_in "$out" "building attnsel failed" "action build fallback"
# A tampered artifact is refused, not built over.
sed "s|^url .*|url file://$tmp/evil/{file}|" "$tmp/pin" >"$tmp/pin-evil"
action ATTNSEL_PIN="$tmp/pin-evil" RUNNER_TEMP="$tmp/runner-evil"
expect_eq "$code" 2 "action with a tampered artifact"
expect_in "$out" "checksum mismatch" "action with a tampered artifact"
expect_not_in "$out" "Build attnsel" "action with a tampered artifact does not build"
# args are split as a shell splits them, nothing expanded.
action ATTNSEL_PIN="$tmp/pin" ATTNSEL_FORMAT=text ATTNSEL_ARGS="--cuda '12.8' --installed \"a,b\" --model-kind \$HOME"
expect_eq "$code" 2 "action args: --model-kind \$HOME is refused as a literal"
expect_in "$out" "HOME" "action args: \$HOME reaches attnsel unexpanded"
action ATTNSEL_PIN="$tmp/pin" ATTNSEL_FORMAT=text ATTNSEL_ARGS="--cuda '12.8"
expect_eq "$code" 2 "action args: an unmatched quote"
expect_in "$out" "args is not a list of words" "action args: an unmatched quote"
action ATTNSEL_PIN="$tmp/pin" ATTNSEL_FORMAT=text ATTNSEL_ARGS="--cuda '12.8'"
expect_in "$out" "CUDA 12.8" "action args: a quoted word"
# Both engines' releases.
action ATTNSEL_PIN="$tmp/pin" ATTNSEL_FORMAT=json ATTNSEL_SGLANG_VERSION=0.5.5 ATTNSEL_VLLM_VERSION=0.15.0
expect_in "$out" 'engines/sglang/matrix-0.5.5.json' "action sglang-version"

if ((failures > 0)); then
  echo "$failures failure(s)"
  exit 1
fi
echo "release artifact: every check passed"
