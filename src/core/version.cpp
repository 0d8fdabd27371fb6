#include "attnsel/version.hpp"

namespace attnsel {

const char* version() noexcept { return ATTNSEL_VERSION_STRING; }

}  // namespace attnsel
