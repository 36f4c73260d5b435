// Per-case test registration (see cases.hpp): each case is a Catch2 test
// case of its own, made the way TEST_CASE makes one (AutoReg), with an
// invoker that runs the case's function.
#include "cases.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <deque>
#include <stdexcept>

namespace kbtest {

namespace {

class FunctionInvoker : public Catch::ITestInvoker {
 public:
  explicit FunctionInvoker(std::function<void()> body) : body_(std::move(body)) {}
  void invoke() const override { body_(); }

 private:
  std::function<void()> body_;
};

// Test names and tags must outlive the registry (it keeps StringRefs).
std::deque<std::string>& strings() {
  static std::deque<std::string> s;
  return s;
}

}  // namespace

void add_case(const std::string& name, const std::string& tags, std::function<void()> body) {
  const std::string& n = strings().emplace_back(name);
  const std::string& t = strings().emplace_back(tags);
  // AutoReg registers in its constructor; it holds nothing afterwards.
  static std::deque<Catch::AutoReg> regs;
  regs.emplace_back(new FunctionInvoker(std::move(body)), Catch::SourceLineInfo(__FILE__, static_cast<std::size_t>(__LINE__)),
                    Catch::StringRef(), Catch::NameAndTags{Catch::StringRef(n), Catch::StringRef(t)});
}

std::vector<std::filesystem::path> files_in(const std::filesystem::path& dir, const std::string& ext) {
  namespace fs = std::filesystem;
  std::vector<fs::path> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file() && it->path().string().size() >= ext.size() &&
        it->path().string().compare(it->path().string().size() - ext.size(), ext.size(), ext) == 0)
      out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

namespace {
int hex_digit(const std::string& spec, size_t i) {
  const char c = spec[i];
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  throw std::runtime_error("bytes: '" + std::string(1, c) + "' is not a hex digit (\\xHH) in: " + spec);
}
}  // namespace

std::string decode_bytes(const std::string& spec) {
  std::string out;
  size_t i = 0;
  const auto skip_space = [&] {
    while (i < spec.size() && spec[i] == ' ') ++i;
  };
  skip_space();
  while (i < spec.size()) {
    if (spec[i] != '"') throw std::runtime_error("bytes: expected '\"' at " + std::to_string(i) + " in: " + spec);
    ++i;
    std::string piece;
    while (i < spec.size() && spec[i] != '"') {
      const char c = spec[i++];
      if (c != '\\') {
        piece += c;
        continue;
      }
      if (i >= spec.size()) throw std::runtime_error("bytes: dangling backslash in: " + spec);
      const char e = spec[i++];
      switch (e) {
        case 'n':
          piece += '\n';
          break;
        case 't':
          piece += '\t';
          break;
        case 'r':
          piece += '\r';
          break;
        case '0':
          piece += '\0';
          break;
        case '\\':
        case '"':
          piece += e;
          break;
        case 'x':
          if (i + 2 > spec.size()) throw std::runtime_error("bytes: short \\x escape (two hex digits) in: " + spec);
          piece += static_cast<char>(hex_digit(spec, i) * 16 + hex_digit(spec, i + 1));
          i += 2;
          break;
        default:
          throw std::runtime_error(std::string("bytes: unknown escape \\") + e + " in: " + spec);
      }
    }
    if (i >= spec.size()) throw std::runtime_error("bytes: unterminated piece in: " + spec);
    ++i;  // the closing quote
    long count = 1;
    if (i < spec.size() && spec[i] == '*') {
      ++i;
      size_t used = 0;
      try {
        count = std::stol(spec.substr(i), &used);
      } catch (const std::exception&) {
        throw std::runtime_error("bytes: '*' without a count in: " + spec);
      }
      if (count < 0) throw std::runtime_error("bytes: negative count in: " + spec);
      i += used;
    }
    for (long k = 0; k < count; ++k) out += piece;
    skip_space();
  }
  return out;
}

}  // namespace kbtest
