#include "workbook/chapter.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include <ATen/Parallel.h>  // set_num_threads
#include <torch/cuda.h>     // torch::cuda::is_available

#ifdef WORKBOOK_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

#include "workbook/fs_util.hpp"
#include "workbook/log.hpp"
#include "workbook/compare.hpp"
#include "workbook/lessons.hpp"
#include "workbook/model.hpp"
#include "workbook/peaks.hpp"
#include "workbook/table.hpp"
#include "workbook/timeline_svg.hpp"
#include "workbook/trace_reader.hpp"

namespace fs = std::filesystem;

namespace wb {

namespace {
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

// What a new allocation can get on the host without swapping or the OOM killer: MemAvailable
// (free + reclaimable cache), lowered to a cgroup v2 limit (containers) when there is one.
// Negative when unknown.
double host_bytes_available(std::string& source) {
  double avail = -1;
  std::ifstream meminfo("/proc/meminfo");
  std::string key, rest;
  double kib = 0;
  while (meminfo >> key >> kib && std::getline(meminfo, rest))
    if (key == "MemAvailable:") {
      avail = kib * 1024;
      source = "host memory: MemAvailable";
      break;
    }
  if (avail < 0) {
    const long pages = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) {
      avail = static_cast<double>(pages) * static_cast<double>(page);
      source = "host memory: free pages";
    }
  }
  std::ifstream max_f("/sys/fs/cgroup/memory.max"), cur_f("/sys/fs/cgroup/memory.current");
  double max = 0, cur = 0;  // memory.max is "max" without a limit: the read fails, no change
  if (max_f >> max && cur_f >> cur && (avail < 0 || max - cur < avail)) {
    avail = max - cur;
    source = "this container's limit: memory.max - memory.current";
  }
  return avail;
}

double cuda_bytes_available(std::string& source) {
#ifdef WORKBOOK_WITH_CUDA
  size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
    source = "GPU memory: cudaMemGetInfo, free of " + std::to_string(total_b) + " bytes";
    return static_cast<double>(free_b);
  }
  cudaGetLastError();  // clear the error; the allocator will report it
#endif
  (void)source;
  return -1;
}

std::string cuda_device_name() {
#ifdef WORKBOOK_WITH_CUDA
  int dev = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&prop, dev) == cudaSuccess)
    return prop.name;
  cudaGetLastError();
#endif
  return "";
}
}  // namespace

Chapter::Chapter(std::string name, std::string title)
    : name_(std::move(name)), title_(std::move(title)), app_(title_, name_) {
  cfg_.out = fs::path("out") / name_;
  app_.add_option("--size", cfg_.size, "matrix size N (N x N matrices)")
      ->check([](const std::string& s) -> std::string {  // CLI::PositiveNumber prints DBL_MAX
        try {
          size_t used = 0;
          if (std::stoll(s, &used) >= 1 && used == s.size()) return {};
        } catch (const std::logic_error&) {
        }
        return "must be a whole number >= 1, got '" + s + "'";
      })
      ->capture_default_str();
  app_.add_option("--dtype", cfg_.dtype, "element type; auto = bf16 on GPU, fp32 on CPU")
      ->check(CLI::IsMember({"auto", "bf16", "fp16", "fp32"}))
      ->capture_default_str();
  app_.add_option("--device", cfg_.device, "where to run; auto = cuda when a GPU is present")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  app_.add_option("--schedule", cfg_.schedule,
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
  app_.add_option("--out", cfg_.out, "folder for table.txt, trace.json, timeline.svg, lessons")
      ->capture_default_str();
  app_.add_option("--sort-by", cfg_.sort_by,
                  "table order; default cuda_time_total on GPU, cpu_time_total on CPU")
      ->check(CLI::IsMember({"cpu_time_total", "cuda_time_total", "self_cpu_time_total",
                             "self_cuda_time_total", "count"}));
  app_.add_option("--row-limit", cfg_.row_limit, "table rows to print (-1: all)")
      ->check(CLI::Range(-1, 1000000))
      ->capture_default_str();
  app_.add_option("--threads", cfg_.threads, "CPU threads for LibTorch ops (0: LibTorch's default)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  app_.add_flag("--quiet", cfg_.quiet, "print only errors and the final summary");
  app_.add_flag("--check", cfg_.check, "exit with code 3 when a lesson does not hold (for scripts)");
  app_.add_flag("--compare", cfg_.compare,
                "compare this run with expected_output/<platform>/<chapter> (patterns, not numbers)");
  app_.add_option("--platform", cfg_.platform, "platform for --compare (default: from the trace, e.g. h200, cpu)");
  app_.add_option("--expected", cfg_.expected_root, "root of the recorded outputs for --compare")
      ->capture_default_str();
}

int Chapter::main(int argc, char** argv, const std::function<int(Run&)>& body) {
  install_stop_handlers();
  try {
    app_.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app_.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app_.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << name_ << ": " << e.what() << "\nRun '" << name_ << " --help' for the flags.\n";
    return 2;
  }
  try {
    Run run(*this, cfg_);
    const int rc = body(run);
    if (g_signal) {
      std::cerr << name_ << ": stopped by " << (g_signal == SIGINT ? "SIGINT" : "SIGTERM")
                << " after the outputs were written (they are complete)\n";
      return 128 + g_signal;
    }
    return rc;
  } catch (const Interrupted& e) {
    std::cerr << name_ << ": stopped by " << e.what()
              << (g_reports_written == 0 ? "; nothing was written, the files in " + cfg_.out.string() +
                                               " are as they were\n"
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

Run::Run(const Chapter& ch, ChapterConfig cfg) : ch_(ch), cfg_(std::move(cfg)) {
  schedule_ = Schedule::parse(cfg_.schedule);
  if (schedule_.repeat == 0) schedule_.repeat = 1;  // one cycle: a chapter's loop must end

  if (cfg_.threads > 0) torch::set_num_threads(cfg_.threads);
  // Device first: dtype and the table's default order depend on it.
  const bool have_cuda = cuda_available();
  if (cfg_.device == "cuda" && !have_cuda)
    throw UsageError("--device cuda: no CUDA device is visible to LibTorch on this machine "
                     "(use --device cpu or auto)");
  device_ = (cfg_.device == "cuda" || (cfg_.device == "auto" && have_cuda)) ? torch::Device(torch::kCUDA)
                                                                             : torch::Device(torch::kCPU);
  std::string dt = cfg_.dtype;
  if (dt == "auto") dt = device_.is_cuda() ? "bf16" : "fp32";
  dtype_ = dt == "bf16" ? torch::kBFloat16 : dt == "fp16" ? torch::kHalf : torch::kFloat;
  if (!device_.is_cuda())
    ::setenv("KINETO_LOG_LEVEL", "5", /*overwrite=*/0);  // CPU edition: hide Kineto's "no GPU" error (set it to see Kineto logs)
  if (cfg_.sort_by.empty()) cfg_.sort_by = device_.is_cuda() ? "cuda_time_total" : "cpu_time_total";

  // Too big to allocate: say so now, rather than die in the allocator (or the OOM killer).
  // x, w, b and the two results (x@w, then y): the least any chapter holds at once.
  {
    const double n = static_cast<double>(cfg_.size), batch = static_cast<double>(cfg_.batch);
    const double need = 5.0 * batch * n * n * dtype_bytes();
    std::string where;
    const double avail = device_.is_cuda() ? cuda_bytes_available(where) : host_bytes_available(where);
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
      const std::string gpu = cuda_device_name();
      platform = gpu.empty() ? "unknown-gpu" : platform_key(gpu);
      reason = "this run's GPU: " + (gpu.empty() ? std::string("name unknown") : gpu);
    } else if (platform.empty()) {
      platform = "cpu";
      reason = "this run has no GPU";
    }
    try {
      check_reference(ch_.name(), platform, reason, cfg_.expected_root);
    } catch (const CompareError& e) {
      throw UsageError(std::string("--compare: ") + e.what());
    }
  }

  if (!cfg_.quiet) {
    std::ostringstream os;
    os << "== " << ch_.name() << " ==\n"
       << "device: " << (device_.is_cuda() ? "cuda (" + std::string(torch::cuda::device_count() > 0 ? "GPU" : "?") + ")" : "cpu")
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

CycleResult Run::profile(const std::function<void()>& step) {
  ProfilerOptions opts;
  opts.schedule = schedule_;
  opts.cuda = device_.is_cuda();
  Profiler prof(opts);
  prof.start();
  const int steps = schedule_.total_steps();
  for (int i = 0; i < steps; ++i) {
    throw_if_interrupted("while profiling");  // leaving unwinds the profiler cleanly
    step();
    prof.step();
  }
  prof.stop();
  if (prof.results().empty()) throw std::runtime_error("the profiler produced no result (schedule " + schedule_.str() + ")");
  return std::move(prof.results().back());
}

namespace {
std::string fixed(double v, int digits) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(digits);
  os << v;
  return os.str();
}
std::string si(double v, const char* unit) {
  const char* prefixes[] = {"", "K", "M", "G", "T", "P"};
  int i = 0;
  while (v >= 1000.0 && i < 5) { v /= 1000.0; ++i; }
  return fixed(v, v < 10 ? 2 : 1) + " " + prefixes[i] + unit;
}
}  // namespace

std::string napkin_math(const Problem& p, const std::string& device_name) {
  const double n = static_cast<double>(p.n), batch = static_cast<double>(p.batch);
  const double flops = 2.0 * n * n * n * batch;          // one multiply-add = 2 FLOPs, N^3 of them
  const double gemm_bytes = 3.0 * n * n * batch * p.dtype_bytes;  // read x, w; write x@w
  const double add_bytes = 3.0 * n * n * batch * p.dtype_bytes;   // read x@w, b; write y
  std::ostringstream os;
  os << "Napkin math (N=" << p.n << (p.batch > 1 ? ", batch " + std::to_string(p.batch) : std::string())
     << ", " << p.dtype_bytes << " bytes/element):\n"
     << "  matmul: 2*N^3" << (p.batch > 1 ? "*batch" : "") << " = " << si(flops, "FLOP")
     << "; moves at least 3*N^2*" << p.dtype_bytes << " = " << si(gemm_bytes, "B")
     << " (intensity " << fixed(flops / gemm_bytes, 1) << " FLOP/B)\n"
     << "  add:    N^2 adds, moves 3*N^2*" << p.dtype_bytes << " = " << si(add_bytes, "B") << "\n";
  if (const DevicePeak* peak = find_peak(device_name)) {
    const double tf = peak_tflops(*peak, p.dtype_bytes);
    os << "  " << peak->model << " peaks (" << peak->source << "): ";
    if (tf > 0) os << fixed(tf, 0) << " TFLOP/s " << (p.dtype_bytes == 2 ? "dense bf16" : "fp32") << ", ";
    os << fixed(peak->mem_tbps, 2) << " TB/s memory\n";
    if (tf > 0)
      os << "  ideal matmul time at peak: " << fixed(flops / (tf * 1e12) * 1e6, 3) << " us; ideal add time: "
         << fixed(add_bytes / (peak->mem_tbps * 1e12) * 1e6, 3) << " us\n"
         << "  (the measured kernel times and their % of peak are in the lessons below)\n";
  } else {
    os << "  peak rates: unknown for '" << (device_name.empty() ? "this CPU" : device_name)
       << "' (no % of peak; see common/src/peaks.cpp for the table)\n";
  }
  return os.str();
}

RunOutputs Run::report(CycleResult& cycle, const ReportOptions& ro) {
  throw_if_interrupted("before writing the outputs");  // later signals wait until all are written
  RunOutputs o;
  // A chapter with variants reports each into --out/<variant>/, judged by the spec
  // "<chapter>/<variant>" and compared with expected_output/<platform>/<chapter>/<variant>/.
  const fs::path dir = ro.variant.empty() ? cfg_.out : cfg_.out / ro.variant;
  const std::string key = ro.variant.empty() ? ch_.name() : ch_.name() + "/" + ro.variant;
  if (!ro.variant.empty()) prepare_output_dir(dir);
  DirLock lock(dir);
  o.trace = dir / "trace.json";
  o.table = dir / "table.txt";
  o.lessons_txt = dir / "lessons.txt";
  o.lessons_json = dir / "lessons.json";
  o.svg = dir / "timeline.svg";

  cycle.save_chrome_trace(o.trace);
  TableOptions topts;
  topts.sort_by = cfg_.sort_by;
  topts.row_limit = cfg_.row_limit;
  const std::string table = format_table(key_averages(cycle.trace()), topts);
  write_file_atomic(o.table, table);

  // Lessons and the picture read the trace back from disk: it carries what the in-memory
  // events lack (kernel footprints, device properties), and it is what a learner opens.
  const Trace disk = read_trace(o.trace);
  const TraceModel model(disk);
  const std::string device_name = disk.devices.empty() ? std::string() : disk.devices.front().name;

  FactOptions fo;
  fo.annotation = ro.annotation;
  fo.problem.n = cfg_.size;
  fo.problem.batch = ro.batch;
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

  TimelineOptions to;
  to.title = ro.title.empty() ? key + " on " + (device_name.empty() ? "CPU" : device_name) : ro.title;
  write_file_atomic(o.svg, render_timeline_svg(model, to));

  say(napkin_math(fo.problem, device_name));
  say(table);
  say(render_lessons(lr, Format::Text));
  say("Outputs in " + dir.string() + "/: table.txt, trace.json, lessons.txt, lessons.json, timeline.svg\n"
      "Open the trace: https://ui.perfetto.dev -> 'Open trace file' -> " + o.trace.string() +
      " (W/S zoom, A/D pan, click a bar for its args).\nOr look at the picture: " + o.svg.string() + "\n");

  if (cfg_.compare) {
    CompareOptions co;
    co.chapter = key;
    co.platform = cfg_.platform;
    co.expected_root = cfg_.expected_root;
    co.facts = fo;
    const CompareReport cr = compare_run(dir, co);
    std::cout << render_compare(cr, Format::Text) << std::flush;
    o.compared = true;
    o.compare_ok = cr.ok();
  }
  if (cfg_.quiet)
    std::cout << key << ": lessons " << lr.passed << " pass, " << lr.failed << " fail, "
              << lr.not_applicable << " not applicable; outputs in " << dir.string() << "\n";
  ++g_reports_written;
  return o;
}

int Run::exit_code(const RunOutputs& o) const {
  if (cfg_.check && (o.lessons_failed > 0 || (o.compared && !o.compare_ok))) return 3;
  return 0;
}

void Run::say(const std::string& text) const {
  if (!cfg_.quiet) std::cout << text << (text.empty() || text.back() == '\n' ? "" : "\n") << std::flush;
}

}  // namespace wb
