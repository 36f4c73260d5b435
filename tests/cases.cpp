// Per-case test registration (see cases.hpp): each case is a Catch2 test
// case of its own, made the way TEST_CASE makes one (AutoReg), with an
// invoker that runs the case's function.
#include "cases.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <deque>

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

}  // namespace kbtest
