// Eight bytes of text tested at once, for the loops that copy or check
// text a word at a time (the escaping check, the UTF-8 check, the JSON
// writer). The tests after "Bit Twiddling Hacks": each is exact for "some
// byte is", which is all they are asked; a byte's high bit never makes it
// below n (n <= 0x80), so below() and has() hold with such bytes among the 8.
#pragma once

#include <cstdint>
#include <cstring>

namespace kb::bytes8 {

inline constexpr std::uint64_t kOnes = 0x0101010101010101ULL, kHighs = 0x8080808080808080ULL;

// The 8 bytes at p (any alignment).
inline std::uint64_t load(const char* p) {
  std::uint64_t w = 0;
  std::memcpy(&w, p, sizeof w);
  return w;
}
// Nonzero when some byte has its high bit set (is not ASCII).
constexpr std::uint64_t high(std::uint64_t w) { return w & kHighs; }
// Nonzero when some byte is below n, for n at most 0x80.
constexpr std::uint64_t below(std::uint64_t w, std::uint64_t n) { return (w - kOnes * n) & ~w & kHighs; }
// Nonzero when some byte is c.
constexpr std::uint64_t has(std::uint64_t w, unsigned char c) { return below(w ^ (kOnes * c), 1); }

}  // namespace kb::bytes8
