// Checks on the KBs the build writes, shared by the test files.
#pragma once

#include <catch2/catch.hpp>

#include <initializer_list>
#include <string>

#include "base/sqlite.hpp"

namespace kbtest {

// Each table is absent from the runtime KB (build/kbq.sqlite): kbc leaves
// out the tables whose rows it compiled into a value kbq reads in their
// place (base/schema.sql marks them 'runtime: left out').
inline void check_runtime_tables_absent(std::initializer_list<const char*> tables) {
  kb::Db db(std::string(KB_BINARY_DIR) + "/kbq.sqlite", kb::Db::Mode::ReadOnly);
  for (const char* t : tables) {
    INFO(t);
    kb::Stmt st(db, "SELECT count(*) FROM sqlite_schema WHERE name = ?");
    st.bind(1, t);
    REQUIRE(st.step());
    CHECK(st.integer(0) == 0);
  }
}

}  // namespace kbtest
