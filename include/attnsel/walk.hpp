// The paths `attnsel check` is given, made into the files it reads: directories walked in name
// order, the kinds of files it reads recognised by name and first line (recognised_format), and
// everything passed over counted with the reason, never silently. The CLI, the C API
// (attnsel_check_path) and the Python module (attnsel.check(path)) all walk with this.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "attnsel/error.hpp"
#include "attnsel/export.hpp"
#include "attnsel/launch.hpp"

namespace attnsel {

struct WalkOptions {
  // Globs (gitignore syntax: `*`, `?`, `[...]`, `**`, a trailing `/` for directories only, a
  // leading or inner `/` to anchor it at the walked directory; otherwise it matches a name at any
  // depth), matched against a path relative to the walked directory and against the path as
  // shown. `exclude`: passed over, whatever it is, a path named on the command line too.
  // `include`: walked where a default rule would pass over it (a folder of the skip list, a file
  // of another kind, a .gitignore'd path); `build` or `build/**` opens a skipped folder.
  // `exclude` wins over `include`.
  std::vector<std::string> exclude, include;
  // .gitignore files in the walked directory and below (not above it): what they ignore is
  // passed over, counted with the file and line of the pattern.
  bool gitignore = true;
  // A tree deeper than this or with more entries is not followed further (a problem says so).
  int max_depth = 64;
  std::size_t max_entries = 1000000;
};

// Why a walk passed over a path.
enum class SkipReason {
  skip_list,   // a folder of the default skip list (.git, node_modules, vendor, build, dist ...)
  excluded,    // --exclude
  gitignored,  // a .gitignore pattern
  other_kind,  // a file of a kind check does not read (source code, data, a perl script ...)
  symlink,     // a symbolic link: never followed
  special,     // not a regular file or a directory (a FIFO, a socket, a device)
};
ATTNSEL_API std::string_view name_of(SkipReason r);

struct SkippedPath {
  std::string path;        // as it would be shown: the walked directory joined with the names
  bool directory = false;  // a folder (its contents are not looked at, nor counted)
  SkipReason reason = SkipReason::other_kind;
  std::string detail;      // for people: "a build output folder", "--exclude 'docs/**'", ".gitignore:3: *.log"
};

struct WalkResult {
  // The files to read, in order: each input in turn, a directory's files in name order (byte
  // order of the whole path). A path named twice, or reached twice, is in it once.
  std::vector<std::string> files;
  // Everything passed over, in the order met; a skipped folder is one entry.
  std::vector<SkippedPath> skipped;
  // What could not be walked (io_error, where = the path): a directory that cannot be read, a
  // tree past the depth or entry budget. The files found are still in `files`.
  std::vector<Error> problems;
  // Warnings that do not stop the walk: a .gitignore too large or with too many patterns (the
  // first ones are used).
  std::vector<std::string> warnings;
  // The directories named in the inputs that gave no file (each with its own skipped paths).
  std::vector<std::string> empty_directories;

  std::size_t skipped_directories() const;
  std::size_t skipped_files() const;
};

// Walks `inputs` (files and directories; "-" is standard input and kept as it is). A file named
// is always in `files` (it is read as detect_input_format says, unless --exclude matches it); a
// directory named is walked even when its name is on the skip list (`attnsel check infra/build`).
// A path that does not exist is kept in `files`: reading it reports it.
ATTNSEL_API WalkResult walk_paths(const std::vector<std::string>& inputs, const WalkOptions& options = {});

// "2 folders and 31 files", "1 file": what a walk passed over, for a summary line.
ATTNSEL_API std::string describe_skipped(const WalkResult& walk);

// The message of a walk that found no file to read (its empty_directories say where): what was
// passed over (a few examples with why) and how to read it: name the folder, or --include GLOB.
// "" when a file was found.
ATTNSEL_API std::string nothing_read_message(const WalkResult& walk);

// Why a walk passes over a folder of this name unless told otherwise ("" when it walks it):
// version control (.git, .hg, .svn), dependencies (node_modules, vendor, third_party, 3rdparty,
// external, site-packages, virtual environments), caches and build outputs (build, dist, .cache,
// __pycache__, .tox, .mypy_cache).
ATTNSEL_API std::string_view skipped_folder_reason(std::string_view name);

// Whether `path` (relative, '/'-separated) matches `pattern` in gitignore syntax (see WalkOptions;
// no `!`). `directory`: whether the path is a folder (a trailing `/` in the pattern needs one).
ATTNSEL_API bool glob_match(std::string_view pattern, std::string_view path, bool directory);

}  // namespace attnsel
