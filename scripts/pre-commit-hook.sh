#!/usr/bin/env bash
# The pre-commit hook attnsel-check-from-source: runs `attnsel check ARGS... FILES...` with the
# prebuilt attnsel that scripts/attnsel.pin names (installed once per clone, checked against its
# SHA-256; pre-commit keeps the clone in its cache), and builds attnsel from the hook repository
# only where no prebuilt one is pinned for this machine or it cannot be fetched.
#   ATTNSEL_BINARY     a binary to use instead
#   ATTNSEL_CACHE_DIR  where the installed or built attnsel is kept (default: the hook repository)
#   ATTNSEL_PIN        another pin file (scripts/install.sh)
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${ATTNSEL_CACHE_DIR:-$root}
binary=${ATTNSEL_BINARY:-}
if [[ -z "$binary" ]]; then
  if [[ -x "$cache/attnsel-prebuilt/bin/attnsel" ]]; then
    binary="$cache/attnsel-prebuilt/bin/attnsel"
  elif [[ -x "$cache/build-pre-commit/tools/attnsel/attnsel" ]]; then
    binary="$cache/build-pre-commit/tools/attnsel/attnsel"
  else
    # install.sh: 0 installed, 1 none to use here (build instead), 2 refused (never built over).
    binary=$("$root/scripts/install.sh" --prefix "$cache/attnsel-prebuilt")
    case $? in
      0) ;;
      1)
        echo "attnsel: building attnsel for pre-commit (once; a few minutes)" >&2
        binary=$("$root/scripts/build-cli.sh" "$cache/build-pre-commit") || exit 2
        ;;
      *) exit 2 ;;
    esac
  fi
fi
exec "$binary" check "$@"
