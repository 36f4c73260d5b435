// A recipe's code facts, packed (see packed_facts.hpp).
#include "base/packed_facts.hpp"

namespace kb {

std::string pack_facts(const std::vector<PackedFact>& facts) {
  stored::Writer w;
  w.var(kPackedFactsFormat);
  w.var(facts.size());
  for (const PackedFact& f : facts) {
    w.var(f.field_id);
    w.var(f.value_id);
    w.u8((f.file_id ? 1u : 0u) | (f.line ? 2u : 0u));
    if (f.file_id) w.var(*f.file_id);
    if (f.line) w.var(*f.line);
    w.vtext(f.more);
  }
  return w.take();
}

}  // namespace kb
