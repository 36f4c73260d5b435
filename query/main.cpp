// kbq: answers questions about Megatron Bridge training recipes from the
// knowledge base embedded at build time (or --kb FILE). The command line
// only: every request goes through the engine (query/kbq.hpp) and is printed
// by its renderer. Exit codes (docs/kbq.md): 0 answered, 1 nothing matched
// or `check` found a failing rule, 2 error (usage, bad KB, bad input, a
// write error). A closed pipe (`kbq ... | head`) is not an error.
#include <sys/mman.h>
#include <unistd.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <new>
#include <set>

#include "base/checked.hpp"
#include "base/diag.hpp"
#include "base/escape.hpp"
#include "base/kinds.hpp"
#include "base/limits.hpp"
#include "base/sqlite.hpp"
#include "base/text.hpp"
#include "query/kbq.hpp"

#ifdef KBQ_ARENA
// kbq answers and exits (main ends with _Exit, freeing nothing), so its
// small C++ allocations come from a bump arena: no malloc bookkeeping, and
// delete does nothing. The arena is one region of limits::kArenaBytes,
// reserved up front and faulted in as used; blocks larger than
// limits::kArenaMaxAlloc, and everything once the region is used up, come
// from the ordinary allocator and are freed by delete, so a large or
// crafted KB costs what it holds, never an arena that only grows
// (docs/security.md). An answer allocates a few MB at most
// (docs/performance.md); SQLite keeps its own allocator, limited by
// sqlite3_hard_heap_limit64. Sanitizer and fuzzing builds leave allocation
// to the runtime (CMakeLists.txt).
namespace {
char* arena_begin = nullptr;
char* arena_next = nullptr;
char* arena_end = nullptr;
bool arena_reserved = false;

void arena_reserve() {
  arena_reserved = true;
  void* p = ::mmap(nullptr, kb::limits::kArenaBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return;  // no arena: every block from malloc
  // Transparent huge pages where the kernel offers them on request: an
  // answer fills a few MB of the arena, one fault per 2 MB instead of one
  // per 4 KB page (docs/performance.md). Advice only: ignored elsewhere.
  ::madvise(p, kb::limits::kArenaBytes, MADV_HUGEPAGE);
  arena_begin = arena_next = static_cast<char*>(p);
  arena_end = arena_begin + kb::limits::kArenaBytes;
}

void* arena_alloc(std::size_t size, std::size_t align) {
  if (size <= kb::limits::kArenaMaxAlloc) {
    if (!arena_reserved) arena_reserve();
    const auto at = (reinterpret_cast<std::uintptr_t>(arena_next) + align - 1) / align * align;
    if (arena_begin && at + size <= reinterpret_cast<std::uintptr_t>(arena_end)) {
      arena_next = reinterpret_cast<char*>(at + size);
      return reinterpret_cast<void*>(at);
    }
  }
  void* p = align <= alignof(std::max_align_t) ? std::malloc(size) : std::aligned_alloc(align, (size + align - 1) / align * align);
  if (!p) throw std::bad_alloc();
  return p;
}

void arena_free(void* p) noexcept {
  if (p && !(p >= static_cast<void*>(arena_begin) && p < static_cast<void*>(arena_end))) std::free(p);
}
}  // namespace

void* operator new(std::size_t size) { return arena_alloc(size ? size : 1, alignof(std::max_align_t)); }
void* operator new[](std::size_t size) { return arena_alloc(size ? size : 1, alignof(std::max_align_t)); }
void* operator new(std::size_t size, std::align_val_t a) { return arena_alloc(size ? size : 1, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t size, std::align_val_t a) { return arena_alloc(size ? size : 1, static_cast<std::size_t>(a)); }
void operator delete(void* p) noexcept { arena_free(p); }
void operator delete[](void* p) noexcept { arena_free(p); }
void operator delete(void* p, std::size_t) noexcept { arena_free(p); }
void operator delete[](void* p, std::size_t) noexcept { arena_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { arena_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { arena_free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { arena_free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { arena_free(p); }
#endif

namespace {

constexpr const char* kVersion = "0.1.0";

constexpr const char* kUsage =
    "kbq: recipes, launch commands and sizing-rule checks for Megatron Bridge\n"
    "\n"
    "usage: kbq [OPTIONS] QUESTION\n"
    "       kbq show RECIPE | check RECIPE --gpus N [KEY=VALUE...] | perf MODEL [--history] | rules | pitfalls | sources\n"
    "       kbq list [MODE] [MODEL] [--hardware GPU] [--kind library|benchmark]\n"
    "\n"
    "examples:\n"
    "  kbq \"peft qwen3 1 gpu\"\n"
    "  kbq \"SFT, 8×H100, 16K sequence\"\n"
    "  kbq \"qwen3 の LoRA を 1 GPU で\"\n"
    "  kbq \"mode:sft gpus:16 tp:2 family:qwen3\" --format json\n"
    "  kbq show qwen3_30b_a3b_sft_config\n"
    "  kbq check llama3_70b_pretrain_config --gpus 64 model.tensor_model_parallel_size=16\n"
    "  kbq perf llama3_70b\n"
    "  kbq list peft qwen3\n"
    "  printf 'peft qwen3 1 gpu\\nsft llama3 70b 2 gpus\\n' | kbq --batch\n"
    "\n"
    "exit codes: 0 answered; 1 not possible (nothing matched, no layout fits the GPUs asked, check found a failing rule, list\n"
    "            matched no recipe); 2 error (usage, bad KB, bad input)\n"
    "more: kbq --help, docs/kbq.md, docs/query-language.md\n";

// How text reaches the terminal or file: everything kbq writes passes
// through emit, which escapes control characters from the KB and the
// question (base/escape.hpp) so that none reaches a terminal raw. JSON
// keeps its \u escapes (the serializer writes C0 controls so already); text
// in colour keeps kbq's own colour codes and escapes every other control.
enum class Output { Plain, Colour, Json };
Output output = Output::Plain;

// kbq's own SGR sequences (query/render: bold, reset, the verdict colours).
const std::vector<std::string_view> kColourCodes = {"\x1b[1m", "\x1b[0m", "\x1b[31m", "\x1b[32m", "\x1b[33m"};

std::string made_safe(const std::string& text) {
  switch (output) {
    case Output::Json:
      return kb::escape_json_controls(text);
    case Output::Colour:
      return kb::escape_controls_keeping(text, kColourCodes);
    case Output::Plain:
      break;
  }
  return kb::escape_controls(text);
}

// Writes everything; a closed pipe ends quietly with 0, any other write
// error says so and exits 2.
void emit(std::FILE* to, const std::string& raw) {
  if (raw.empty()) return;
  const std::string text = made_safe(raw);
  if (std::fwrite(text.data(), 1, text.size(), to) != text.size() || std::fflush(to) != 0) {
    if (errno == EPIPE) std::_Exit(kb::kExitOk);
    if (to != stderr) std::fprintf(stderr, "kbq: error: cannot write the answer: %s\n", std::strerror(errno));
    std::_Exit(kb::kExitError);
  }
}

// The values of --format.
const std::vector<std::string> kFormats = {"text", "markdown", "json"};

// The raw arguments, as CLI11 reads them; validated into a Request below.
struct Args {
  std::vector<std::string> words;  // the question, quoted or not: `kbq peft qwen3 1 gpu`
  std::string question, format = "text", lang, kb_path, recipe, hardware;
  int limit = 3;
  long long gpus = 0;
  std::vector<std::string> overrides;
  bool version = false, explain = false, batch = false, history = false;
  std::string model;  // kbq perf MODEL
  kbq::ListOptions list;
  std::string completion;  // --completion-words WHAT
};

// `kbq --version`: kbq's own version, then what the KB was compiled from:
// its schema version, the Megatron Bridge commit(s) of its code facts (the
// newest is the one answers come from), the skill's revisions with their
// languages and dates, and how many source files.
std::string version_text(kbq::Engine& engine, const std::string& where) {
  std::string out = std::string("kbq ") + kVersion + "\n";
  out += "knowledge base: " + where + ", schema version " + std::to_string(engine.schema_version()) + "\n";
  std::vector<std::string> commits;
  for (const auto& snap : engine.code_snapshots())
    commits.push_back(snap.commit + " (" + snap.date + (snap.repo.empty() ? "" : ", " + snap.repo) +
                      (snap.newest ? "; the recipes kbq answers from" : "") + ")");
  out += "Megatron Bridge: " + (commits.empty() ? std::string("none (no code facts)") : kb::join(commits, ", ")) + "\n";
  // Revision → its editions' languages and date, newest revision first.
  std::map<int, std::pair<std::set<std::string>, std::string>, std::greater<>> revisions;
  const auto report = engine.sources();
  for (const auto& e : report.editions) {
    auto& [langs, date] = revisions[e.revision];
    langs.insert(e.lang);
    date = std::max(date, e.date);
  }
  std::vector<std::string> revs;
  for (const auto& [rev, v] : revisions)
    revs.push_back(std::to_string(rev) + " (" + kb::join(std::vector<std::string>(v.first.begin(), v.first.end()), " ") +
                   (v.second.empty() ? "" : ", " + v.second) + ")");
  out += "skill revisions: " + kb::join(revs, ", ") + "\n";
  out += "sources: " + std::to_string(engine.source_files().size()) + " files (kbq sources lists the editions)\n";
  return out;
}

// `--completion-words WHAT`: subcommands, options[:SUBCOMMAND], formats,
// kinds, languages, gpus, recipes; one per line. Hidden (the completions'
// interface, not the user's).
int completion_words(const CLI::App& app, kbq::Engine& engine, const std::string& what) {
  std::vector<std::string> words;
  const auto options_of = [&](const CLI::App& from) {
    for (const auto* o : from.get_options())
      if (!o->get_group().empty()) {
        for (const auto& n : o->get_snames()) words.push_back("-" + n);
        for (const auto& n : o->get_lnames()) words.push_back("--" + n);
      }
  };
  if (what == "subcommands") {
    for (const auto* sub : app.get_subcommands({})) words.push_back(sub->get_name());
  } else if (what == "options") {
    options_of(app);
  } else if (kb::starts_with(what, "options:")) {
    const std::string name = what.substr(8);
    for (const auto* sub : app.get_subcommands({}))
      if (sub->get_name() == name) options_of(*sub);
    options_of(app);
  } else if (what == "formats") {
    words = kFormats;
  } else if (what == "kinds") {
    for (const auto& [kind, name] : kb::kRecipeKindNames) words.emplace_back(name);
  } else if (what == "languages") {
    words = engine.languages();
  } else if (what == "gpus") {
    words = engine.gpu_keys();
  } else if (what == "recipes") {
    auto res = engine.list({});
    if (const auto* l = std::get_if<kbq::RecipeList>(&res))
      for (const auto& r : l->recipes) words.push_back(r.name);
  } else {
    emit(stderr, "kbq: error: unknown --completion-words '" + what +
                     "'\n  hint: subcommands, options, options:SUBCOMMAND, formats, kinds, languages, gpus, recipes\n");
    return kb::kExitError;
  }
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  std::string out;
  for (const auto& w : words) out += w + "\n";
  emit(stdout, out);
  return kb::kExitOk;
}

int fail(const kbq::Error& e, const std::string& question, const kbq::RenderOptions& ro) {
  emit(stderr, kbq::render_error(e, question, ro));
  return kb::kExitError;
}

// An error of the KB (it names the file): one line on stderr, or the JSON
// error object; exit 2.
// Text: "kbq: error: FILE: what" and a hint line.
int kb_error(const std::string& message, const kbq::RenderOptions& ro) {
  if (ro.format == kbq::Format::Json) return fail({message, {}}, {}, ro);
  std::string text = message;
  if (kb::starts_with(text, "error: ")) text = text.substr(7);
  if (const auto at = text.find(": error: "); at != std::string::npos) text.replace(at, 9, ": ");
  emit(stderr, "kbq: error: " + text +
                   "\n  hint: use a knowledge base written by the kbc of this kbq (kbc build -o FILE), or leave out --kb for the "
                   "embedded one\n");
  return kb::kExitError;
}

// --batch: one JSON Lines record per line of standard input, in order.
int batch(kbq::Engine& engine, const kbq::AskOptions& ask, kbq::RenderOptions ro) {
  output = Output::Json;
  ro.color = false;
  std::string line;
  while (std::getline(std::cin, line)) {
    while (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    nlohmann::json rec;
    rec["question"] = line;
    ro.format = kbq::Format::Json;
    auto res = engine.ask(line, ask);
    if (auto* err = std::get_if<kbq::Error>(&res)) {
      rec["exit"] = kb::kExitError;
      rec["answer"] = nlohmann::json::parse(kbq::render_error(*err, line, ro));
    } else {
      const auto& answer = std::get<kbq::Answer>(res);
      const kbq::Labels labels = engine.labels(answer.lang);
      rec["exit"] = answer.verdict == kbq::Outcome::Ok ? kb::kExitOk : kb::kExitNoMatch;
      rec["answer"] = nlohmann::json::parse(kbq::render(answer, labels, ro));
      ro.format = kbq::Format::Text;
      rec["text"] = kbq::render(answer, labels, ro);
    }
    emit(stdout, rec.dump() + "\n");
  }
  return kb::kExitOk;
}

int run(int argc, char** argv) {
  if (argc <= 1) {
    emit(stderr, kUsage);
    return kb::kExitError;
  }
  CLI::App app{"kbq: recipes, launch commands and sizing-rule checks for Megatron Bridge, from the knowledge base", "kbq"};
  app.footer(std::string("\n") + kUsage);
  Args a;
  app.add_option("query", a.words, "the question, e.g. peft qwen3 1 gpu, quoted or not (see docs/query-language.md)");
  app.add_option("-f,--format", a.format, "text, markdown or json (errors too: JSON on stderr)")
      ->transform(CLI::IsMember(kFormats, CLI::ignore_case));
  app.add_option("-l,--lang", a.lang, "language of prose, one the KB has (en, fr, ja, zh; default: the question's own, else en)");
  app.add_option("-n,--limit", a.limit, "number of recipes to show (default 3)")->check(CLI::Range(1, 1000));
  app.add_option("--kb", a.kb_path, "knowledge base file (default: the one embedded in kbq)");
  app.add_flag("-e,--explain", a.explain, "also print why each recipe is placed where it is (its score parts); JSON always has them");
  app.add_flag("--version", a.version, "print kbq's version, the KB's schema version and its sources");
  app.add_flag("--batch", a.batch,
               "answer the questions of standard input, one per line, with one JSON Lines record each: the question, the exit "
               "code kbq would give, the JSON answer (or error) and the text answer (a documentation site's recipe finder)");
  // For the shell completions (packaging/completions): the words of one
  // kind, one per line, from this command line's own definitions and the KB.
  app.add_option("--completion-words", a.completion, "")->group("");
  app.fallthrough();

  auto* show = app.add_subcommand("show", "all facts of one recipe");
  show->add_option("recipe", a.recipe, "recipe function name")->required();
  auto* check = app.add_subcommand("check", "check your own override set: every rule's verdict (exit 1 if one fails)");
  check->add_option("recipe", a.recipe, "recipe function name")->required();
  check->add_option("--gpus", a.gpus, "world size (number of GPUs)")->required()->check(CLI::Range(1LL, 1000000LL));
  check->add_option("--hardware", a.hardware, "GPU type, e.g. h100, gb200 (default from the KB)");
  check->add_option("overrides", a.overrides, "KEY=VALUE overrides, e.g. model.tensor_model_parallel_size=4");
  auto* perf = app.add_subcommand("perf", "NVIDIA's measured throughput of a model (docs/throughput.md)");
  perf->add_option("model", a.model, "model key or name, e.g. llama3_70b, \"Llama 3 70B\", DeepSeekV3")->required();
  perf->add_flag("--history", a.history, "also the older releases' rows of each configuration");
  auto* list = app.add_subcommand("list", "the recipes the code exports, one line of facts each (docs/kbq.md#kbq-list)");
  list->add_option("words", a.list.words, "mode, model, size or words of recipe names, e.g. peft qwen3, sft llama3 8b");
  list->add_option("--hardware", a.list.hardware, "GPU type: drop recipes whose name encodes another one (e.g. h100, gb200)");
  list->add_option("--kind", a.list.kind, "library or benchmark (default both, or what the words say)");
  auto* rules = app.add_subcommand("rules", "the sizing rules");
  auto* pitfalls = app.add_subcommand("pitfalls", "the common pitfalls");
  auto* sources = app.add_subcommand("sources", "editions, revisions, missing translations and conflicts");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help: CLI11 prints it. Any other parse error in kbq's own form,
    // its text escaped (an argument's control bytes never reach the terminal).
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e) == 0 ? kb::kExitOk : kb::kExitError;
    emit(stderr, "kbq: error: " + std::string(e.what()) +
                     "\n  hint: kbq --help lists the options and subcommands, kbq SUBCOMMAND --help a subcommand's\n");
    return kb::kExitError;
  }
  a.lang = kb::fold(a.lang);  // --lang FR is --lang fr
  a.question = kb::join(a.words, " ");
  kbq::RenderOptions ro;
  ro.format = a.format == "json" ? kbq::Format::Json : a.format == "markdown" ? kbq::Format::Markdown : kbq::Format::Text;
  ro.color = ro.format == kbq::Format::Text && isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR");
  ro.explain = a.explain;
  output = ro.format == kbq::Format::Json ? Output::Json : ro.color ? Output::Colour : Output::Plain;
  // The KB as errors name it.
  const std::string where =
      a.kb_path.empty() ? std::string("embedded knowledge base") : kb::escape_controls(a.kb_path, kb::EscapeNewlines::Yes);
  try {
    // Never destroyed: main ends the process with _Exit right after the
    // answer, and tearing down the lexicon and the statement cache would
    // cost more than the operating system reclaiming the memory.
    kbq::Engine& engine = *new kbq::Engine(a.kb_path.empty() ? kbq::Engine::embedded() : kbq::Engine::open(a.kb_path));
    if (!a.completion.empty()) return completion_words(app, engine, a.completion);
    if (a.version) {
      emit(stdout, version_text(engine, a.kb_path.empty() ? std::string("embedded in kbq") : where));
      return kb::kExitOk;
    }
    const auto& langs = engine.languages();
    if (!a.lang.empty() && std::find(langs.begin(), langs.end(), a.lang) == langs.end())
      return fail({"unknown --lang '" + a.lang + "'", "the knowledge base has " + kb::join(langs, ", ")}, {}, ro);
    const std::string lang = a.lang.empty() ? "en" : a.lang;

    if (*show || *check) {
      std::vector<std::pair<std::string, std::string>> overrides;
      for (const auto& kv : a.overrides) {
        const auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0)
          return fail({"override '" + kv + "' is not KEY=VALUE", "e.g. model.tensor_model_parallel_size=4"}, {}, ro);
        overrides.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
      }
      auto res = *show ? engine.show(a.recipe, lang) : engine.check(a.recipe, a.gpus, overrides, a.hardware, lang);
      if (auto* err = std::get_if<kbq::Error>(&res)) return fail(*err, {}, ro);
      const auto& answer = std::get<kbq::Answer>(res);
      emit(stdout, kbq::render(answer, engine.labels(lang), ro));
      return *check && answer.verdict != kbq::Outcome::Ok ? kb::kExitNoMatch : kb::kExitOk;
    }
    if (*perf) {
      auto res = engine.perf(a.model, a.history);
      if (auto* err = std::get_if<kbq::Error>(&res)) return fail(*err, {}, ro);
      emit(stdout, kbq::render(std::get<kbq::PerfListing>(res), engine.labels(lang), ro));
      return kb::kExitOk;
    }
    if (*list) {
      a.list.lang = lang;
      auto res = engine.list(a.list);
      if (auto* err = std::get_if<kbq::Error>(&res)) return fail(*err, kb::join(a.list.words, " "), ro);
      const auto& listed = std::get<kbq::RecipeList>(res);
      emit(stdout, kbq::render(listed, engine.labels(lang), ro));
      return listed.recipes.empty() ? kb::kExitNoMatch : kb::kExitOk;
    }
    if (*rules || *pitfalls) {
      emit(stdout, kbq::render(*rules ? engine.rules(lang) : engine.pitfalls(lang), engine.labels(lang), ro));
      return kb::kExitOk;
    }
    if (*sources) {
      emit(stdout, kbq::render(engine.sources(), engine.labels(lang), ro));
      return kb::kExitOk;
    }
    kbq::AskOptions ask;
    ask.limit = a.limit;
    ask.lang = a.lang;
    if (a.batch) {
      if (!a.words.empty())
        return fail({"--batch reads its questions from standard input, one per line", "drop '" + a.question + "' or pipe it in"}, {}, ro);
      return batch(engine, ask, ro);
    }
    const kbq::Response r = kbq::respond(engine, a.question, ask, ro);
    emit(stderr, r.err);
    emit(stdout, r.out);
    // A one-word question that matched nothing and is a letter or two from a
    // subcommand's name was most likely meant as that subcommand.
    if (r.exit_code == kb::kExitNoMatch && a.words.size() == 1 && a.words.front().find(' ') == std::string::npos) {
      const std::string word = kb::fold(a.words.front());
      for (const auto* sub : app.get_subcommands({})) {
        const size_t d = kb::edit_distance(word, sub->get_name());
        if (d > 0 && d <= 2 && word.size() > d + 1) {
          emit(stderr, "kbq: hint: did you mean the subcommand 'kbq " + sub->get_name() + "'?\n");
          break;
        }
      }
    }
    return r.exit_code;
  } catch (const kb::KbValueError& e) {
    // A value of the KB out of its range: "kb: <table>.<column> of <row>: ...".
    return kb_error(where + ": error: " + e.what(), ro);
  } catch (const kb::SqliteError& e) {
    // SQLite refused to go on: a value over the length limit, the heap
    // limit, a statement past its budget, a damaged page met mid-answer.
    return kb_error(where + ": error: cannot read the knowledge base: " + e.what(), ro);
  } catch (const std::bad_alloc&) {
    return kb_error(where + ": error: out of memory reading the knowledge base", ro);
  } catch (const nlohmann::json::exception& e) {
    // Text of the KB a JSON answer cannot hold (not UTF-8).
    return kb_error(where + ": error: kb: a text value cannot be written as JSON (" + std::string(e.what()) + ")", ro);
  } catch (const std::exception& e) {
    // The KB could not be opened or read: its message names the file.
    std::string msg = e.what();
    if (kb::starts_with(msg, "error: ")) msg = msg.substr(7);
    return kb_error(msg, ro);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  const int rc = run(argc, argv);
  std::fflush(stdout);
  std::_Exit(rc);
}
