// The parts of a file a GPU or platform can be scoped to: a document's sections, tabs,
// admonitions and the code block a sentence introduces (Markdown and MDX, reStructuredText,
// AsciiDoc), code blocks, a manifest's YAML documents and its entries under keys that name
// hardware. One pass over the lines; a part's
// end is found with a stack of the parts still open, never by searching ahead per part.
#include <algorithm>
#include <array>

#include "check/launch_internal.hpp"

namespace attnsel::launch_detail {
namespace {

std::size_t indent_of(std::string_view line) { return line.size() - ltrim(line).size(); }

constexpr std::size_t kProseBytes = 480;        // of a paragraph read for the GPUs it names
constexpr std::size_t kMaxParagraphs = 1u << 12;  // of a document, read for GPUs

// Text written as one title: markup removed (`#`, `*`, `` ` ``, quotes, `<...>` tags), blanks
// folded, at most `limit` bytes.
std::string title_text(std::string_view t, std::size_t limit = 160) {
  std::string out;
  bool in_tag = false;
  for (const char c : t) {
    if (c == '<') in_tag = true;
    if (in_tag) {
      if (c == '>') in_tag = false;
      continue;
    }
    if (c == '*' || c == '`' || c == '"' || c == '#') continue;
    if (is_blank(c)) {
      if (!out.empty() && out.back() != ' ') out += ' ';
      continue;
    }
    out += c;
    if (out.size() >= limit) break;
  }
  return std::string(trim(out));
}

// The value of `name="..."` (or '...') in an HTML/JSX tag; "" when absent.
std::string attribute(std::string_view tag, std::string_view name) {
  for (std::size_t at = tag.find(name); at != npos; at = tag.find(name, at + 1)) {
    if (at > 0 && is_alnum(tag[at - 1])) continue;
    std::size_t k = at + name.size();
    while (k < tag.size() && is_blank(tag[k])) ++k;
    if (k >= tag.size() || tag[k] != '=') continue;
    ++k;
    while (k < tag.size() && is_blank(tag[k])) ++k;
    if (k >= tag.size() || (tag[k] != '"' && tag[k] != '\'')) continue;
    const std::size_t close = tag.find(tag[k], k + 1);
    if (close == npos) return {};
    return std::string(tag.substr(k + 1, close - k - 1));
  }
  return {};
}

bool all_of_char(std::string_view t, char c) { return !t.empty() && t.find_first_not_of(c) == npos; }

// The run of `c` a line starts with.
std::size_t run_of(std::string_view t, char c) {
  std::size_t n = 0;
  while (n < t.size() && t[n] == c) ++n;
  return n;
}

// The sentences a code block follows: the paragraph just before its opening line (one blank line
// and an HTML wrapper line such as `<div class="termy">` between allowed), its last 480 bytes;
// nothing when a heading, a fence or another block is there. Which of its sentences names the
// block's GPUs is the reader's (launch_context.cpp: the last that names any).
FilePart prose_before(const std::vector<PhysicalLine>& lines, std::size_t fence, int first, int last) {
  FilePart p{FilePart::Kind::prose, 0, {}, first, last};
  std::size_t k = fence;
  if (k > 0 && trim(lines[k - 1].text).empty()) --k;
  if (k > 0) {
    const std::string_view w = trim(lines[k - 1].text);
    if (w.size() >= 3 && w.front() == '<' && w.back() == '>' && w[1] != '/' && w.find("</") == npos) {
      --k;
      if (k > 0 && trim(lines[k - 1].text).empty()) --k;
    }
  }
  std::size_t start = k;
  while (start > 0 && k - start < 4) {
    const std::string_view t = trim(lines[start - 1].text);
    if (t.empty() || t.front() == '#' || starts_with(t, "```") || starts_with(t, "~~~") || starts_with(t, ":::") ||
        starts_with(t, "===") || starts_with(t, "!!!") || starts_with(t, "???") ||
        starts_with(t, "..") || t.front() == '<' || t.front() == '|' || all_of_char(t, '=') || all_of_char(t, '-'))
      break;
    --start;
  }
  if (start == k) return p;
  std::string paragraph;
  for (std::size_t j = start; j < k; ++j) paragraph.append(trim(lines[j].text).substr(0, 1024)).append(" ");
  std::string_view s = trim(paragraph);
  if (s.size() > kProseBytes) s = s.substr(s.size() - kProseBytes);
  p.title = title_text(s, kProseBytes);
  p.title_line = static_cast<int>(k);  // 1-based line of the paragraph's last line
  return p;
}

// Markdown and MDX: ATX and setext headings, mkdocs-material tabs (=== "T") and admonitions
// (!!! kind "T"), MyST and Docusaurus directives (```{tab-item} T, :::{note} T, :::tip[T]),
// JSX tabs (<TabItem label="T">, <Tab title="T">), <details><summary>T</summary>, fenced code.
std::vector<FilePart> markdown_parts(const std::vector<PhysicalLine>& lines) {
  std::vector<FilePart> parts;
  struct Open {
    std::size_t part;
    int level;           // headings: 1-6; indented parts: their indent; closed parts: -1
    std::string closer;  // a closing line ("</TabItem>", ":::"); "" for headings and indented parts
  };
  std::vector<Open> headings, indented, closed;
  const int n = static_cast<int>(lines.size());
  // The paragraphs of text, each for the rest of the innermost open part that holds it (its end is
  // known when the pass is done); at most kMaxParagraphs, the first of a long file.
  struct Paragraph {
    int first, last;        // its lines
    std::size_t container;  // the part holding it; npos: the file
    std::string text;
  };
  std::vector<Paragraph> paragraphs;
  std::string_view comment_closer;  // within <!-- ... --> or {/* ... */}: its closer
  auto innermost = [&] {
    std::size_t in = npos;
    for (const std::vector<Open>* open : {&headings, &indented, &closed})
      if (!open->empty() && (in == npos || open->back().part > in)) in = open->back().part;
    return in;
  };
  auto close_headings = [&](int level, int before) {
    while (!headings.empty() && headings.back().level >= level) {
      parts[headings.back().part].last = before;
      headings.pop_back();
    }
  };
  std::size_t li = 0;
  // YAML front matter is no section.
  if (!lines.empty() && trim(lines[0].text) == "---") {
    for (std::size_t k = 1; k < lines.size(); ++k)
      if (trim(lines[k].text) == "---") {
        li = k + 1;
        break;
      }
  }
  for (; li < lines.size(); ++li) {
    const std::string_view line = lines[li].text;
    const std::string_view t = trim(line);
    const int ln = static_cast<int>(li) + 1;
    if (t.empty()) continue;
    // An HTML or MDX comment's lines are no text.
    bool commented = !comment_closer.empty();
    if (commented) {
      if (t.find(comment_closer) != npos) comment_closer = {};
    } else if (starts_with(t, "<!--") || starts_with(t, "{/*")) {
      commented = true;
      const std::string_view closer = t.front() == '<' ? "-->" : "*/";
      if (t.find(closer, 3) == npos) comment_closer = closer;
    }
    const std::size_t ind = indent_of(line);
    // Indented parts end at the first line indented no deeper than their marker.
    while (!indented.empty() && static_cast<int>(ind) <= indented.back().level) {
      int last = ln - 1;
      while (last > static_cast<int>(parts[indented.back().part].first) && trim(lines[last - 1].text).empty()) --last;
      parts[indented.back().part].last = last;
      indented.pop_back();
    }
    // Closing lines of JSX and directive parts.
    if (!closed.empty() && (t == closed.back().closer || (closed.back().closer.front() != '<' &&
                                                          all_of_char(t, closed.back().closer.front()) &&
                                                          t.size() == closed.back().closer.size()))) {
      parts[closed.back().part].last = ln;
      closed.pop_back();
      continue;
    }
    // Fenced code (``` or ~~~), unless it opens a MyST directive.
    const char fence_char = t.front();
    const std::size_t fence_len = run_of(t, fence_char);
    if ((fence_char == '`' || fence_char == '~') && fence_len >= 3) {
      const std::string_view info = trim(t.substr(fence_len));
      if (starts_with(info, "{") && !starts_with(info, "{code") && !starts_with(info, "{.")) {
        const std::size_t close = info.find('}');
        const std::string directive = lower(info.substr(1, close == npos ? npos : close - 1));
        const FilePart::Kind kind = directive.find("tab") != npos ? FilePart::Kind::tab : FilePart::Kind::admonition;
        parts.push_back(FilePart{kind, ln, title_text(close == npos ? "" : info.substr(close + 1)), ln, n});
        closed.push_back(Open{parts.size() - 1, -1, std::string(fence_len, fence_char)});
        continue;
      }
      std::size_t end = li + 1;
      while (end < lines.size()) {
        const std::string_view u = trim(lines[end].text);
        if (run_of(u, fence_char) >= fence_len && run_of(u, fence_char) == u.size()) break;
        ++end;
      }
      const int last = static_cast<int>(std::min(end, lines.size() - 1)) + 1;
      parts.push_back(FilePart{FilePart::Kind::code_block, 0, {}, ln, last});
      FilePart prose = prose_before(lines, li, ln, last);
      // The paragraph that introduces the block speaks for the block alone.
      if (!paragraphs.empty() && paragraphs.back().last == prose.title_line) paragraphs.pop_back();
      if (!prose.title.empty()) parts.push_back(std::move(prose));
      // A comment in the block ("# Start the server on 4xH200") is read for the lines below it, to
      // the end of the branch that holds it (the first line indented less) or to a comment as far
      // out after a blank line, which begins the block's next step; else to the block's end. A
      // later comment, a smaller part, speaks for the lines after it.
      std::vector<std::pair<std::size_t, std::size_t>> open;  // comments still read: part, indent
      for (std::size_t k = li + 1; k < end; ++k) {
        const std::string_view c = trim(lines[k].text);
        if (c.empty()) continue;
        const std::size_t depth = indent_of(lines[k].text);
        const bool comment = c[0] == '#' && c.size() >= 2 && c[1] != '!';
        const bool after_blank = trim(lines[k - 1].text).empty();
        while (!open.empty() && (open.back().second > depth || (comment && after_blank && open.back().second >= depth))) {
          parts[open.back().first].last = static_cast<int>(k);  // to the line before
          open.pop_back();
        }
        if (!comment || (k > li + 1 && starts_with(trim(lines[k - 1].text), "#"))) continue;
        parts.push_back(FilePart{FilePart::Kind::comment, static_cast<int>(k) + 1, title_text(c.substr(1)),
                                 static_cast<int>(k) + 1, last});
        open.emplace_back(parts.size() - 1, depth);
      }
      li = end;
      continue;
    }
    // ATX heading.
    if (t.front() == '#' && ind <= 3) {
      const std::size_t level = run_of(t, '#');
      if (level <= 6 && (level == t.size() || is_blank(t[level]))) {
        close_headings(static_cast<int>(level), ln - 1);
        parts.push_back(FilePart{FilePart::Kind::section, ln, title_text(t.substr(level)), ln, n});
        headings.push_back(Open{parts.size() - 1, static_cast<int>(level), {}});
        continue;
      }
    }
    // Setext heading: a line underlined with = or - (not a list item, not after a blank line).
    if (li + 1 < lines.size() && ind <= 3 && t.front() != '-' && t.front() != '|' && t.front() != '<') {
      const std::string_view u = trim(lines[li + 1].text);
      if (u.size() >= 2 && (all_of_char(u, '=') || all_of_char(u, '-'))) {
        const int level = u.front() == '=' ? 1 : 2;
        close_headings(level, ln - 1);
        parts.push_back(FilePart{FilePart::Kind::section, ln, title_text(t), ln, n});
        headings.push_back(Open{parts.size() - 1, level, {}});
        ++li;
        continue;
      }
    }
    // mkdocs-material tabs and admonitions: the content is indented under the marker.
    if (starts_with(t, "===") || starts_with(t, "!!!") || starts_with(t, "???")) {
      const bool tab = t.front() == '=';
      std::string_view rest = ltrim(t.substr(run_of(t, t.front())));
      if (!rest.empty() && (rest.front() == '!' || rest.front() == '+')) rest.remove_prefix(1);
      if (!tab) rest = ltrim(rest.substr(std::min(rest.find_first_of(" \t\""), rest.size())));
      parts.push_back(FilePart{tab ? FilePart::Kind::tab : FilePart::Kind::admonition, ln, title_text(rest), ln, n});
      indented.push_back(Open{parts.size() - 1, static_cast<int>(ind), {}});
      continue;
    }
    // Docusaurus and MyST colon directives: :::note Title, :::tip[Title], :::{tab-item} Title.
    if (starts_with(t, ":::")) {
      const std::size_t colons = run_of(t, ':');
      std::string_view rest = t.substr(colons);
      if (!rest.empty()) {
        std::string directive;
        std::string_view title;
        if (rest.front() == '{') {
          const std::size_t close = rest.find('}');
          directive = lower(rest.substr(1, close == npos ? npos : close - 1));
          title = close == npos ? std::string_view() : rest.substr(close + 1);
        } else {
          const std::size_t end = std::min(rest.find_first_of(" \t["), rest.size());
          directive = lower(rest.substr(0, end));
          title = rest.substr(end);
          if (!title.empty() && title.front() == '[') title = title.substr(1, title.find(']') - 1);
        }
        const FilePart::Kind kind = directive.find("tab") != npos ? FilePart::Kind::tab : FilePart::Kind::admonition;
        parts.push_back(FilePart{kind, ln, title_text(title), ln, n});
        closed.push_back(Open{parts.size() - 1, -1, std::string(colons, ':')});
        continue;
      }
    }
    // JSX tabs and <details>.
    if (t.front() == '<') {
      const std::string low = lower(t.substr(0, 12));
      if (starts_with(low, "<tabitem") || starts_with(low, "<tab ") || starts_with(low, "<tab>")) {
        const std::string label = attribute(t, "label");
        std::string title = label.empty() ? attribute(t, "title") : label;
        if (title.empty()) title = attribute(t, "value");
        parts.push_back(FilePart{FilePart::Kind::tab, ln, title_text(title), ln, n});
        closed.push_back(Open{parts.size() - 1, -1, starts_with(low, "<tabitem") ? "</TabItem>" : "</Tab>"});
        continue;
      }
      if (starts_with(low, "<details")) {
        std::string_view summary;
        for (std::size_t k = li; k < lines.size() && k <= li + 2 && summary.empty(); ++k) {
          const std::string_view u = lines[k].text;
          const std::size_t open = u.find("<summary>");
          if (open != npos) summary = u.substr(open + 9, u.find("</summary>", open) - open - 9);
        }
        parts.push_back(FilePart{FilePart::Kind::tab, ln, title_text(summary), ln, n});
        closed.push_back(Open{parts.size() - 1, -1, "</details>"});
        continue;
      }
    }
    // A line of text: HTML, comments and tables are none.
    if (commented || t.front() == '<' || t.front() == '|') continue;
    if (!paragraphs.empty() && paragraphs.back().last == ln - 1) {
      Paragraph& p = paragraphs.back();
      if (p.text.size() < 2 * kProseBytes) p.text.append(" ").append(t.substr(0, 2 * kProseBytes));
      p.last = ln;
    } else if (paragraphs.size() < kMaxParagraphs) {
      paragraphs.push_back(Paragraph{ln, ln, innermost(), std::string(t.substr(0, 2 * kProseBytes))});
    }
  }
  for (const Open& o : indented) {
    int last = n;
    while (last > parts[o.part].first && trim(lines[last - 1].text).empty()) --last;
    parts[o.part].last = last;
  }
  if (paragraphs.empty()) return parts;
  // A paragraph before the first heading is the preamble's: it ends there.
  int first_heading = n + 1;
  for (const FilePart& p : parts)
    if (p.kind == FilePart::Kind::section) {
      first_heading = p.first;
      break;
    }
  for (Paragraph& p : paragraphs) {
    std::string title = title_text(p.text, kProseBytes);
    if (title.empty()) continue;
    const int end = p.container != npos ? parts[p.container].last : p.first < first_heading ? first_heading - 1 : n;
    parts.push_back(FilePart{FilePart::Kind::paragraph, p.first, std::move(title), p.first, std::max(p.last, end)});
  }
  // In line order again: a paragraph's first line is no other part's.
  std::stable_sort(parts.begin(), parts.end(), [](const FilePart& a, const FilePart& b) { return a.first < b.first; });
  return parts;
}

// reStructuredText: titles underlined (and perhaps overlined) with punctuation, their levels in
// the order the styles first appear; tab and admonition directives with their indented bodies;
// code blocks and the sentence before them.
std::vector<FilePart> rst_parts(const std::vector<PhysicalLine>& lines) {
  std::vector<FilePart> parts;
  std::vector<std::pair<char, bool>> styles;  // (underline char, overlined), in order of appearance
  std::vector<std::pair<std::size_t, int>> headings;  // open sections: part, level
  struct Body {
    std::size_t part;
    std::size_t indent;
    std::size_t prose = npos;  // a code block's: the sentence before it, which ends with it
  };
  std::vector<Body> bodies;
  const int n = static_cast<int>(lines.size());
  auto adornment = [](std::string_view t) {
    return t.size() >= 3 && std::string_view("=-~^\"'`#*+:._").find(t.front()) != npos && all_of_char(t, t.front());
  };
  auto end_body = [&](std::size_t before) {
    int last = static_cast<int>(before);
    while (last > parts[bodies.back().part].first && trim(lines[last - 1].text).empty()) --last;
    parts[bodies.back().part].last = last;
    if (bodies.back().prose != npos) parts[bodies.back().prose].last = last;
    bodies.pop_back();
  };
  for (std::size_t li = 0; li < lines.size(); ++li) {
    const std::string_view line = lines[li].text;
    const std::string_view t = trim(line);
    const int ln = static_cast<int>(li) + 1;
    if (t.empty()) continue;
    while (!bodies.empty() && indent_of(line) <= bodies.back().indent) end_body(li);
    const bool overlined = adornment(t) && li + 2 < lines.size() && adornment(trim(lines[li + 2].text)) &&
                           !trim(lines[li + 1].text).empty();
    const std::size_t title_at = overlined ? li + 1 : li;
    if ((overlined || (indent_of(line) == 0 && !adornment(t))) && title_at + 1 < lines.size()) {
      const std::string_view title = trim(lines[title_at].text);
      const std::string_view under = trim(lines[title_at + 1].text);
      if (!title.empty() && adornment(under) && under.size() >= title.size() && bodies.empty()) {
        const std::pair<char, bool> style{under.front(), overlined};
        auto it = std::find(styles.begin(), styles.end(), style);
        if (it == styles.end()) it = styles.insert(styles.end(), style);
        const int level = static_cast<int>(it - styles.begin()) + 1;
        while (!headings.empty() && headings.back().second >= level) {
          parts[headings.back().first].last = ln - 1;
          headings.pop_back();
        }
        parts.push_back(FilePart{FilePart::Kind::section, static_cast<int>(title_at) + 1, title_text(title), ln, n});
        headings.emplace_back(parts.size() - 1, level);
        li = title_at + 1;
        continue;
      }
    }
    if (!starts_with(t, "..")) continue;
    const std::size_t colons = t.find("::");
    if (colons == npos) continue;
    const std::string directive = lower(trim(t.substr(2, colons - 2)));
    const std::string_view argument = trim(t.substr(colons + 2));
    FilePart::Kind kind = FilePart::Kind::admonition;
    if (directive.find("tab") != npos) kind = FilePart::Kind::tab;
    else if (directive == "code-block" || directive == "code" || directive == "sourcecode" || directive == "prompt")
      kind = FilePart::Kind::code_block;
    parts.push_back(FilePart{kind, kind == FilePart::Kind::code_block ? 0 : ln,
                             kind == FilePart::Kind::code_block ? std::string() : title_text(argument), ln, n});
    Body body{parts.size() - 1, indent_of(line)};
    if (kind == FilePart::Kind::code_block) {
      FilePart prose = prose_before(lines, li, ln, n);
      if (!prose.title.empty()) {
        parts.push_back(std::move(prose));
        body.prose = parts.size() - 1;
      }
    }
    bodies.push_back(body);
    continue;
  }
  while (!bodies.empty()) end_body(lines.size());
  return parts;
}

// AsciiDoc: `== Title` sections and delimited blocks (----, ....).
std::vector<FilePart> asciidoc_parts(const std::vector<PhysicalLine>& lines) {
  std::vector<FilePart> parts;
  std::vector<std::pair<std::size_t, int>> headings;
  const int n = static_cast<int>(lines.size());
  for (std::size_t li = 0; li < lines.size(); ++li) {
    const std::string_view t = trim(lines[li].text);
    const int ln = static_cast<int>(li) + 1;
    if (t.size() >= 4 && (all_of_char(t, '-') || all_of_char(t, '.'))) {
      std::size_t end = li + 1;
      while (end < lines.size() && trim(lines[end].text) != t) ++end;
      const int last = static_cast<int>(std::min(end, lines.size() - 1)) + 1;
      parts.push_back(FilePart{FilePart::Kind::code_block, 0, {}, ln, last});
      li = end;
      continue;
    }
    const std::size_t level = run_of(t, '=');
    if (level == 0 || level > 6 || level >= t.size() || !is_blank(t[level])) continue;
    while (!headings.empty() && headings.back().second >= static_cast<int>(level)) {
      parts[headings.back().first].last = ln - 1;
      headings.pop_back();
    }
    parts.push_back(FilePart{FilePart::Kind::section, ln, title_text(t.substr(level)), ln, n});
    headings.emplace_back(parts.size() - 1, static_cast<int>(level));
  }
  return parts;
}

// YAML: the documents of a stream, split at `---` lines.
std::vector<FilePart> yaml_documents(const std::vector<PhysicalLine>& lines) {
  std::vector<FilePart> parts;
  int first = 1;
  const int n = static_cast<int>(lines.size());
  for (std::size_t li = 0; li < lines.size(); ++li) {
    const std::string_view t = lines[li].text;
    if (!starts_with(t, "---") || (t.size() > 3 && !is_blank(t[3]))) continue;
    const int ln = static_cast<int>(li) + 1;
    if (ln > first) parts.push_back(FilePart{FilePart::Kind::yaml_document, 0, {}, first, ln - 1});
    first = ln + 1;
  }
  // One document is the whole file: no part.
  if (!parts.empty() && first <= n) parts.push_back(FilePart{FilePart::Kind::yaml_document, 0, {}, first, n});
  return parts;
}

constexpr std::size_t kMaxKeyParts = 1024;  // of a YAML file: keys that may name hardware

// Whether a mapping key may name a GPU or a platform, cheaply, before launch_context.cpp reads its
// title for them: a letter then a digit ("B200", "h100_fp8", "mi300x", "sm90", "gfx942"), or a
// word that names hardware on its own ("amd", "nvidia", "blackwell").
bool may_name_hardware(std::string_view key) {
  if (key.empty() || key.size() > 48) return false;
  bool letter = false;
  for (const char c : key) {
    if (is_alpha(c)) letter = true;
    else if (c >= '0' && c <= '9' && letter) return true;
  }
  return hardware_word(key);
}

// YAML: the entries under keys that name hardware (sgl-cookbook's `hardware: {B200: {...}}`,
// vllm-project/recipes' `hardware_overrides: {amd: {...}}`, a chart's `h100:` values): each a key's
// block (yaml_blocks), when it holds more than a scalar.
std::vector<FilePart> yaml_keys(const std::vector<PhysicalLine>& lines) {
  std::vector<FilePart> parts;
  const YamlBlocks blocks = yaml_blocks(lines);
  for (std::size_t li = 0; li < lines.size() && parts.size() < kMaxKeyParts; ++li) {
    const int ln = static_cast<int>(li) + 1;
    const int last = blocks.end[static_cast<std::size_t>(ln)];
    if (last == 0) continue;  // blank, a comment, a block scalar's text
    std::string_view t = ltrim(lines[li].text);
    while (t.size() >= 2 && t.front() == '-' && is_blank(t[1])) t = ltrim(t.substr(1));  // `- key:`
    if (t.empty() || t.front() == '{' || t.front() == '[') continue;
    std::size_t colon = npos;
    for (std::size_t k = 0; k < t.size(); ++k)
      if (t[k] == ':' && (k + 1 == t.size() || is_blank(t[k + 1]))) {
        colon = k;
        break;
      }
    if (colon == npos || colon == 0) continue;
    std::string_view key = trim(t.substr(0, colon));
    if (key.size() >= 2 && (key.front() == '"' || key.front() == '\'') && key.back() == key.front())
      key = key.substr(1, key.size() - 2);
    std::string_view value = trim(t.substr(colon + 1));
    if (!value.empty() && value.front() == '#') value = {};
    // A scalar (`h100: 8`) is a setting, a block scalar (`|`, `>`) text: neither is an entry.
    if (!value.empty() && value.front() != '{' && value.front() != '[') continue;
    if (may_name_hardware(key)) parts.push_back(FilePart{FilePart::Kind::yaml_key, ln, title_text(key), ln, last});
  }
  return parts;
}

// A YAML file's parts: its documents and its entries under keys naming hardware, in order of
// their first line, a container before the parts it holds.
std::vector<FilePart> yaml_parts(const std::vector<PhysicalLine>& lines) {
  std::vector<FilePart> parts = yaml_documents(lines);
  std::vector<FilePart> keys = yaml_keys(lines);
  if (keys.empty()) return parts;
  parts.insert(parts.end(), std::make_move_iterator(keys.begin()), std::make_move_iterator(keys.end()));
  std::stable_sort(parts.begin(), parts.end(),
                   [](const FilePart& a, const FilePart& b) { return a.first != b.first ? a.first < b.first : a.last > b.last; });
  return parts;
}

}  // namespace

YamlBlocks yaml_blocks(const std::vector<PhysicalLine>& lines) {
  const std::size_t n = lines.size();
  YamlBlocks out{std::vector<int>(n + 1, 0), std::vector<int>(n + 1, 0)};
  struct Open {
    int line;
    std::size_t indent;
    bool block;  // `key:` with nothing after it: a sequence may follow at its own indent
  };
  std::vector<Open> open;
  int last_content = 0;
  std::size_t scalar_indent = npos;  // inside a block scalar under a key of this indent
  for (std::size_t li = 0; li < n; ++li) {
    const int ln = static_cast<int>(li) + 1;
    const std::string_view line = lines[li].text;
    const std::string_view t = ltrim(line);
    if (t.empty() || t.front() == '#') continue;
    const std::size_t indent = indent_of(line);
    if (scalar_indent != npos && indent > scalar_indent) {  // the block scalar's text
      out.parent[li + 1] = open.empty() ? 0 : open.back().line;
      last_content = ln;
      continue;
    }
    scalar_indent = npos;
    const bool item = t.front() == '-' && (t.size() == 1 || is_blank(t[1]));
    while (!open.empty() && !(indent > open.back().indent || (indent == open.back().indent && item && open.back().block))) {
      out.end[static_cast<std::size_t>(open.back().line)] = last_content;
      open.pop_back();
    }
    out.parent[li + 1] = open.empty() ? 0 : open.back().line;
    last_content = ln;
    const std::string_view body = trim(t);
    open.push_back(Open{ln, indent, !body.empty() && body.back() == ':'});
    if (const std::size_t colon = body.find(": "); colon != npos) {
      const std::string_view value = trim(body.substr(colon + 2));
      if (!value.empty() && (value.front() == '|' || value.front() == '>')) scalar_indent = indent;
    }
  }
  for (; !open.empty(); open.pop_back()) out.end[static_cast<std::size_t>(open.back().line)] = last_content;
  return out;
}

std::string_view name_of(FilePart::Kind kind) {
  switch (kind) {
    case FilePart::Kind::section: return "heading";
    case FilePart::Kind::tab: return "tab";
    case FilePart::Kind::admonition: return "admonition";
    case FilePart::Kind::prose: return "sentence before the block";
    case FilePart::Kind::paragraph: return "sentence in the section";
    case FilePart::Kind::comment: return "comment";
    case FilePart::Kind::code_block: return "code block";
    case FilePart::Kind::yaml_document: return "YAML document";
    case FilePart::Kind::yaml_key: return "YAML key";
  }
  return "part";
}

std::vector<FilePart> file_parts(const std::vector<PhysicalLine>& lines, InputFormat format) {
  switch (format) {
    case InputFormat::markdown: return markdown_parts(lines);
    case InputFormat::rst: return rst_parts(lines);
    case InputFormat::asciidoc: return asciidoc_parts(lines);
    case InputFormat::kubernetes:
    case InputFormat::compose:
    case InputFormat::helm: return yaml_parts(lines);
    default: return {};
  }
}

}  // namespace attnsel::launch_detail
