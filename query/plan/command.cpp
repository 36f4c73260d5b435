// The launch command (see command.hpp).
#include "query/plan/command.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "base/checked.hpp"
#include "base/escape.hpp"
#include "base/text.hpp"

namespace kbq {

namespace {

std::string quote(const std::string& kv) { return kb::shell_quote(kv); }

// Whether the launcher option's argparse type takes the value: int an
// optional sign and digits, float a finite number; other types any text.
bool option_takes(const std::string& type, const std::string& v) {
  if (type == "int") {
    const size_t from = !v.empty() && (v[0] == '-' || v[0] == '+') ? 1 : 0;
    return v.size() > from &&
           std::all_of(v.begin() + static_cast<std::ptrdiff_t>(from), v.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  }
  if (type == "float") {
    char* end = nullptr;
    const double d = std::strtod(v.c_str(), &end);
    return !v.empty() && *end == '\0' && std::isfinite(d);
  }
  return true;
}

// A command kbq prints is the KB's command text with values quoted
// (shell_word): text of a crafted KB that would be shell syntax there (a
// ';', '$(', a backtick, a redirection, an unquoted placeholder) is an
// error naming the entity or the planner row, never a command that runs
// something else (docs/security.md, "Commands kbq prints").
void check_shell(const std::string& text, const char* table, const char* column, const std::string& row) {
  if (const auto problem = kb::shell_problem(text))
    throw kb::KbValueError(table, column, row, "the launch command would hold shell syntax (" + *problem + ")");
}

// The launcher's option for a flag, checked: an option name, or an error.
std::string option_name(const Flag& f, bool long_first) {
  const std::string& name =
      long_first ? (f.long_option.empty() ? f.short_option : f.long_option) : (!f.short_option.empty() ? f.short_option : f.long_option);
  if (!kb::is_shell_option(name)) throw kb::KbValueError("launcher", "value", f.item, "not an option name (-x or --name)");
  return name;
}

// Where `flag` stands in a command as a whole option (`flag=value` or
// `flag value`), and its value: [value_begin, value_end).
struct FlagAt {
  size_t at = 0, value_begin = 0, value_end = 0;
};
std::optional<FlagAt> find_flag(const std::string& cmd, const std::string& flag) {
  if (flag.empty()) return std::nullopt;
  for (size_t at = cmd.find(flag); at != std::string::npos; at = cmd.find(flag, at + 1)) {
    const size_t end_flag = at + flag.size();
    if (end_flag >= cmd.size() || (cmd[end_flag] != '=' && cmd[end_flag] != ' ')) continue;
    if (at > 0 && cmd[at - 1] != ' ' && cmd[at - 1] != '\n') continue;
    FlagAt f{at, end_flag + 1, end_flag + 1};
    while (f.value_begin < cmd.size() && cmd[f.value_begin] == ' ') ++f.value_begin;
    f.value_end = f.value_begin;
    while (f.value_end < cmd.size() && cmd[f.value_end] != ' ' && cmd[f.value_end] != '\n' && cmd[f.value_end] != '\\') ++f.value_end;
    return f;
  }
  return std::nullopt;
}

// Replaces the value that follows `flag`.
bool set_flag(std::string& cmd, const std::string& flag, const std::string& value) {
  const auto f = find_flag(cmd, flag);
  if (!f) return false;
  cmd.replace(f->value_begin, f->value_end - f->value_begin, shell_word(value));
  return true;
}

// Removes `flag` and its value: the whole line when the flag has a
// continued line of its own.
void remove_flag(std::string& cmd, const std::string& flag) {
  const auto f = find_flag(cmd, flag);
  if (!f) return;
  size_t vend = f->value_end;
  while (vend < cmd.size() && cmd[vend] == ' ') ++vend;
  const size_t line = cmd.rfind('\n', f->at);
  const size_t line_start = line == std::string::npos ? 0 : line + 1;
  const bool alone = cmd.find_first_not_of(' ', line_start) == f->at;
  if (alone && vend + 1 < cmd.size() && cmd[vend] == '\\' && cmd[vend + 1] == '\n') {
    cmd.erase(line_start, vend + 2 - line_start);
  } else if (alone && (vend >= cmd.size() || cmd[vend] == '\n') && line_start >= 2 && cmd[line_start - 2] == '\\') {
    size_t from = line_start - 2;  // the last line: with the continuation that led to it
    while (from > 0 && cmd[from - 1] == ' ') --from;
    cmd.erase(from, vend - from);
  } else {
    cmd.erase(f->at, vend - f->at);
  }
}

std::string benchmark_command(const LaunchSpec& spec, const Settings& s) {
  std::string cmd = spec.entry;
  set_flag(cmd, s.bench_nodes_flag, std::to_string(spec.nodes));
  set_flag(cmd, s.bench_gpus_per_node_flag, std::to_string(spec.nproc));
  set_flag(cmd, s.recipe_flag, spec.recipe);
  if (!spec.recipe_mode.empty()) set_flag(cmd, s.bench_mode_flag, spec.recipe_mode);
  check_shell(cmd, "entity_texts", "parts", spec.entry_ref);
  return cmd;
}

}  // namespace

std::string shell_word(const std::string& v) { return kb::shell_word(v); }

std::string launch_command(const LaunchSpec& spec, const Snapshot& kb) {
  const Settings& s = kb.settings;
  if (spec.kind == RecipeKind::Benchmark) return benchmark_command(spec, s);
  std::string cmd = spec.entry;
  set_flag(cmd, s.nproc_flag, std::to_string(spec.nproc));
  set_flag(cmd, s.recipe_flag, spec.recipe);
  // No preset: the recipe trains on its own data (--dataset would replace it).
  if (!spec.dataset.empty())
    set_flag(cmd, s.dataset_flag, spec.dataset);
  else
    remove_flag(cmd, s.dataset_flag);
  if (spec.nodes > 1) {
    const auto at = cmd.find(s.nproc_flag);
    const std::string extra = fill(s.multi_node_flags, {{"nodes", std::to_string(spec.nodes)}});
    check_shell(extra, "planner", "value", "multi_node_flags");
    if (at != std::string::npos && !extra.empty()) cmd.insert(at, extra + " ");
  }
  while (!cmd.empty() && (cmd.back() == '\n' || cmd.back() == ' ')) cmd.pop_back();
  // Flags of the launcher on one line, KEY=VALUE overrides one per line.
  std::vector<std::string> flags, kvs;
  if (spec.launch_mode != spec.recipe_mode && !spec.launch_mode.empty())
    if (auto f = kb.flag_named(s.launch_mode_flag)) flags.push_back(option_name(*f, true) + " " + shell_word(spec.launch_mode));
  for (const auto& [key, value] : spec.changes) {
    const Flag* f = kb.flag_for(key);
    if (f && !option_takes(f->type, value)) f = nullptr;  // argparse would refuse it (None for an int): KEY=VALUE
    if (f)
      flags.push_back(option_name(*f, false) + " " + shell_word(value));
    else
      kvs.push_back(quote(key + "=" + value));
  }
  if (!flags.empty()) cmd += " \\\n    " + kb::join(flags, " ");
  for (const auto& kv : kvs) cmd += " \\\n    " + kv;
  check_shell(cmd, "entity_texts", "parts", spec.entry_ref);
  return cmd;
}

NodeLaunch node_launch(const LaunchSpec& spec, const std::string& command, const Snapshot& kb, const Labels& labels) {
  NodeLaunch out;
  out.nodes = spec.nodes;
  out.nproc_per_node = spec.nproc;
  out.ranks = spec.nodes * spec.nproc;
  if (spec.kind == RecipeKind::Benchmark || spec.nodes <= 1) return out;
  std::string node_rank_var;
  for (const auto& [name, role] : kb.settings.multi_node_env)
    if (role == "node_rank") node_rank_var = name;
  for (const auto& [name, role] : kb.settings.multi_node_env) {
    // Read by the command: "$NAME" not followed by more of a name.
    bool read = false;
    for (size_t at = command.find("$" + name); at != std::string::npos && !read; at = command.find("$" + name, at + 1)) {
      const size_t end = at + 1 + name.size();
      read = end >= command.size() || !(std::isalnum(static_cast<unsigned char>(command[end])) || command[end] == '_');
    }
    if (!read) continue;
    out.variables.push_back(
        {name, role,
         fill(labels("launch." + role),
              {{"last", std::to_string(spec.nodes - 1)}, {"nodes", std::to_string(spec.nodes)}, {"node_rank", node_rank_var}})});
  }
  return out;
}

std::string slurm_script(const LaunchSpec& spec, const std::string& command, const std::string& hardware, const Snapshot& kb) {
  if (spec.kind == RecipeKind::Benchmark || command.empty()) return {};
  return fill(kb.settings.slurm_script, {{"recipe", spec.recipe},
                                         {"nodes", std::to_string(spec.nodes)},
                                         {"gpus_per_node", std::to_string(spec.nproc)},
                                         {"ranks", std::to_string(spec.nodes * spec.nproc)},
                                         {"gpus", std::to_string(spec.nodes * spec.nproc)},
                                         {"hardware", hardware},
                                         {"command", command}});
}

std::vector<BeforeRun> before_run(const LaunchSpec& spec, const std::string& checkpoint, const std::string& hf_id, const Snapshot& kb,
                                  const Labels& labels) {
  const Settings& s = kb.settings;
  std::vector<BeforeRun> out;
  if (spec.kind == RecipeKind::Benchmark) return out;
  if (!checkpoint.empty()) {
    const std::string hf = hf_id.empty() ? s.hf_model_placeholder : hf_id;
    BeforeRun b;
    b.what = "import_checkpoint";
    b.command = fill(s.checkpoint_import, {{"hf_id", shell_word(hf)}, {"path", shell_word(checkpoint)}});
    check_shell(b.command, "planner", "value", "checkpoint_import");
    b.text = fill(labels(hf_id.empty() ? "before.import_no_id" : "before.import"), {{"hf_id", hf}, {"path", checkpoint}});
    b.source = s.checkpoint_import_at;
    out.push_back(std::move(b));
  }
  if (const auto f = kb.flag_named(s.dry_run_dest)) {
    // One process on one node: a dry run resolves and saves the configuration, it starts no training.
    LaunchSpec one = spec;
    one.nodes = 1;
    one.nproc = 1;
    BeforeRun b;
    b.what = "dry_run";
    b.command = launch_command(one, kb) + " \\\n    " + option_name(*f, true);
    b.text = fill(labels("before.dry_run"), {{"flag", option_name(*f, true)}});
    b.source = f->at + (kb.commit.empty() ? "" : "@" + kb.commit);
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace kbq
