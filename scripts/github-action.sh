#!/usr/bin/env bash
# The GitHub Action of action.yml: `attnsel check` on the paths given, as annotations (and the
# Markdown report in the step summary), with the totals as step outputs. Runnable outside GitHub:
# everything comes from the environment.
#
#   ATTNSEL_GPUS      target GPUs, comma-separated (required): sm90,sm100, H100, MI300X ...
#   ATTNSEL_PATHS     files, directories and globs (** included), separated by spaces or newlines; default .
#   ATTNSEL_RELEASE   the release of ATTNSEL_ENGINE's commands (--sglang-version, --vllm-version); default: what the files pin, else the newest
#   ATTNSEL_ENGINE    the engine ATTNSEL_RELEASE is a release of: sglang (default) or vllm
#   ATTNSEL_STRICT    true: warnings fail too (--strict)
#   ATTNSEL_FORMAT    github (default), text, markdown or json: what the log shows
#   ATTNSEL_SGLANG_VERSION, ATTNSEL_VLLM_VERSION
#                     the release of each engine's commands (--sglang-version, --vllm-version), for a
#                     repository with commands of both; ATTNSEL_RELEASE wins for ATTNSEL_ENGINE's
#   ATTNSEL_BINARY    an attnsel binary to run
#   ATTNSEL_VERSION   without ATTNSEL_BINARY: "pinned" (default) installs the prebuilt release that
#                     scripts/attnsel.pin names (ATTNSEL_PIN: another pin file), checked against its
#                     SHA-256, and builds only where none is pinned for the runner or it cannot be
#                     fetched; "build" builds the action's own checkout with cmake (apt-get installs
#                     what is missing); "path" runs the attnsel on PATH
#   ATTNSEL_ARGS      more arguments for attnsel check (--cuda 12.8, --unknown-model error ...): words
#                     split as a shell would, quotes kept together ('--installed "a,b"'), nothing expanded
#   GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, RUNNER_TEMP: as GitHub sets them; unset, they are not written
#
# Outputs (to GITHUB_OUTPUT): exit-code, commands, failing, errors, warnings, notes, skipped, report
# (the JSON report's path). Exit status: attnsel check's (0 clean, 1 a failing command, 2 broken input).
set -uo pipefail

die() {
  echo "::error title=attnsel action::$*"
  exit 2
}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
gpus=${ATTNSEL_GPUS:-}
[[ -n "$gpus" ]] || die "the input gpus is required (for example: sm90,sm100)"
format=${ATTNSEL_FORMAT:-github}
case "$format" in github | text | markdown | json) ;; *) die "format must be github, text, markdown or json, not '$format'" ;; esac
case "${ATTNSEL_STRICT:-false}" in true | false | "") ;; *) die "strict must be true or false, not '${ATTNSEL_STRICT}'" ;; esac
case "${ATTNSEL_ENGINE:-sglang}" in
  sglang | "") release_flag=--sglang-version ;;
  vllm) release_flag=--vllm-version ;;
  *) die "engine is sglang or vllm (the engine whose commands the release is for), not '${ATTNSEL_ENGINE}'" ;;
esac

# The binary.
attnsel=${ATTNSEL_BINARY:-}
if [[ -n "$attnsel" ]]; then
  [[ -x "$attnsel" ]] || die "binary '$attnsel' is not an executable file"
else
  build() {
    echo "::group::Build attnsel"
    attnsel=$(ATTNSEL_APT_SUDO=${ATTNSEL_APT_SUDO:-1} "$root/scripts/build-cli.sh" "${RUNNER_TEMP:-$root}/attnsel-build")
    local built=$?
    echo "::endgroup::"
    ((built == 0)) || die "building attnsel failed (see the group above)"
  }
  case "${ATTNSEL_VERSION:-pinned}" in
    pinned)
      # install.sh: 0 installed, 1 none to use here (build instead), 2 refused (a checksum that does
      # not match is never papered over by a build).
      echo "::group::Install attnsel"
      attnsel=$("$root/scripts/install.sh" --prefix "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/attnsel-pinned")
      installed=$?
      echo "::endgroup::"
      case $installed in
        0) ;;
        1) echo "attnsel: no prebuilt attnsel can be used on this runner (see the group above); building it" >&2
           build ;;
        *) die "installing the pinned attnsel was refused (see the group above)" ;;
      esac
      ;;
    path)
      attnsel=$(command -v attnsel) || die "version is 'path' but there is no attnsel on PATH"
      ;;
    build) build ;;
    *) die "version must be 'pinned', 'build' or 'path' (or give binary), not '${ATTNSEL_VERSION}'" ;;
  esac
fi

# The paths: globs expanded here (** too); one that matches nothing is dropped, and when nothing
# is left attnsel exits 2, so a mistyped path does not pass silently.
shopt -s nullglob globstar
paths=()
read -r -d '' -a patterns <<<"${ATTNSEL_PATHS:-.}"
for pattern in "${patterns[@]}"; do
  # shellcheck disable=SC2206  # expanding the glob is the point
  matched=($pattern)
  ((${#matched[@]} == 0)) && echo "attnsel: '$pattern' matches no file" >&2
  paths+=("${matched[@]}")
done
shopt -u nullglob globstar

args=(check --gpu "$gpus")
[[ "${ATTNSEL_STRICT:-false}" == true ]] && args+=(--strict)
# Each engine's release; ATTNSEL_RELEASE is ATTNSEL_ENGINE's and wins over that engine's own input.
sglang_release=${ATTNSEL_SGLANG_VERSION:-} vllm_release=${ATTNSEL_VLLM_VERSION:-}
if [[ -n "${ATTNSEL_RELEASE:-}" ]]; then
  if [[ "$release_flag" == --sglang-version ]]; then sglang_release=$ATTNSEL_RELEASE; else vllm_release=$ATTNSEL_RELEASE; fi
fi
[[ -n "$sglang_release" ]] && args+=(--sglang-version "$sglang_release")
[[ -n "$vllm_release" ]] && args+=(--vllm-version "$vllm_release")
if [[ -n "${ATTNSEL_ARGS:-}" ]]; then
  # Words as a shell splits them, without running anything: xargs knows quotes and backslashes and
  # hands each word to printf, NUL-terminated. An unmatched quote stops the step.
  words="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/attnsel-args-$$"
  printf '%s\n' "$ATTNSEL_ARGS" | xargs -r printf '%s\0' >"$words" 2>/dev/null ||
    { rm -f "$words"; die "args is not a list of words (an unmatched quote?): $(printf '%q' "$ATTNSEL_ARGS")"; }
  mapfile -d '' extra <"$words"
  rm -f "$words"
  args+=("${extra[@]}")
fi

# One run: the log's annotations (GITHUB_STEP_SUMMARY, when set, gets the Markdown report from
# attnsel itself) and the JSON report the totals come from (--report). The paths come from the pull
# request: they go after --files, where no name is an option (a file named --help or
# --matrix=evil.json is a file), and they are the last arguments.
report="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/attnsel-check-$$.json"
rm -f "$report"
"$attnsel" "${args[@]}" --format "$format" --report "$report" --files "${paths[@]}"
code=$?

summary_value() {  # the number of KEY in the report's summary object (attnsel writes it: two-space indents)
  sed -n '/^  "summary": {/,/^  }/p' "$report" | sed -n "s/^    \"$1\": \\([0-9][0-9]*\\),\\{0,1\\}\$/\\1/p"
}
if [[ -n "${GITHUB_OUTPUT:-}" ]]; then
  # A failed write of the outputs fails the step: a later step must not read missing numbers as zero.
  {
    echo "exit-code=$code"
    echo "commands=$(summary_value commands)"
    echo "failing=$(summary_value commands_failing)"
    echo "errors=$(summary_value errors)"
    echo "warnings=$(summary_value warnings)"
    echo "notes=$(summary_value notes)"
    echo "skipped=$(summary_value skipped_blocks)"
    echo "report=$report"
  } >>"$GITHUB_OUTPUT" || {
    echo "::error title=attnsel action::writing GITHUB_OUTPUT failed" >&2
    exit 2
  }
fi
# A run the JSON report contradicts (it could not be written, or its exit status differs) fails.
if [[ -z "$(summary_value commands)" ]] && ((code == 0)); then
  echo "::error title=attnsel action::the JSON report could not be written; the check is not trusted" >&2
  exit 2
fi
exit "$code"
