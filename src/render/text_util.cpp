#include "render/text_util.hpp"

#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "attnsel/encode.hpp"
#include "attnsel/input.hpp"
#include "attnsel/render.hpp"

namespace attnsel::detail {

std::string describe_cc_ranges(const std::vector<VersionRange>& ranges) {
  std::vector<std::string> parts;
  for (const auto& r : ranges) {
    if (r.min && r.max && r.min->minor == 0 && r.max->minor == 0) {
      for (int major = r.min->major; major < r.max->major; ++major) parts.push_back(fmt::format("{}.x", major));
    } else if (r.min && r.max && (r.max->major * 10 + r.max->minor) - (r.min->major * 10 + r.min->minor) == 1) {
      parts.push_back(to_string(*r.min));
    } else {
      parts.push_back(to_string(r));
    }
  }
  if (parts.empty()) return "any";
  if (parts.size() == 1) return parts[0];
  std::string last = parts.back();
  parts.pop_back();
  return fmt::format("{} or {}", fmt::join(parts, ", "), last);
}

std::string describe_int_match(const IntMatch& m) {
  std::vector<std::string> parts;
  for (int v : m.values) parts.push_back(std::to_string(v));
  for (const IntRange& r : m.ranges) {
    std::string text = r.multiple_of != 1 ? fmt::format("a multiple of {}", r.multiple_of) : std::string("any");
    if (r.min) text += fmt::format(" from {}", *r.min);
    if (r.max) text += fmt::format(" below {}", *r.max);
    parts.push_back(text);
  }
  if (parts.empty()) return "any";
  if (parts.size() == 1) return parts[0];
  std::string last = parts.back();
  parts.pop_back();
  return fmt::format("{} or {}", fmt::join(parts, ", "), last);
}

std::string describe_page_support(const PageSupport& p) {
  switch (p.mode) {
    case PageMode::any: return "any (native paging)";
    case PageMode::emulated: return "any (emulated)";
    case PageMode::multiple: return fmt::format("a multiple of {}", p.multiple_of);
    case PageMode::fixed: break;
  }
  if (p.sizes.size() == 1) return std::to_string(p.sizes[0]);
  std::vector<std::string> s;
  for (int v : p.sizes) s.push_back(std::to_string(v));
  std::string last = s.back();
  s.pop_back();
  return fmt::format("{} or {}", fmt::join(s, ", "), last);
}

std::string describe_gpu(const DeviceInfo& d) {
  std::string arch = d.arch;
  if (arch.empty() && d.compute_capability) arch = sm_name(*d.compute_capability);
  if (arch.empty()) arch = d.platform == Platform::cuda ? "an unknown GPU" : std::string(name_of(d.platform));
  if (!d.name.empty() && d.name != arch) return fmt::format("{} ({})", arch, d.name);
  return arch;
}

std::string kind_title(AttentionKind k) {
  switch (k) {
    case AttentionKind::mha: return "standard multi-head attention";
    case AttentionKind::mla: return "multi-head latent attention";
    case AttentionKind::gdn: return "hybrid GDN linear attention";
    case AttentionKind::dsa: return "DeepSeek sparse attention";
  }
  return "?";
}

std::string terminal_safe(std::string_view text, bool keep_colors) {
  return encode_output(text, OutputChannel::terminal, keep_colors);
}

}  // namespace attnsel::detail

namespace attnsel {

std::string escape_for_terminal(std::string_view text, bool keep_colors) { return detail::terminal_safe(text, keep_colors); }

namespace detail {

std::size_t display_width(std::string_view text) {
  std::size_t w = 0;
  for (unsigned char ch : text) w += (ch & 0xC0) != 0x80;
  return w;
}

std::vector<std::string> wrap(std::string_view text, std::size_t width) {
  std::vector<std::string> lines;
  if (width == 0 || display_width(text) <= width) return {std::string(text)};
  std::string line;
  std::size_t line_width = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    // The next piece: up to and including a break character, UTF-8 sequences kept whole.
    std::size_t j = i;
    std::size_t piece_width = 0;
    while (j < text.size()) {
      const unsigned char ch = static_cast<unsigned char>(text[j]);
      ++j;
      while (j < text.size() && (static_cast<unsigned char>(text[j]) & 0xC0) == 0x80) ++j;
      ++piece_width;
      if (ch == ' ' || ch == ',' || ch == '/') break;
    }
    std::string_view piece = text.substr(i, j - i);
    i = j;
    if (line_width + piece_width > width && line_width > 0) {
      while (!line.empty() && line.back() == ' ') line.pop_back();
      lines.push_back(std::move(line));
      line.clear();
      line_width = 0;
      if (piece == " ") continue;
    }
    // A piece longer than a whole line is cut where the line ends.
    while (piece_width > width) {
      std::size_t cut = 0, cols = 0;
      while (cols < width - line_width) {
        ++cut;
        while (cut < piece.size() && (static_cast<unsigned char>(piece[cut]) & 0xC0) == 0x80) ++cut;
        ++cols;
      }
      line += piece.substr(0, cut);
      lines.push_back(std::move(line));
      line.clear();
      line_width = 0;
      piece = piece.substr(cut);
      piece_width -= cols;
    }
    line += piece;
    line_width += piece_width;
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  if (!line.empty() || lines.empty()) lines.push_back(std::move(line));
  return lines;
}

std::string markdown_cell(std::string_view text) {
  const std::string safe = terminal_safe(text, false);
  std::string out;
  out.reserve(safe.size());
  for (char c : safe) {
    switch (c) {
      case '|': out += "\\|"; break;
      case '\n': out += "<br>"; break;
      case '\t': out += ' '; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '`': out += '\''; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace detail

bool color_wanted(bool is_terminal) {
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  return is_terminal && (no_color == nullptr || *no_color == '\0') && (term == nullptr || std::strcmp(term, "dumb") != 0);
}

}  // namespace attnsel
