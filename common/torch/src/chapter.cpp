#include "workbook/cli.hpp"
#include "workbook/chapter.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include <ATen/Parallel.h>  // set_num_threads
#include <torch/cuda.h>     // torch::cuda::is_available

#include "workbook/fs_util.hpp"
#include "workbook/log.hpp"
#include "workbook/compare.hpp"
#include "workbook/lessons.hpp"
#include "workbook/napkin.hpp"
#include "workbook/trace_model.hpp"
#include "workbook/peaks.hpp"
#include "workbook/table.hpp"
#include "workbook/timeline_svg.hpp"
#include "workbook/trace_reader.hpp"

namespace fs = std::filesystem;

namespace wb {

namespace {
std::string where_to_look(const fs::path& dir, const RunOutputs& o) {
  return "Outputs in " + dir.string() +
         "/: table.txt, trace.json, lessons.txt, lessons.json, timeline.svg\n"
         "Open the trace: https://ui.perfetto.dev -> 'Open trace file' -> " +
         o.trace.string() +
         " (W/S zoom, A/D pan, click a bar for its args).\nOr look at the picture: " + o.svg.string() + "\n";
}

// ---- Ctrl-C: stop between two steps, never in the middle of writing a file.
// The handler only records the signal; profile() and report() look at it. SA_RESETHAND: a
// second Ctrl-C ends the program at once (a step that takes very long).
volatile std::sig_atomic_t g_signal = 0;
extern "C" void on_stop_signal(int sig) { g_signal = sig; }
int g_reports_written = 0;  // a chapter with variants writes several reports

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_RESTART;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

struct Interrupted : std::runtime_error {
  using std::runtime_error::runtime_error;
};
void throw_if_interrupted(const char* where) {
  if (g_signal) throw Interrupted(std::string(g_signal == SIGINT ? "SIGINT" : "SIGTERM") + " " + where);
}

// ---- Does the problem fit? Checked before anything is allocated.
std::string bytes_text(double b) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(2);
  os << b / (1024.0 * 1024 * 1024) << " GiB (";
  os.precision(0);
  os << b << " bytes)";
  return os.str();
}

}  // namespace

Chapter::~Chapter() = default;  // here, where CLI::App is a complete type

Chapter::Chapter(std::string name, std::string title)
    : name_(std::move(name)), title_(std::move(title)), app_(std::make_unique<CLI::App>(title_, name_)) {
  cfg_.out = fs::path("out") / name_;
  app_->add_option("--size", cfg_.size, "matrix size N (N x N matrices)")
      ->check([](const std::string& s) -> std::string {  // CLI::PositiveNumber prints DBL_MAX
        try {
          size_t used = 0;
          if (std::stoll(s, &used) >= 1 && used == s.size()) return {};
        } catch (const std::logic_error&) {
        }
        return "must be a whole number >= 1, got '" + s + "'";
      })
      ->capture_default_str();
  app_->add_option("--dtype", cfg_.dtype, "element type; auto = bf16 on GPU, fp32 on CPU")
      ->check(CLI::IsMember({"auto", "bf16", "fp16", "fp32"}))
      ->capture_default_str();
  app_->add_option("--device", cfg_.device, "where to run; auto = cuda when a GPU is present")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  app_->add_option("--schedule", cfg_.schedule,
                   "profiler schedule W,WU,A[,R]: wait, warmup, active steps, repeat (0 = one cycle here)")
      ->check([](const std::string& s) -> std::string {
        try {
          Schedule::parse(s);
          return {};
        } catch (const std::invalid_argument& e) {
          return e.what();
        }
      })
      ->capture_default_str();
  app_->add_option("--warmup-iters", cfg_.warmup_iters,
                   "untimed iterations (then a device synchronize) before the profiler starts; 0 = cold")
      ->check(CLI::Range(0, 1000000));
  app_->add_option("--out", cfg_.out, "folder for table.txt, trace.json, timeline.svg, lessons")
      ->capture_default_str();
  app_->add_option("--sort-by", cfg_.sort_by,
                   "table order; default cuda_time_total on GPU, cpu_time_total on CPU")
      ->check(CLI::IsMember(
          {"cpu_time_total", "cuda_time_total", "self_cpu_time_total", "self_cuda_time_total", "count"}));
  app_->add_option("--row-limit", cfg_.row_limit, "table rows to print (-1: all)")
      ->check(CLI::Range(-1, 1000000))
      ->capture_default_str();
  app_->add_option("--threads", cfg_.threads, "CPU threads for LibTorch ops (0: LibTorch's default)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  app_->add_flag("--quiet", cfg_.quiet, "print only errors and the final summary");
  app_->add_flag("--check", cfg_.check, "exit with code 3 when a lesson does not hold (for scripts)");
  app_->add_flag("--compare", cfg_.compare,
                 "compare this run with expected_output/<platform>/<chapter> (patterns, not numbers)");
  app_->add_option("--platform", cfg_.platform,
                   "platform for --compare (default: from the trace, e.g. h200, cpu)");
  app_->add_option("--expected", cfg_.expected_root, "root of the recorded outputs for --compare")
      ->capture_default_str();
}

void Chapter::experiment(std::string name, std::string schedule, std::string what) {
  experiments_.push_back({std::move(name), std::move(schedule), std::move(what)});
}

void Chapter::variants(std::vector<std::string> names, std::string help,
                       std::vector<VariantShortcut> shortcuts) {
  variants_ = std::move(names);
  variant_help_ = std::move(help);
  variant_shortcuts_ = std::move(shortcuts);
}

// The flags a chapter declared after the constructor: --variant and its shortcuts (05-07),
// --experiment and --list-experiments.
void Chapter::add_declared_flags(bool& list_experiments) {
  app_->get_option("--warmup-iters")->default_str(std::to_string(cfg_.warmup_iters));
  if (!variants_.empty()) {
    std::vector<std::string> names = variants_;
    names.insert(names.begin(), "all");
    app_->add_option("--variant", cfg_.variant, variant_help_)
        ->check(CLI::IsMember(names))
        ->capture_default_str();
  }
  for (const auto& s : variant_shortcuts_)
    app_->add_flag_callback(
        s.flag, [this, v = s.variant] { cfg_.variant = v; }, s.help);
  if (!experiments_.empty()) {
    std::vector<std::string> names;
    std::string help = "run an experiment instead of the default run (into --out/NAME/):";
    for (const auto& e : experiments_) {
      names.push_back(e.name);
      help += "\n  " + e.name + ": schedule " + e.schedule + ", " + e.what;
    }
    app_->add_option("--experiment", cfg_.experiment, help)->check(CLI::IsMember(names));
  }
  app_->add_flag("--list-experiments", list_experiments,
                 "print this chapter's experiments, one per line, and exit");
  if (cfg_.size_for_device.gpu > 0)
    app_->get_option("--size")->default_str(std::to_string(cfg_.size_for_device.gpu) + " on a GPU, " +
                                            std::to_string(cfg_.size_for_device.cpu) + " on a CPU");
}

int Chapter::main(int argc, char** argv, const std::function<int(Run&)>& body) {
  install_stop_handlers();
  bool list_experiments = false;
  add_declared_flags(list_experiments);
  if (auto rc = wb::parse_flags(*app_, argc, argv)) return *rc;
  if (list_experiments) {
    for (const auto& e : experiments_) std::cout << e.name << "\n";
    return 0;
  }
  if (!cfg_.experiment.empty()) {
    if (app_->get_option("--schedule")->count() > 0) {
      std::cerr << name_ << ": --experiment " << cfg_.experiment
                << " sets its own schedule; leave out --schedule (or run the default with yours)\n";
      return 2;
    }
    for (const auto& e : experiments_)
      if (e.name == cfg_.experiment) cfg_.schedule = e.schedule;
  }
  bool cpu_size_picked = false;
  if (cfg_.size_for_device.gpu > 0 && app_->get_option("--size")->count() == 0) {
    const bool gpu = cfg_.device == "cuda" || (cfg_.device == "auto" && cuda_available());
    cfg_.size = gpu ? cfg_.size_for_device.gpu : cfg_.size_for_device.cpu;
    cpu_size_picked = !gpu;
  }
  try {
    Run run(*this, cfg_);
    if (cpu_size_picked) {
      const SizeForDevice& sd = cfg_.size_for_device;
      run.say("No GPU: using --size " + std::to_string(sd.cpu) + " instead of " + std::to_string(sd.gpu) +
              (sd.cpu_why.empty() ? std::string() : " (" + sd.cpu_why + ")") + ". Pass --size " +
              std::to_string(sd.gpu) + " to run the GPU size anyway.");
    }
    const int rc = body(run);
    if (g_signal) {
      std::cerr << name_ << ": stopped by " << (g_signal == SIGINT ? "SIGINT" : "SIGTERM")
                << " after the outputs were written (they are complete)\n";
      return 128 + g_signal;
    }
    return rc;
  } catch (const Interrupted& e) {
    std::cerr << name_ << ": stopped by " << e.what()
              << (g_reports_written == 0
                      ? "; nothing was written, the files in " + cfg_.out.string() + " are as they were\n"
                      : "; the reports written before it are complete, nothing "
                        "else was written\n");
    return 128 + g_signal;
  } catch (const UsageError& e) {
    std::cerr << name_ << ": " << e.what() << "\n";
    return 2;
  } catch (const CompareError& e) {  // a reference that breaks only once the run is known
    std::cerr << name_ << ": --compare: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << name_ << ": error: " << e.what() << "\n";
    return 1;
  }
}

void Run::refuse(const std::string& name, const std::string& why_not) const {
  if (cfg_.variant == name && !why_not.empty()) throw UsageError("--variant " + name + ": " + why_not);
}

Run::Run(const Chapter& ch, ChapterConfig cfg) : ch_(ch), cfg_(std::move(cfg)) {
  schedule_ = Schedule::parse(cfg_.schedule);
  if (schedule_.repeat == 0) schedule_.repeat = 1;  // one cycle: a chapter's loop must end

  if (cfg_.threads > 0) torch::set_num_threads(cfg_.threads);
  // Device first: dtype and the table's default order depend on it.
  const bool have_cuda = cuda_available();
  if (cfg_.device == "cuda" && !have_cuda)
    throw UsageError(
        "--device cuda: no CUDA device is visible to LibTorch on this machine "
        "(use --device cpu or auto)");
  device_ = (cfg_.device == "cuda" || (cfg_.device == "auto" && have_cuda)) ? torch::Device(torch::kCUDA)
                                                                            : torch::Device(torch::kCPU);
  std::string dt = cfg_.dtype;
  if (dt == "auto") dt = device_.is_cuda() ? "bf16" : "fp32";
  dtype_ = dt == "bf16" ? torch::kBFloat16 : dt == "fp16" ? torch::kHalf : torch::kFloat;
  if (!device_.is_cuda())
    ::setenv("KINETO_LOG_LEVEL", "5",
             /*overwrite=*/0);  // CPU edition: hide Kineto's "no GPU" error (set it to see Kineto logs)
  if (cfg_.sort_by.empty()) cfg_.sort_by = device_.is_cuda() ? "cuda_time_total" : "cpu_time_total";

  // Too big to allocate: say so now, rather than die in the allocator (or the OOM killer).
  // x, w, b and the two results (x@w, then y): the least any chapter holds at once.
  {
    const double n = static_cast<double>(cfg_.size), batch = static_cast<double>(cfg_.batch);
    const double need = 5.0 * batch * n * n * dtype_bytes();
    std::string where;
    const double avail = bytes_available(device_.is_cuda(), where);
    if (avail >= 0 && need > avail)
      throw UsageError("--size " + std::to_string(cfg_.size) + ": x, w, b and the two results (5 x " +
                       (cfg_.batch > 1 ? std::to_string(cfg_.batch) + " x " : std::string()) + "N x N x " +
                       std::to_string(dtype_bytes()) + " bytes) need " + bytes_text(need) + ", but only " +
                       bytes_text(avail) + " is available (" + where + "); choose a smaller --size");
  }

  // Fail on an unusable --out before any profiling, and hold it for the whole run.
  try {
    prepare_output_dir(cfg_.out);
    lock_.emplace(cfg_.out);  // "another run is writing to DIR": stop before doing any work
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
  }

  // --compare needs a recorded reference for this platform: check it exists and parses now,
  // not after the profiling. The platform is what the trace will say: the GPU's name, or cpu.
  if (cfg_.compare) {
    std::string platform = cfg_.platform, reason = "your --platform";
    if (platform.empty() && device_.is_cuda()) {
      const std::string gpu = wb::cuda_device_name();
      platform = gpu.empty() ? "unknown-gpu" : platform_key(gpu);
      reason = "this run's GPU: " + (gpu.empty() ? std::string("name unknown") : gpu);
    } else if (platform.empty()) {
      platform = "cpu";
      reason = "this run has no GPU";
    }
    try {
      check_reference(cfg_.experiment.empty() ? ch_.name() : ch_.name() + "/" + cfg_.experiment, platform,
                      reason, cfg_.expected_root);
    } catch (const CompareError& e) {
      throw UsageError(std::string("--compare: ") + e.what());
    }
  }

  if (!cfg_.quiet) {
    std::ostringstream os;
    os << "== " << ch_.name() << " ==\n"
       << "device: "
       << (device_.is_cuda() ? "cuda (" + std::string(torch::cuda::device_count() > 0 ? "GPU" : "?") + ")"
                             : "cpu")
       << ", dtype: " << dtype_name() << ", size: " << cfg_.size << ", schedule: " << schedule_.str() << "\n";
    if (!device_.is_cuda())
      os << "No GPU here: this is the CPU edition. The table has no CUDA columns and the GPU lessons\n"
            "are marked not applicable; expected_output/h200/ holds what an H200 shows.\n";
    std::cout << os.str() << std::flush;
  }
}

std::string Run::dtype_name() const {
  switch (dtype_) {
    case torch::kBFloat16: return "bf16";
    case torch::kHalf: return "fp16";
    default: return "fp32";
  }
}

int Run::dtype_bytes() const { return static_cast<int>(c10::elementSize(dtype_)); }

void Run::stop_if_interrupted() const { throw_if_interrupted("while profiling"); }

namespace {

// The cycle's key_averages table, as the run's flags ask for it.
std::string cycle_table(CycleResult& cycle, const ChapterConfig& cfg) {
  TableOptions topts;
  topts.sort_by = cfg.sort_by;
  topts.row_limit = cfg.row_limit;
  // profile_memory: Python's memory columns (the in-memory events carry the [memory] records).
  topts.profile_memory = cycle.trace().profile_memory;
  topts.use_device = cycle.trace().has_device_activity();
  return format_table(key_averages(cycle.trace()), topts);
}

// The reference run, if any: saved next to trace.json (or read from where it was saved), read
// back with its model, and handed to the facts.
void load_reference(const ReferenceRun& ref, const fs::path& dir, std::optional<Trace>& ref_trace,
                    std::optional<TraceModel>& ref_model, FactOptions& fo) {
  if (ref.cycle) {
    ref.cycle->save_chrome_trace(dir / ref.file);
    ref_trace = read_trace(dir / ref.file);
    ref_model.emplace(*ref_trace);
    fo.reference = &*ref_model;
    fo.reference_label = ref.label;
    fo.reference_file = ref.file;
  } else if (!ref.saved.empty()) {
    ref_trace = read_trace(ref.saved);
    ref_model.emplace(*ref_trace);
    fo.reference = &*ref_model;
    fo.reference_label = ref.label;
    fo.reference_file = fs::relative(ref.saved, dir).string();
  }
}

}  // namespace

RunOutputs Run::report(CycleResult& cycle, const ReportOptions& ro) {
  throw_if_interrupted("before writing the outputs");  // later signals wait until all are written
  RunOutputs o;
  // A chapter with variants reports each into --out/<variant>/, judged by the spec
  // "<chapter>/<variant>" and compared with expected_output/<platform>/<chapter>/<variant>/.
  // An experiment reports the same way, into --out/<experiment>/.
  const std::string variant = ro.variant.empty() ? cfg_.experiment : ro.variant;
  const fs::path dir = variant.empty() ? cfg_.out : cfg_.out / variant;
  const std::string key = variant.empty() ? ch_.name() : ch_.name() + "/" + variant;
  if (!variant.empty()) prepare_output_dir(dir);
  DirLock lock(dir);
  o.trace = dir / "trace.json";
  o.table = dir / "table.txt";
  o.lessons_txt = dir / "lessons.txt";
  o.lessons_json = dir / "lessons.json";
  o.svg = dir / "timeline.svg";

  cycle.save_chrome_trace(o.trace);
  const std::string table = cycle_table(cycle, cfg_);
  write_file_atomic(o.table, table);

  // Lessons and the picture read the trace back from disk: it carries what the in-memory
  // events lack (kernel footprints, device properties), and it is what a learner opens.
  o.trace_data = std::make_shared<const Trace>(read_trace(o.trace));
  o.model = std::make_shared<const TraceModel>(*o.trace_data);
  const Trace& disk = *o.trace_data;
  const TraceModel& model = *o.model;
  const std::string device_name = disk.devices.empty() ? std::string() : disk.devices.front().name;

  FactOptions fo;
  fo.annotation = ro.annotation;
  // The run this one is compared with (chapter 03's 2-D workload), saved next to trace.json.
  std::optional<Trace> ref_trace;
  std::optional<TraceModel> ref_model;
  load_reference(ro.reference, dir, ref_trace, ref_model, fo);
  fo.problem = ro.problem.n > 0 ? ro.problem : Problem::square(cfg_.size, 1, dtype_bytes());
  fo.problem.dtype_bytes = dtype_bytes();
  LessonsReport lr;
  if (const LessonSpec* spec = find_lesson_spec(key)) {
    lr = check_lessons(model, *spec, fo);
  } else {
    lr = inspect_trace(model, fo);
  }
  write_file_atomic(o.lessons_txt, render_lessons(lr, Format::Text));
  write_file_atomic(o.lessons_json, to_json(lr).dump(2) + "\n");
  o.lessons_passed = lr.passed;
  o.lessons_failed = lr.failed;
  o.lessons_not_applicable = lr.not_applicable;
  o.lessons_ok = lr.ok();

  TimelineOptions to;
  to.title = key + " on " + (device_name.empty() ? "CPU" : device_name);
  write_file_atomic(o.svg, render_timeline_svg(model, to));

  say(ro.napkin ? ro.napkin(device_name) : napkin_math(fo.problem, device_name));
  say(table);
  say(render_lessons(lr, Format::Text));
  say(where_to_look(dir, o));

  if (cfg_.compare) {
    o.compared = true;
    o.compare_ok = compare_with_recording(dir, key, fo);
  }
  if (cfg_.quiet)
    std::cout << key << ": lessons " << lr.passed << " pass, " << lr.failed << " fail, " << lr.not_applicable
              << " not applicable" << (lr.ok() ? "" : " (NOT OK)") << "; outputs in " << dir.string() << "\n";
  ++g_reports_written;
  return o;
}

bool Run::compare_with_recording(const fs::path& dir, const std::string& key, const FactOptions& fo) const {
  CompareOptions co;
  co.chapter = key;
  co.platform = cfg_.platform;
  co.expected_root = cfg_.expected_root;
  co.facts = fo;
  const CompareReport cr = compare_run(dir, co);
  std::cout << render_compare(cr, Format::Text) << std::flush;
  return cr.ok();
}

int Run::exit_code(const RunOutputs& o) const {
  if (cfg_.check && (!o.lessons_ok || (o.compared && !o.compare_ok))) return 3;
  return 0;
}

int Run::report_across(const std::vector<VariantRun>& runs, const std::string& annotation,
                       const std::string& problem_label) {
  throw_if_interrupted("before writing the comparison");
  const Problem problem = Problem::square(cfg_.size, cfg_.batch, dtype_bytes());
  const AcrossSpec* spec = find_across_spec(ch_.name());  // the chapter's lessons.json, "across"
  if (!spec)
    throw std::logic_error(ch_.name() + "'s lessons.json declares no lessons across variants (\"across\")");
  const LessonsReport across = check_across(*spec, runs, problem, annotation);
  const std::string text = render_across(runs, across, problem_label);
  {
    DirLock lock(cfg_.out);
    write_file_atomic(cfg_.out / "comparison.txt", text);
    write_file_atomic(cfg_.out / "comparison.json", to_json(across).dump(2) + "\n");
  }
  say(text);
  if (cfg_.quiet)
    std::cout << ch_.name() << " (across variants): lessons " << across.passed << " pass, " << across.failed
              << " fail, " << across.not_applicable << " not applicable\n";
  bool compare_ok = true;
  if (cfg_.compare && cfg_.variant != "all") {
    // The recorded comparison judges every variant side by side; one variant alone leaves most
    // of its lessons n/a here, which is no difference of the learner's making.
    std::cout << "Lessons across variants not compared with the recording: --variant " << cfg_.variant
              << " profiled one variant (its own folder was compared above); run without --variant to "
                 "compare them.\n"
              << std::flush;
  } else if (cfg_.compare) {
    std::string platform = cfg_.platform, reason = "your --platform";
    if (platform.empty()) {
      platform = "cpu";
      reason = "this run has no GPU";
      for (const auto& r : runs)
        if (r.trace) {
          platform = detect_platform(*r.trace);
          reason = "from the " + r.name + " trace";
          break;
        }
    }
    const CompareReport cr = compare_across(across, ch_.name(), platform, reason, cfg_.expected_root);
    std::cout << render_compare(cr, Format::Text) << std::flush;
    compare_ok = cr.ok();
  }
  return cfg_.check && (across.failed > 0 || !compare_ok) ? 3 : 0;
}

void Run::say(const std::string& text) const {
  if (!cfg_.quiet) std::cout << text << (text.empty() || text.back() == '\n' ? "" : "\n") << std::flush;
}

}  // namespace wb
