// Your own Megatron Bridge: `kbc build --mbridge PATH -o my.kb` extracts the
// checkout's code facts and builds in one step, recording its commit, and
// `kbq --kb my.kb` answers from it; `kbq --version` names the KB's Megatron
// Bridge commit(s), skill revisions and schema version. The checkout is a
// fixture inside the repository (tests/fixtures/mbridge/), made a git
// repository here when git is installed, so no ../shared is needed.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "base/schema_version.hpp"
#include "base/text.hpp"
#include "process.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kRoot = KB_SOURCE_DIR;
const std::string kFixture = kRoot + "/tests/fixtures/mbridge/alias-chain/checkout";

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

}  // namespace

TEST_CASE("kbc build --mbridge extracts a checkout and builds from it in one step, recording its commit", "[own-checkout]") {
  if (!fs::exists("/usr/bin/python3")) {
    kbtest::skip("no python3 (the extractor needs it; make deps installs it)");
    return;
  }
  kbtest::TempDir tmp("kbtests-own");
  const std::string checkout = tmp / "Megatron-Bridge";
  fs::copy(kFixture, checkout, fs::copy_options::recursive);
  std::vector<std::string> commit_args;
  std::string commit = "0123456789abcdef0123456789abcdef01234567", date = "2026-09-01";
  if (fs::exists("/usr/bin/git")) {
    // A real checkout: kbc asks git for the commit and its date.
    kbtest::Limits l;
    l.env = {"GIT_AUTHOR_DATE=2026-09-01T12:00:00Z",
             "GIT_COMMITTER_DATE=2026-09-01T12:00:00Z",
             "GIT_AUTHOR_NAME=t",
             "GIT_AUTHOR_EMAIL=t@example.invalid",
             "GIT_COMMITTER_NAME=t",
             "GIT_COMMITTER_EMAIL=t@example.invalid",
             "HOME=" + tmp.str()};
    const auto made = kbtest::run_limited(
        "/bin/bash", {"-c", "cd '" + checkout + "' && git init -q && git add -A && git commit -q -m fork && git rev-parse HEAD"}, l);
    REQUIRE(made.exit_code == 0);
    commit = kb::trim(made.out);
  } else {
    commit_args = {"--commit", commit, "--date", date};
  }
  // kbc's temporary sources roots (kbc-mbridge-*) in the temp folder.
  const auto leftovers = [] {
    int n = 0;
    for (const auto& e : fs::directory_iterator(fs::temp_directory_path()))
      n += kb::starts_with(e.path().filename().string(), "kbc-mbridge-") ? 1 : 0;
    return n;
  };
  const int leftovers_before = leftovers();
  const std::string kb = tmp / "my.kb";
  std::vector<std::string> args{"build", "--mbridge", checkout, "-o", kb, "--quiet"};
  args.insert(args.end(), commit_args.begin(), commit_args.end());
  kbtest::Limits in_root;
  in_root.seconds = 240;
  in_root.cwd = kRoot;
  const auto built = kbtest::run_limited(KBC_PATH, args, in_root);
  INFO(built.err);
  REQUIRE(built.exit_code == 0);

  // The KB answers from the checkout's code: its recipes, nothing of kb-sources/code.
  const auto version = kbtest::run(KBQ_PATH, {"--kb", kb, "--version"});
  CHECK(version.exit_code == 0);
  CHECK(has(version.out, "Megatron Bridge: " + commit + " (" + date));
  CHECK(has(version.out, "schema version " + std::to_string(kb::kSchemaVersion)));
  const auto list = kbtest::run(KBQ_PATH, {"--kb", kb, "list"});
  CHECK(list.exit_code == 0);
  CHECK(has(list.out, "toy_1b_pretrain_config"));
  CHECK(!has(list.out, "llama3_8b"));
  const auto show = kbtest::run(KBQ_PATH, {"--kb", kb, "show", "toy_1b_pretrain_config"});
  CHECK(show.exit_code == 0);
  CHECK(has(show.out, "toy_1b_pretrain_config"));
  // The temporary sources root is gone.
  CHECK(leftovers() == leftovers_before);

  // A folder that is no checkout: exit 2 with a hint, and the KB is left as it was.
  const std::string before = kbtest::read_file(kb);
  const auto bad = kbtest::run_limited(KBC_PATH, {"build", "--mbridge", tmp / "nowhere", "-o", kb}, in_root);
  CHECK(bad.exit_code == 2);
  CHECK(has(bad.err, "not a Megatron Bridge checkout"));
  CHECK(has(bad.err, "hint: "));
  CHECK(has(bad.err, "left unchanged"));
  CHECK(kbtest::read_file(kb) == before);

  // $TMPDIR no folder: --mbridge, which needs one, says so (it aborted on
  // an uncaught filesystem_error); a build without --mbridge needs none.
  kbtest::Limits no_tmp = in_root;
  no_tmp.env = {"TMPDIR=" + tmp / "no-such-folder"};
  std::vector<std::string> again{"build", "--mbridge", checkout, "-o", kb, "--quiet"};
  again.insert(again.end(), commit_args.begin(), commit_args.end());
  const auto no_folder = kbtest::run_limited(KBC_PATH, again, no_tmp);
  CHECK(no_folder.exit_code == 2);
  CHECK(has(no_folder.err, tmp / "no-such-folder" + ": error: "));
  CHECK(has(no_folder.err, "hint: set TMPDIR to a writable folder"));
  CHECK(has(no_folder.err, "left unchanged"));
  CHECK(kbtest::read_file(kb) == before);
  const std::string plain_kb = tmp / "plain.kb";
  const auto plain = kbtest::run_limited(
      KBC_PATH,
      {"build", "--sources", kRoot + "/tests/fixtures/good/minimal", "--data", kRoot + "/kb-sources/data", "-o", plain_kb, "--quiet"},
      no_tmp);
  CHECK(plain.exit_code == 0);
  CHECK(fs::exists(plain_kb));
}

TEST_CASE("kbq --version names the KB's Megatron Bridge commits, skill revisions and schema version", "[own-checkout]") {
  const auto r = kbtest::run(KBQ_PATH, {"--version"});
  REQUIRE(r.exit_code == 0);
  CHECK(has(r.out, "schema version " + std::to_string(kb::kSchemaVersion)));
  // Every snapshot of kb-sources/code, by its full commit (snapshot.tsv).
  int snapshots = 0;
  for (const auto& e : fs::directory_iterator(kRoot + "/kb-sources/code")) {
    const fs::path tsv = e.path() / "snapshot.tsv";
    if (!fs::exists(tsv)) continue;
    for (const auto& line : kb::split(kbtest::read_file(tsv.string()), '\n'))
      if (kb::starts_with(line, "commit\t")) {
        ++snapshots;
        CHECK(has(r.out, line.substr(7)));
      }
  }
  CHECK(snapshots >= 1);
  CHECK(has(r.out, "the recipes kbq answers from"));
  // The skill's revisions, newest first.
  CHECK(has(r.out, "skill revisions: 4 ("));
}
