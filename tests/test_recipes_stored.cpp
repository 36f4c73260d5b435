// The recipes as kbc compiles them for answers (recipes_compiled,
// query/kb/recipes_stored.hpp): what both KBs hold is what compiling their
// rows gives now, every recipe reads back field for field, and a crafted
// value is refused with where it is wrong, never read past.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "base/checked.hpp"
#include "base/sqlite.hpp"
#include "base/stored_bytes.hpp"
#include "kb_tables.hpp"
#include "query/kb/kb.hpp"
#include "query/kb/recipes_stored.hpp"
#include "query/kbq.hpp"

namespace {

namespace sr = kbq::stored_recipes;

auto fields(const kbq::Recipe& r) {
  return std::tie(r.name, r.kind, r.target, r.mode, r.launch_mode, r.model_key, r.model, r.modality, r.moe, r.tp, r.pp, r.vp, r.cp, r.ep,
                  r.etp, r.sp, r.seq_len, r.gbs, r.mbs, r.dataset, r.precision, r.low_precision, r.runs_in, r.runs_in_at, r.data,
                  r.data_name, r.data_at, r.user_data, r.peft_modes, r.peft_at, r.raises, r.raises_at, r.shadowed, r.shadowed_at,
                  r.native_gpus, r.native_hardware, r.native_precision, r.variant, r.min_gpus, r.commit);
}

// Every recipe of the chunks, read.
std::vector<kbq::Recipe> read_all(const std::vector<std::string>& chunks) {
  sr::Index index(chunks);
  std::vector<kbq::Recipe> out;
  for (const auto& e : index.entries()) index.read(e, out.emplace_back());
  return out;
}

kbq::Recipe sample(const std::string& name) {
  kbq::Recipe r;
  r.name = name;
  r.target = "m.x." + name;
  r.mode = "sft";
  r.launch_mode = "sft";
  r.model_key = "m_8b";
  r.modality = "text";
  r.tp = 2, r.pp = 1, r.cp = 1, r.ep = 1, r.seq_len = 4096, r.gbs = 128, r.mbs = 1;
  r.sp = true;
  r.dataset = "squad";
  r.peft_modes = {"lora", "dora"};
  r.runs_in_at = "a/b.py:12@abc";
  r.data = "squad — the text";
  return r;
}

}  // namespace

TEST_CASE("recipes: the compiled recipes are the rows' read, recipe for recipe", "[catalog]") {
  // The rows are the full KB's: the runtime KB leaves recipe_launch and
  // launch_sites out once they are compiled (docs/schema.md).
  const std::string full = std::string(KB_BINARY_DIR) + "/kb.sqlite";
  const std::vector<kbq::Recipe> rows = kbq::Kb(full).recipes_from_tables();
  REQUIRE(rows.size() > 1000);
  kbtest::check_runtime_tables_absent({"recipe_launch", "launch_sites"});
  // The rows with each recipe's state floor, which kbc adds (test_state_floor.cpp).
  const std::vector<std::string> chunks = kbq::Engine::open(full).compile_recipes();
  for (const std::string& file : {full, std::string(KB_BINARY_DIR) + "/kbq.sqlite"}) {
    INFO(file);
    kbq::Kb kb(file);
    {
      kb::Db db(file, kb::Db::Mode::ReadOnly);
      kb::Stmt st(db, "SELECT chunk, bytes FROM recipes_compiled ORDER BY chunk");
      size_t n = 0;
      for (; st.step(); ++n) {
        REQUIRE(n < chunks.size());
        CHECK(st.integer(0) == static_cast<long long>(n));
        CHECK(std::string(st.blob(1)) == chunks[n]);  // not stale
      }
      CHECK(n == chunks.size());
      CHECK(n > 1);  // more than one chunk: the chunks' seams are read too
    }
    const std::vector<kbq::Recipe> back = read_all(chunks);
    REQUIRE(back.size() == rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      INFO(rows[i].name);
      kbq::Recipe want = rows[i];
      want.model.clear();  // the snapshot's, set by the KB reader
      want.commit.clear();
      CHECK(fields(back[i]) == fields(want));
    }
    // Through the reader: each kind's catalog is the rows' of that kind, in
    // name order, with the model's name and the commit.
    for (const auto kind : {kb::RecipeKind::Library, kb::RecipeKind::Benchmark}) {
      std::vector<kbq::Recipe> want;
      for (const auto& r : rows)
        if (r.kind == kind) want.push_back(r);
      const auto& got = kb.catalog(kind).recipes;
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < want.size(); ++i) CHECK(fields(got[i]) == fields(want[i]));
    }
  }
}

TEST_CASE("recipes: chunks hold at most their limit, each kind keeps its name order", "[catalog]") {
  std::vector<kbq::Recipe> recipes;
  for (int i = 0; i < 600; ++i) recipes.push_back(sample("r" + std::to_string(1000 + i)));
  recipes[599].kind = kb::RecipeKind::Benchmark;
  const auto chunks = sr::to_stored(recipes);
  CHECK(chunks.size() == 3);  // 256 + 256 + 88
  const auto back = read_all(chunks);
  REQUIRE(back.size() == 600);
  CHECK(back[599].kind == kb::RecipeKind::Benchmark);
  CHECK(back[0].peft_modes == std::vector<std::string>{"lora", "dora"});
  CHECK(back[0].sp == std::optional<bool>(true));
  CHECK_FALSE(back[0].vp.has_value());
  CHECK(back[0].state_floor == 0);
  recipes[1].state_floor = 5.24e11;
  CHECK(read_all(sr::to_stored(recipes))[1].state_floor == 5.24e11);
  CHECK(sr::to_stored({}).size() == 1);  // an empty KB still has its one chunk
  CHECK(read_all(sr::to_stored({})).empty());
}

TEST_CASE("recipes: a crafted compiled value is refused with where it is wrong", "[catalog][hostile]") {
  const auto refused = [](kbq::Recipe r, const std::string& what) {
    const auto chunks = sr::to_stored({r});
    CHECK_THROWS_WITH(read_all(chunks), Catch::Contains(what));
  };
  {
    kbq::Recipe r = sample("q_8b_sft_config");
    r.tp = 0;
    refused(r, "kb: recipes.tp of 'q_8b_sft_config': 0 is out of range (1 to 1048576)");
  }
  {
    kbq::Recipe r = sample("q_8b_sft_config");
    r.seq_len = 9000000000000000000LL;
    refused(r, "recipes.seq_len of 'q_8b_sft_config': 9000000000000000000 is out of range");
  }
  {
    kbq::Recipe r = sample("q_8b_sft_config");
    r.dataset = "mock`; rm -rf ~ #";
    refused(r, "its dataset 'mock`; rm -rf ~ #' is not a name");
  }
  refused(sample("--help"), "its name '--help' is not a name");
  for (const double floor : {-1.0, 1e300}) {
    kbq::Recipe r = sample("q_8b_sft_config");
    r.state_floor = floor;
    refused(r, "recipe 'q_8b_sft_config': state floor");
  }
  {
    kbq::Recipe r = sample("q_8b_sft_config");
    r.state_floor = std::nan("");
    refused(r, "a number that is not finite");
  }
  {
    kbq::Recipe r = sample("q_8b_sft_config");
    r.model_key = "m\x1b]0;x";
    refused(r, "its model_key 'm\\x1b]0;x' is not a name");
  }
  {
    kbq::Recipe r = sample("q_8b_sft_config");
    r.data = "\xff\xfe";
    refused(r, "its data is not UTF-8");
  }
  // Every cut of a chunk and every byte changed: refused, or (a changed
  // byte) read as another valid value; never read past, never a crash
  // (the suite runs under ASan too: make asan).
  const std::string whole = sr::to_stored({sample("a_1b_sft_config"), sample("b_2b_sft_config")}).front();
  for (size_t n = 0; n < whole.size(); ++n) {
    INFO(n);
    CHECK_THROWS_AS(read_all({whole.substr(0, n)}), kb::stored::Error);
  }
  for (size_t i = 0; i < whole.size(); ++i)
    for (const unsigned x : {0x01U, 0x7fU, 0x80U, 0xffU}) {
      std::string b = whole;
      b[i] = static_cast<char>(static_cast<unsigned char>(b[i]) ^ x);
      try {
        const auto back = read_all({b});
        CHECK(back.size() <= 2);
      } catch (const kb::stored::Error&) {
      } catch (const kb::KbValueError&) {
      }
    }
}
