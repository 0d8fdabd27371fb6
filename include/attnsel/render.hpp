// Rendering: data first, text second. Selections and matrices as text for people and JSON for machines.
#pragma once

#include <string>

#include "attnsel/export.hpp"
#include "attnsel/matrix.hpp"
#include "attnsel/selection.hpp"

namespace attnsel {

struct RenderOptions {
  bool color = false;  // ANSI colours (the CLI enables them where color_wanted() says so)
};

// Whether output to a terminal should be coloured: `is_terminal`, NO_COLOR unset or empty
// (no-color.org), and TERM not "dumb". Text renderers escape control characters either way.
ATTNSEL_API bool color_wanted(bool is_terminal);

// The plan first, then why, then what was rejected.
ATTNSEL_API std::string render_text(const Selection& s, const RenderOptions& o = {});
// The decision step by step.
ATTNSEL_API std::string render_explain(const Selection& s, const RenderOptions& o = {});
// One JSON object: ok, plan {...}, errors, warnings, notes, rejected, alternatives, device, model.
// `indent` is clamped to [-1, 16] (-1: one line); invalid UTF-8 in names is replaced with U+FFFD.
ATTNSEL_API std::string render_json(const Selection& s, int indent = 2);

enum class MatrixFormat { table, markdown, json };
ATTNSEL_API std::string render_matrix(const Matrix& m, MatrixFormat format, const RenderOptions& o = {});
// What changed from `from` to `to`: slots, backends (cell by cell), rules and selection entries
// added, removed or changed (sources and notes aside). Table and Markdown give text; JSON one object.
ATTNSEL_API std::string render_matrix_diff(const Matrix& from, const Matrix& to, MatrixFormat format);

}  // namespace attnsel
