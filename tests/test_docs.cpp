// Documentation that must agree with the code: every kbq option in --help
// is described in docs/kbq.md. (That JSON outputs follow their schemas in
// docs/ is tests/test_schemas.cpp's, with a JSON Schema validator.)
#include <catch2/catch.hpp>

#include <algorithm>
#include <regex>
#include <set>

#include "process.hpp"

TEST_CASE("kbq --help and docs/kbq.md agree", "[docs]") {
  const std::string doc = kbtest::read_file(std::string(KB_SOURCE_DIR) + "/docs/kbq.md");
  REQUIRE(!doc.empty());
  std::set<std::string> flags;
  for (const char* sub : {"", "show", "check", "rules", "pitfalls", "sources"}) {
    std::vector<std::string> args;
    if (*sub) args.push_back(sub);
    args.push_back("--help");
    const auto r = kbtest::run(KBQ_PATH, args);
    REQUIRE(r.exit_code == 0);
    const std::regex flag("(--[a-z][a-z-]+)");
    for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), flag); it != std::sregex_iterator(); ++it) flags.insert((*it)[1]);
    if (*sub) CHECK(doc.find(std::string("`") + sub) != std::string::npos);
  }
  REQUIRE(flags.count("--format"));
  for (const auto& f : flags) {
    INFO(f);
    CHECK(doc.find(f) != std::string::npos);
  }
}
