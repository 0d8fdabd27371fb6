// Small phrases shared by the renderers.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "attnsel/device.hpp"
#include "attnsel/matrix.hpp"

namespace attnsel::detail {

// [8.0, 10.0) -> "8.x or 9.x"; [10.0, 11.0) -> "10.x"; [9.0, 9.1) -> "9.0".
std::string describe_cc_ranges(const std::vector<VersionRange>& ranges);
// "any (native)", "any (emulated)", "64", "32 or 64".
std::string describe_page_support(const PageSupport& p);
// "64, 128 or 256", "a multiple of 8 below 257".
std::string describe_int_match(const IntMatch& m);
// "sm90 (H100)", "gfx942", "unknown GPU".
std::string describe_gpu(const DeviceInfo& d);
std::string kind_title(AttentionKind k);

// Text bound for a terminal, whatever bytes reached it (a GPU name from a driver, a scanned file's
// words): C0 controls but newline and tab, DEL, C1 controls and bytes that are not UTF-8 become
// \xNN. With `keep_colors`, ESC [ digits;... m (SGR, the renderers' own colours) stays; every other
// escape sequence (cursor moves, titles, hyperlinks) is shown, not obeyed. Valid UTF-8 stays as is.
std::string terminal_safe(std::string_view text, bool keep_colors);

// Terminal columns of UTF-8 text (code points; attnsel's text has no wide characters).
std::size_t display_width(std::string_view text);
// `text` in lines of at most `width` columns, broken after spaces, commas and slashes where it
// can be, inside a word where it cannot. Empty text is one empty line; width 0 does not wrap.
std::vector<std::string> wrap(std::string_view text, std::size_t width);

// Text for one Markdown table cell or list item, whatever bytes reached it: `|` escaped, line breaks
// as <br>, `<` `>` `&` as entities (no HTML from a scanned file), controls and invalid UTF-8 as \xNN,
// backticks as ' (they would end an inline code span).
std::string markdown_cell(std::string_view text);

}  // namespace attnsel::detail
