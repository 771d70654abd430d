// your_model: profile YOUR model from C++ with the installed TorchProfilerWorkbook package.
//
//   your_model --model net.pt  --input 32x128 [--input ...] [--steps 5] [--out out/your_model]
//   your_model --model net.pt2 --input 32x128 --device cuda     (an AOTInductor package)
//
// Loads a TorchScript module (torch::jit::load) or an AOTInductor package
// (torch::inductor::AOTIModelPackageLoader), runs it once unprofiled on random inputs of the
// given shapes (to check that the model accepts them), then profiles --steps steps under the
// annotation --annotation, and writes into --out:
//   table.txt     key_averages().table()      trace.json     the Chrome trace (ui.perfetto.dev)
//   timeline.svg  the steps as a picture      inspect.txt/.json  the workbook's rules, judged
// Exit codes: 0 done, 2 bad flags or a model that cannot be loaded or run, 1 anything else.
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/csrc/jit/serialization/import.h>
#include <torch/types.h>

#include <CLI/CLI.hpp>

#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "workbook/cli.hpp"
#include "workbook/fs_util.hpp"
#include "workbook/lessons.hpp"
#include "workbook/profiler.hpp"
#include "workbook/table.hpp"
#include "workbook/timeline_svg.hpp"
#include "workbook/trace_model.hpp"
#include "workbook/trace_reader.hpp"

namespace fs = std::filesystem;

namespace {
struct BadInput : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// "32x128" or "32,128" -> {32, 128}.
std::vector<int64_t> parse_shape(const std::string& text) {
  std::vector<int64_t> dims;
  std::string cur;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == 'x' || text[i] == ',') {
      size_t used = 0;
      long long d = 0;
      try {
        d = std::stoll(cur, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (cur.empty() || used != cur.size() || d < 1 || d > (1LL << 31))
        throw BadInput("--input '" + text +
                       "': a shape is positive sizes separated by 'x' or ',' (e.g. 32x128)");
      dims.push_back(d);
      cur.clear();
    } else {
      cur += text[i];
    }
  }
  return dims;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// One forward pass of the loaded model on `inputs`.
using Forward = std::function<void(const std::vector<torch::Tensor>&)>;

// [snippet:load]
Forward load_model(const fs::path& path, const std::string& format, torch::Device device) {
  if (format == "aoti") {
    auto loader = std::make_shared<torch::inductor::AOTIModelPackageLoader>(path.string());
    return [loader](const std::vector<torch::Tensor>& in) { loader->run(in); };
  }
  auto module = std::make_shared<torch::jit::Module>(torch::jit::load(path.string(), device));
  module->eval();
  return [module](const std::vector<torch::Tensor>& in) {
    module->forward(std::vector<torch::jit::IValue>(in.begin(), in.end()));
  };
}
// [/snippet:load]
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Profile a TorchScript module or an AOTInductor package with wb::Profiler."};
  std::string model, format = "auto", device_name = "cpu", dtype = "fp32", annotation = "your_model";
  std::vector<std::string> shapes;
  int steps = 5, wait = 1, row_limit = 20;
  fs::path out = "out/your_model";
  app.add_option("--model", model, "TorchScript file (.pt) or AOTInductor package (.pt2)")->required();
  app.add_option("--format", format, "auto (by extension), torchscript or aoti")
      ->check(CLI::IsMember({"auto", "torchscript", "aoti"}));
  app.add_option("--input", shapes, "shape of one input, e.g. 32x128 (repeat for each input)")->required();
  app.add_option("--dtype", dtype, "element type of the inputs")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}));
  app.add_option("--device", device_name, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--steps", steps, "steps recorded")->check(CLI::Range(1, 10000));
  app.add_option("--wait", wait, "unrecorded steps before the profiler's warmup step")
      ->check(CLI::Range(0, 10000));
  app.add_option("--annotation", annotation, "record_function name around each forward pass");
  app.add_option("--row-limit", row_limit, "rows of the table")->check(CLI::Range(1, 100000));
  app.add_option("--out", out, "output folder");
  if (auto rc = wb::parse_flags(app, argc, argv)) return *rc;

  try {
    // ---- everything the flags say is checked before any work --------------------------------
    std::vector<std::vector<int64_t>> input_shapes;
    for (const auto& s : shapes) input_shapes.push_back(parse_shape(s));
    std::error_code ec;
    if (!fs::is_regular_file(model, ec)) throw BadInput("--model: no model file at " + model);
    if (format == "auto") format = fs::path(model).extension() == ".pt2" ? "aoti" : "torchscript";
    if (device_name == "cuda" && !wb::cuda_available())
      throw BadInput("--device cuda: LibTorch sees no CUDA device");
    const torch::Device device(device_name == "cuda" ? torch::kCUDA : torch::kCPU);
    const auto scalar = dtype == "bf16" ? torch::kBFloat16 : dtype == "fp16" ? torch::kHalf : torch::kFloat;

    Forward forward;
    try {
      forward = load_model(model, format, device);
    } catch (const std::exception& e) {
      throw BadInput("cannot load " + model + " as " + format + ": " + first_line(e.what()));
    }
    std::vector<torch::Tensor> inputs;
    for (const auto& shape : input_shapes)
      inputs.push_back(torch::randn(shape, torch::TensorOptions().dtype(scalar).device(device)));
    torch::NoGradGuard no_grad;
    try {
      forward(inputs);  // unprofiled: do the inputs fit the model?
    } catch (const std::exception& e) {
      throw BadInput(model + " rejected the inputs given with --input: " + first_line(e.what()));
    }
    fs::create_directories(out);

    // ---- the profiled loop -------------------------------------------------------------------
    wb::ProfilerOptions opts;
    opts.schedule = wb::Schedule{wait, 1, steps, 1, 0};
    opts.cuda = device.is_cuda();
    wb::Profiler prof(opts);
    prof.start();
    for (int i = 0; i < opts.schedule.total_steps(); ++i) {
      {
        wb::Annotation a(annotation);
        forward(inputs);
      }
      prof.step();
    }
    prof.stop();
    wb::CycleResult& result = prof.results().back();

    // ---- the outputs -------------------------------------------------------------------------
    result.save_chrome_trace(out / "trace.json");
    wb::TableOptions topts;
    topts.row_limit = row_limit;
    const std::string table = wb::key_averages_table(result.trace(), topts);
    wb::write_file_atomic(out / "table.txt", table);

    const wb::Trace trace = wb::read_trace(out / "trace.json");  // with the device's properties
    const wb::TraceModel trace_model(trace);
    wb::TimelineOptions to;
    to.title = fs::path(model).filename().string() + " (" + format + ") on " + device_name;
    wb::write_file_atomic(out / "timeline.svg", wb::render_timeline_svg(trace_model, to));
    wb::FactOptions fo;
    fo.annotation = annotation;
    fo.problem.dtype_bytes = dtype == "fp32" ? 4 : 2;
    const wb::LessonsReport report = wb::inspect_trace(trace_model, fo);
    wb::write_file_atomic(out / "inspect.txt", wb::render_lessons(report, wb::Format::Text));
    wb::write_file_atomic(out / "inspect.json", wb::to_json(report).dump(2) + "\n");

    std::cout << table << "\n"
              << wb::render_lessons(report, wb::Format::Text) << "\nOutputs in " << out.string()
              << "/: table.txt, trace.json, timeline.svg, inspect.txt, inspect.json\n";
    return 0;
  } catch (const BadInput& e) {
    std::cerr << "your_model: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "your_model: " << first_line(e.what()) << "\n";
    return 1;
  }
}
