#include "workbook/chapter.hpp"

#include <cstdlib>
#include <iostream>
#include <sstream>

#include "workbook/fs_util.hpp"
#include "workbook/log.hpp"
#include "workbook/table.hpp"

namespace fs = std::filesystem;

namespace wb {

Chapter::Chapter(std::string name, std::string title)
    : name_(std::move(name)), title_(std::move(title)), app_(title_, name_) {
  cfg_.out = fs::path("out") / name_;
  app_.add_option("--size", cfg_.size, "matrix size N (N x N matrices)")
      ->check(CLI::PositiveNumber)
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
  app_.add_flag("--quiet", cfg_.quiet, "print only errors and the final summary");
}

int Chapter::main(int argc, char** argv, const std::function<int(Run&)>& body) {
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
    return body(run);
  } catch (const UsageError& e) {
    std::cerr << name_ << ": " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << name_ << ": error: " << e.what() << "\n";
    return 1;
  }
}

Run::Run(const Chapter& ch, ChapterConfig cfg) : ch_(ch), cfg_(std::move(cfg)) {
  schedule_ = Schedule::parse(cfg_.schedule);
  if (schedule_.repeat == 0) schedule_.repeat = 1;  // one cycle: a chapter's loop must end

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

  // Fail on an unusable --out before any profiling.
  try {
    prepare_output_dir(cfg_.out);
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
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
    step();
    prof.step();
  }
  prof.stop();
  if (prof.results().empty()) throw std::runtime_error("the profiler produced no result (schedule " + schedule_.str() + ")");
  return std::move(prof.results().back());
}

void Run::write_outputs(CycleResult& cycle) {
  DirLock lock(cfg_.out);
  const fs::path trace_path = cfg_.out / "trace.json";
  cycle.save_chrome_trace(trace_path);

  TableOptions topts;
  topts.sort_by = cfg_.sort_by;
  topts.row_limit = cfg_.row_limit;
  const std::string table = format_table(key_averages(cycle.trace), topts);
  write_file_atomic(cfg_.out / "table.txt", table);

  say(table);
  say("Wrote " + (cfg_.out / "table.txt").string() + " and " + trace_path.string() +
      "\nOpen the trace: https://ui.perfetto.dev -> 'Open trace file' -> " + trace_path.string() +
      "\n(or chrome://tracing). Keys: W/S zoom, A/D pan, click a bar for its args.\n");
}

void Run::say(const std::string& text) const {
  if (!cfg_.quiet) std::cout << text << (text.empty() || text.back() == '\n' ? "" : "\n") << std::flush;
}

}  // namespace wb
