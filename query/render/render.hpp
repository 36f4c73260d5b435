// Render stage, public interface: an Answer or a single Result as text
// (colour only on a terminal, NO_COLOR respected), markdown, or JSON (the
// documented answer schema, docs/answer.schema.json).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "query/plan/plan.hpp"

namespace kbq {

enum class Format { Text, Markdown, Json };

struct RenderOptions {
  Format format = Format::Text;
  bool color = false;
  std::string lang = "en";
};

inline constexpr int kAnswerSchemaVersion = 1;

std::string render_answer(Kb& kb, const Answer& a, const RenderOptions& o);
std::string render_result(Kb& kb, const Result& r, const RenderOptions& o);
nlohmann::ordered_json result_json(const Result& r);

// The query with a caret line under `span` (1-based code-point column).
std::string caret_line(const std::string& query, const kbq::dsl::Span& span);

}  // namespace kbq
