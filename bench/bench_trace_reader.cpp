// How fast is read_trace + TraceModel on a big trace?
//
// Writes a realistic Kineto trace of about --mb megabytes (default 100) to a temp file:
// step after step of the H200 eager loop (ProfilerStep > matmul_add > aten::matmul >
// aten::mm > cudaMemsetAsync + cuLaunchKernelEx, aten::add > cudaLaunchKernel; memsets and
// kernels with the full CUPTI args on device 0 / stream 7; ac2g flow events), in the same
// pretty-printed layout Kineto writes. Then times, best of 3:
//   read_trace(.json), TraceModel(trace), and read_trace(.json.gz).
// Usage: bench_trace_reader [--mb N] [--keep]
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "workbook/trace_model.hpp"
#include "workbook/trace_reader.hpp"

namespace fs = std::filesystem;

namespace {

// Kineto's "ts": integer us and exactly three decimals.
std::string us(int64_t ns) {
  char b[32];
  std::snprintf(b, sizeof b, "%lld.%03lld", static_cast<long long>(ns / 1000),
                static_cast<long long>(ns % 1000));
  return b;
}

class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}
  void complete(const char* cat, const std::string& name, const std::string& pid, const std::string& tid,
                int64_t ts, int64_t dur, const std::string& args) {
    sep();
    out_ += "\n  {\n    \"ph\": \"X\", \"cat\": \"";
    out_ += cat;
    out_ += "\", \"name\": \"" + name + "\", \"pid\": " + pid + ", \"tid\": " + tid +
            ",\n    \"ts\": " + us(ts) + ", \"dur\": " + us(dur) + ",\n    \"args\": {\n      " + args +
            "\n    }\n  }";
  }
  void flow(char ph, int64_t id, const std::string& pid, const std::string& tid, int64_t ts) {
    sep();
    out_ += std::string("\n  {\n    \"ph\": \"") + ph + "\", \"id\": " + std::to_string(id) +
            ", \"pid\": " + pid + ", \"tid\": " + tid + ", \"ts\": " + us(ts) +
            ",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"" + (ph == 'f' ? ", \"bp\": \"e\"" : "") + "\n  }";
  }

 private:
  void sep() {
    if (!first_) out_ += ",";
    first_ = false;
  }
  std::string& out_;
  bool first_ = true;
};

std::string make_trace(size_t target_bytes) {
  std::string out;
  out.reserve(target_bytes + (1 << 20));
  out += R"({
  "schemaVersion": 1,
  "deviceProperties": [
    {"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150754820096, "computeMajor": 9, "computeMinor": 0, "numSms": 132}
  ],
  "displayTimeUnit": "ms",
  "baseTimeNanoseconds": 1790857026000000000,
  "traceEvents": [)";
  Writer w(out);
  const std::string cpu = "4242", dev = "0", stream = "7";
  int64_t t = 5092613772000000;  // ns
  int64_t ext = 1, corr = 40, ev_idx = 0;
  auto op_args = [&](int64_t id) {
    return "\"External id\": " + std::to_string(id) +
           ",\"Record function id\": 0, \"Sequence number\": 0, \"Fwd thread id\": 0, \"Ev "
           "Idx\": " +
           std::to_string(ev_idx++);
  };
  auto launch = [&](const char* cat, const char* api, int64_t at, int64_t dur, int64_t op, const char* gcat,
                    const std::string& gname, int64_t gat, int64_t gdur, const std::string& extra) {
    const int64_t c = corr++;
    w.complete(
        cat, api, cpu, cpu, at, dur,
        "\"External id\": " + std::to_string(op) + ", \"cbid\": 211, \"correlation\": " + std::to_string(c));
    w.flow('s', c, cpu, cpu, at);
    w.complete(gcat, gname, dev, stream, gat, gdur,
               "\"External id\": " + std::to_string(op) +
                   ", \"queued\": 0, \"device\": 0, \"context\": 1, \"stream\": 7, \"correlation\": " +
                   std::to_string(c) + ", " + extra);
    w.flow('f', c, dev, stream, gat);
  };
  const std::string nvjet = "nvjet_sm90_tst_64x8_64x16_1x4_h_bz_NNT";
  const std::string elementwise =
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
      "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)";
  const std::string kernel_args =
      "\"registers per thread\": 168, \"shared memory\": 164308, \"blocks per SM\": 0.060606, "
      "\"warps per SM\": 0.727273, \"grid\": [4, 2, 1], \"block\": [384, 1, 1], "
      "\"est. achieved occupancy %\": 0";
  for (int step = 0; out.size() < target_bytes; ++step) {
    const int64_t s0 = t;
    w.complete("user_annotation", "ProfilerStep#" + std::to_string(step), cpu, cpu, s0, 95'123,
               op_args(ext++));
    w.complete("user_annotation", "matmul_add", cpu, cpu, s0 + 5'017, 80'301, op_args(ext++));
    // Several matmul/add pairs per step, like a small model's forward.
    for (int layer = 0; layer < 4; ++layer) {
      const int64_t l0 = s0 + 6'000 + layer * 18'000;
      const int64_t matmul = ext++, mm = ext++, add = ext++;
      w.complete("cpu_op", "aten::matmul", cpu, cpu, l0, 9'871, op_args(matmul));
      w.complete("cpu_op", "aten::mm", cpu, cpu, l0 + 413, 9'002, op_args(mm));
      launch("cuda_runtime", "cudaMemsetAsync", l0 + 900, 2'511, mm, "gpu_memset", "Memset (Device)",
             l0 + 14'000, 803, "\"bytes\": 4, \"memory bandwidth (GB/s)\": 0.005");
      launch("cuda_driver", "cuLaunchKernelEx", l0 + 3'600, 5'017, mm, "kernel", nvjet, l0 + 15'100, 1'907,
             kernel_args);
      w.complete("cpu_op", "aten::add", cpu, cpu, l0 + 10'500, 6'099, op_args(add));
      launch("cuda_runtime", "cudaLaunchKernel", l0 + 11'200, 4'321, add, "kernel", elementwise, l0 + 17'300,
             905, kernel_args);
    }
    t = s0 + 100'000;
  }
  out += "\n  ],\n  \"traceName\": \"bench.json\"\n}\n";
  return out;
}

std::string gzip(const std::string& data) {
  z_stream zs{};
  deflateInit2(&zs, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, data.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

template <class F>
double best_of_3(F&& f) {
  double best = 1e300;
  for (int i = 0; i < 3; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  size_t mb = 100;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--mb") && i + 1 < argc)
      mb = std::stoul(argv[++i]);
    else if (!std::strcmp(argv[i], "--keep"))
      keep = true;
    else {
      std::fprintf(stderr, "usage: %s [--mb N] [--keep]\n", argv[0]);
      return 2;
    }
  }
  const fs::path dir = fs::temp_directory_path() / ("wb_bench_reader_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path json_path = dir / "bench.json", gz_path = dir / "bench.json.gz";
  {
    const std::string json = make_trace(mb << 20);
    std::ofstream(json_path, std::ios::binary) << json;
    std::ofstream(gz_path, std::ios::binary) << gzip(json);
  }
  const double json_mb = static_cast<double>(fs::file_size(json_path)) / (1 << 20);
  const double gz_mb = static_cast<double>(fs::file_size(gz_path)) / (1 << 20);

  wb::Trace trace;
  const double read_s = best_of_3([&] { trace = wb::read_trace(json_path); });
  size_t lanes = 0;
  const double model_s = best_of_3([&] {
    const wb::TraceModel model(trace);
    lanes = model.cpu_lanes().size() + model.gpu_lanes().size() + model.steps().size();
  });
  const double gz_s = best_of_3([&] { trace = wb::read_trace(gz_path); });
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);

  std::printf("trace: %.1f MB JSON (%.1f MB gzipped), %zu events, %zu lanes+steps\n", json_mb, gz_mb,
              trace.events.size(), lanes);
  std::printf("read_trace(.json)     %.3f s  %7.1f MB/s\n", read_s, json_mb / read_s);
  std::printf("TraceModel            %.3f s\n", model_s);
  std::printf("read + model          %.3f s  %7.1f MB/s  (budget: 2 s for 100 MB)\n", read_s + model_s,
              json_mb / (read_s + model_s));
  std::printf("read_trace(.json.gz)  %.3f s  %7.1f MB/s of JSON\n", gz_s, json_mb / gz_s);
  std::printf("peak RSS              %.0f MB (includes the generator's copy)\n", ru.ru_maxrss / 1024.0);
  if (keep)
    std::printf("kept: %s\n", json_path.c_str());
  else
    fs::remove_all(dir);
  return 0;
}
