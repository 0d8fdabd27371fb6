// The walk of the paths `attnsel check` is given: what it reads, what it passes over and why.
#include "attnsel/walk.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <unordered_set>

#include <fmt/format.h>

#include "check/launch_internal.hpp"
#include "core/read_file.hpp"

namespace attnsel {

namespace fs = std::filesystem;
using launch_detail::basename;
using launch_detail::ends_with;
using launch_detail::lower;
using launch_detail::npos;
using launch_detail::starts_with;

std::string_view name_of(SkipReason r) {
  switch (r) {
    case SkipReason::skip_list: return "skip-list";
    case SkipReason::excluded: return "excluded";
    case SkipReason::gitignored: return "gitignored";
    case SkipReason::other_kind: return "other-kind";
    case SkipReason::symlink: return "symlink";
    case SkipReason::special: return "special";
  }
  return "other-kind";
}

std::size_t WalkResult::skipped_directories() const {
  return static_cast<std::size_t>(
      std::count_if(skipped.begin(), skipped.end(), [](const SkippedPath& s) { return s.directory; }));
}

std::size_t WalkResult::skipped_files() const { return skipped.size() - skipped_directories(); }

std::string_view skipped_folder_reason(std::string_view name) {
  struct Folder {
    std::string_view name, why;
  };
  static constexpr Folder kFolders[] = {
      {".git", "version control"},        {".hg", "version control"},          {".svn", "version control"},
      {"node_modules", "dependencies"},   {"vendor", "vendored code"},         {"third_party", "vendored code"},
      {"3rdparty", "vendored code"},      {"external", "vendored code"},       {".venv", "a Python environment"},
      {"venv", "a Python environment"},   {"site-packages", "a Python environment"},
      {"__pycache__", "a cache"},         {".tox", "a cache"},                 {".mypy_cache", "a cache"},
      {".cache", "a cache"},              {"build", "build output"},           {"dist", "build output"},
  };
  for (const Folder& f : kFolders)
    if (f.name == name) return f.why;
  return {};
}

// ---- globs ----

namespace {

// One path segment against one pattern segment: `*`, `?`, `[...]` (`!` or `^` negates, ranges),
// `\x` a literal x. Greedy with one backtrack point: linear in practice, never exponential.
bool segment_match(std::string_view p, std::string_view s) {
  // The length of the pattern element at p[i] and whether it matches c.
  auto element = [&](std::size_t i, char c, std::size_t& len) -> bool {
    if (p[i] == '\\' && i + 1 < p.size()) {
      len = 2;
      return p[i + 1] == c;
    }
    if (p[i] == '?') {
      len = 1;
      return true;
    }
    if (p[i] == '[') {
      std::size_t j = i + 1;
      const bool negate = j < p.size() && (p[j] == '!' || p[j] == '^');
      if (negate) ++j;
      bool matched = false;
      const std::size_t first = j;
      while (j < p.size() && (p[j] != ']' || j == first)) {
        char lo = p[j];
        if (lo == '\\' && j + 1 < p.size()) lo = p[++j];
        char hi = lo;
        if (j + 2 < p.size() && p[j + 1] == '-' && p[j + 2] != ']') {
          hi = p[j + 2];
          j += 2;
        }
        matched = matched || (c >= lo && c <= hi);
        ++j;
      }
      if (j < p.size()) {
        len = j + 1 - i;
        return matched != negate;
      }
      // No closing bracket: a literal '['.
    }
    len = 1;
    return p[i] == c;
  };
  std::size_t pi = 0, si = 0;
  std::size_t star = npos, star_s = 0;
  while (si < s.size()) {
    if (pi < p.size() && p[pi] == '*') {
      while (pi < p.size() && p[pi] == '*') ++pi;
      star = pi;
      star_s = si;
      continue;
    }
    std::size_t len = 0;
    if (pi < p.size() && element(pi, s[si], len)) {
      pi += len;
      ++si;
      continue;
    }
    if (star == npos) return false;
    pi = star;
    si = ++star_s;
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

std::vector<std::string_view> split_segments(std::string_view s) {
  std::vector<std::string_view> out;
  while (!s.empty()) {
    const std::size_t slash = s.find('/');
    const std::string_view part = s.substr(0, slash);
    if (!part.empty()) out.push_back(part);
    if (slash == npos) break;
    s = s.substr(slash + 1);
  }
  return out;
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view path, bool directory) {
  bool anchored = false;
  if (starts_with(pattern, "/")) {
    anchored = true;
    pattern.remove_prefix(1);
  }
  if (ends_with(pattern, "/")) {
    if (!directory) return false;
    while (ends_with(pattern, "/")) pattern.remove_suffix(1);
  }
  if (pattern.empty()) return false;
  anchored = anchored || pattern.find('/') != npos;
  const std::vector<std::string_view> segments = split_segments(path);
  if (segments.empty()) return false;
  if (!anchored) return segment_match(pattern, segments.back());
  // `**` is zero or more whole segments; the greedy algorithm again, over segments.
  const std::vector<std::string_view> parts = split_segments(pattern);
  std::size_t pi = 0, si = 0;
  std::size_t star = npos, star_s = 0;
  while (si < segments.size()) {
    if (pi < parts.size() && parts[pi] == "**") {
      while (pi < parts.size() && parts[pi] == "**") ++pi;
      star = pi;
      star_s = si;
      continue;
    }
    if (pi < parts.size() && segment_match(parts[pi], segments[si])) {
      ++pi;
      ++si;
      continue;
    }
    if (star == npos) return false;
    pi = star;
    si = ++star_s;
  }
  while (pi < parts.size() && parts[pi] == "**") ++pi;
  return pi == parts.size();
}

// ---- .gitignore ----

namespace {

constexpr std::size_t kMaxIgnoreBytes = 1u << 20;
constexpr std::size_t kMaxIgnoreRules = 4096;
constexpr std::size_t kMaxPatternBytes = 4096;

struct IgnoreRule {
  std::string pattern;  // without its `!`
  bool negate = false;
  int line = 0;
};

struct IgnoreFile {
  std::string base;   // the folder it is in, relative to the walked directory ("" at the top)
  std::string shown;  // its path as shown
  std::vector<IgnoreRule> rules;
};

// gitignore(5): blank lines and # comments skipped, trailing blanks dropped unless escaped, `!`
// negates, `\#` and `\!` are literal.
IgnoreFile parse_gitignore(std::string_view text, std::string base, std::string shown, std::vector<std::string>& warnings) {
  IgnoreFile f{std::move(base), std::move(shown), {}};
  int n = 0;
  for (const launch_detail::PhysicalLine& l : launch_detail::split_lines(text)) {
    ++n;
    std::string_view t = l.text;
    while (!t.empty() && (t.back() == ' ' || t.back() == '\t') && !(t.size() >= 2 && t[t.size() - 2] == '\\'))
      t.remove_suffix(1);
    if (t.empty() || t.front() == '#') continue;
    IgnoreRule r;
    r.line = n;
    if (t.front() == '!') {
      r.negate = true;
      t.remove_prefix(1);
    } else if (starts_with(t, "\\!") || starts_with(t, "\\#")) {
      t.remove_prefix(1);
    }
    if (t.empty()) continue;
    if (t.size() > kMaxPatternBytes) {
      warnings.push_back(fmt::format("{}:{}: a pattern longer than {} bytes is not used", f.shown, n, kMaxPatternBytes));
      continue;
    }
    if (f.rules.size() >= kMaxIgnoreRules) {
      warnings.push_back(fmt::format("{}: only its first {} patterns are used", f.shown, kMaxIgnoreRules));
      break;
    }
    r.pattern = std::string(t);
    f.rules.push_back(std::move(r));
  }
  return f;
}

// The rule of the .gitignore files (outermost first) that decides `rel`, if one does and ignores it.
const IgnoreRule* ignored_by(const std::vector<const IgnoreFile*>& chain, std::string_view rel, bool directory,
                             const IgnoreFile** file) {
  const IgnoreRule* last = nullptr;
  for (const IgnoreFile* f : chain) {
    std::string_view sub = rel;
    if (!f->base.empty()) {
      if (!starts_with(rel, f->base) || rel.size() <= f->base.size() || rel[f->base.size()] != '/') continue;
      sub = rel.substr(f->base.size() + 1);
    }
    for (const IgnoreRule& r : f->rules) {
      if (glob_match(r.pattern, sub, directory)) {
        last = &r;
        *file = f;
      }
    }
  }
  return last && !last->negate ? last : nullptr;
}

// ---- the walk ----

// The program of a `#!` line ("perl"), for the reason a file is passed over.
std::string shebang_of(std::string_view head) {
  if (!starts_with(head, "#!")) return {};
  std::string_view line = head.substr(2, head.find('\n') == npos ? npos : head.find('\n') - 2);
  line = launch_detail::trim(line);
  std::string_view program = line.substr(0, std::min(line.find_first_of(" \t"), line.size()));
  if (basename(program) == "env") {
    line = launch_detail::ltrim(line.substr(program.size()));
    program = line.substr(0, std::min(line.find_first_of(" \t"), line.size()));
  }
  return std::string(basename(program));
}

// The first bytes of a regular file (never blocks, never follows a link); "" when unreadable.
std::string head_of(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
  if (fd < 0) return {};
  char buffer[256];
  const ssize_t n = ::read(fd, buffer, sizeof buffer);
  ::close(fd);
  return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
}

std::string quoted_glob(const std::string& g) { return "'" + g + "'"; }

class Walker {
 public:
  Walker(const WalkOptions& options, WalkResult& result) : o_(options), r_(result) {}

  // A path the user named: read (or walked) unless --exclude says otherwise.
  void input(const std::string& in) {
    if (in == "-") {
      add(in);
      return;
    }
    std::error_code ec;
    const bool directory = fs::is_directory(in, ec);
    const std::string shown = fs::path(in).lexically_normal().generic_string();
    if (const std::string* g = matching(o_.exclude, shown, shown, directory)) {
      r_.skipped.push_back(SkippedPath{in, directory, SkipReason::excluded, "--exclude " + quoted_glob(*g)});
      return;
    }
    if (!directory) {
      add(in);
      return;
    }
    walk_root(in);
  }

 private:
  void add(const std::string& path) {
    const std::string key = path == "-" ? path : fs::path(path).lexically_normal().string();
    if (seen_.insert(key).second) r_.files.push_back(path);
  }

  // The first glob of `globs` that matches the path, relative or as shown; null for none.
  const std::string* matching(const std::vector<std::string>& globs, std::string_view rel, std::string_view shown,
                              bool directory) const {
    for (const std::string& g : globs) {
      if (glob_match(g, rel, directory) || (shown != rel && glob_match(g, shown, directory))) return &g;
      // `build/**` opens the folder build too.
      if (directory && ends_with(g, "/**")) {
        const std::string_view folder = std::string_view(g).substr(0, g.size() - 3);
        if (glob_match(folder, rel, true) || (shown != rel && glob_match(folder, shown, true))) return &g;
      }
    }
    return nullptr;
  }

  void walk_root(const std::string& root) {
    root_ = root;
    found_.clear();
    stopped_ = false;
    too_deep_ = false;
    entries_ = 0;
    const std::size_t skipped_before = r_.skipped.size();
    ignore_files_.clear();
    walk_dir(fs::path(root), "", 0, {});
    if (too_deep_)
      r_.problems.push_back(Error{ErrorCode::io_error,
                                  fmt::format("directories nested deeper than {} levels were not walked", o_.max_depth),
                                  root, {}, {}});
    std::sort(found_.begin(), found_.end());
    std::sort(r_.skipped.begin() + static_cast<std::ptrdiff_t>(skipped_before), r_.skipped.end(),
              [](const SkippedPath& a, const SkippedPath& b) { return a.path < b.path; });
    if (found_.empty()) r_.empty_directories.push_back(root);
    for (const std::string& f : found_) add(f);
  }

  void walk_dir(const fs::path& dir, const std::string& rel, int depth, std::vector<const IgnoreFile*> chain) {
    if (stopped_) return;
    // readdir's d_type: one system call a folder, not one a file (lstat only where the file
    // system does not say).
    struct Entry {
      std::string name;
      fs::path path;
      fs::file_type type;
    };
    std::vector<Entry> entries;
    DIR* handle = ::opendir(dir.c_str());
    if (handle == nullptr) {
      r_.problems.push_back(Error{ErrorCode::io_error, std::string("cannot read the directory (") + std::strerror(errno) + ")",
                                  dir.string(), {}, {}});
      return;
    }
    errno = 0;
    while (const dirent* d = ::readdir(handle)) {
      const std::string_view name = d->d_name;
      if (name == "." || name == "..") continue;
      if (++entries_ > o_.max_entries) {
        ::closedir(handle);
        r_.problems.push_back(Error{ErrorCode::io_error,
                                    fmt::format("more than {} entries; the walk stopped there (name the directories "
                                                "to check)", o_.max_entries),
                                    root_, {}, {}});
        stopped_ = true;
        return;
      }
      Entry e{std::string(name), dir / std::string(name), fs::file_type::unknown};
      switch (d->d_type) {
        case DT_REG: e.type = fs::file_type::regular; break;
        case DT_DIR: e.type = fs::file_type::directory; break;
        case DT_LNK: e.type = fs::file_type::symlink; break;
        case DT_FIFO: e.type = fs::file_type::fifo; break;
        case DT_SOCK: e.type = fs::file_type::socket; break;
        case DT_CHR: e.type = fs::file_type::character; break;
        case DT_BLK: e.type = fs::file_type::block; break;
        default: {
          std::error_code type_ec;
          const fs::file_status st = fs::symlink_status(e.path, type_ec);
          e.type = type_ec ? fs::file_type::unknown : st.type();
        }
      }
      entries.push_back(std::move(e));
      errno = 0;
    }
    const int read_error = errno;
    ::closedir(handle);
    if (read_error != 0) {
      r_.problems.push_back(Error{ErrorCode::io_error, std::string("cannot read the directory (") + std::strerror(read_error) + ")",
                                  dir.string(), {}, {}});
      return;
    }
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
    if (o_.gitignore) {
      for (const Entry& e : entries) {
        if (e.name != ".gitignore" || e.type != fs::file_type::regular) continue;
        Result<std::string> text = detail::read_file_bounded(e.path.string(), kMaxIgnoreBytes);
        if (!text) {
          r_.warnings.push_back(text.error().describe() + "; its patterns are not used");
          break;
        }
        ignore_files_.push_back(std::make_unique<IgnoreFile>(
            parse_gitignore(*text, rel, e.path.string(), r_.warnings)));
        chain.push_back(ignore_files_.back().get());
        break;
      }
    }
    for (const Entry& e : entries) {
      if (stopped_) return;
      const std::string child_rel = rel.empty() ? e.name : rel + "/" + e.name;
      const std::string shown = e.path.string();
      const bool directory = e.type == fs::file_type::directory;
      auto skip = [&](SkipReason why, std::string detail) {
        r_.skipped.push_back(SkippedPath{shown, directory, why, std::move(detail)});
      };
      if (e.type == fs::file_type::symlink) {
        skip(SkipReason::symlink, "a symbolic link (not followed; name its target to check it)");
        continue;
      }
      if (!directory && e.type != fs::file_type::regular) {
        skip(SkipReason::special, "not a regular file");
        continue;
      }
      const std::string display = fs::path(shown).lexically_normal().generic_string();
      if (const std::string* g = matching(o_.exclude, child_rel, display, directory)) {
        skip(SkipReason::excluded, "--exclude " + quoted_glob(*g));
        continue;
      }
      const bool included = matching(o_.include, child_rel, display, directory) != nullptr;
      if (directory) {
        if (!included) {
          if (const std::string_view why = skipped_folder_reason(e.name); !why.empty()) {
            skip(SkipReason::skip_list, std::string(why));
            continue;
          }
          if (auto why = ignore_reason(chain, child_rel, true)) {
            skip(SkipReason::gitignored, *why);
            continue;
          }
        }
        if (depth + 1 >= o_.max_depth) {
          too_deep_ = true;
          continue;
        }
        walk_dir(e.path, child_rel, depth + 1, chain);
        continue;
      }
      if (!included) {
        if (auto why = ignore_reason(chain, child_rel, false)) {
          skip(SkipReason::gitignored, *why);
          continue;
        }
        // By name first; the first line only when the name leaves it open (no known extension,
        // and not one of files that are never scripts: recognised_format knows them).
        if (!recognised_format(e.name, {})) {
          const std::string head = recognised_format(e.name, "#!/bin/sh\n") ? head_of(shown) : std::string();
          if (!recognised_format(e.name, head)) {
            skip(SkipReason::other_kind, other_kind(e.name, head));
            continue;
          }
        }
      }
      found_.push_back(shown);
    }
  }

  std::optional<std::string> ignore_reason(const std::vector<const IgnoreFile*>& chain, const std::string& rel,
                                           bool directory) const {
    if (chain.empty()) return std::nullopt;
    const IgnoreFile* file = nullptr;
    const IgnoreRule* rule = ignored_by(chain, rel, directory, &file);
    if (!rule) return std::nullopt;
    return fmt::format("{}:{}: {}", file->shown, rule->line, rule->pattern);
  }

  static std::string other_kind(const std::string& name, const std::string& head) {
    const std::string program = shebang_of(head);
    if (!program.empty()) return "a " + program + " script, not a kind check reads";
    const std::size_t dot = name.rfind('.');
    if (dot != npos && dot > 0 && dot + 1 < name.size())
      return "a " + lower(std::string_view(name).substr(dot)) + " file, not a kind check reads";
    return "not a kind check reads (no known name, extension or shebang)";
  }

  const WalkOptions& o_;
  WalkResult& r_;
  std::unordered_set<std::string> seen_;
  std::string root_;
  std::vector<std::string> found_;
  std::vector<std::unique_ptr<IgnoreFile>> ignore_files_;
  std::size_t entries_ = 0;
  bool stopped_ = false, too_deep_ = false;
};

}  // namespace

std::string describe_skipped(const WalkResult& walk) {
  const std::size_t folders = walk.skipped_directories(), files = walk.skipped_files();
  const std::string f = fmt::format("{} folder{}", folders, folders == 1 ? "" : "s");
  const std::string g = fmt::format("{} file{}", files, files == 1 ? "" : "s");
  if (folders == 0) return g;
  return files == 0 ? f : f + " and " + g;
}

std::string nothing_read_message(const WalkResult& walk) {
  if (!walk.files.empty()) return {};
  std::string message = "no file to read";
  if (walk.skipped.empty()) return message + ": no file there";
  message += ": passed over " + describe_skipped(walk);
  // A few examples, folders first: they hide the most.
  std::vector<const SkippedPath*> shown;
  for (int pass = 0; pass < 2; ++pass)
    for (const SkippedPath& s : walk.skipped)
      if (s.directory == (pass == 0) && shown.size() < 3) shown.push_back(&s);
  message += " (";
  for (std::size_t k = 0; k < shown.size(); ++k)
    message += (k ? "; " : "") + shown[k]->path + (shown[k]->directory ? "/" : "") + ": " + shown[k]->detail;
  if (walk.skipped.size() > shown.size()) message += fmt::format("; {} more", walk.skipped.size() - shown.size());
  message += ")";
  const SkippedPath* folder = nullptr;
  for (const SkippedPath& s : walk.skipped)
    if (s.directory && s.reason == SkipReason::skip_list && !folder) folder = &s;
  if (folder) {
    const std::string name = fs::path(folder->path).filename().string();
    message += fmt::format("; to check a folder of the skip list, name it (attnsel check {}) or pass --include '{}'",
                           folder->path, name);
  } else {
    message += "; to read a path passed over, name it or pass --include GLOB";
  }
  return message;
}

WalkResult walk_paths(const std::vector<std::string>& inputs, const WalkOptions& options) {
  WalkResult result;
  Walker walker(options, result);
  for (const std::string& in : inputs) walker.input(in);
  return result;
}

}  // namespace attnsel
