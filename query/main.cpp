// kbq: answers questions about Megatron Bridge training recipes from the
// knowledge base embedded at build time (or --kb FILE). The command line
// only: every request goes through the engine (query/kbq.hpp) and is printed
// by its renderer. Exit codes (docs/kbq.md): 0 answered, 1 nothing matched
// or `check` found a failing rule, 2 error (usage, bad KB, bad input, a
// write error). A closed pipe (`kbq ... | head`) is not an error.
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
#include <sstream>
#include <string>
#include <utility>

#include "base/checked.hpp"
#include "base/diag.hpp"
#include "base/dsl/parse.hpp"
#include "base/escape.hpp"
#include "base/kinds.hpp"
#include "base/limits.hpp"
#include "base/sqlite.hpp"
#include "base/text.hpp"
#include "base/version.hpp"
#include "query/kbq.hpp"

namespace {

// What CLI11 cannot derive from the option definitions: the examples and
// the exit codes, the footer of the usage it generates (--help, and kbq
// with no arguments).
constexpr const char* kExamples =
    "examples:\n"
    "  kbq \"peft qwen3 1 gpu\"\n"
    "  kbq \"SFT, 8×H100, 16K sequence\"\n"
    "  kbq \"qwen3 の LoRA を 1 GPU で\"\n"
    "  kbq \"mode:sft gpus:16 tp:2 family:qwen3\" --format json\n"
    "  kbq \"sft llama3 70b 32 gpus\" --format slurm > train.sbatch\n"
    "  kbq show qwen3_30b_a3b_sft_config\n"
    "  kbq check llama3_70b_pretrain_config --gpus 64 model.tensor_model_parallel_size=16\n"
    "  kbq perf llama3_70b\n"
    "  kbq list peft qwen3\n"
    "  printf 'peft qwen3 1 gpu\\nsft llama3 70b 2 gpus\\n' | kbq --batch\n"
    "\n"
    "exit codes: 0 answered; 1 not possible (nothing matched, no layout fits the GPUs asked, check found a failing rule, list\n"
    "            matched no recipe, --format slurm has no script to write); 2 error (usage, bad KB, bad input)\n"
    "more: docs/kbq.md, docs/query-language.md\n";

// A write of kbq's output that failed: thrown by Output::write, caught
// only by main, which turns it into the exit code (docs/kbq.md): a closed
// pipe (`kbq ... | head`) ends kbq quietly with 0, any other write error
// says so (on stderr, unless stderr failed) and exits 2.
struct WriteFailed {
  int error = 0;           // errno of the write or flush
  bool to_stderr = false;  // which stream failed
};

// How text reaches the terminal or file: everything kbq writes passes
// through Output::write, which escapes control characters from the KB and
// the question (base/escape.hpp) so that none reaches a terminal raw. JSON
// keeps its \u escapes (the serializer writes C0 controls so already); text
// in colour keeps kbq's own colour codes and escapes every other control.
class Output {
 public:
  enum class Escaping { Plain, Colour, Json };
  explicit Output(Escaping e = Escaping::Plain) : escaping(e) {}
  Escaping escaping;

  // Writes all of `raw`, made safe, and flushes; throws WriteFailed.
  void write(std::FILE* to, std::string raw) const {
    if (raw.empty()) return;
    const std::string text = made_safe(std::move(raw));
    if (std::fwrite(text.data(), 1, text.size(), to) != text.size() || std::fflush(to) != 0) throw WriteFailed{errno, to == stderr};
  }

 private:
  std::string made_safe(std::string text) const {
    // kbq's own SGR sequences (query/render: bold, reset, the verdict colours).
    static const std::vector<std::string_view> kColourCodes = {"\x1b[1m", "\x1b[0m", "\x1b[31m", "\x1b[32m", "\x1b[33m"};
    switch (escaping) {
      case Escaping::Json:
        return kb::escape_json_controls_owned(std::move(text));
      case Escaping::Colour:
        return kb::escape_controls_keeping(text, kColourCodes);
      case Escaping::Plain:
        break;
    }
    return kb::escape_controls(text);
  }
};

// The raw arguments, as CLI11 reads them; validated into a Request below.
struct Args {
  std::vector<std::string> words;  // the question, quoted or not: `kbq peft qwen3 1 gpu`
  std::string question, lang, kb_path, recipe, hardware;
  kbq::Format format = kbq::Format::Text;
  int limit = 3;
  int width = kbq::RenderOptions{}.width;
  long long gpus = 0;
  std::vector<std::string> overrides;
  bool version = false, explain = false, batch = false, history = false;
  std::string model;  // kbq perf MODEL
  kbq::ListOptions list;
  std::string completion;           // --completion-words WHAT
  std::vector<std::string> select;  // --select POINTER,...
};

int fail(const Output& out, const kbq::Error& e, const std::string& question, const kbq::RenderOptions& ro) {
  out.write(stderr, kbq::render_error(e, question, ro));
  return kb::kExitError;
}

// An error of the KB (it names the file): one line on stderr, or the JSON
// error object; exit 2.
// Text: "kbq: error: FILE: what" and a hint line.
int kb_error(const Output& out, const std::string& message, const kbq::RenderOptions& ro) {
  if (ro.format == kbq::Format::Json) return fail(out, {message, {}}, {}, ro);
  std::string text = message;
  if (kb::starts_with(text, "error: ")) text = text.substr(7);
  if (const auto at = text.find(": error: "); at != std::string::npos) text.replace(at, 9, ": ");
  out.write(stderr, "kbq: error: " + text +
                        "\n  hint: use a knowledge base written by the kbc of this kbq (kbc build -o FILE), or leave out --kb for the "
                        "embedded one\n");
  return kb::kExitError;
}

// `kbq --version`: kbq's own version, then what the KB was compiled from:
// its schema version, the Megatron Bridge commit(s) of its code facts (the
// newest is the one answers come from), the skill's revisions with their
// languages and dates, and how many source files.
std::string version_text(kbq::Engine& engine, const std::string& where) {
  std::string text = std::string("kbq ") + kb::kVersion + "\n";
  text += "knowledge base: " + where + ", schema version " + std::to_string(engine.schema_version()) + "\n";
  std::vector<std::string> commits;
  for (const auto& snap : engine.code_snapshots())
    commits.push_back(snap.commit + " (" + snap.date + (snap.repo.empty() ? "" : ", " + snap.repo) +
                      (snap.newest ? "; the recipes kbq answers from" : "") + ")");
  text += "Megatron Bridge: " + (commits.empty() ? std::string("none (no code facts)") : kb::join(commits, ", ")) + "\n";
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
  text += "skill revisions: " + kb::join(revs, ", ") + "\n";
  text += "sources: " + std::to_string(engine.source_files().size()) + " files (kbq sources lists the editions)\n";
  return text;
}

// `--completion-words WHAT`: subcommands, options[:SUBCOMMAND], formats,
// kinds, languages, gpus, recipes; one per line. Hidden (the completions'
// interface, not the user's).
int completion_words(const Output& out, const CLI::App& app, kbq::Engine& engine, const std::string& what) {
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
    for (const auto& [f, name] : kbq::kFormatNames) words.emplace_back(name);
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
    out.write(stderr, "kbq: error: unknown --completion-words '" + what +
                          "'\n  hint: subcommands, options, options:SUBCOMMAND, formats, kinds, languages, gpus, recipes\n");
    return kb::kExitError;
  }
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  std::string text;
  for (const auto& w : words) text += w + "\n";
  out.write(stdout, text);
  return kb::kExitOk;
}

// Reads one line of `in` (without its line feed) into `line`, keeping at
// most `keep` bytes of it: a longer line is read to its end but not held
// (a 10 MB line once cost 3 GB). `total` is the line's whole length. False
// at the end of input.
bool read_line(std::FILE* in, std::string& line, std::size_t keep, std::size_t& total) {
  line.clear();
  total = 0;
  int c = 0;
  while ((c = getc_unlocked(in)) != EOF && c != '\n') {
    if (line.size() < keep) line += static_cast<char>(c);
    ++total;
  }
  return c != EOF || total > 0;
}

// The record of one --batch line: what a single `kbq --format json
// "QUESTION"` would print and exit with, whatever goes wrong (a question
// over the limits, not UTF-8, a KB value kbq cannot use): one line's
// failure never ends the batch.
std::string batch_record(kbq::Engine& engine, const std::string& line, std::size_t total, const kbq::AskOptions& ask,
                         const kbq::RenderOptions& ro, const kbq::BatchSelect* select, const std::string& where) {
  // The question as read; a line that is not UTF-8 with its bytes escaped
  // (\xff: JSON holds only UTF-8 text), one over the length limit cut
  // there, with "…".
  const bool cut = total > line.size();
  std::string shown = line;
  if (cut)  // a code point the cut split in two is left out
    if (const auto bad = kb::find_invalid_utf8(shown); bad && *bad + 4 > shown.size() && !kb::find_invalid_utf8(shown.substr(0, *bad)))
      shown.resize(*bad);
  if (kb::find_invalid_utf8(shown)) shown = kb::escape_controls(shown);
  if (cut) shown += "…";
  static const kbq::Labels no_labels;  // an error's record has no text
  auto error_record = [&](const kbq::Error& e) { return kbq::render_batch_record(shown, e, no_labels, ro, select); };
  try {
    if (cut) {
      // The line was read no further than the limit: the error check_input
      // gives for the whole line.
      const auto e = kbq::dsl::too_long("the question", total);
      return error_record({e.message, e.hint});
    }
    // The record is written straight from the answer (render_batch_record),
    // not rendered as JSON and parsed back.
    const auto res = engine.ask(line, ask);
    const auto* answer = std::get_if<kbq::Answer>(&res);
    const kbq::Labels& labels = answer ? engine.labels(answer->lang) : no_labels;
    return kbq::render_batch_record(shown, res, labels, ro, select);
  } catch (const kb::KbValueError& e) {
    return error_record({where + ": error: " + e.what(), {}});
  } catch (const kb::SqliteError& e) {
    return error_record({where + ": error: cannot read the knowledge base: " + e.what(), {}});
  } catch (const std::bad_alloc&) {
    return error_record({where + ": error: out of memory reading the knowledge base", {}});
  } catch (const nlohmann::json::exception& e) {
    return error_record({where + ": error: kb: a text value cannot be written as JSON (" + std::string(e.what()) + ")", {}});
  }
}

// --batch: one JSON Lines record per line of standard input, in order.
int batch(kbq::Engine& engine, const kbq::AskOptions& ask, kbq::RenderOptions ro, const kbq::BatchSelect* select,
          const std::string& where) {
  const Output out(Output::Escaping::Json);
  ro.color = false;
  std::string line;
  std::size_t total = 0;
  while (read_line(stdin, line, kb::limits::kMaxQuestionBytes, total)) {
    while (!line.empty() && line.back() == '\r' && total == line.size()) {
      line.pop_back();
      --total;
    }
    if (total == 0) continue;
    out.write(stdout, batch_record(engine, line, total, ask, ro, select, where) + "\n");
  }
  return kb::kExitOk;
}

// --format's values: the spelling table of kbq::Format, read by CLI11
// into the enum (an unknown name is a usage error naming the known ones).
CLI::Validator format_names() {
  std::vector<std::string> names;
  for (const auto& [f, name] : kbq::kFormatNames) names.emplace_back(name);
  const std::string known = kb::join(names, ", ");
  return CLI::Validator(
      [known](std::string& value) -> std::string {
        for (const auto& [f, name] : kbq::kFormatNames)
          if (kb::fold(value) == name) {  // --format JSON is --format json
            value = std::to_string(static_cast<int>(f));
            return {};
          }
        return "'" + value + "' is not one of " + known;
      },
      "{" + kb::join(names, ",") + "}", "format name");
}

int run(int argc, char** argv, Output& out) {
  CLI::App app{"kbq: recipes, launch commands and sizing-rule checks for Megatron Bridge, from the knowledge base"};
  app.name("kbq");
  app.footer(std::string("\n") + kExamples);
  Args a;
  app.add_option("query", a.words, "the question, e.g. peft qwen3 1 gpu, quoted or not (see docs/query-language.md)");
  app.add_option("-f,--format", a.format,
                 "text, markdown, json (errors too: JSON on stderr) or slurm (an sbatch script of the answer's command; exit 1 when "
                 "there is none)")
      ->transform(format_names())
      ->type_name("FORMAT");
  app.add_option("-l,--lang", a.lang, "language of prose, one the KB has (en, fr, ja, zh; default: the question's own, else en)");
  app.add_option("-n,--limit", a.limit, "number of recipes to show (default 3)")->check(CLI::Range(1, 1000));
  auto* kb_option = app.add_option("--kb", a.kb_path, "knowledge base file (default: the one embedded in kbq)");
  app.add_option("-w,--width", a.width, "text: wrap prose lines at this many terminal columns (default 100; 0 never wraps)")
      ->check(CLI::Range(0, 100000));
  app.add_flag("-e,--explain", a.explain, "also print why each recipe is placed where it is (its score parts); JSON always has them");
  app.add_flag("--version", a.version, "print kbq's version, the KB's schema version and its sources");
  app.add_flag("--batch", a.batch,
               "answer the questions of standard input, one per line, with one JSON Lines record each: the question, the exit "
               "code kbq would give, the JSON answer (or error) and the text answer (a documentation site's recipe finder)");
  auto* select_option =
      app.add_option("--select", a.select,
                     "--batch: keep only these parts of each record, as JSON Pointers, e.g. /question,/answer/results/0/command")
          ->delimiter(',')
          ->type_name("POINTER,...");
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
  if (argc <= 1) {  // nothing asked: the usage CLI11 makes of the definitions above
    out.write(stderr, app.help());
    return kb::kExitError;
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 quotes the arguments it refuses: its message goes out through
    // Output::write, escaped like everything else (an argument holding ESC
    // bytes would otherwise reach the terminal raw).
    // --help goes to stdout as CLI11 writes it; any other parse error in
    // kbq's own form with a hint.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      std::ostringstream cli_out, cli_err;
      const int rc = app.exit(e, cli_out, cli_err);
      out.write(stdout, cli_out.str());
      out.write(stderr, cli_err.str());
      return rc == 0 ? kb::kExitOk : kb::kExitError;
    }
    out.write(stderr, "kbq: error: " + std::string(e.what()) +
                          "\n  hint: kbq --help lists the options and subcommands, kbq SUBCOMMAND --help a subcommand's\n");
    return kb::kExitError;
  }
  a.lang = kb::fold(a.lang);  // --lang FR is --lang fr
  // `--kb ""` names no file: an error, not the embedded KB.
  if (kb_option->count() > 0 && a.kb_path.empty()) {
    out.write(stderr, "kbq: error: --kb needs a file name (it was given an empty one)\n");
    return kb::kExitError;
  }
  a.question = kb::join(a.words, " ");
  kbq::RenderOptions ro;
  ro.format = a.format;
  ro.color = ro.format == kbq::Format::Text && isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR");
  ro.explain = a.explain;
  ro.width = a.width;
  out.escaping = ro.format == kbq::Format::Json ? Output::Escaping::Json : ro.color ? Output::Escaping::Colour : Output::Escaping::Plain;
  std::optional<kbq::BatchSelect> select;
  if (select_option->count() > 0) {
    if (!a.batch)
      return fail(out, {"--select keeps parts of --batch records", "add --batch, or read a --format json answer with jq"}, {}, ro);
    auto parsed = kbq::parse_select(a.select);
    if (auto* err = std::get_if<kbq::Error>(&parsed)) return fail(out, *err, {}, ro);
    select = std::get<kbq::BatchSelect>(std::move(parsed));
  }
  // The KB as errors name it.
  const std::string where =
      a.kb_path.empty() ? std::string("embedded knowledge base") : kb::escape_controls(a.kb_path, kb::EscapeNewlines::Yes);
  try {
    // Never destroyed: main ends the process with _Exit right after the
    // answer, and tearing down the lexicon and the statement cache would
    // cost more than the operating system reclaiming the memory.
    kbq::Engine& engine = *new kbq::Engine(a.kb_path.empty() ? kbq::Engine::embedded() : kbq::Engine::open(a.kb_path));
    if (!a.completion.empty()) return completion_words(out, app, engine, a.completion);
    if (a.version) {
      out.write(stdout, version_text(engine, a.kb_path.empty() ? std::string("embedded in kbq") : where));
      return kb::kExitOk;
    }
    const auto& langs = engine.languages();
    if (!a.lang.empty() && std::find(langs.begin(), langs.end(), a.lang) == langs.end())
      return fail(out,
                  {"unknown --lang '" + kb::first_code_points(kb::escape_controls(a.lang), 60) + "'",
                   "the knowledge base has " + kb::join(langs, ", ")},
                  {}, ro);
    const std::string lang = a.lang.empty() ? engine.base_language() : a.lang;

    if (*show || *check) {
      std::vector<std::pair<std::string, std::string>> overrides;
      for (const auto& kv : a.overrides) {
        const auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0)
          return fail(out,
                      {"override '" + kb::first_code_points(kb::escape_controls(kv), 60) + "' is not KEY=VALUE",
                       "e.g. model.tensor_model_parallel_size=4"},
                      {}, ro);
        overrides.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
      }
      auto res = *show ? engine.show(a.recipe, lang) : engine.check(a.recipe, a.gpus, overrides, a.hardware, lang);
      if (auto* err = std::get_if<kbq::Error>(&res)) return fail(out, *err, {}, ro);
      const auto& answer = std::get<kbq::Answer>(res);
      if (ro.format == kbq::Format::Slurm) {  // the recipe's sbatch script, or why there is none (exit 1)
        auto script = kbq::render_slurm(answer, engine.labels(lang));
        if (auto* e = std::get_if<kbq::Error>(&script)) {
          out.write(stderr, kbq::render_error(*e, {}, ro));
          return kb::kExitNoMatch;
        }
        out.write(stdout, std::get<std::string>(script));
        return kb::kExitOk;
      }
      out.write(stdout, kbq::render(answer, engine.labels(lang), ro));
      return *check && answer.verdict != kbq::Outcome::Ok ? kb::kExitNoMatch : kb::kExitOk;
    }
    if (ro.format == kbq::Format::Slurm && (*perf || *list || *rules || *pitfalls || *sources || a.batch))
      return fail(out, {"--format slurm writes an sbatch script for a question, show or check", "use text, markdown or json here"}, {}, ro);
    if (*perf) {
      auto res = engine.perf(a.model, a.history);
      if (auto* err = std::get_if<kbq::Error>(&res)) return fail(out, *err, {}, ro);
      out.write(stdout, kbq::render(std::get<kbq::PerfListing>(res), engine.labels(lang), ro));
      return kb::kExitOk;
    }
    if (*list) {
      a.list.lang = lang;
      auto res = engine.list(a.list);
      if (auto* err = std::get_if<kbq::Error>(&res)) return fail(out, *err, kb::join(a.list.words, " "), ro);
      const auto& listed = std::get<kbq::RecipeList>(res);
      out.write(stdout, kbq::render(listed, engine.labels(lang), ro));
      return listed.recipes.empty() ? kb::kExitNoMatch : kb::kExitOk;
    }
    if (*rules || *pitfalls) {
      out.write(stdout, kbq::render(*rules ? engine.rules(lang) : engine.pitfalls(lang), engine.labels(lang), ro));
      return kb::kExitOk;
    }
    if (*sources) {
      out.write(stdout, kbq::render(engine.sources(), engine.labels(lang), ro));
      return kb::kExitOk;
    }
    kbq::AskOptions ask;
    ask.limit = a.limit;
    ask.lang = a.lang;
    if (a.batch) {
      if (!a.words.empty())
        return fail(out,
                    {"--batch reads its questions from standard input, one per line",
                     "drop '" + kb::first_code_points(kb::escape_controls(a.question), 60) + "' or pipe it in"},
                    {}, ro);
      return batch(engine, ask, ro, select ? &*select : nullptr, where);
    }
    ask.keep_facts = false;  // one question: no later answer reads them
    const kbq::Response r = kbq::respond(engine, a.question, ask, ro);
    out.write(stderr, r.err);
    out.write(stdout, r.out);
    // A one-word question that matched nothing and is a letter or two from a
    // subcommand's name was most likely meant as that subcommand.
    if (r.exit_code == kb::kExitNoMatch && a.words.size() == 1 && a.words.front().find(' ') == std::string::npos) {
      const std::string word = kb::fold(a.words.front());
      for (const auto* sub : app.get_subcommands({})) {
        const size_t d = kb::edit_distance(word, sub->get_name());
        if (d > 0 && d <= 2 && word.size() > d + 1) {
          out.write(stderr, "kbq: hint: did you mean the subcommand 'kbq " + sub->get_name() + "'?\n");
          break;
        }
      }
    }
    return r.exit_code;
  } catch (const kb::KbValueError& e) {
    // A value of the KB out of its range: "kb: <table>.<column> of <row>: ...".
    return kb_error(out, where + ": error: " + e.what(), ro);
  } catch (const kb::SqliteError& e) {
    // SQLite refused to go on: a value over the length limit, the heap
    // limit, a statement past its budget, a damaged page met mid-answer.
    return kb_error(out, where + ": error: cannot read the knowledge base: " + e.what(), ro);
  } catch (const std::bad_alloc&) {
    return kb_error(out, where + ": error: out of memory reading the knowledge base", ro);
  } catch (const nlohmann::json::exception& e) {
    // Text of the KB a JSON answer cannot hold (not UTF-8).
    return kb_error(out, where + ": error: kb: a text value cannot be written as JSON (" + std::string(e.what()) + ")", ro);
  } catch (const std::exception& e) {
    // The KB could not be opened or read: its message names the file.
    std::string msg = e.what();
    if (kb::starts_with(msg, "error: ")) msg = msg.substr(7);
    return kb_error(out, msg, ro);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  kb::use_sqlite_from_one_thread();  // kbq has one thread (docs/performance.md)
  int rc = kb::kExitError;
  try {
    Output out;
    rc = run(argc, argv, out);
  } catch (const WriteFailed& w) {
    if (w.error == EPIPE) {
      rc = kb::kExitOk;  // the reader has all it wanted
    } else {
      if (!w.to_stderr) std::fprintf(stderr, "kbq: error: cannot write the answer: %s\n", std::strerror(w.error));
      rc = kb::kExitError;
    }
  }
  std::fflush(stdout);
  std::_Exit(rc);
}
