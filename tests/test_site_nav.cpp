// The documentation site's sidebar shortcut (site/conf.py, _NavTemplate)
// against furo's own pass: tests/site/check_nav.py builds a small site with
// the site's configuration, every page's sidebar computed both ways (a
// difference stops the build), and checks which pages the shortcut
// answered. Skipped (reported) where Sphinx, MyST, furo or BeautifulSoup is
// not installed (make deps EXTRA_DEB_PACKAGES="$(DEB_PACKAGES_SITE)", or
// make site, installs them).
#include <catch2/catch.hpp>

#include <string>

#include "cases.hpp"
#include "process.hpp"

namespace {

const std::string kRoot = KB_SOURCE_DIR;

}  // namespace

TEST_CASE("site: the sidebar of every page is furo's own", "[site]") {
  kbtest::TempDir tmp("kbtests-site-nav");
  const auto r =
      kbtest::run(kbtest::python3(), {kRoot + "/tests/site/check_nav.py", "--conf", kRoot + "/site", "--out", tmp.str() + "/nav"});
  if (r.exit_code == 77 || r.exit_code == 127) {
    kbtest::skip("the sidebar check is skipped: " + (r.out.empty() ? std::string("no python3") : r.out.substr(0, r.out.find('\n'))));
    return;
  }
  INFO("tests/site/check_nav.py:\n" << r.out << r.err);
  CHECK(r.exit_code == 0);
}
