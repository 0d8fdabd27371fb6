#!/usr/bin/env bash
# Installs the prebuilt attnsel CLI (the portable tar.gz of scripts/release.sh) without a compiler:
# fetches the artifact for this machine, checks its SHA-256 against the pinned one, and copies the
# binary, its man page and its shell completions under a prefix. Prints the binary's path on stdout;
# everything else goes to stderr. Used by the GitHub Action, the pre-commit hook and the Dockerfile.
#
#   scripts/install.sh [--prefix DIR] [--pin FILE] [--from URL|DIR] [--sha256sums FILE]
#
#   --prefix DIR        where bin/attnsel goes (default: /usr/local as root, else ~/.local)
#   --pin FILE          the pinned release: its version, where it is published and the SHA-256 of
#                       each artifact (default: ATTNSEL_PIN, else scripts/attnsel.pin beside this script)
#   --from URL|DIR      fetch the artifact from this base URL or local directory instead of the pin's
#                       url (a mirror); the checksum still comes from the pin (or --sha256sums)
#   --sha256sums FILE   take the checksums from this SHA256SUMS file instead of the pin (the version is
#                       the one the file names), as when installing what release.sh has just built
#
# A prefix that already holds the pinned artifact (its checksum recorded at install) is reused.
#
# Exit codes:
#   0  installed (or already installed); the path of bin/attnsel is on stdout
#   1  no usable artifact: none is pinned for this OS and architecture, the download failed, or the
#      binary does not run here (an older glibc). A caller may build from source instead.
#   2  refused: bad usage, a checksum that does not match, or an archive without the CLI. Never
#      fall back to anything on this status: the artifact was not the one pinned.
set -uo pipefail

say() { printf 'attnsel install: %s\n' "$*" >&2; }
unavailable() { say "$*"; exit 1; }
refuse() { say "$*"; exit 2; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prefix="" pin=${ATTNSEL_PIN:-$here/attnsel.pin} from="" sums=""
while (($# > 0)); do
  case "$1" in
    --prefix | --pin | --from | --sha256sums)
      (($# >= 2)) || refuse "$1 needs a value"
      case "$1" in
        --prefix) prefix=$2 ;;
        --pin) pin=$2 ;;
        --from) from=$2 ;;
        --sha256sums) sums=$2 ;;
      esac
      shift 2
      ;;
    -h | --help)
      sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}" >&2
      exit 0
      ;;
    *) refuse "unknown argument '$1' (valid: --prefix DIR, --pin FILE, --from URL|DIR, --sha256sums FILE)" ;;
  esac
done
if [[ -z "$prefix" ]]; then
  if [[ $(id -u) -eq 0 ]]; then prefix=/usr/local; else prefix=${HOME:?HOME is not set; pass --prefix}/.local; fi
fi

# The artifact this machine takes: Linux only (the binary links glibc), named by `uname -m`.
[[ "$(uname -s)" == Linux ]] || unavailable "prebuilt artifacts are for Linux only, this is $(uname -s)"
arch=$(uname -m)

# The version and the checksums. The pin is lines of `version V`, `url TEMPLATE` ({version} and
# {file} are filled in) and `sha256 HEX FILE`; a SHA256SUMS file is `HEX  FILE` lines.
version="" url=""
declare -A sha=()
if [[ -n "$sums" ]]; then
  [[ -f "$sums" && -r "$sums" ]] || refuse "cannot read the checksum file '$sums'"
  while read -r hex file rest; do
    [[ -z "$hex" || "$hex" == \#* ]] && continue
    [[ "$hex" =~ ^[0-9a-f]{64}$ && -n "$file" && -z "$rest" ]] || refuse "$sums: a line is not 'SHA256  FILE'"
    sha[${file#\*}]=$hex
    if [[ "$file" =~ ^attnsel-([0-9][0-9A-Za-z.+~-]*)-linux-"$arch"\.tar\.gz$ ]]; then version=${BASH_REMATCH[1]}; fi
  done <"$sums"
  [[ -n "$version" ]] || unavailable "$sums lists no attnsel-VERSION-linux-$arch.tar.gz"
else
  [[ -f "$pin" && -r "$pin" ]] || refuse "cannot read the pin file '$pin'"
  lineno=0
  while read -r key a b rest; do
    lineno=$((lineno + 1))
    case "$key" in
      "" | \#*) ;;
      version) [[ "$a" =~ ^[0-9][0-9A-Za-z.+~-]*$ && -z "$b" ]] || refuse "$pin:$lineno: version is one release, e.g. 0.1.0"
               version=$a ;;
      url) [[ -n "$a" && -z "$b" ]] || refuse "$pin:$lineno: url is one URL template"
           url=$a ;;
      sha256) [[ "$a" =~ ^[0-9a-f]{64}$ && -n "$b" && -z "$rest" ]] || refuse "$pin:$lineno: sha256 takes a 64-digit hex digest and a file name"
              sha[$b]=$a ;;
      *) refuse "$pin:$lineno: unknown key '$key' (valid: version, url, sha256)" ;;
    esac
  done <"$pin"
  [[ -n "$version" ]] || refuse "$pin names no version"
fi
file="attnsel-$version-linux-$arch.tar.gz"
want=${sha[$file]:-}
if [[ -z "$want" ]]; then
  listed="none"
  ((${#sha[@]} > 0)) && listed="${!sha[*]}"
  unavailable "no artifact of attnsel $version is pinned for linux-$arch (pinned: $listed)"
fi

# Already there: the stamp records the checksum the prefix was installed from.
binary="$prefix/bin/attnsel"
stamp="$prefix/share/attnsel/installed-artifact"
if [[ -x "$binary" && -f "$stamp" && "$(cat "$stamp" 2>/dev/null)" == "$want  $file" ]]; then
  say "attnsel $version is already installed in $prefix"
  printf '%s\n' "$binary"
  exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/attnsel-install.XXXXXX") || refuse "cannot create a temporary directory"
trap 'rm -rf "$work"' EXIT

# Fetch: a local directory or file:// URL is copied; http(s) goes through curl or wget (https only
# for a remote host, no redirect to plain http).
base=${from:-}
if [[ -z "$base" ]]; then
  [[ -n "$url" ]] || unavailable "the pin names no url to fetch $file from"
  source_url=${url//\{version\}/$version}
  source_url=${source_url//\{file\}/$file}
else
  source_url="${base%/}/$file"
fi
case "$source_url" in
  file://*) source_path=${source_url#file://} ;;
  http://* | https://*) source_path="" ;;
  *) source_path=$source_url ;;
esac
if [[ -n "$source_path" ]]; then
  [[ -f "$source_path" ]] || unavailable "no $file at $source_path"
  cp -- "$source_path" "$work/$file" || unavailable "cannot copy $source_path"
elif command -v curl >/dev/null 2>&1; then
  say "fetching $source_url"
  curl -fsSL --proto '=https,http' --proto-redir '=https' --retry 2 -o "$work/$file" -- "$source_url" ||
    unavailable "cannot download $source_url"
elif command -v wget >/dev/null 2>&1; then
  say "fetching $source_url"
  wget -q -O "$work/$file" -- "$source_url" || unavailable "cannot download $source_url"
else
  unavailable "neither curl nor wget is installed to download $source_url"
fi

# The checksum, before anything in the archive is opened.
if command -v sha256sum >/dev/null 2>&1; then
  got=$(sha256sum -- "$work/$file" | cut -d' ' -f1)
elif command -v shasum >/dev/null 2>&1; then
  got=$(shasum -a 256 -- "$work/$file" | cut -d' ' -f1)
else
  refuse "neither sha256sum nor shasum is installed: the artifact cannot be verified"
fi
[[ "$got" == "$want" ]] || refuse "checksum mismatch for $file: got $got, pinned $want; nothing was installed"

# Unpack: the archive's one top directory holds bin/attnsel (cpack's layout); no absolute or
# parent paths, no links out of it.
mkdir "$work/x" || refuse "cannot create $work/x"
listing=$(tar -tzf "$work/$file" 2>/dev/null) || refuse "$file is not a gzip-compressed tar archive"
if grep -qE '(^/|(^|/)\.\.(/|$))' <<<"$listing"; then refuse "$file holds an absolute or parent path"; fi
tar -xzf "$work/$file" -C "$work/x" --no-same-owner --no-same-permissions 2>/dev/null || refuse "cannot unpack $file"
top="$work/x/attnsel-$version-linux-$arch"
[[ -f "$top/bin/attnsel" && ! -L "$top/bin/attnsel" ]] || refuse "$file holds no attnsel-$version-linux-$arch/bin/attnsel"
chmod 755 "$top/bin/attnsel"

# It must run here: a glibc older than the build machine's refuses to load it.
first=$("$top/bin/attnsel" --version 2>/dev/null | head -n 1)
[[ "$first" == "attnsel $version" ]] || unavailable "the prebuilt attnsel does not run on this machine ('$first'; an older glibc?)"

# Install: the binary, then the man page and completions where they are in the archive.
install_file() {  # install_file MODE SOURCE DEST
  mkdir -p "$(dirname "$3")" && cp -- "$2" "$3.tmp.$$" && chmod "$1" "$3.tmp.$$" && mv -f -- "$3.tmp.$$" "$3"
}
install_file 755 "$top/bin/attnsel" "$binary" || refuse "cannot write $binary"
for part in share/man/man1/attnsel.1.gz share/bash-completion/completions/attnsel \
            share/zsh/vendor-completions/_attnsel share/fish/vendor_completions.d/attnsel.fish; do
  if [[ -f "$top/$part" && ! -L "$top/$part" ]]; then
    install_file 644 "$top/$part" "$prefix/$part" || refuse "cannot write $prefix/$part"
  fi
done
mkdir -p "$(dirname "$stamp")" && printf '%s  %s\n' "$want" "$file" >"$stamp" || refuse "cannot write $stamp"
say "installed attnsel $version ($file, sha256 $want) in $prefix"
printf '%s\n' "$binary"
