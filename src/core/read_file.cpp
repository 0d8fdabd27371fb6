#include "core/read_file.hpp"

#include "attnsel/input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace attnsel::detail {
namespace {

Error io_error(std::string message, std::string_view where) {
  return Error{ErrorCode::io_error, std::move(message), std::string(where), {}, {}};
}

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Closes the descriptor on every path out of read_file_bounded.
struct FdGuard {
  int fd;
  ~FdGuard() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string describe_size(std::size_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= (1u << 10) && bytes % (1u << 10) == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} bytes", bytes);
}

Result<std::string> read_fd_bounded(int fd, std::string_view name, std::size_t limit) {
  std::string text;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    if (static_cast<std::uint64_t>(st.st_size) > limit)
      return io_error(fmt::format("larger than {} ({} bytes)", describe_size(limit), st.st_size), name);
    text.reserve(static_cast<std::size_t>(st.st_size) + 1);
  }
  char chunk[1 << 16];
  // Ask for at most limit + 1 bytes in all: one byte past the limit proves the input too large.
  while (text.size() <= limit) {
    const std::size_t want = std::min(sizeof chunk, limit + 1 - text.size());
    const ssize_t n = ::read(fd, chunk, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_error(fmt::format("cannot read: {}", std::strerror(errno)), name);
    }
    if (n == 0) return text;
    text.append(chunk, static_cast<std::size_t>(n));
  }
  return io_error(fmt::format("larger than {}", describe_size(limit)), name);
}

bool names_absent_file(const Error& error) {
  return error.code == ErrorCode::io_error && (error.message.find(std::strerror(ENOENT)) != std::string::npos ||
                                               error.message.find(std::strerror(ENOTDIR)) != std::string::npos);
}

Result<std::string> read_file_bounded(const std::string& path, std::size_t limit, bool allow_special) {
  if (path.find('\0') != std::string::npos) return io_error("cannot open: the path contains a NUL byte", path);
  // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one.
  FdGuard guard{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
  if (guard.fd < 0) {
    if (errno == EISDIR) return io_error("is a directory, not a file", path);
    return io_error(fmt::format("cannot open: {}", std::strerror(errno)), path);
  }
  struct stat st {};
  if (::fstat(guard.fd, &st) != 0) return io_error(fmt::format("cannot stat: {}", std::strerror(errno)), path);
  if (S_ISDIR(st.st_mode)) return io_error("is a directory, not a file", path);
  if (!S_ISREG(st.st_mode)) {
    if (!allow_special) return io_error(fmt::format("is {}, not a regular file", kind_of(st.st_mode)), path);
    // A pipe's reader waits for data like any reader; only the open had to be non-blocking.
    const int flags = ::fcntl(guard.fd, F_GETFL);
    if (flags >= 0) ::fcntl(guard.fd, F_SETFL, flags & ~O_NONBLOCK);
  }
  return read_fd_bounded(guard.fd, path, limit);
}

}  // namespace attnsel::detail

namespace attnsel {

Result<std::string> read_input_file(const std::string& path, std::size_t limit, bool allow_special) {
  return detail::read_file_bounded(path, limit, allow_special);
}

Result<std::string> read_input_fd(int fd, std::string_view name, std::size_t limit) {
  return detail::read_fd_bounded(fd, name, limit);
}

}  // namespace attnsel
