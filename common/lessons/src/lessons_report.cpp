// Rendering lesson reports as text, markdown and JSON (lessons.json), and reading JSON back.
// lessons.json names the operators by word ("lt", "not_contains"), the spec files by symbol
// ("<", pattern_json.hpp); the scopes are spelt the same in both.
#include <fmt/format.h>

#include <sstream>
#include <stdexcept>

#include "workbook/lessons.hpp"
#include "workbook/names.hpp"
#include "workbook/pattern_json.hpp"

namespace wb {

using nlohmann::json;
using Op = Condition::Op;

namespace {

constexpr EnumNames<Op, Op::NotContains> kOps{"lt", "le", "gt", "ge", "eq", "ne", "contains", "not_contains"};
constexpr EnumNames<Status, Status::NotApplicable> kStatuses{"pass", "fail", "not_applicable"};
constexpr EnumNames<Status, Status::NotApplicable> kMarks{"PASS", "FAIL", "n/a"};
constexpr EnumNames<Status, Status::NotApplicable> kInspectMarks{"YES", "no", "n/a"};

template <class E, E Last>
E parse_name(const EnumNames<E, Last>& names, const std::string& s, std::string_view what) {
  if (auto e = names.value(s)) return *e;
  throw std::runtime_error(fmt::format("unknown {} '{}'", what, s));
}

// Inspect asks "does the symptom show?"; a chapter asks "does the lesson hold?".
std::string_view label(const LessonsReport& r, Status s) {
  return (r.kind == "inspect" ? kInspectMarks : kMarks).name(s);
}
std::string indent(const std::string& text, const std::string& pad) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out += pad + line + "\n";
  return out;
}

std::string md_cell(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string summary(const LessonsReport& r) {
  if (r.kind == "inspect")
    return fmt::format("{} pattern(s) show, {} do not, {} not applicable", r.passed, r.failed,
                       r.not_applicable);
  return fmt::format("{} passed, {} failed, {} not applicable{}", r.passed, r.failed, r.not_applicable,
                     r.passed < r.min_passes
                         ? fmt::format(" -- NOT OK: this platform must pass at least {}", r.min_passes)
                         : std::string());
}

std::string render_text(const LessonsReport& r) {
  std::string out;
  if (r.kind == "inspect") {
    out += fmt::format("inspect: {}\ndevice:  {}\n", r.source, r.device);
    out += "Each rule is a pattern from the cheatsheet; YES = this trace shows it.\n\n";
  } else {
    out +=
        fmt::format("Lessons for {}: {}\ntrace:  {}\ndevice: {}\n\n", r.chapter, r.title, r.source, r.device);
  }
  const bool inspect = r.kind == "inspect";
  for (const auto& f : r.facts) {
    out += fmt::format("[{:>4}] {}\n", label(r, f.status), f.title);
    out += fmt::format("       {} {}\n", inspect ? "rule:    " : "expected:", f.pattern.text);
    if (!f.pattern.why.empty() && !inspect) out += fmt::format("       why:      {}\n", f.pattern.why);
    if (!f.value.empty()) out += fmt::format("       measured: {}\n", f.value);
    out += fmt::format("       verdict:  {}\n", f.verdict);
    if (f.status != Status::NotApplicable && !f.explanation.empty())
      out += fmt::format("       meaning:  {}\n", f.explanation);
    for (size_t i = 0; i < f.evidence.size(); ++i)
      out += fmt::format("       {} {}\n", i == 0 ? "evidence:" : "         ", f.evidence[i]);
    if (!f.detail.empty()) out += indent(f.detail, "         ");
    out += "\n";
  }
  out += summary(r) + "\n";
  return out;
}

std::string render_markdown(const LessonsReport& r) {
  const bool inspect = r.kind == "inspect";
  std::string out = inspect ? "# inspect\n\n" : fmt::format("# Lessons: {}\n\n{}\n\n", r.chapter, r.title);
  out += fmt::format("- Trace: `{}`\n- Device: {}\n- {}\n\n", r.source, r.device, summary(r));
  out += fmt::format("| {} | Fact | Measured | {} |\n|---|---|---|---|\n", inspect ? "Shows?" : "Status",
                     inspect ? "Rule" : "Expected");
  for (const auto& f : r.facts)
    out += fmt::format("| {} | {} | {} | {} |\n", label(r, f.status), md_cell(f.title),
                       md_cell(f.value.empty() ? f.verdict : f.value), md_cell(f.pattern.text));
  for (const auto& f : r.facts) {
    out += fmt::format("\n## {} — {}\n\n", f.title, label(r, f.status));
    out += fmt::format("- **{}:** {}\n", inspect ? "Rule" : "Expected", f.pattern.text);
    if (!f.pattern.why.empty() && !inspect)
      out += fmt::format("- **Why this tolerance:** {}\n", f.pattern.why);
    if (!f.value.empty()) out += fmt::format("- **Measured:** {}\n", f.value);
    out += fmt::format("- **Verdict:** {}\n", f.verdict);
    if (f.status != Status::NotApplicable && !f.explanation.empty())
      out += fmt::format("- **Meaning:** {}\n", f.explanation);
    if (!f.evidence.empty()) {
      out += "- **Evidence:**\n";
      for (const auto& e : f.evidence) out += "  - " + e + "\n";
    }
    if (!f.detail.empty()) out += "\n```\n" + f.detail + "```\n";
  }
  return out;
}

json pattern_json(const Pattern& p) {
  json conds = json::array();
  for (const auto& c : p.all) {
    json cj = {
        {"key", c.key}, {"op", kOps.name(c.op)}, {"value", c.value}, {"scope", kScopeNames.name(c.scope)}};
    if (c.only_n > 0) cj["only_n"] = c.only_n;
    if (!c.device.empty()) cj["device"] = c.device;
    conds.push_back(cj);
  }
  return {{"text", p.text}, {"why", p.why}, {"all", conds}};
}

Pattern pattern_from_json(const json& j) {
  Pattern p;
  p.text = j.value("text", "");
  p.why = j.value("why", "");
  for (const auto& cj : j.value("all", json::array())) {
    Condition c;
    c.key = cj.at("key").get<std::string>();
    c.op = parse_name(kOps, cj.at("op").get<std::string>(), "condition op");
    c.value = cj.at("value");
    c.scope = parse_name(kScopeNames, cj.value("scope", "any"), "condition scope");
    c.only_n = cj.value("only_n", int64_t{0});
    c.device = cj.value("device", std::string());
    p.all.push_back(std::move(c));
  }
  return p;
}

}  // namespace

std::string_view status_name(Status s) { return kStatuses.name(s); }
std::string_view status_mark(Status s) { return kMarks.name(s); }

std::string render_lessons(const LessonsReport& r, Format f) {
  switch (f) {
    case Format::Text: return render_text(r);
    case Format::Markdown: return render_markdown(r);
    case Format::Json: return to_json(r).dump(2) + "\n";
  }
  return render_text(r);
}

json to_json(const Fact& f) {
  return {{"id", f.id},
          {"title", f.title},
          {"status", status_name(f.status)},
          {"value", f.value},
          {"data", f.data},
          {"pattern", pattern_json(f.pattern)},
          {"explanation", f.explanation},
          {"verdict", f.verdict},
          {"evidence", f.evidence},
          {"detail", f.detail},
          {"measured", f.measured}};
}

json to_json(const LessonsReport& r) {
  json facts = json::array();
  for (const auto& f : r.facts) facts.push_back(to_json(f));
  const auto& p = r.options.problem;
  return {{"kind", r.kind},
          {"chapter", r.chapter},
          {"title", r.title},
          {"source", r.source},
          {"device", r.device},
          {"options",
           {{"annotation", r.options.annotation},
            {"outlier_factor", r.options.outlier_factor},
            {"reference_file", r.options.reference_file},
            {"reference_label", r.options.reference_label},
            {"problem",
             {{"n", p.n}, {"batch", p.batch}, {"dtype_bytes", p.dtype_bytes}, {"m", p.m}, {"k", p.k}}}}},
          {"summary",
           {{"passed", r.passed},
            {"failed", r.failed},
            {"not_applicable", r.not_applicable},
            {"min_passes", r.min_passes},
            {"ok", r.ok()}}},
          {"facts", facts}};
}

LessonsReport lessons_from_json(const json& j) {
  try {
    if (!j.is_object()) throw std::runtime_error("expected a JSON object");
    LessonsReport r;
    r.kind = j.value("kind", "lessons");
    r.chapter = j.value("chapter", "");
    r.title = j.value("title", "");
    r.source = j.value("source", "");
    r.device = j.value("device", "");
    if (j.contains("options")) {
      const json& o = j.at("options");
      r.options.annotation = o.value("annotation", r.options.annotation);
      r.options.outlier_factor = o.value("outlier_factor", r.options.outlier_factor);
      r.options.reference_file = o.value("reference_file", r.options.reference_file);
      r.options.reference_label = o.value("reference_label", r.options.reference_label);
      if (o.contains("problem")) {
        const json& p = o.at("problem");
        Problem& pr = r.options.problem;
        pr.n = p.value("n", int64_t{0});
        pr.batch = p.value("batch", int64_t{1});
        pr.dtype_bytes = p.value("dtype_bytes", 2);
        pr.m = p.value("m", int64_t{0});
        pr.k = p.value("k", int64_t{0});
      }
    }
    if (j.contains("summary")) r.min_passes = j.at("summary").value("min_passes", 0);
    for (const auto& fj : j.at("facts")) {
      Fact f;
      f.id = fj.at("id").get<std::string>();
      f.title = fj.value("title", f.id);
      f.status = parse_name(kStatuses, fj.at("status").get<std::string>(), "status");
      f.value = fj.value("value", "");
      f.data = fj.value("data", json::object());
      if (fj.contains("pattern")) f.pattern = pattern_from_json(fj.at("pattern"));
      f.explanation = fj.value("explanation", "");
      f.verdict = fj.value("verdict", "");
      f.evidence = fj.value("evidence", std::vector<std::string>{});
      f.detail = fj.value("detail", "");
      f.measured = fj.value("measured", f.status != Status::NotApplicable);
      r.facts.push_back(std::move(f));
    }
    tally(r);
    return r;
  } catch (const json::exception& e) {
    throw std::runtime_error(fmt::format("not a lessons report: {}", e.what()));
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(fmt::format("not a lessons report: {}", e.what()));
  }
}

}  // namespace wb
