// `kbc extract-code`: runs the static extractor (compiler/code/extract_mbridge.py
// and its package mbridge_extractor/, installed in share/kbq/extractor/) by
// path on a Megatron Bridge checkout with Python 3, writing or
// checking kb-sources/code/<commit>/, then refreshes the comparison of each
// snapshot with the one before it (code/changes-<old>-<new>.tsv).
#pragma once

#include <string>

#include "base/diag.hpp"

namespace kb {

struct ExtractOptions {
  std::string checkout;  // the Megatron Bridge checkout (holds src/megatron/bridge and scripts)
  std::string sources = "kb-sources";
  std::string commit;  // full sha; "" = ask git in the checkout
  std::string date;    // YYYY-MM-DD; "" = ask git
  bool check = false;  // compare with the checked-in folder instead of writing
  std::string python = "python3";
  std::string extractor;  // extract_mbridge.py to run; "" = the installed copy, else the source tree's
};

// Exit code: 0 written (or identical with check), 1 check found a difference,
// 2 error (reported in diags, or by the extractor on stderr).
int extract_code(const ExtractOptions& opts, Diagnostics& diags);

}  // namespace kb
