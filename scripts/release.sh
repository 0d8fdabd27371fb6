#!/usr/bin/env bash
# Builds the release artifacts of the attnsel CLI: the portable binary (glibc its only runtime
# dependency) as attnsel-<version>-linux-<arch>.tar.gz (`cpack -G TGZ`: bin/attnsel, the man page,
# completions, data) and as a .deb (`cpack -G DEB`: with the headers, library and CMake package),
# and SHA256SUMS for them. With --pin, writes the pin file that scripts/install.sh, the GitHub Action
# and the pre-commit hook install from: commit it with the release's tag.
#
#   scripts/release.sh [--build-dir DIR] [--out DIR] [--no-build] [--pin URL-TEMPLATE] [--pin-file FILE]
#
#   --build-dir DIR      the build tree (default: build-release); configured with ATTNSEL_PORTABLE=ON
#   --out DIR            where the artifacts and SHA256SUMS go (default: dist)
#   --no-build           package DIR as it is (it must be a portable build, unless --allow-dynamic)
#   --allow-dynamic      package a build that links more than glibc (for tests of the packaging only)
#   --pin URL-TEMPLATE   write the pin: this version, the URL the artifacts are published at
#                        ({version} and {file} are filled in) and the tar.gz's SHA-256
#   --pin-file FILE      where --pin writes (default: scripts/attnsel.pin)
#
# Installs what the build needs with apt-get when run as root (scripts/build-cli.sh's list).
# Exit codes: 0 built; 2 bad usage, a failed build or packaging, or a binary that is not portable.
set -euo pipefail

say() { printf 'attnsel release: %s\n' "$*" >&2; }
die() { say "$*"; exit 2; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=$root/build-release out=$root/dist build=1 allow_dynamic=0 pin_url="" pin_file=$root/scripts/attnsel.pin
while (($# > 0)); do
  case "$1" in
    --build-dir | --out | --pin | --pin-file)
      (($# >= 2)) || die "$1 needs a value"
      case "$1" in
        --build-dir) build_dir=$2 ;;
        --out) out=$2 ;;
        --pin) pin_url=$2 ;;
        --pin-file) pin_file=$2 ;;
      esac
      shift 2
      ;;
    --no-build) build=0; shift ;;
    --allow-dynamic) allow_dynamic=1; shift ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}" >&2; exit 0 ;;
    *) die "unknown argument '$1' (valid: --build-dir, --out, --no-build, --allow-dynamic, --pin, --pin-file)" ;;
  esac
done
[[ -z "$pin_url" || "$pin_url" == *"{file}"* ]] || die "--pin takes a URL template with {file} (and {version}), e.g. https://github.com/OWNER/attnsel/releases/download/v{version}/{file}"

if ((build)); then
  # build-cli.sh installs the build dependencies; the release tree also installs (for cpack).
  "$root/scripts/build-cli.sh" "$build_dir" >/dev/null || die "the build failed"
  cmake -S "$root" -B "$build_dir" -DATTNSEL_INSTALL=ON -DATTNSEL_BUILD_PYTHON=OFF >&2 || die "cmake failed"
  cmake --build "$build_dir" -j"$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)" >&2 || die "the build failed"
fi
cache="$build_dir/CMakeCache.txt"
[[ -f "$cache" ]] || die "$build_dir is not a configured build tree"
[[ -f "$build_dir/CPackConfig.cmake" ]] || die "$build_dir has no CPackConfig.cmake (configure with -DATTNSEL_INSTALL=ON)"
binary="$build_dir/tools/attnsel/attnsel"
[[ -x "$binary" ]] || die "$binary is not built"

# Portable: linked against glibc's libraries only (what ATTNSEL_PORTABLE promises).
if ((!allow_dynamic)); then
  grep -q '^ATTNSEL_PORTABLE:BOOL=ON$' "$cache" || die "$build_dir is not a portable build (-DATTNSEL_PORTABLE=ON)"
  command -v readelf >/dev/null 2>&1 || die "readelf (binutils) is needed to check the binary's libraries"
  needed=$(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  for lib in $needed; do
    case "$lib" in
      libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | ld-linux*.so.*) ;;
      *) die "$binary needs $lib: not a portable binary (only glibc's libraries may be needed)" ;;
    esac
  done
fi

version=$("$binary" --version | sed -n '1s/^attnsel //p')
[[ -n "$version" ]] || die "$binary --version names no version"
mkdir -p "$out"
out=$(cd "$out" && pwd)
staging=$(mktemp -d "${TMPDIR:-/tmp}/attnsel-cpack.XXXXXX")
trap 'rm -rf "$staging"' EXIT
generators="TGZ"
command -v dpkg-deb >/dev/null 2>&1 && generators="TGZ;DEB"
(cd "$build_dir" && cpack -G "$generators" --config CPackConfig.cmake -B "$staging" >&2) || die "cpack failed"
shopt -s nullglob
artifacts=("$staging"/*.tar.gz "$staging"/*.deb)
shopt -u nullglob
((${#artifacts[@]} > 0)) || die "cpack made no artifact"
names=()
for a in "${artifacts[@]}"; do
  mv -f -- "$a" "$out/" && names+=("$(basename "$a")")
done
tgz="attnsel-$version-linux-$(uname -m).tar.gz"
[[ -f "$out/$tgz" ]] || die "cpack made no $tgz (made: ${names[*]})"
(cd "$out" && sha256sum -- "${names[@]}" >SHA256SUMS) || die "cannot write $out/SHA256SUMS"
say "built ${names[*]} and SHA256SUMS in $out"

if [[ -n "$pin_url" ]]; then
  {
    printf '# The attnsel release the GitHub Action and the pre-commit hook install (scripts/install.sh),\n'
    printf '# written by scripts/release.sh --pin. A tar.gz listed here is fetched, checked against its\n'
    printf '# SHA-256 and used; a platform without one builds attnsel from this checkout instead.\n'
    printf 'version %s\n' "$version"
    printf 'url %s\n' "$pin_url"
    (cd "$out" && sha256sum -- attnsel-"$version"-linux-*.tar.gz) | while read -r hex file; do
      printf 'sha256 %s %s\n' "$hex" "$file"
    done
  } >"$pin_file.tmp" && mv -f "$pin_file.tmp" "$pin_file" || die "cannot write $pin_file"
  say "pinned attnsel $version in $pin_file"
fi
printf '%s\n' "$out"
