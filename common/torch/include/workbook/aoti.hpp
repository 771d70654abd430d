// An AOTInductor package built at build time (chapters/export_aoti.py --model <model>, through
// the CMake function workbook_aoti_package) and loaded from C++: the manifest the export script
// wrote next to it, and the loaded model.
//
//   wb::AotiModel mlp(WB07_AOTI_MANIFEST);          // never throws
//   if (!mlp.usable_with({x, wg, wu, wd})) run.say(mlp.why_not());
//   else y = mlp.run({x, wg, wu, wd}).at(0);
//
// Inductor compiles for one device and dtype, and for one static shape unless the package was
// exported with dynamic dimensions (chapter 05's matmul_add); a package that does not fit the
// run says why instead of failing later.
#pragma once

#include <torch/types.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace torch::inductor {
class AOTIModelPackageLoader;
}

namespace wb {

// What the export script wrote next to the package (build/aoti/<model>.json).
struct AotiPackage {
  bool available = false;
  std::string reason;             // why not, when !available
  std::filesystem::path package;  // <model>.pt2
  std::string device, dtype;      // what it was compiled for: "cuda"/"cpu", "bfloat16"/"float32"
  std::string torch_version;
  std::string dynamic;  // non-empty: the shapes it takes ("x, w, b are n x n for any n >= 2")
  std::vector<std::vector<int64_t>> inputs;  // a static package's input shapes
  std::string wrapper_in_package;            // path of the generated wrapper source inside the .pt2 (a zip)
  std::filesystem::path wrapper;             // the same source, extracted next to the package
  std::string generated_call;                // the wrapper's line that does the work
  int generated_line = 0;                    // its line number in the wrapper
  double build_seconds = 0;
  std::string describe() const;  // where the package and its generated code are, for people
};
// Never throws: a missing or broken manifest gives available = false and the reason (naming
// `build_target`, the CMake target that writes the manifest, when given).
AotiPackage read_aoti_manifest(const std::filesystem::path& manifest, const std::string& build_target = "");

// The package loaded with AOTIModelPackageLoader (`runners` model instances), on first use.
class AotiModel {
 public:
  explicit AotiModel(const std::filesystem::path& manifest, size_t runners = 1);
  explicit AotiModel(AotiPackage pkg, size_t runners = 1);

  // True when the package exists and was compiled for these inputs' device, dtype and shapes;
  // loads it on first success. Otherwise why_not() says why.
  bool usable_with(const std::vector<torch::Tensor>& inputs);
  const std::string& why_not() const { return why_; }
  std::vector<torch::Tensor> run(const std::vector<torch::Tensor>& inputs);

  const AotiPackage& info() const { return pkg_; }
  const std::filesystem::path& package() const { return pkg_.package; }
  std::string describe() const;  // "linear.pt2 (cuda, bfloat16, torch 2.11.0)"

 private:
  AotiPackage pkg_;
  size_t runners_;
  std::string why_;
  std::shared_ptr<torch::inductor::AOTIModelPackageLoader> loader_;
};

}  // namespace wb
