// kbq: answers questions about Megatron Bridge training recipes from the
// knowledge base embedded at build time (or --kb FILE). Exit codes: 0
// answered, 1 nothing matched / a rule failed (check), 2 error.
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "base/diag.hpp"
#include "base/sqlite.hpp"
#include "base/text.hpp"
#include "query/plan/plan.hpp"
#include "query/render/render.hpp"

#ifdef KBQ_ARENA
// kbq answers and exits (main ends with _Exit, freeing nothing), so its C++
// allocations come from a bump arena: no malloc bookkeeping, and delete does
// nothing. An answer allocates a few MB at most (docs/performance.md);
// SQLite keeps its own allocator. Sanitizer and fuzzing builds leave
// allocation to the runtime (CMakeLists.txt).
namespace {
constexpr std::size_t kArenaChunk = std::size_t{1} << 20;
char* arena_next = nullptr;
std::size_t arena_left = 0;

void* arena_alloc(std::size_t size, std::size_t align) {
  if (size > kArenaChunk / 4) {
    void* p = std::aligned_alloc(align, (size + align - 1) / align * align);
    if (!p) throw std::bad_alloc();
    return p;
  }
  auto pad = [&] { return (align - reinterpret_cast<std::uintptr_t>(arena_next) % align) % align; };
  if (!arena_next || pad() + size > arena_left) {
    arena_next = static_cast<char*>(std::malloc(kArenaChunk));
    if (!arena_next) throw std::bad_alloc();
    arena_left = kArenaChunk;
  }
  const std::size_t p = pad();
  char* out = arena_next + p;
  arena_next += p + size;
  arena_left -= p + size;
  return out;
}
}  // namespace

void* operator new(std::size_t size) { return arena_alloc(size ? size : 1, alignof(std::max_align_t)); }
void* operator new[](std::size_t size) { return arena_alloc(size ? size : 1, alignof(std::max_align_t)); }
void* operator new(std::size_t size, std::align_val_t a) { return arena_alloc(size ? size : 1, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t size, std::align_val_t a) { return arena_alloc(size ? size : 1, static_cast<std::size_t>(a)); }
void operator delete(void*) noexcept {}
void operator delete[](void*) noexcept {}
void operator delete(void*, std::size_t) noexcept {}
void operator delete[](void*, std::size_t) noexcept {}
void operator delete(void*, std::align_val_t) noexcept {}
void operator delete[](void*, std::align_val_t) noexcept {}
void operator delete(void*, std::size_t, std::align_val_t) noexcept {}
void operator delete[](void*, std::size_t, std::align_val_t) noexcept {}
#endif

namespace {

// Writes everything; a closed pipe (`kbq ... | head`) ends quietly with 0.
void emit(const std::string& text) {
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
    if (errno == EPIPE) std::_Exit(0);
    std::_Exit(kb::kExitError);
  }
}

int run(int argc, char** argv) {
  CLI::App app{"kbq: recipes, launch commands and sizing-rule checks for Megatron Bridge, from the knowledge base"};
  std::string query, format = "text", lang, kb_path;
  int limit = 3;
  app.add_option("query", query, "the question, e.g. \"peft qwen3 1 gpu\" (see docs/query-language.md)");
  app.add_option("--format", format, "text, markdown or json")->check(CLI::IsMember({"text", "markdown", "json"}));
  app.add_option("--lang", lang, "language of prose, one the KB has (en, fr, ja, zh; default: the query's own, else en)");
  app.add_option("--limit", limit, "number of recipes to show (default 3)")->check(CLI::Range(1, 1000));
  app.add_option("--kb", kb_path, "knowledge base file (default: the one embedded in kbq)");
  app.fallthrough();

  std::string recipe;
  auto* show = app.add_subcommand("show", "all facts of one recipe");
  show->add_option("recipe", recipe, "recipe function name")->required();
  long long gpus = 0;
  std::string hardware;
  std::vector<std::string> kv;
  auto* check = app.add_subcommand("check", "check your own override set: every rule's verdict (exit 1 if one fails)");
  check->add_option("recipe", recipe, "recipe function name")->required();
  check->add_option("--gpus", gpus, "world size (number of GPUs)")->required()->check(CLI::Range(1LL, 1000000LL));
  check->add_option("--hardware", hardware, "GPU type, e.g. h100, gb200 (default from the KB)");
  check->add_option("overrides", kv, "KEY=VALUE overrides, e.g. model.tensor_model_parallel_size=4");
  auto* rules = app.add_subcommand("rules", "the sizing rules");
  auto* pitfalls = app.add_subcommand("pitfalls", "the common pitfalls");
  auto* sources = app.add_subcommand("sources", "editions, revisions, missing translations and conflicts");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : kb::kExitError;
  }
  try {
    // Never destroyed: main ends the process with _Exit right after the
    // answer, and tearing down the lexicon and the statement cache would
    // cost more than the operating system reclaiming the memory.
    kbq::Kb& kb = *new kbq::Kb(kb_path);
    const auto& langs = kb.languages();
    if (!lang.empty() && std::find(langs.begin(), langs.end(), lang) == langs.end()) {
      std::fprintf(stderr, "kbq: error: unknown --lang '%s'\n  hint: the knowledge base has %s\n", lang.c_str(),
                   kb::join(langs, ", ").c_str());
      return kb::kExitError;
    }
    kbq::RenderOptions ro;
    ro.format = format == "json" ? kbq::Format::Json : format == "markdown" ? kbq::Format::Markdown : kbq::Format::Text;
    ro.color = ro.format == kbq::Format::Text && isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR");
    ro.lang = lang.empty() ? "en" : lang;

    if (*show) {
      auto r = kbq::show_recipe(kb, recipe, ro.lang);
      if (!r) {
        std::fprintf(stderr, "kbq: unknown recipe '%s'\n", recipe.c_str());
        return kb::kExitNoMatch;
      }
      emit(kbq::render_result(kb, *r, ro));
      return kb::kExitOk;
    }
    if (*check) {
      std::vector<std::pair<std::string, std::string>> overrides;
      for (const auto& a : kv) {
        const auto eq = a.find('=');
        if (eq == std::string::npos || eq == 0) {
          std::fprintf(stderr, "kbq: error: override '%s' is not KEY=VALUE\n", a.c_str());
          return kb::kExitError;
        }
        overrides.emplace_back(a.substr(0, eq), a.substr(eq + 1));
      }
      auto res = kbq::check_recipe(kb, recipe, gpus, overrides, ro.lang, hardware);
      if (auto* err = std::get_if<kbq::QueryError>(&res)) {
        std::fprintf(stderr, "kbq: error: %s\n  hint: %s\n", err->message.c_str(), err->hint.c_str());
        return kb::kExitError;
      }
      const auto& r = std::get<kbq::Result>(res);
      emit(kbq::render_result(kb, r, ro));
      return r.any_fail() ? kb::kExitNoMatch : kb::kExitOk;
    }
    if (*rules || *pitfalls) {
      const std::string kind = *rules ? "rule" : "pitfall";
      nlohmann::ordered_json arr = nlohmann::ordered_json::array();
      std::string out;
      for (const auto& key : kb.entity_keys(kind)) {
        auto p = kbq::prose(kb, kind, key, ro.lang);
        std::string text = p.text;
        if (kind == "pitfall") {
          text += " — " + kbq::prose(kb, kind, key, ro.lang, "symptom").text + " → " + kbq::prose(kb, kind, key, ro.lang, "fix").text;
        }
        const std::string where =
            p.source.file + ":" + std::to_string(p.source.line) + " (rev " + std::to_string(p.source.revision) + ", " + p.lang + ")";
        arr.push_back({{"id", kind + "/" + key},
                       {"text", text},
                       {"lang", p.lang},
                       {"fallback", p.fallback},
                       {"source", {{"file", p.source.file}, {"line", p.source.line}, {"revision", p.source.revision}}}});
        out += (ro.format == kbq::Format::Markdown ? "- **" + key + "** " : key + ". ") + text + "\n   [" + where + "]\n";
      }
      emit(ro.format == kbq::Format::Json ? arr.dump(2) + "\n" : out);
      return kb::kExitOk;
    }
    if (*sources) {
      nlohmann::ordered_json j = nlohmann::ordered_json::object();
      std::string out;
      {
        kb::Stmt st(kb.db(),
                    "SELECT path, format, coalesce(lang,''), coalesce(revision,0), coalesce(date,''), coalesce(translated_from,'') "
                    "FROM sources WHERE format != 'data' ORDER BY revision DESC, path");
        auto& eds = j["editions"] = nlohmann::ordered_json::array();
        while (st.step()) {
          eds.push_back({{"file", st.text(0)},
                         {"lang", st.text(2)},
                         {"revision", st.integer(3)},
                         {"date", st.text(4)},
                         {"translated_from", st.text(5)}});
          out += st.text(0) + "  " + st.text(2) + "  rev " + std::to_string(st.integer(3)) + (st.text(4).empty() ? "" : "  " + st.text(4)) +
                 (st.text(5).empty() ? "" : "  translated from " + st.text(5)) + "\n";
        }
      }
      {
        kb::Stmt st(kb.db(), "SELECT m.lang, count(*) FROM missing_translations m GROUP BY m.lang ORDER BY m.lang");
        auto& miss = j["missing_translations"] = nlohmann::ordered_json::object();
        out += "\nmissing translations:\n";
        while (st.step()) {
          miss[st.text(0)] = st.integer(1);
          out += "  " + st.text(0) + ": " + std::to_string(st.integer(1)) + "\n";
        }
      }
      {
        kb::Stmt st(kb.db(),
                    "SELECT c.entity_kind, c.entity_key, c.field, w.value, w.revision, o.value, o.revision, so.path, o.line "
                    "FROM conflicts c JOIN conflict_values w ON w.conflict_id = c.id AND w.wins = 1 "
                    "JOIN conflict_values o ON o.conflict_id = c.id AND o.wins = 0 JOIN sources so ON so.id = o.source_id "
                    "WHERE c.type = 'revision' AND o.revision < w.revision ORDER BY c.entity_kind, c.entity_key, c.field, o.revision");
        auto& cs = j["conflicts"] = nlohmann::ordered_json::array();
        out += "\nconflicts (newest revision wins):\n";
        while (st.step()) {
          cs.push_back({{"entity", st.text(0) + " " + st.text(1)},
                        {"field", st.text(2)},
                        {"winner", st.text(3)},
                        {"winner_revision", st.integer(4)},
                        {"older", st.text(5)},
                        {"older_revision", st.integer(6)},
                        {"older_source", st.text(7) + ":" + std::to_string(st.integer(8))}});
          out += "  " + st.text(0) + " " + st.text(1) + " " + st.text(2) + ": '" + st.text(5) + "' (rev " + std::to_string(st.integer(6)) +
                 ", " + st.text(7) + ":" + std::to_string(st.integer(8)) + ") -> '" + st.text(3) + "' (rev " +
                 std::to_string(st.integer(4)) + ")\n";
        }
      }
      emit(ro.format == kbq::Format::Json ? j.dump(2) + "\n" : out);
      return kb::kExitOk;
    }

    auto parsed = kbq::dsl::parse(kb.lexicon(), query);
    if (parsed.error) {
      std::fprintf(stderr, "kbq: error: %s\n%s", parsed.error->message.c_str(), kbq::caret_line(query, parsed.error->span).c_str());
      if (!parsed.error->hint.empty()) std::fprintf(stderr, "  hint: %s\n", parsed.error->hint.c_str());
      return kb::kExitError;
    }
    kbq::PlanOptions po;
    po.limit = limit;
    po.lang = lang;
    auto res = kbq::answer(kb, parsed.query, po);
    if (auto* err = std::get_if<kbq::QueryError>(&res)) {
      std::fprintf(stderr, "kbq: error: %s\n%s", err->message.c_str(), kbq::caret_line(query, err->span).c_str());
      if (!err->hint.empty()) std::fprintf(stderr, "  hint: %s\n", err->hint.c_str());
      return kb::kExitError;
    }
    const auto& a = std::get<kbq::Answer>(res);
    ro.lang = a.lang;
    emit(kbq::render_answer(kb, a, ro));
    return a.results.empty() ? kb::kExitNoMatch : kb::kExitOk;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kbq: %s\n", e.what());
    return kb::kExitError;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  const int rc = run(argc, argv);
  std::fflush(stdout);
  std::_Exit(rc);
}
