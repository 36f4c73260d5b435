// The launch command (see command.hpp).
#include "query/plan/command.hpp"

#include <algorithm>
#include <cctype>

#include "base/text.hpp"

namespace kbq {

namespace {

std::string quote(const std::string& kv) {
  std::string q = "'";
  for (char ch : kv) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

// Replaces the value that follows `flag` (as `flag=value` or `flag value`).
bool set_flag(std::string& cmd, const std::string& flag, const std::string& value) {
  if (flag.empty()) return false;
  size_t at = cmd.find(flag);
  while (at != std::string::npos) {
    const size_t end_flag = at + flag.size();
    if (end_flag < cmd.size() && (cmd[end_flag] == '=' || cmd[end_flag] == ' ')) {
      size_t vstart = end_flag + 1;
      while (vstart < cmd.size() && cmd[vstart] == ' ') ++vstart;
      size_t vend = vstart;
      while (vend < cmd.size() && cmd[vend] != ' ' && cmd[vend] != '\n' && cmd[vend] != '\\') ++vend;
      cmd.replace(vstart, vend - vstart, shell_word(value));
      return true;
    }
    at = cmd.find(flag, end_flag);
  }
  return false;
}

std::string benchmark_command(const LaunchSpec& spec, const Settings& s) {
  std::string cmd = spec.entry;
  set_flag(cmd, s.bench_nodes_flag, std::to_string(spec.nodes));
  set_flag(cmd, s.bench_gpus_per_node_flag, std::to_string(spec.nproc));
  set_flag(cmd, s.recipe_flag, spec.recipe);
  if (!spec.recipe_mode.empty()) set_flag(cmd, s.bench_mode_flag, spec.recipe_mode);
  return cmd;
}

}  // namespace

std::string shell_word(const std::string& v) {
  const bool plain = !v.empty() && std::all_of(v.begin(), v.end(), [](unsigned char ch) {
    return std::isalnum(ch) || ch == '_' || ch == '.' || ch == '/' || ch == ':' || ch == '=' || ch == '-' || ch == ',' || ch == '+';
  });
  return plain ? v : quote(v);
}

std::string launch_command(const LaunchSpec& spec, const Snapshot& kb) {
  const Settings& s = kb.settings;
  if (spec.kind == RecipeKind::Benchmark) return benchmark_command(spec, s);
  std::string cmd = spec.entry;
  set_flag(cmd, s.nproc_flag, std::to_string(spec.nproc));
  set_flag(cmd, s.recipe_flag, spec.recipe);
  if (!spec.dataset.empty()) set_flag(cmd, s.dataset_flag, spec.dataset);
  if (spec.nodes > 1) {
    const auto at = cmd.find(s.nproc_flag);
    const std::string extra = fill(s.multi_node_flags, {{"nodes", std::to_string(spec.nodes)}});
    if (at != std::string::npos && !extra.empty()) cmd.insert(at, extra + " ");
  }
  while (!cmd.empty() && (cmd.back() == '\n' || cmd.back() == ' ')) cmd.pop_back();
  // Flags of the launcher on one line, KEY=VALUE overrides one per line.
  std::vector<std::string> flags, kvs;
  if (spec.launch_mode != spec.recipe_mode && !spec.launch_mode.empty())
    if (auto f = kb.flag_named(s.launch_mode_flag))
      flags.push_back((f->long_option.empty() ? f->short_option : f->long_option) + " " + shell_word(spec.launch_mode));
  for (const auto& [key, value] : spec.changes) {
    if (const Flag* f = kb.flag_for(key))
      flags.push_back((!f->short_option.empty() ? f->short_option : f->long_option) + " " + shell_word(value));
    else
      kvs.push_back(quote(key + "=" + value));
  }
  if (!flags.empty()) cmd += " \\\n    " + kb::join(flags, " ");
  for (const auto& kv : kvs) cmd += " \\\n    " + kv;
  return cmd;
}

}  // namespace kbq
