// The compiled matrix image: the built-in data (the generation list, every generation's matrix,
// the GPU catalog, the engine profiles) loaded and validated at build time by the JSON loaders and
// stored as a versioned binary blob that decodes without parsing. data/*.json stays the source of
// truth; tools/matrix_image writes the blob, the library embeds it. Internal.
//
// Layout (integers little-endian): "ATNSIMG\0", u32 format version, u32 section count, then per
// section {u8 kind, string name, u32 offset, u32 size}, then the sections. A string is a u32 length
// and its bytes; a vector a u32 count and its elements; an optional a u8 flag and its value. A
// profile's grammars are a u32 count, then per grammar its name, its `since` and its encoding as a
// string, so that each decodes alone, on first use. Each type's fields are listed once, in
// image.cpp, for both directions.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnsel/catalog.hpp"
#include "attnsel/error.hpp"
#include "attnsel/matrix.hpp"
#include "attnsel/profile.hpp"

namespace attnsel {
namespace image {

// Bumped whenever the layout or a serialized type changes; a blob of another version is ignored
// (the library then parses the JSON, as without an image).
inline constexpr std::uint32_t kFormatVersion = 17;

// The blob compiled into the library (generated/matrix_image.cpp); empty in tools/matrix_image,
// which builds the blob from the JSON.
std::string_view embedded_blob();

// Build time: loads every built-in file with the JSON loaders and encodes the blob. An invalid
// data file is an error naming the file and the JSON pointer: a broken image cannot ship.
Result<std::string> encode_builtin();

// Run time, each decoded on first use, once per process (thread-safe). Null (or nullopt) when
// the blob has no such section or cannot be read: the caller then loads the JSON.
std::optional<std::vector<MatrixGeneration>> generations();
std::shared_ptr<const Matrix> matrix(std::string_view file);
// Only a matrix's info (engine, version, schema), without decoding the rest (`attnsel --version`).
std::optional<MatrixInfo> matrix_info(std::string_view file);
std::shared_ptr<const Catalog> catalog();
// A built-in profile by its data path ("engines/sglang/profile.json"); its grammars decode on
// first use (deserialize_profile decodes them at once).
std::shared_ptr<const EngineProfile> profile(std::string_view path);

// The canonical encoding of one object: equal bytes mean equal objects, field by field.
std::string serialize(const Matrix& m);
std::string serialize(const Catalog& c);
std::string serialize(const EngineProfile& p);
std::string serialize(const std::vector<MatrixGeneration>& g);
// And back (tests round-trip through these); a truncated or malformed input is an error.
Result<std::shared_ptr<const Matrix>> deserialize_matrix(std::string_view bytes);
Result<std::shared_ptr<const Catalog>> deserialize_catalog(std::string_view bytes);
Result<std::shared_ptr<const EngineProfile>> deserialize_profile(std::string_view bytes);
Result<std::vector<MatrixGeneration>> deserialize_generations(std::string_view bytes);

}  // namespace image

namespace detail {

// The JSON loaders of the built-in files: what the image is built from, and what the library
// falls back to without one.
Result<std::vector<MatrixGeneration>> load_builtin_generations_json();
Result<std::shared_ptr<const Matrix>> load_builtin_matrix_json(std::string_view file);
Result<std::shared_ptr<const Catalog>> load_builtin_catalog_json();
// `path` is the profile's data path: "engines/sglang/profile.json".
Result<std::shared_ptr<const EngineProfile>> load_builtin_profile_json(std::string_view path);
// The data paths of the built-in profiles, in file order.
std::vector<std::string> builtin_profile_paths();

}  // namespace detail
}  // namespace attnsel
