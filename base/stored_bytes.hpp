// The byte layout of what kbc compiles into one value for kbq to read whole
// (the query lexicon, base/dsl/lexicon_store.cpp; the throughput
// estimator's inputs, query/perf/stored.cpp): little-endian fixed-width
// integers or LEB128 variable-length ones (zigzag-mapped when signed), IEEE
// doubles, a text as a u32 (or var) byte length then its bytes, a list as a u32 count
// then its items, an optional value as a u8 flag then the value when the
// flag is 1.
//
// Reader checks every read against the bytes left, every text against a
// length and UTF-8, every number for finiteness, and every count against
// the bytes its items need at least, so a crafted value cannot make kbq read
// outside it or reserve more than it holds. A failure throws stored::Error
// (a std::runtime_error) naming the byte offset.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "base/text.hpp"

namespace kb::stored {

// What Reader throws: bytes it was not written to read.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Writer {
 public:
  void u8(unsigned v) { out_.push_back(static_cast<char>(v)); }
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xFFu));
  }
  void i32(int v) { u32(static_cast<std::uint32_t>(v)); }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xFFu));
  }
  void f64(double v) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    u64(bits);
  }
  void text(std::string_view s) {
    u32(static_cast<std::uint32_t>(s.size()));
    out_.append(s);
  }
  void count(std::size_t n) { u32(static_cast<std::uint32_t>(n)); }
  // A text whose byte length is a var (1 byte below 128 bytes).
  void vtext(std::string_view s) {
    var(s.size());
    out_.append(s);
  }
  // An unsigned integer in 7-bit groups, low first (LEB128): 1 byte below 128.
  void var(std::uint64_t v) {
    for (; v >= 0x80; v >>= 7) out_.push_back(static_cast<char>((v & 0x7Fu) | 0x80u));
    out_.push_back(static_cast<char>(v));
  }
  // A signed one, zigzag-mapped first (0, -1, 1, -2, ... → 0, 1, 2, 3, ...).
  void svar(long long v) { var((static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v < 0 ? -1 : 0)); }
  void opt_svar(const std::optional<long long>& v) {
    u8(v ? 1 : 0);
    if (v) svar(*v);
  }
  void opt_f64(const std::optional<double>& v) {
    u8(v ? 1 : 0);
    if (v) f64(*v);
  }
  // Bytes another Writer wrote, as they are.
  void bytes(std::string_view b) { out_.append(b); }
  std::size_t size() const { return out_.size(); }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

// Reads what Writer wrote. `max_text`: the longest text it accepts.
class Reader {
 public:
  Reader(std::string_view in, std::size_t max_text) : in_(in), max_text_(max_text) {}
  [[noreturn]] void fail(const std::string& what) const { throw Error("at byte " + std::to_string(at_) + ": " + what); }
  unsigned u8() {
    need(1);
    return static_cast<unsigned char>(in_[at_++]);
  }
  // Little-endian, from a local pointer: written so, the compiler reads
  // the bytes as one load (at_, a member, would be reloaded after each).
  std::uint32_t u32() {
    need(4);
    const auto* p = reinterpret_cast<const unsigned char*>(in_.data() + at_);
    at_ += 4;
    return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 | std::uint32_t{p[3]} << 24;
  }
  int i32() { return static_cast<int>(u32()); }
  std::uint64_t u64() {
    need(8);
    const auto* p = reinterpret_cast<const unsigned char*>(in_.data() + at_);
    at_ += 8;
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
    return v;
  }
  double f64() {
    const std::uint64_t bits = u64();
    double v = 0;
    std::memcpy(&v, &bits, sizeof v);
    if (!std::isfinite(v)) fail("a number that is not finite");
    return v;
  }
  std::string_view text() { return checked_text(u32()); }
  // A vtext's bytes within the length limit, not checked as UTF-8: for a
  // reader that checks each text it uses when it uses it.
  std::string_view vbytes() {
    const std::uint64_t n = var();
    if (n > max_text_) fail("a text of " + std::to_string(n) + " bytes");
    need(static_cast<std::size_t>(n));
    const std::string_view s = in_.substr(at_, static_cast<std::size_t>(n));
    at_ += static_cast<std::size_t>(n);
    return s;
  }
  std::string_view vtext() { return checked_text(var()); }
  // A list's count, each item at least `item_bytes` long: never more items
  // than the bytes left could hold (no huge reservation).
  std::size_t count(std::size_t item_bytes) {
    const std::uint32_t n = u32();
    if (n > (in_.size() - at_) / item_bytes) fail("a count of " + std::to_string(n) + " past the bytes left");
    return n;
  }
  bool flag() {
    const unsigned f = u8();
    if (f > 1) fail("flag " + std::to_string(f) + " is neither 0 nor 1");
    return f == 1;
  }
  std::uint64_t var() {
    // Most are below 128: one byte; most others (ids, lengths) below 16 384:
    // two bytes. Both read without the loop.
    if (at_ < in_.size()) {
      const auto b = static_cast<unsigned char>(in_[at_]);
      if (b < 0x80) {
        ++at_;
        return b;
      }
      if (at_ + 1 < in_.size()) {
        const auto c = static_cast<unsigned char>(in_[at_ + 1]);
        if (c < 0x80) {
          at_ += 2;
          return (b & 0x7Fu) | (static_cast<std::uint64_t>(c) << 7);
        }
      }
    }
    return var_long();
  }
  long long svar() {
    const std::uint64_t z = var();
    return static_cast<long long>((z >> 1) ^ (~(z & 1) + 1));
  }
  std::optional<long long> opt_svar() { return flag() ? std::optional<long long>(svar()) : std::nullopt; }
  std::optional<double> opt_f64() { return flag() ? std::optional<double>(f64()) : std::nullopt; }
  bool done() const { return at_ == in_.size(); }
  std::size_t at() const { return at_; }
  // A reader of the next `n` bytes alone, which must be there, its offsets
  // counted from this one's start (errors name the byte of the whole value);
  // this one goes past them.
  Reader part(std::uint64_t n) {
    need(static_cast<std::size_t>(std::min<std::uint64_t>(n, SIZE_MAX)));
    Reader r(in_.substr(0, at_ + static_cast<std::size_t>(n)), max_text_);
    r.at_ = at_;
    at_ += static_cast<std::size_t>(n);
    return r;
  }
  // Past `n` bytes, which must be there.
  void skip(std::uint64_t n) {
    need(static_cast<std::size_t>(std::min<std::uint64_t>(n, SIZE_MAX)));
    at_ += static_cast<std::size_t>(n);
  }

 private:
  // var() past two bytes: up to ten, the tenth at most 1 (64 bits).
  [[gnu::noinline]] std::uint64_t var_long() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const unsigned b = u8();
      if (shift == 63 && b > 1) break;  // past 64 bits
      v |= static_cast<std::uint64_t>(b & 0x7Fu) << shift;
      if (!(b & 0x80u)) return v;
    }
    fail("an integer longer than 64 bits");
  }
  void need(std::size_t n) const {
    if (n > in_.size() - at_) fail("the bytes end early");
  }
  // A text of `n` bytes: within the length limit and the bytes left, UTF-8.
  std::string_view checked_text(std::uint64_t n) {
    if (n > max_text_) fail("a text of " + std::to_string(n) + " bytes");
    need(static_cast<std::size_t>(n));
    const std::string_view s = in_.substr(at_, n);
    if (kb::find_invalid_utf8(s)) fail("a text that is not UTF-8");
    at_ += n;
    return s;
  }
  std::string_view in_;
  std::size_t max_text_;
  std::size_t at_ = 0;
};

}  // namespace kb::stored
