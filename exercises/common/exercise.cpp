// The exercise layer over the chapter harness (workbook/chapter.hpp, CLI11): compiled once,
// shared by every exercise program.
#include "exercise.hpp"
#include "reference.hpp"

#include <CLI/CLI.hpp>  // the chapter's flags (Chapter::app)
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "exercise/catalog.hpp"
#include "exercise/facts.hpp"  // kRunTokenEnv, kRunTokenKey
#include "exercise/measure.hpp"
#include "exercise/variation.hpp"
#include "workbook/chapter.hpp"
#include "workbook/fs_util.hpp"
#include "workbook/trace_model.hpp"
#include "workbook/trace_reader.hpp"

namespace fs = std::filesystem;

namespace ex {

struct Run::State {
  bool quiet = false;  // the learner's --quiet (the harness runs quiet when lessons are hidden)
  bool hide_lessons = false;
  nlohmann::json answers = nlohmann::json::object();
  Workload workload;
  bool profiled = false;
  std::optional<wb::Trace> trace;  // the trace profile() wrote, read back from disk
  std::string student;
  nlohmann::json variation = nlohmann::json::object();
  nlohmann::json reference = nlohmann::json::object();
  nlohmann::json values = nlohmann::json::object();  // run.result(): the harness's verdicts
  int steps_run = 0;
  std::string exercise, run_token;
};

Run::Run(wb::Run& harness, bool quiet, bool hide_lessons, std::string student, std::string variation_json,
         std::string exercise, std::string run_token)
    : h_(harness), s_(std::make_unique<State>()) {
  s_->exercise = std::move(exercise);
  s_->run_token = std::move(run_token);
  s_->quiet = quiet;
  s_->hide_lessons = hide_lessons;
  s_->student = std::move(student);
  s_->variation = nlohmann::json::parse(variation_json);
  if (!s_->variation.empty())
    say((s_->student.empty() ? std::string("no --student: the exercise's defaults")
                             : "student " + s_->student + ": your own variation") +
        " -- " + exercise::describe_variation(s_->variation));
  if (hide_lessons)  // the harness is quiet: say what it would have said first
    say(std::string("device: ") + (h_.on_cuda() ? "cuda" : "cpu") + ", dtype: " + h_.dtype_name() +
        ", size: " + std::to_string(h_.size()) + ", schedule: " + h_.schedule().str());
}
Run::~Run() = default;

int64_t Run::size() const { return h_.size(); }
int64_t Run::varied(const std::string& key, int64_t fallback) const {
  const auto it = s_->variation.find(key);
  return it != s_->variation.end() && it->is_number() ? it->get<int64_t>() : fallback;
}
double Run::varied_number(const std::string& key, double fallback) const {
  const auto it = s_->variation.find(key);
  return it != s_->variation.end() && it->is_number() ? it->get<double>() : fallback;
}
int Run::steps_run() const { return s_->steps_run; }
void Run::reference(const std::string& key, double value) { s_->reference[key] = value; }
void Run::result(const std::string& key, const at::Tensor& value) {
  if (!s_->profiled)
    throw std::logic_error("result() hands in the workload's result: call it after profile()");
  ReferenceContext c;
  c.exercise = s_->exercise;
  c.size = h_.size();
  c.steps_run = s_->steps_run;
  c.options = h_.options();
  s_->values[key] = verify_result(c, key, value);
}
void Run::result(const std::string& key, const std::vector<double>& values) {
  at::Tensor t = at::empty({static_cast<int64_t>(values.size())}, at::TensorOptions().dtype(at::kDouble));
  std::copy(values.begin(), values.end(), t.data_ptr<double>());
  result(key, t);
}
bool Run::on_cuda() const { return h_.on_cuda(); }
at::TensorOptions Run::options() const { return h_.options(); }
const fs::path& Run::out() const { return h_.out(); }
void Run::say(const std::string& text) const {
  if (s_->quiet) return;
  std::cout << text << (text.empty() || text.back() == '\n' ? "" : "\n") << std::flush;
}

void Run::require_cuda(const std::string& what) const {
  if (!h_.on_cuda())
    throw wb::UsageError(what +
                         " needs a CUDA device, and this run is on the CPU (run it on a GPU machine, "
                         "with --device cuda or auto)");
}

namespace {
// Writes the check's one-time token into the trace's top level, next to the metadata the
// profiler wrote there ("schemaVersion", "deviceProperties", ...), so that the trace itself
// says which check's run made it. The trace is rewritten atomically.
void stamp_token(const fs::path& trace, const std::string& token) {
  std::ifstream in(trace, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  std::string t = text.str();
  const size_t open = t.find('{');
  if (open == std::string::npos) throw std::runtime_error(trace.string() + " is not a JSON trace");
  t.insert(open + 1, "\n  \"" + std::string(exercise::kRunTokenKey) + "\": \"" + token + "\",");
  wb::write_file_atomic(trace, t);
}
}  // namespace

void Run::profile(const std::function<void()>& step, const Workload& w) {
  if (s_->profiled)
    throw std::logic_error(
        "profile() was called twice: an exercise profiles one workload (the second "
        "report would overwrite the first one's trace.json)");
  wb::ProfilerOptions opts;
  opts.schedule = h_.schedule();
  opts.cuda = h_.on_cuda();
  opts.profile_memory = w.profile_memory;  // chapter 08's exercises read the memory columns
  wb::Profiler prof(opts);
  prof.start();
  for (int i = 0; i < h_.schedule().total_steps(); ++i) {
    step();
    ++s_->steps_run;
    prof.step();
    h_.stop_if_interrupted();
  }
  prof.stop();
  wb::CycleResult& cycle = prof.results().back();
  wb::ReportOptions ro;
  ro.problem = wb::Problem::square(h_.size(), w.batch, h_.dtype_bytes());
  ro.annotation = w.annotation;
  wb::RunOutputs o;
  if (s_->hide_lessons) {
    // The quiet harness still prints a one-line summary of the lessons; this exercise shows none.
    struct Mute {
      std::streambuf* saved = std::cout.rdbuf(nullptr);
      ~Mute() { std::cout.rdbuf(saved); }
    } mute;
    o = h_.report(cycle, ro);
  } else {
    o = h_.report(cycle, ro);
  }
  if (!s_->run_token.empty()) stamp_token(o.trace, s_->run_token);
  s_->workload = w;
  s_->profiled = true;
  s_->trace = wb::read_trace(o.trace);
  if (s_->hide_lessons) {
    std::ifstream table(o.table);
    std::stringstream text;
    text << table.rdbuf();
    say(text.str());
    say("The lesson report is not printed for this exercise: find the answer in the table and the trace\n"
        "first. It is saved in " +
        o.lessons_txt.string() +
        " for afterwards.\n"
        "Open the trace: https://ui.perfetto.dev -> 'Open trace file' -> " +
        o.trace.string() + "\nOr look at the picture: " + o.svg.string());
  }
}

double Run::gemm_median_us() const {
  if (!s_->trace) throw std::logic_error("gemm_median_us() needs a profile() first");
  const wb::TraceModel m(*s_->trace);
  const exercise::GemmSamples g = exercise::gemm_samples(m);
  if (g.count == 0)
    throw std::runtime_error("no GEMM in the recorded steps (" + g.where + "): did the step still multiply?");
  return g.median_us;
}

std::vector<double> Run::gemm_samples_us() const {
  if (!s_->trace) throw std::logic_error("gemm_samples_us() needs a profile() first");
  const wb::TraceModel m(*s_->trace);
  return exercise::gemm_samples(m).us;
}

std::string Run::gemm_summary() const {
  if (!s_->trace) throw std::logic_error("gemm_summary() needs a profile() first");
  const wb::TraceModel m(*s_->trace);
  return exercise::describe(exercise::gemm_samples(m));
}

void Run::answer_int(const std::string& key, int64_t v) { s_->answers[key] = v; }
void Run::answer_number(const std::string& key, double v) { s_->answers[key] = v; }
void Run::answer_text(const std::string& key, const std::string& v) { s_->answers[key] = v; }
void Run::answer_bool(const std::string& key, bool v) { s_->answers[key] = v; }

void Run::finish() {
  // run.json: what ran, for the checker (the trace cannot say N, the batch or the dtype).
  const nlohmann::json info = {
      {"size", h_.size()},
      {"batch", s_->workload.batch},
      {"annotation", s_->workload.annotation},
      {"device", h_.on_cuda() ? "cuda" : "cpu"},
      {"dtype", h_.dtype_name()},
      {"dtype_bytes", h_.dtype_bytes()},
      {"schedule", h_.schedule().str()},
      {"profiled", s_->profiled},
      {"student", s_->student},
      {"variation", s_->variation},
      {"steps_run", s_->steps_run},
      {"reference", s_->reference},
      {"values", s_->values},
  };
  wb::DirLock lock(out());
  wb::write_file_atomic(out() / "run.json", info.dump(2) + "\n");
  if (!s_->answers.empty()) {
    wb::write_file_atomic(out() / "answer.json", s_->answers.dump(2) + "\n");
    say("Your answers (saved in " + (out() / "answer.json").string() + "):\n" + s_->answers.dump(2));
  } else {
    std::error_code ec;
    fs::remove(out() / "answer.json", ec);  // no stale answers from an earlier version of the program
  }
}

namespace {
// The learner's variation of exercise `name`, from the catalog this program was built with.
// Nothing varies when the catalog has no entry for it; a catalog that cannot be read is a
// usage error only when a --student asked for a variation.
nlohmann::json learner_variation(const std::string& name, const std::string& student) {
  const fs::path file = fs::path(WORKBOOK_ROOT) / "exercises" / "exercises.json";
  try {
    const exercise::Catalog c = exercise::load_catalog(file);
    const exercise::Exercise* e = c.find(name);
    return e ? exercise::variation(*e, student) : nlohmann::json::object();
  } catch (const std::exception& ex) {
    if (student.empty()) return nlohmann::json::object();
    throw wb::UsageError(std::string("--student needs the exercise catalog: ") + ex.what());
  }
}
}  // namespace

Exercise::Exercise(std::string name, std::string title) : name_(std::move(name)), title_(std::move(title)) {}

int Exercise::main(int argc, char** argv, const std::function<void(Run&)>& body) {
  wb::Chapter ch{name_, title_};
  ch.defaults().size = defaults_.size;
  ch.defaults().schedule = defaults_.schedule;
  ch.defaults().sort_by = defaults_.sort_by;
  // --help shows this program's defaults, not the chapters'.
  CLI::Option* size = ch.app().get_option("--size");
  const bool per_device = defaults_.cpu_size > 0 && defaults_.cpu_size != defaults_.size;
  size->default_str(per_device ? std::to_string(defaults_.size) + " on a GPU, " +
                                     std::to_string(defaults_.cpu_size) + " on a CPU"
                               : std::to_string(defaults_.size));
  ch.app().get_option("--schedule")->default_str(defaults_.schedule);
  if (!defaults_.sort_by.empty()) ch.app().get_option("--sort-by")->default_str(defaults_.sort_by);
  // After parsing: the size for the device (as chapter 04 does), unless --size says otherwise;
  // and a quiet harness when this program prints the table itself (lessons hidden).
  bool quiet = false;
  std::string student;
  ch.app()
      .add_option("--student", student,
                  "your name: run your own variation of the exercise (the checker does the same)")
      ->check([](const std::string& s) {
        return exercise::valid_student_name(s)
                   ? std::string()
                   : "'" + s + "' is not a name: 1-64 letters, digits, '.', '_', '-'";
      });
  nlohmann::json variation = nlohmann::json::object();
  CLI::Option* schedule = ch.app().get_option("--schedule");
  ch.app().final_callback([&] {
    // This learner's variation (exercises.json "vary"), applied where no flag says otherwise.
    variation = learner_variation(name_, student);
    if (variation.contains("size") && size->count() == 0) defaults_.size = variation["size"].get<int64_t>();
    if (variation.contains("cpu_size") && size->count() == 0)
      defaults_.cpu_size = variation["cpu_size"].get<int64_t>();
    if (variation.contains("size") || variation.contains("cpu_size"))
      if (size->count() == 0) ch.defaults().size = defaults_.size;
    if (variation.contains("schedule") && schedule->count() == 0)
      ch.defaults().schedule = variation["schedule"].get<std::string>();
    if (defaults_.schedule_for_steps && variation.contains("target_first") && schedule->count() == 0)
      ch.defaults().schedule = defaults_.schedule_for_steps(variation["target_first"].get<int64_t>(),
                                                            variation.value("target_count", int64_t{1}));
    if (defaults_.cpu_size > 0 && defaults_.cpu_size != defaults_.size && size->count() == 0) {
      const std::string& dev = ch.defaults().device;
      const bool gpu = dev == "cuda" || (dev == "auto" && wb::cuda_available());
      ch.defaults().size = gpu ? defaults_.size : defaults_.cpu_size;
    }
    quiet = ch.defaults().quiet;
    if (!defaults_.show_lessons) ch.defaults().quiet = true;
  });
  return ch.main(argc, argv, [&](wb::Run& harness) {
    torch::manual_seed(0);  // the same inputs every run
    const char* token = std::getenv(exercise::kRunTokenEnv);
    Run run(harness, quiet, !defaults_.show_lessons, student, variation.dump(), name_, token ? token : "");
    body(run);
    run.finish();
    return 0;
  });
}

}  // namespace ex
