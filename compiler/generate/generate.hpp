// Generate stage, public interface: a compilation → generated/ (docs in
// every language, recipe indexes, translation status, site files).
#pragma once

#include <string>

#include "compiler/pipeline.hpp"

namespace kb {

// Writes (or with `check`, compares) every generated file under `out_dir`.
// Returns 0 when written or fresh, 1 when `check` found stale files (named
// on stderr), 2 on error.
int generate(const Compilation& c, const std::string& out_dir, bool check, Diagnostics& diags);

}  // namespace kb
