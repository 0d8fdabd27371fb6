// Shared pieces of the launch-command readers: physical lines and line-mapped sources.
#include "check/launch_internal.hpp"

namespace attnsel::launch_detail {

std::vector<PhysicalLine> split_lines(std::string_view text) {
  std::vector<PhysicalLine> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == npos) nl = text.size();
    std::string_view line = text.substr(start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back({line, start});
    start = nl + 1;
  }
  return lines;
}

Source source_of(std::string_view text, int first_line) {
  // As Source::append line by line would make it: the text whole, each line's start marked.
  Source src;
  src.text.assign(text.data(), text.size());
  src.lines.reserve(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 2);
  src.lines.mark(0, first_line);
  int line = first_line;
  std::size_t start = 0;
  while (start < text.size()) {
    if (start > 0) src.lines.mark(start, line);
    const std::size_t nl = text.find('\n', start);
    ++line;
    start = nl == npos ? text.size() : nl + 1;
  }
  return src;
}


}  // namespace attnsel::launch_detail
