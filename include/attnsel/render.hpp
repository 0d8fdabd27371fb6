// Rendering: data first, text second. Selections and matrices as text for people and JSON for machines.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "attnsel/export.hpp"
#include "attnsel/matrix.hpp"
#include "attnsel/selection.hpp"

namespace attnsel {

// The version of attnsel's JSON output contract (docs/output.md, docs/schema/): every JSON document
// carries it as "schema_version", with "attnsel_version" and "kind". It changes only when a field
// is removed, renamed or changes meaning; new fields may appear in any release.
inline constexpr int kJsonSchemaVersion = 1;

// A JSON document of the contract from an object's text: schema_version, attnsel_version and `kind`
// first, then `body`'s keys. For programs that build their own documents (the CLI's error document);
// a body that is not a JSON object contributes nothing.
ATTNSEL_API std::string render_json_document(std::string_view kind, std::string_view body, int indent = 2);

struct RenderOptions {
  bool color = false;  // ANSI colours (the CLI enables them where color_wanted() says so)
  // The widest a line of a table may be, in terminal columns; 0: as wide as the content. Tables
  // wider than this wrap their widest columns (the CLI passes the terminal's width).
  std::size_t width = 0;
};

// Whether output to a terminal should be coloured: `is_terminal`, NO_COLOR unset or empty
// (no-color.org), and TERM not "dumb". Text renderers escape control characters either way.
ATTNSEL_API bool color_wanted(bool is_terminal);

// The plan first, then why, then what was rejected.
ATTNSEL_API std::string render_text(const Selection& s, const RenderOptions& o = {});
// The decision step by step.
ATTNSEL_API std::string render_explain(const Selection& s, const RenderOptions& o = {});
// One selection as a JSON object: ok, plan {...}, errors, warnings, notes, rejected, alternatives,
// device, model, matrix (an element of the "select" document's devices, and of check's results).
// `indent` is clamped to [-1, 16] (-1: one line); invalid UTF-8 in names is replaced with U+FFFD.
ATTNSEL_API std::string render_json(const Selection& s, int indent = 2);
// The "select" document of the output contract (docs/schema/select.schema.json), one shape for one
// GPU or several: schema_version, attnsel_version, kind, ok (every device), same_plan, plan and
// flags (what every device runs, null when they differ), errors and warnings of every device (each
// with its "device" index), devices (render_json's object per device; with `trace`, each gains the
// decision step by step, as `attnsel explain` prints it).
ATTNSEL_API std::string render_select_json(const std::vector<Selection>& plans, bool trace = false, int indent = 2);
// One selection as Markdown (pull-request comments, step summaries): the plan, the flags, why, rejected.
ATTNSEL_API std::string render_markdown(const Selection& s);

enum class MatrixFormat { table, markdown, json };
ATTNSEL_API std::string render_matrix(const Matrix& m, MatrixFormat format, const RenderOptions& o = {});
// What changed from `from` to `to`: slots, backends (cell by cell), rules and selection entries
// added, removed or changed (sources and notes aside). Table and Markdown give text; JSON one object.
ATTNSEL_API std::string render_matrix_diff(const Matrix& from, const Matrix& to, MatrixFormat format);
// How many changes render_matrix_diff lists (`attnsel matrix diff --exit-code` fails when not 0).
ATTNSEL_API std::size_t matrix_change_count(const Matrix& from, const Matrix& to);

}  // namespace attnsel
