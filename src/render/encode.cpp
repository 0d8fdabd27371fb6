// The output encoders of include/attnsel/encode.hpp: one per channel, streaming, never throwing.
#include "attnsel/encode.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ostream>

namespace attnsel {
namespace {

const char kHex[] = "0123456789ABCDEF";

void hex_byte(unsigned char c, std::string& out) {
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 0xF];
}

void u_escape(unsigned cp, std::string& out) {
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 0xF];
}

// Length of the well-formed UTF-8 sequence at text[i] (RFC 3629), 0 when it is not one, or
// SIZE_MAX when the text ends inside what could still become one.
constexpr std::size_t kNeedMore = static_cast<std::size_t>(-1);
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c == 0xE0) n = 3, lo = 0xA0;
  else if (c == 0xED) n = 3, hi = 0x9F;
  else if (c >= 0xE1 && c <= 0xEF) n = 3;
  else if (c == 0xF0) n = 4, lo = 0x90;
  else if (c == 0xF4) n = 4, hi = 0x8F;
  else if (c >= 0xF1 && c <= 0xF3) n = 4;
  else return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if (i + k >= text.size()) return kNeedMore;
    const unsigned char b = byte(i + k);
    if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return 0;
  }
  return n;
}

unsigned decode(std::string_view text, std::size_t i, std::size_t n) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned>(static_cast<unsigned char>(text[i + k])); };
  if (n == 2) return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
  if (n == 3) return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
  return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
}

// Code points shown, never sent: C1 controls, bidirectional controls, line and paragraph separators.
bool hidden_code_point(unsigned cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029;
}

// ESC [ (digits or ;)* m at text[i]: its length; 0 when it is not one; kNeedMore when the text ends first.
std::size_t sgr_length(std::string_view text, std::size_t i) {
  constexpr std::size_t kLongest = 32;
  if (i + 1 >= text.size()) return kNeedMore;
  if (text[i + 1] != '[') return 0;
  for (std::size_t k = i + 2; k < text.size() && k - i < kLongest; ++k) {
    if (text[k] == 'm') return k - i + 1;
    if (!(text[k] == ';' || (text[k] >= '0' && text[k] <= '9'))) return 0;
  }
  return text.size() - i < kLongest ? kNeedMore : 0;
}

}  // namespace

std::size_t OutputEncoder::step(std::string_view s, std::size_t i, bool final, std::string& out) {
  const bool json = channel_ == OutputChannel::json;
  const auto c = static_cast<unsigned char>(s[i]);
  auto control = [&](unsigned cp) {
    if (json) u_escape(cp, out);
    else if (cp < 0x100 && cp < 0x80) hex_byte(static_cast<unsigned char>(cp), out);
    else u_escape(cp, out);
  };
  if (c == '\n') {
    out += '\n';
    line_head_ = true;
    command_allowed_ = false;
    return 1;
  }
  if (line_head_ && (c == ' ' || c == '\t')) {
    out += static_cast<char>(c);
    return 1;
  }
  if (line_head_ && c == ':' && !json) {
    if (i + 1 >= s.size() && !final) return 0;
    line_head_ = false;
    if (i + 1 < s.size() && s[i + 1] == ':') {
      // The runner runs `::command` after leading blanks: only attnsel's own annotations may.
      out += channel_ == OutputChannel::github && command_allowed_ ? "::" : ":\\:";
      command_allowed_ = false;
      return 2;
    }
    out += ':';
    return 1;
  }
  line_head_ = false;
  if (c == '#') {
    if (i + 2 >= s.size() && !final && std::string_view("##[").substr(0, s.size() - i) == s.substr(i)) return 0;
    if (s.substr(i, 3) == "##[") {
      out += json ? "##\\u005b" : "##\\[";  // the runner's v1 command prefix, anywhere on a line
      return 3;
    }
    out += '#';
    return 1;
  }
  if ((c >= 0x20 && c < 0x7F) || c == '\t') {
    out += static_cast<char>(c);
    return 1;
  }
  if (c == 0x1B && keep_colors_ && !json) {
    const std::size_t n = sgr_length(s, i);
    if (n == kNeedMore && !final) return 0;
    if (n != kNeedMore && n > 0) {
      out.append(s.substr(i, n));
      return n;
    }
  }
  if (c < 0x80) {
    control(c);
    return 1;
  }
  const std::size_t n = utf8_length(s, i);
  if (n == kNeedMore && !final) return 0;
  if (n == 0 || n == kNeedMore) {
    if (json) out += "\\ufffd";
    else hex_byte(c, out);
    return 1;
  }
  const unsigned cp = decode(s, i, n);
  if (hidden_code_point(cp)) {
    if (!json && cp <= 0x9F) {  // as the text renderers always showed C1: the bytes
      hex_byte(c, out);
      hex_byte(static_cast<unsigned char>(s[i + 1]), out);
    } else {
      u_escape(cp, out);
    }
    return n;
  }
  out.append(s.substr(i, n));
  return n;
}

void OutputEncoder::feed(std::string_view in, std::string& out) {
  std::string joined;
  std::string_view s = in;
  if (!pending_.empty()) {
    joined = std::move(pending_);
    pending_.clear();
    joined.append(in);
    s = joined;
  }
  out.reserve(out.size() + s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    if (line_head_) {  // a line's leading blanks (a JSON document's indentation), in bulk
      std::size_t j = i;
      while (j < s.size() && (s[j] == ' ' || s[j] == '\t')) ++j;
      out.append(s.data() + i, j - i);
      i = j;
      if (i == s.size()) break;
    }
    if (!line_head_) {  // the common case, in bulk: printable ASCII that needs no look-ahead
      std::size_t j = i;
      while (j < s.size() && static_cast<unsigned char>(s[j]) >= 0x20 && static_cast<unsigned char>(s[j]) < 0x7F &&
             s[j] != '#')
        ++j;
      out.append(s.data() + i, j - i);
      i = j;
      if (i == s.size()) break;
    }
    const std::size_t n = step(s, i, false, out);
    if (n == 0) {
      pending_.assign(s.substr(i));
      return;
    }
    i += n;
  }
}

void OutputEncoder::finish(std::string& out) {
  const std::string rest = std::move(pending_);
  pending_.clear();
  for (std::size_t i = 0; i < rest.size();) i += step(rest, i, true, out);
}

std::string encode_output(std::string_view text, OutputChannel channel, bool keep_colors) {
  OutputEncoder e(channel, keep_colors);
  std::string out;
  e.feed(text, out);
  e.finish(out);
  return out;
}

std::string encode_value(std::string_view text, OutputChannel channel) {
  if (channel == OutputChannel::json) return std::string(text);
  std::string out;
  out.reserve(text.size());
  OutputEncoder e(channel, false);
  std::string piece;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '\n' || c == '\r') {
      hex_byte(static_cast<unsigned char>(c), out);
      ++i;
      continue;
    }
    if (c == ':' && i + 1 < text.size() && text[i + 1] == ':') {
      out += ":\\:";
      i += 2;
      continue;
    }
    // Everything else as the whole-output encoding has it, one piece between the cases above.
    std::size_t j = i;
    while (j < text.size() && text[j] != '\n' && text[j] != '\r' && !(text[j] == ':' && j + 1 < text.size() && text[j + 1] == ':'))
      ++j;
    piece.clear();
    e = OutputEncoder(channel, false);
    e.feed(text.substr(i, j - i), piece);
    e.finish(piece);
    out += piece;
    i = j;
  }
  return out;
}

// ---- GuardedOutput ----

GuardedOutput::~GuardedOutput() { finish(); }

void GuardedOutput::write_out(const std::string& bytes) {
  if (error_ != 0) return;
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = n < 0 ? errno : EIO;
      return;
    }
    done += static_cast<std::size_t>(n);
  }
}

// Characters put one at a time (`out << c`) gather in the put area; they are encoded when it
// fills, before a string is written, and on flush.
void GuardedOutput::drain() {
  if (pptr() > pbase()) encoder_.feed(std::string_view(pbase(), static_cast<std::size_t>(pptr() - pbase())), buffer_);
  setp(area_, area_ + sizeof area_);
  if (buffer_.size() >= (64u << 10)) {
    write_out(buffer_);
    buffer_.clear();
  }
}

GuardedOutput::int_type GuardedOutput::overflow(int_type ch) {
  if (error_ != 0) return traits_type::eof();
  drain();
  if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
  *pptr() = traits_type::to_char_type(ch);
  pbump(1);
  return ch;
}

std::streamsize GuardedOutput::xsputn(const char* s, std::streamsize n) {
  if (error_ != 0) return 0;
  if (n <= epptr() - pptr()) {  // fits the put area
    std::copy(s, s + n, pptr());
    pbump(static_cast<int>(n));
    return n;
  }
  drain();
  encoder_.feed(std::string_view(s, static_cast<std::size_t>(n)), buffer_);
  if (buffer_.size() >= (64u << 10)) {
    write_out(buffer_);
    buffer_.clear();
  }
  return error_ != 0 ? 0 : n;
}

int GuardedOutput::sync() {
  drain();
  write_out(buffer_);
  buffer_.clear();
  return error_ != 0 ? -1 : 0;
}

int GuardedOutput::finish() {
  if (!finished_) {
    finished_ = true;
    drain();
    encoder_.finish(buffer_);
    sync();
  }
  return error_;
}

void allow_workflow_command(std::ostream& out) {
  if (auto* guarded = dynamic_cast<GuardedOutput*>(out.rdbuf())) {
    guarded->drain();  // what came before the mark is encoded without it
    guarded->encoder().allow_command_line();
  }
}

}  // namespace attnsel
