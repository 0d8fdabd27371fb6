// Output encoding per channel: every byte attnsel prints may come from a stranger's file (a file
// name, a flag value, a message that quotes a token). One encoder per channel, used by every
// renderer and by the CLI's standard output and standard error:
//
//   terminal  text for people (text output, Markdown on stdout, every stderr line): C0 and C1
//             controls, DEL, ESC sequences (colours too, unless kept), bytes that are not UTF-8 as
//             \xNN; bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069, U+200E,
//             U+200F, U+061C) and line separators (U+2028, U+2029) as \uXXXX;
//   github    the same, for a log the Actions runner reads: no line starts a workflow command
//             (`::` after blanks) unless attnsel itself writes one, and `##[` never appears;
//   json      JSON text: `##[` written as `##\u005b`, C1 and bidi characters as \u escapes
//             (the same string once decoded);
//   markdown  the terminal encoding, for a value inside Markdown (the renderers escape Markdown's
//             own punctuation after it).
//
// Encoders never throw and never drop a character silently: what they change is shown.
#pragma once

#include <streambuf>
#include <string>
#include <string_view>

#include "attnsel/export.hpp"

namespace attnsel {

enum class OutputChannel { terminal, github, json, markdown };

// One value for one line of `channel` (a file name, an argument, a message quoting input): as the
// channel's whole-output encoding, and also CR and LF shown (\x0D, \x0A), `::` as `:\:` and `##[`
// as `##\[` wherever they are. JSON values are returned as they are (the JSON writer escapes them).
ATTNSEL_API std::string encode_value(std::string_view text, OutputChannel channel);

// Whole output for `channel`: newlines and tabs kept, everything else as the channel needs it.
// `keep_colors`: SGR colour sequences (ESC [ digits ; ... m) stay.
ATTNSEL_API std::string encode_output(std::string_view text, OutputChannel channel, bool keep_colors = false);

// encode_output as a stream: feed() any pieces, finish() at the end (an incomplete UTF-8 sequence
// or escape sequence left over is shown, not dropped).
class ATTNSEL_API OutputEncoder {
 public:
  explicit OutputEncoder(OutputChannel channel = OutputChannel::terminal, bool keep_colors = false)
      : channel_(channel), keep_colors_(keep_colors) {}
  void set_channel(OutputChannel channel, bool keep_colors) {
    channel_ = channel;
    keep_colors_ = keep_colors;
  }
  OutputChannel channel() const { return channel_; }
  void feed(std::string_view in, std::string& out);
  void finish(std::string& out);
  // The next line may start a workflow command (github only): attnsel's own annotation.
  void allow_command_line() { command_allowed_ = true; }

 private:
  // Encodes text[i...]; returns the bytes taken, 0 when more input is needed to decide.
  std::size_t step(std::string_view text, std::size_t i, bool final, std::string& out);
  OutputChannel channel_;
  bool keep_colors_;
  bool line_head_ = true;         // only blanks since the last newline
  bool command_allowed_ = false;  // allow_command_line() was called for the line being written
  std::string pending_;           // bytes held until what follows them is known
};

// A stream buffer writing to a file descriptor (1, 2) through an OutputEncoder, every write
// checked: a failed write (EPIPE, ENOSPC, EBADF) is remembered, never ignored, and nothing more
// is written after it.
class ATTNSEL_API GuardedOutput final : public std::streambuf {
 public:
  GuardedOutput(int fd, OutputChannel channel, bool keep_colors = false) : fd_(fd), encoder_(channel, keep_colors) {
    setp(area_, area_ + sizeof area_);
  }
  ~GuardedOutput() override;
  GuardedOutput(const GuardedOutput&) = delete;
  GuardedOutput& operator=(const GuardedOutput&) = delete;
  OutputEncoder& encoder() { return encoder_; }
  // Encodes what was put so far (the encoder sees it before a change of channel or mark).
  void drain();
  // The errno of the first failed write (0: none); everything is written out first.
  int finish();
  int error() const { return error_; }

 protected:
  int_type overflow(int_type ch) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  void write_out(const std::string& bytes);
  int fd_;
  OutputEncoder encoder_;
  char area_[4096];     // characters put, not yet encoded
  std::string buffer_;  // encoded bytes not yet written
  int error_ = 0;
  bool finished_ = false;
};

// Marks the next line written to `out` as attnsel's own workflow command, when `out` writes
// through a GuardedOutput; otherwise (a string stream in a test, a library caller's stream) nothing.
ATTNSEL_API void allow_workflow_command(std::ostream& out);

}  // namespace attnsel
