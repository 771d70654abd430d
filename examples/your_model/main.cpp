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
// Errors are printed whole (a TorchScript error's cause is on its last lines), and a model whose
// parameters are of another type than --dtype is named before it runs.
// Exit codes: 0 done, 2 bad flags or a model that cannot be loaded or run, 1 anything else.
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/csrc/jit/serialization/import.h>
#include <torch/types.h>

#include <CLI/CLI.hpp>

#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
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

// The whole message: a TorchScript error names the failing line of the model and the cause
// ("Expected 4D input to conv2d, got [8, 3]") after its first line. c10::Error's what() also
// carries a C++ backtrace, which says nothing about the model: that part is left out.
std::string message_of(const std::exception& e) {
  if (const auto* c10 = dynamic_cast<const c10::Error*>(&e)) return c10->what_without_backtrace();
  return e.what();
}

// One forward pass of the loaded model on `inputs`.
using Forward = std::function<void(const std::vector<torch::Tensor>&)>;
struct Model {
  Forward forward;
  std::optional<torch::ScalarType> dtype;  // of its first floating-point parameter (TorchScript)
};

// [snippet:load]
Model load_model(const fs::path& path, const std::string& format, torch::Device device) {
  if (format == "aoti") {
    auto loader = std::make_shared<torch::inductor::AOTIModelPackageLoader>(path.string());
    return {[loader](const std::vector<torch::Tensor>& in) { loader->run(in); }, std::nullopt};
  }
  auto module = std::make_shared<torch::jit::Module>(torch::jit::load(path.string(), device));
  module->eval();
  std::optional<torch::ScalarType> dtype;
  for (const auto& p : module->parameters())
    if (!dtype && p.is_floating_point()) dtype = p.scalar_type();
  return {[module](const std::vector<torch::Tensor>& in) {
            module->forward(std::vector<torch::jit::IValue>(in.begin(), in.end()));
          },
          dtype};
}
// [/snippet:load]

struct Flags {
  std::string model, format = "auto", device_name = "cpu", dtype = "fp32", annotation = "your_model";
  std::vector<std::string> shapes;
  int steps = 5, wait = 1, row_limit = 20;
  fs::path out = "out/your_model";
};

// Loads the model and runs it once, unprofiled, on random inputs of the shapes given: a model
// that cannot be loaded or rejects them is a BadInput (exit 2) before anything is written.
std::vector<torch::Tensor> load_and_try(const Flags& f, torch::Device device, Model& loaded) {
  std::vector<std::vector<int64_t>> input_shapes;
  for (const auto& s : f.shapes) input_shapes.push_back(parse_shape(s));
  const auto scalar = f.dtype == "bf16" ? torch::kBFloat16 : f.dtype == "fp16" ? torch::kHalf : torch::kFloat;
  try {
    loaded = load_model(f.model, f.format, device);
  } catch (const std::exception& e) {
    throw BadInput("cannot load " + f.model + " as " + f.format + ": " + message_of(e));
  }
  // A model whose weights are fp32 fed bf16 inputs (or the other way round) fails, or runs in
  // a type you did not mean to profile: say so before anything runs.
  std::string dtype_note;
  if (loaded.dtype && *loaded.dtype != scalar)
    dtype_note = std::string("the model's parameters are ") + c10::toString(*loaded.dtype) + " but --dtype " +
                 f.dtype + " makes " + c10::toString(scalar) + " inputs";
  if (!dtype_note.empty()) std::cerr << "your_model: note: " << dtype_note << "\n";
  std::vector<torch::Tensor> inputs;
  for (const auto& shape : input_shapes)
    inputs.push_back(torch::randn(shape, torch::TensorOptions().dtype(scalar).device(device)));
  try {
    loaded.forward(inputs);  // unprofiled: do the inputs fit the model?
  } catch (const std::exception& e) {
    throw BadInput(f.model + " rejected the inputs given with --input" +
                   (dtype_note.empty() ? "" : " (" + dtype_note + ")") + ":\n" + message_of(e));
  }
  return inputs;
}

// table.txt, trace.json, timeline.svg, inspect.txt/.json into --out; prints the table and the report.
void write_outputs(const Flags& f, wb::CycleResult& result) {
  result.save_chrome_trace(f.out / "trace.json");
  wb::TableOptions topts;
  topts.row_limit = f.row_limit;
  const std::string table = wb::key_averages_table(result.trace(), topts);
  wb::write_file_atomic(f.out / "table.txt", table);

  const wb::Trace trace = wb::read_trace(f.out / "trace.json");  // with the device's properties
  const wb::TraceModel trace_model(trace);
  wb::TimelineOptions to;
  to.title = fs::path(f.model).filename().string() + " (" + f.format + ") on " + f.device_name;
  wb::write_file_atomic(f.out / "timeline.svg", wb::render_timeline_svg(trace_model, to));
  wb::FactOptions fo;
  fo.annotation = f.annotation;
  fo.problem.dtype_bytes = f.dtype == "fp32" ? 4 : 2;
  const wb::LessonsReport report = wb::inspect_trace(trace_model, fo);
  wb::write_file_atomic(f.out / "inspect.txt", wb::render_lessons(report, wb::Format::Text));
  wb::write_file_atomic(f.out / "inspect.json", wb::to_json(report).dump(2) + "\n");
  std::cout << table << "\n"
            << wb::render_lessons(report, wb::Format::Text) << "\nOutputs in " << f.out.string()
            << "/: table.txt, trace.json, timeline.svg, inspect.txt, inspect.json\n";
}

int run(Flags f) {
  // ---- everything the flags say is checked before any work --------------------------------
  std::error_code ec;
  if (!fs::is_regular_file(f.model, ec)) throw BadInput("--model: no model file at " + f.model);
  if (f.format == "auto") f.format = fs::path(f.model).extension() == ".pt2" ? "aoti" : "torchscript";
  if (f.device_name == "cuda" && !wb::cuda_available())
    throw BadInput("--device cuda: LibTorch sees no CUDA device");
  const torch::Device device(f.device_name == "cuda" ? torch::kCUDA : torch::kCPU);
  torch::NoGradGuard no_grad;
  Model loaded;
  const std::vector<torch::Tensor> inputs = load_and_try(f, device, loaded);
  fs::create_directories(f.out);

  // ---- the profiled loop -------------------------------------------------------------------
  wb::ProfilerOptions opts;
  opts.schedule = wb::Schedule{f.wait, 1, f.steps, 1, 0};
  opts.cuda = device.is_cuda();
  wb::Profiler prof(opts);
  prof.start();
  for (int i = 0; i < opts.schedule.total_steps(); ++i) {
    {
      wb::Annotation a(f.annotation);
      loaded.forward(inputs);
    }
    prof.step();
  }
  prof.stop();
  write_outputs(f, prof.results().back());
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Profile a TorchScript module or an AOTInductor package with wb::Profiler."};
  Flags f;
  app.add_option("--model", f.model, "TorchScript file (.pt) or AOTInductor package (.pt2)")->required();
  app.add_option("--format", f.format, "auto (by extension), torchscript or aoti")
      ->check(CLI::IsMember({"auto", "torchscript", "aoti"}));
  app.add_option("--input", f.shapes, "shape of one input, e.g. 32x128 (repeat for each input)")->required();
  app.add_option("--dtype", f.dtype, "element type of the inputs")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}));
  app.add_option("--device", f.device_name, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--steps", f.steps, "steps recorded")->check(CLI::Range(1, 10000));
  app.add_option("--wait", f.wait, "unrecorded steps before the profiler's warmup step")
      ->check(CLI::Range(0, 10000));
  app.add_option("--annotation", f.annotation, "record_function name around each forward pass");
  app.add_option("--row-limit", f.row_limit, "rows of the table")->check(CLI::Range(1, 100000));
  app.add_option("--out", f.out, "output folder");
  if (auto rc = wb::parse_flags(app, argc, argv)) return *rc;
  try {
    return run(f);
  } catch (const BadInput& e) {
    std::cerr << "your_model: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "your_model: " << message_of(e) << "\n";
    return 1;
  }
}
