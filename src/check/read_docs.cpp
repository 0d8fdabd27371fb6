// reStructuredText and AsciiDoc: their code blocks, read like Markdown's fenced blocks.
#include "check/launch_internal.hpp"

namespace attnsel::launch_detail {
namespace {

std::size_t indent_of(std::string_view line) { return line.size() - ltrim(line).size(); }

// `.. code-block:: bash`, `.. code:: sh`, `.. sourcecode:: console`, `.. prompt:: bash $`: the language.
std::optional<std::string> rst_directive(std::string_view t) {
  static constexpr std::string_view kDirectives[] = {".. code-block::", ".. code::", ".. sourcecode::", ".. prompt::"};
  for (std::string_view d : kDirectives) {
    if (!starts_with(t, d)) continue;
    const std::string_view arg = trim(t.substr(d.size()));
    return lower(arg.substr(0, std::min(arg.find_first_of(" \t"), arg.size())));
  }
  return std::nullopt;
}

}  // namespace

void scan_rst(std::string_view text, Sink& sink) {
  const std::vector<PhysicalLine> lines = split_lines(text);
  std::size_t li = 0;
  while (li < lines.size()) {
    const std::string_view line = lines[li].text;
    const std::string_view t = trim(line);
    std::optional<std::string> lang = rst_directive(t);
    // A paragraph ending in "::" introduces a literal block (read as shell).
    if (!lang && ends_with(t, "::") && !starts_with(t, "..")) lang = std::string();
    if (!lang) {
      ++li;
      continue;
    }
    const std::size_t base = indent_of(line);
    std::size_t k = li + 1;
    // Directive options (:caption:, :linenos:) come before the blank line.
    while (k < lines.size() && !trim(lines[k].text).empty() && indent_of(lines[k].text) > base &&
           starts_with(trim(lines[k].text), ":"))
      ++k;
    // The block: lines indented deeper than the directive, blank lines inside it.
    std::size_t first = k;
    while (first < lines.size() && trim(lines[first].text).empty()) ++first;
    if (first >= lines.size() || indent_of(lines[first].text) <= base) {
      li = std::max(k, li + 1);
      continue;
    }
    const std::size_t strip = indent_of(lines[first].text);
    std::size_t end = first;
    while (end < lines.size() && (trim(lines[end].text).empty() || indent_of(lines[end].text) > base)) ++end;
    while (end > first && trim(lines[end - 1].text).empty()) --end;
    std::vector<std::string_view> block;
    std::vector<std::size_t> columns;
    for (std::size_t j = first; j < end; ++j) {
      std::string_view l = lines[j].text;
      const std::size_t cut = std::min({strip, l.size(), indent_of(l)});
      block.push_back(l.substr(cut));
      columns.push_back(cut + 1);
    }
    scan_code_block(*lang, block, static_cast<int>(first) + 1, columns, sink);
    li = end;
  }
}

void scan_asciidoc(std::string_view text, Sink& sink) {
  const std::vector<PhysicalLine> lines = split_lines(text);
  std::string lang;  // from the [source,LANG] line before a delimited block
  bool announced = false;
  std::size_t li = 0;
  while (li < lines.size()) {
    const std::string_view t = trim(lines[li].text);
    if (starts_with(t, "[source") || starts_with(t, "[,")) {
      const std::size_t comma = t.find(',');
      const std::string_view rest = comma == npos ? std::string_view() : t.substr(comma + 1);
      lang = lower(trim(rest.substr(0, std::min(rest.find_first_of(",]"), rest.size()))));
      announced = true;
      ++li;
      continue;
    }
    const bool delimiter = t.size() >= 4 && (t.find_first_not_of('-') == npos || t.find_first_not_of('.') == npos);
    if (!delimiter) {
      if (!t.empty() && t.front() != '.') announced = false;  // a block title (.Title) may sit between
      ++li;
      continue;
    }
    const std::size_t first = li + 1;
    std::size_t end = first;
    while (end < lines.size() && trim(lines[end].text) != t) ++end;
    std::vector<std::string_view> block;
    std::vector<std::size_t> columns;
    for (std::size_t j = first; j < end; ++j) {
      block.push_back(lines[j].text);
      columns.push_back(1);
    }
    scan_code_block(announced ? lang : std::string(), block, static_cast<int>(first) + 1, columns, sink);
    announced = false;
    lang.clear();
    li = end + 1;
  }
}

}  // namespace attnsel::launch_detail
