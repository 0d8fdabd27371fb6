#!/usr/bin/env bash
# The pre-commit hook attnsel-check-from-source: builds attnsel from the hook repository that
# pre-commit cloned (once per clone; pre-commit keeps it in its cache) and runs
# `attnsel check ARGS... FILES...`. ATTNSEL_BINARY names a binary to use instead of building.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
binary=${ATTNSEL_BINARY:-}
if [[ -z "$binary" ]]; then
  binary="$root/build-pre-commit/tools/attnsel/attnsel"
  if [[ ! -x "$binary" ]]; then
    echo "attnsel: building attnsel for pre-commit (once; a few minutes)" >&2
    binary=$("$root/scripts/build-cli.sh" "$root/build-pre-commit")
  fi
fi
exec "$binary" check "$@"
