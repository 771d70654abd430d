// relesson: recompute the lessons of recorded reports from their traces, with the options each
// recorded (problem, annotation, the reference run of chapter 03), and print the reports as
// lessons.json writes them. scripts/compare_outputs.sh builds it against two builds of the
// workbook (a base commit and the work tree) and diffs the outputs: same verdicts, same text.
//
//   relesson DIR...     each DIR holds lessons.json and trace.json[.gz] (expected_output/...)
//
// Uses only the API both sides have (lessons.hpp, trace_reader.hpp), so it builds on either.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "workbook/lessons.hpp"
#include "workbook/trace_reader.hpp"

namespace fs = std::filesystem;

static fs::path recorded(const fs::path& dir, const std::string& name) {
  for (const std::string& n : {name, name + ".gz"})
    if (fs::exists(dir / n)) return dir / n;
  return {};
}

int main(int argc, char** argv) {
  int rc = 0;
  for (int a = 1; a < argc; ++a) {
    const fs::path dir = argv[a];
    try {
      std::ifstream in(dir / "lessons.json");
      std::stringstream ss;
      ss << in.rdbuf();
      const auto j = nlohmann::json::parse(ss.str());
      wb::FactOptions o = wb::lessons_from_json(j).options;
      const std::string key = j.value("chapter", "");
      const wb::LessonSpec* spec = wb::find_lesson_spec(key);
      const wb::Trace trace = wb::read_trace(recorded(dir, "trace.json"));
      const wb::TraceModel model(trace);
      std::optional<wb::Trace> ref_trace;
      std::optional<wb::TraceModel> ref_model;
      if (!o.reference_file.empty()) {
        ref_trace = wb::read_trace(recorded(dir, o.reference_file));
        ref_model.emplace(*ref_trace);
        o.reference = &*ref_model;
      }
      wb::LessonsReport r = spec ? wb::check_lessons(model, *spec, o) : wb::inspect_trace(model, o);
      r.source = "";  // the path differs between the two runs' trees only by where it was read
      std::cout << "==== " << dir.string() << "\n"
                << wb::to_json(r).dump(2) << "\n"
                << wb::render_lessons(r, wb::Format::Text) << "\n";
    } catch (const std::exception& e) {
      std::cout << "==== " << dir.string() << "\nerror: " << e.what() << "\n";
      rc = 1;
    }
  }
  return rc;
}
