// The digest of a source's bytes (see ingest.hpp), through nettle's
// SHA-256 (FIPS 180-4): a well-kept implementation, not a hand-written one.
#include <nettle/sha2.h>

#include <array>
#include <cstdint>

#include "compiler/ingest/ingest.hpp"

namespace kb {

std::string sha256_hex(std::string_view bytes) {
  sha256_ctx ctx;
  sha256_init(&ctx);
  sha256_update(&ctx, bytes.size(), reinterpret_cast<const std::uint8_t*>(bytes.data()));
  std::array<std::uint8_t, SHA256_DIGEST_SIZE> digest{};
  sha256_digest(&ctx, digest.size(), digest.data());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * digest.size());
  for (const std::uint8_t b : digest) {
    out += kHex[b >> 4];
    out += kHex[b & 0xF];
  }
  return out;
}

}  // namespace kb
