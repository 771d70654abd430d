#include "workbook/aoti.hpp"

#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include <fstream>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace wb {

namespace {
std::string shape_text(c10::IntArrayRef s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

std::string dtype_name(torch::ScalarType t) {
  return t == torch::kBFloat16 ? "bfloat16"
         : t == torch::kFloat  ? "float32"
         : t == torch::kHalf   ? "float16"
                               : "other";
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }
}  // namespace

std::string AotiPackage::describe() const {
  if (!available) return "AOTI package unavailable: " + reason;
  return "AOTI package " + package.string() + " (" + device + ", " + dtype + ", torch " + torch_version +
         ")\n  generated wrapper: " + wrapper_in_package + " inside the .pt2 (a zip), extracted to " +
         wrapper.string() + "\n  line " + std::to_string(generated_line) +
         ", the call that does the work: " + generated_call + "\n";
}

AotiPackage read_aoti_manifest(const fs::path& manifest, const std::string& build_target) {
  AotiPackage p;
  const std::string target =
      build_target.empty() ? "the chapter's <chapter>_aoti target" : "the target " + build_target;
  std::ifstream in(manifest);
  if (!in) {
    p.reason = "no AOTI package manifest at " + manifest.string() + " (build " + target +
               ", which runs chapters/export_aoti.py)";
    return p;
  }
  try {
    const auto j = nlohmann::json::parse(in);
    p.available = j.value("available", false);
    p.reason = j.value("reason", std::string());
    p.package = j.value("package", std::string());
    p.device = j.value("device", std::string());
    p.dtype = j.value("dtype", std::string());
    p.torch_version = j.value("torch", std::string());
    p.dynamic = j.value("dynamic", std::string());
    p.inputs = j.value("inputs", std::vector<std::vector<int64_t>>{});
    p.wrapper_in_package = j.value("wrapper_in_package", std::string());
    p.wrapper = j.value("wrapper", std::string());
    p.generated_call = j.value("generated_call", std::string());
    p.generated_line = j.value("generated_line", 0);
    p.build_seconds = j.value("build_seconds", 0.0);
  } catch (const std::exception& e) {
    p.available = false;
    p.reason = manifest.string() + " is not a valid manifest: " + e.what();
    return p;
  }
  if (p.available && !fs::exists(p.package)) {
    p.available = false;
    p.reason = "the manifest names " + p.package.string() + ", which does not exist (rebuild " + target + ")";
  }
  if (!p.available && p.reason.empty()) p.reason = "the export script reported no package";
  return p;
}

AotiModel::AotiModel(const fs::path& manifest, size_t runners)
    : AotiModel(read_aoti_manifest(manifest), runners) {}

AotiModel::AotiModel(AotiPackage pkg, size_t runners) : pkg_(std::move(pkg)), runners_(runners) {
  if (!pkg_.available) why_ = pkg_.reason;
}

bool AotiModel::usable_with(const std::vector<torch::Tensor>& inputs) {
  if (!why_.empty()) return false;
  if (inputs.empty()) {
    why_ = "no inputs";
    return false;
  }
  const std::string device = inputs[0].is_cuda() ? "cuda" : "cpu",
                    dtype = dtype_name(inputs[0].scalar_type());
  if (device != pkg_.device) {
    why_ = "the package was compiled for " + pkg_.device + " and this run is on " + device +
           " (rebuild with -DWORKBOOK_AOTI_DEVICE=" + device + ")";
    return false;
  }
  if (dtype != pkg_.dtype) {
    why_ = "the package was compiled for " + pkg_.dtype + ", this run is " + dtype +
           "; run with the matching --dtype";
    return false;
  }
  if (pkg_.dynamic.empty()) {  // static shapes: exactly the exported ones
    if (inputs.size() != pkg_.inputs.size()) {
      why_ = "the package takes " + std::to_string(pkg_.inputs.size()) + " inputs, not " +
             std::to_string(inputs.size());
      return false;
    }
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i].sizes().vec() != pkg_.inputs[i]) {
        why_ = "Inductor specialized the package for input " + std::to_string(i) + " of shape " +
               shape_text(pkg_.inputs[i]) + "; this run passes " + shape_text(inputs[i].sizes()) +
               " (use the chapter's default size)";
        return false;
      }
  }
  if (!loader_) {
    try {
      loader_ =
          std::make_shared<torch::inductor::AOTIModelPackageLoader>(pkg_.package.string(), "model",
                                                                    /*run_single_threaded=*/false, runners_);
    } catch (const std::exception& e) {
      why_ = "loading " + pkg_.package.string() + " failed: " + first_line(e.what()).substr(0, 300);
      return false;
    }
  }
  return true;
}

std::vector<torch::Tensor> AotiModel::run(const std::vector<torch::Tensor>& inputs) {
  if (!loader_ && !usable_with(inputs)) throw std::runtime_error("AOTI package unusable: " + why_);
  return loader_->run(inputs);
}

std::string AotiModel::describe() const {
  return pkg_.package.filename().string() + " (" + pkg_.device + ", " + pkg_.dtype + ", torch " +
         pkg_.torch_version + ")";
}

}  // namespace wb
