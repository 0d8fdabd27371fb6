// Jupyter notebooks (*.ipynb): read as the Markdown document they render, on the file's own lines.
// Jupyter saves a cell's source as a JSON array of strings, one line a string, each on a line of
// its own; the view puts each decoded line on that line of the file, and the rest of the file's
// lines (keys, brackets, outputs) are blank, but for a code cell's `"source": [` line and its
// closing bracket, which fence it. So every line, heading and paragraph the Markdown reader finds
// is the notebook's own line, and a section's GPUs hold for the cells below it.
//
// A code cell is shell where IPython runs it so: a `%%bash`, `%%sh` or `%%script bash|sh` cell
// whole, and in a Python cell the `!command` lines (its Python is then not read); any other code
// cell is Python. Outputs and raw cells are not read.
#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "check/launch_internal.hpp"

namespace attnsel::launch_detail {
namespace {

using ordered = nlohmann::ordered_json;

// Every JSON string literal of the text (keys and values), in order: the line it starts on.
std::vector<int> string_lines(std::string_view text) {
  std::vector<int> lines;
  int line = 1;
  for (std::size_t k = 0; k < text.size(); ++k) {
    const char c = text[k];
    if (c == '\n') ++line;
    if (c != '"') continue;
    lines.push_back(line);
    for (++k; k < text.size() && text[k] != '"'; ++k) {
      if (text[k] == '\\') ++k;  // an escape: a string holds no raw newline
    }
  }
  return lines;
}

// The strings of a parsed document in the order they are written (keys before their values).
void strings_in_order(const ordered& j, std::vector<const ordered*>& out, std::size_t& count) {
  if (j.is_string()) {
    out.push_back(&j);
    ++count;
  } else if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      out.push_back(nullptr);  // the key
      ++count;
      strings_in_order(it.value(), out, count);
    }
  } else if (j.is_array()) {
    for (const ordered& e : j) strings_in_order(e, out, count);
  }
}

std::string_view without_newline(std::string_view s) {
  if (!s.empty() && s.back() == '\n') s.remove_suffix(1);
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  return s;
}

// How IPython runs a code cell: "bash" for a shell cell magic, "" for Python.
std::string cell_shell(std::string_view first) {
  first = trim(without_newline(first));
  for (std::string_view magic : {"%%bash", "%%sh", "%%script bash", "%%script sh", "%%script /bin/bash"})
    if (first == magic || (starts_with(first, magic) && is_blank(first[magic.size()]))) return "bash";
  return {};
}

}  // namespace

std::string notebook_as_markdown(std::string_view text, Sink& sink) {
  ordered doc;
  try {
    doc = ordered::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    sink.fatal = Error{ErrorCode::parse_error, std::string("not a notebook: ") + e.what(), sink.file, {}, {}};
    return {};
  }
  const ordered* cells = doc.is_object() && doc.contains("cells") ? &doc["cells"] : nullptr;
  if (!cells || !cells->is_array()) {
    sink.fatal = Error{ErrorCode::parse_error, "not a notebook: no \"cells\" list (nbformat 4)", sink.file, {}, {}};
    return {};
  }
  // Where each string of the document is written: the parsed strings in their order, beside the
  // literals of the text in theirs (a key written twice would make them disagree: then say so).
  std::vector<const ordered*> order;
  std::size_t count = 0;
  strings_in_order(doc, order, count);
  const std::vector<int> lines = string_lines(text);
  if (lines.size() != order.size()) {
    sink.fatal = Error{ErrorCode::parse_error,
                       "a notebook whose keys repeat: its cells' lines cannot be told, so it is not read", sink.file,
                       {}, {}};
    return {};
  }
  std::map<const ordered*, int> line_of;
  for (std::size_t k = 0; k < order.size(); ++k)
    if (order[k]) line_of.emplace(order[k], lines[k]);

  const int n = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  std::vector<std::string> view(static_cast<std::size_t>(n) + 1);  // 1-based
  std::vector<bool> used(view.size(), false);
  auto put = [&](int line, std::string_view s) {
    if (line < 1 || line > n || used[static_cast<std::size_t>(line)]) return false;
    used[static_cast<std::size_t>(line)] = true;
    view[static_cast<std::size_t>(line)] = std::string(s);
    return true;
  };
  for (const ordered& cell : *cells) {
    if (!cell.is_object() || !cell.contains("source")) continue;
    const std::string type = cell.value("cell_type", std::string());
    if (type != "markdown" && type != "code") continue;  // raw cells are not rendered
    const ordered& source = cell["source"];
    std::vector<const ordered*> pieces;
    if (source.is_string()) pieces.push_back(&source);
    if (source.is_array())
      for (const ordered& s : source)
        if (s.is_string()) pieces.push_back(&s);
    if (pieces.empty()) continue;
    const int first = line_of.count(pieces.front()) ? line_of[pieces.front()] : 0;
    // One line a string, each on its own line of the file, as Jupyter saves them.
    bool one_a_line = true;
    for (const ordered* p : pieces) {
      const std::string_view s = without_newline(p->get_ref<const std::string&>());
      one_a_line = one_a_line && s.find('\n') == npos;
    }
    for (std::size_t k = 1; k < pieces.size() && one_a_line; ++k)
      one_a_line = line_of[pieces[k]] > line_of[pieces[k - 1]];
    if (!one_a_line) {
      sink.fail("this cell's source is not written a line a string, each on a line of its own, as Jupyter saves "
                "it: its lines cannot be told, so the cell is not checked",
                first);
      continue;
    }
    const int last = line_of[pieces.back()];
    if (type == "markdown") {
      for (const ordered* p : pieces) put(line_of[p], without_newline(p->get_ref<const std::string&>()));
      continue;
    }
    std::string lang = cell_shell(pieces.front()->get_ref<const std::string&>());
    bool bang = false;
    if (lang.empty())
      for (const ordered* p : pieces) bang = bang || starts_with(ltrim(p->get_ref<const std::string&>()), "!");
    if (bang) lang = "bash";
    const bool python = lang.empty();
    // The fence: on the `"source": [` line above the first string and the `]` line below the last.
    const auto free = [&](int line) { return line >= 1 && line <= n && !used[static_cast<std::size_t>(line)]; };
    if (!free(first - 1) || !free(last + 1) || first - 1 == last + 1) {
      sink.fail("this code cell is not written as Jupyter saves it (its source list's brackets share a line with "
                "its strings), so it is not checked",
                first);
      continue;
    }
    put(first - 1, python ? "```python" : "```bash");
    put(last + 1, "```");
    for (std::size_t k = 0; k < pieces.size(); ++k) {
      std::string_view s = without_newline(pieces[k]->get_ref<const std::string&>());
      if (!python && k == 0 && !bang) s = {};  // the %%bash line
      if (bang) {
        const std::string_view t = ltrim(s);
        s = starts_with(t, "!") ? t.substr(1) : std::string_view();  // a `!` line runs in a shell
      }
      put(line_of[pieces[k]], s);
    }
  }
  std::string out;
  for (int l = 1; l <= n; ++l) out.append(view[static_cast<std::size_t>(l)]).append(l < n ? "\n" : "");
  return out;
}

}  // namespace attnsel::launch_detail
