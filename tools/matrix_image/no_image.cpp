// The library without a compiled image: attnsel_matrix_image itself (which builds the image from
// the JSON), and cross builds that cannot run it. Every built-in file is then parsed from its JSON.
#include "matrix/image.hpp"

namespace attnsel::image {

std::string_view embedded_blob() { return {}; }

}  // namespace attnsel::image
