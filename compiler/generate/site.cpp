#include "generate/generate_int.hpp"
namespace kb::gen { void write_site(const Context&, OutputFiles&) {} }
