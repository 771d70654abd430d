#include "exercise/grade.hpp"

#include <algorithm>
#include <stdexcept>

#include "exercise/variation.hpp"

namespace fs = std::filesystem;

namespace exercise {

namespace {

GradeCell cell_of(const CheckResult& r, const std::string& source) {
  GradeCell c;
  c.source = source;
  switch (r.outcome) {
    case Outcome::Pass: c.verdict = "pass"; break;
    case Outcome::Fail:
      c.verdict = "not yet";
      c.failing_check = r.first_failed;
      break;
    case Outcome::NeedsGpu:
      c.verdict = "needs a GPU";
      c.message = r.message;
      break;
    case Outcome::Error:
      c.verdict = "error";
      c.message = r.message.substr(0, r.message.find('\n'));
      break;
  }
  return c;
}

bool is_program(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) &&
         (fs::status(p, ec).permissions() &
          (fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec)) != fs::perms::none;
}

GradeCell grade_one(const Exercise& e, const std::string& learner, const fs::path& folder,
                    const GradeOptions& o) {
  const fs::path outputs = folder / e.name;
  if (fs::exists(outputs / "trace.json")) {
    try {
      return cell_of(judge(e, outputs, learner), "outputs");
    } catch (const std::exception& ex) {
      GradeCell c;
      c.verdict = "error";
      c.source = "outputs";
      c.message = ex.what();
      return c;
    }
  }
  for (const fs::path& program : {folder / "bin" / e.name, folder / e.name})
    if (is_program(program)) {
      CheckOptions co;
      co.program = program;
      co.out_dir = o.work_dir / learner / e.name;
      co.device = o.device;
      co.timeout_s = o.timeout_s;
      co.student = learner;
      return cell_of(check_exercise(e, co), "program");
    }
  GradeCell c;
  c.verdict = "not yet";
  c.source = "none";
  c.failing_check = "no submission (neither " + e.name + "/trace.json nor a program bin/" + e.name + ")";
  return c;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch == '\n' ? ' ' : ch);
  return out + "\"";
}

}  // namespace

GradeReport grade(const Catalog& c, const GradeOptions& o) {
  std::error_code ec;
  if (!fs::is_directory(o.dir, ec))
    throw std::runtime_error(o.dir.string() + " is not a folder of submissions");
  GradeReport g;
  std::vector<const Exercise*> exercises;
  for (const auto& e : c.exercises)
    if (o.only.empty() || std::find(o.only.begin(), o.only.end(), e.id) != o.only.end()) {
      exercises.push_back(&e);
      g.exercises.push_back(e.id);
    }
  std::vector<std::string> learners;
  for (const auto& entry : fs::directory_iterator(o.dir)) {
    if (!entry.is_directory()) continue;
    const std::string name = entry.path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    if (!valid_student_name(name)) {
      g.skipped.push_back(name + ": not a learner's name (letters, digits, '.', '_', '-')");
      continue;
    }
    learners.push_back(name);
  }
  std::sort(learners.begin(), learners.end());
  for (const auto& learner : learners) {
    GradeRow row;
    row.learner = learner;
    for (const Exercise* e : exercises) {
      row.cells.push_back(grade_one(*e, learner, o.dir / learner, o));
      row.passed += row.cells.back().verdict == "pass";
    }
    g.rows.push_back(std::move(row));
  }
  return g;
}

std::string grades_csv(const GradeReport& g) {
  std::string out = "learner,exercise,verdict,failing_check,message\n";
  for (const auto& row : g.rows)
    for (size_t i = 0; i < row.cells.size(); ++i) {
      const GradeCell& c = row.cells[i];
      out += csv_field(row.learner) + "," + g.exercises[i] + "," + csv_field(c.verdict) + "," +
             csv_field(c.failing_check) + "," + csv_field(c.message) + "\n";
    }
  return out;
}

nlohmann::json grades_json(const GradeReport& g) {
  nlohmann::json learners = nlohmann::json::object();
  for (const auto& row : g.rows) {
    nlohmann::json cells = nlohmann::json::object();
    for (size_t i = 0; i < row.cells.size(); ++i) {
      const GradeCell& c = row.cells[i];
      cells[g.exercises[i]] = {{"verdict", c.verdict},
                               {"failing_check", c.failing_check},
                               {"message", c.message},
                               {"source", c.source}};
    }
    learners[row.learner] = {{"passed", row.passed}, {"exercises", cells}};
  }
  return {{"version", 1}, {"exercises", g.exercises}, {"learners", learners}, {"skipped", g.skipped}};
}

std::string grades_text(const GradeReport& g) {
  size_t w = 8;
  for (const auto& row : g.rows) w = std::max(w, row.learner.size() + 2);
  auto pad = [](std::string s, size_t n) {
    return s.size() >= n ? s + " " : s + std::string(n - s.size(), ' ');
  };
  std::string out = pad("LEARNER", w);
  for (const auto& id : g.exercises) out += pad(id, 9);
  out += "PASSED\n";
  for (const auto& row : g.rows) {
    out += pad(row.learner, w);
    for (const auto& c : row.cells)
      out += pad(c.verdict == "pass"      ? "pass"
                 : c.verdict == "not yet" ? "-"
                 : c.verdict == "error"   ? "ERROR"
                                          : "gpu?",
                 9);
    out += std::to_string(row.passed) + "/" + std::to_string(row.cells.size()) + "\n";
  }
  out +=
      "(pass; - not yet; ERROR could not check; gpu? needs a GPU. Failing checks: grades.csv / "
      "grades.json)\n";
  for (const auto& s : g.skipped) out += "skipped " + s + "\n";
  return out;
}

}  // namespace exercise
