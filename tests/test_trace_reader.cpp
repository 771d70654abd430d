// The Kineto trace reader: real and synthetic fixtures, gzip, time bases, and a table of
// malformed inputs that must each end in a TraceError naming the file and the byte.
#include <unistd.h>
#include <zlib.h>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_floating_point.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../fuzz/trace_dump.hpp"  // the field-by-field text the fuzz target compares too
#include "process.hpp"
#include "workbook/trace_model.hpp"
#include "workbook/trace_reader.hpp"

using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::WithinAbs;
namespace fs = std::filesystem;

namespace {

const fs::path kTraces = fs::path(WORKBOOK_ROOT) / "tests" / "data" / "traces";
// A real trace: Python torch.profiler 2.11 on the CPU machine (see /tmp/samples/gen.py).
const fs::path kPyCpu = kTraces / "py_cpu_64.json";
// SYNTHETIC: hand-made from the H200 reference summaries (make_synthetic_h200.py).
const fs::path kSynthGpu = kTraces / "synthetic_h200_eager64.json";

using proc::slurp;

std::string gzip(const std::string& data) {
  z_stream zs{};
  REQUIRE(deflateInit2(&zs, Z_BEST_SPEED, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&zs, data.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// A scratch directory unique to this process, removed at exit.
struct TempDir {
  fs::path path = fs::temp_directory_path() / ("wb_test_reader_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
  fs::path write(const std::string& name, const std::string& bytes) const {
    std::ofstream(path / name, std::ios::binary) << bytes;
    return path / name;
  }
};

const wb::Event& by_name(const wb::Trace& t, const std::string& name, int nth = 0) {
  for (const auto& e : t.events)
    if (e.name == name && nth-- == 0) return e;
  FAIL("no event named " << name);
  throw;  // unreachable
}

std::string one_event(const std::string& fields) {
  return R"({"traceEvents":[{"ph":"X","name":"e","cat":"cpu_op",)" + fields + "}]}";
}

}  // namespace

TEST_CASE("reads a real Python torch.profiler trace", "[core][reader][cpu]") {
  const wb::Trace t = wb::read_trace(kPyCpu);
  CHECK(t.source == kPyCpu.string());
  REQUIRE(t.events.size() == 27);  // 24 ops/annotations + Trace span + 2 instants; M/flows skipped
  CHECK(t.devices.empty());        // CPU-only machine: deviceProperties is []

  int ops = 0, annotations = 0, instants = 0, spans = 0;
  for (const auto& e : t.events) {
    ops += e.kind == wb::Kind::CpuOp;
    annotations += e.kind == wb::Kind::UserAnnotation;
    instants += e.kind == wb::Kind::Instant;
    spans += e.kind == wb::Kind::Trace;
    CHECK(e.start_ns >= 0);
  }
  CHECK(ops == 18);
  CHECK(annotations == 6);
  CHECK(instants == 2);
  CHECK(spans == 1);

  // Time base: the earliest kept event (the "PyTorch Profiler (0)" span, ts 5093781631579.052)
  // is start 0, and base_ns is its absolute time.
  const wb::Event& span = by_name(t, "PyTorch Profiler (0)");
  CHECK(span.start_ns == 0);
  CHECK(span.dur_ns == 449055);
  CHECK(t.base_ns == 1790857026000000000 + 5093781631579052);
  const wb::Event& step2 = by_name(t, "ProfilerStep#2");
  CHECK(step2.start_ns == 5093781631814737 - 5093781631579052);
  CHECK(step2.dur_ns == 93338);  // "dur": 93.338 us
  CHECK(step2.id == 1);          // "External id": 1
  CHECK(step2.linked_id == 0);
  CHECK(step2.pid == 2927);
  CHECK(step2.tid == 2927);
  CHECK(by_name(t, "aten::mm").id == 4);

  // Kineto's own rows use string pids ("Spans", "Traces", ""): each gets one stable id.
  CHECK(span.pid != 2927);
  const wb::Event& window_end = by_name(t, "Record Window End");
  CHECK(window_end.pid == window_end.tid);  // both ""
  CHECK(window_end.pid != span.pid);
}

TEST_CASE("reads the synthetic H200-like trace: devices, kernels, ids", "[core][reader][cpu]") {
  const wb::Trace t = wb::read_trace(kSynthGpu);
  REQUIRE(t.devices.size() == 1);
  const wb::DeviceProperties& d = t.devices[0];
  CHECK(d.name == "NVIDIA H200");
  CHECK(d.compute_major == 9);
  CHECK(d.compute_minor == 0);
  CHECK(d.num_sms == 132);
  CHECK(d.total_global_mem == 150754820096);
  CHECK(t.has_device_activity());
  CHECK(t.events.size() == 45);  // 20 ac2g flow events and 7 metadata rows are not events

  const wb::Event& nvjet = by_name(t, "nvjet_sm90_tst_64x8_64x16_1x4_h_bz_NNT");
  CHECK(nvjet.kind == wb::Kind::Kernel);
  CHECK(nvjet.pid == 0);  // device
  CHECK(nvjet.tid == 7);  // stream
  CHECK(nvjet.dur_ns == 1900);
  REQUIRE(nvjet.kernel.has_value());
  CHECK(nvjet.kernel->registers_per_thread == 168);
  CHECK(nvjet.kernel->shared_memory == 164308);
  CHECK(nvjet.kernel->grid == std::array<int, 3>{4, 2, 1});
  CHECK(nvjet.kernel->block == std::array<int, 3>{384, 1, 1});
  CHECK_THAT(nvjet.kernel->blocks_per_sm, WithinAbs(0.060606, 1e-9));
  CHECK_THAT(nvjet.kernel->warps_per_sm, WithinAbs(0.727273, 1e-9));

  // Runtime/driver call and the device work it launched share the CUPTI correlation (id);
  // both point at the CPU op through linked_id = External id.
  const wb::Event& launch = by_name(t, "cuLaunchKernelEx");
  const wb::Event& mm = by_name(t, "aten::mm");
  CHECK(launch.kind == wb::Kind::Driver);
  CHECK(launch.pid == 4242);
  CHECK(launch.id == nvjet.id);
  CHECK(launch.id != 0);
  CHECK(launch.linked_id == mm.id);
  CHECK(nvjet.linked_id == mm.id);
  CHECK(mm.linked_id == 0);

  const wb::Event& memcpy = by_name(t, "Memcpy HtoD (Pageable -> Device)");
  CHECK(memcpy.kind == wb::Kind::Memcpy);
  CHECK(memcpy.bytes == 8192);
  CHECK_FALSE(memcpy.kernel.has_value());
  CHECK(by_name(t, "Memset (Device)").bytes == 4);
  CHECK(by_name(t, "Memset (Device)").kind == wb::Kind::Memset);
  CHECK(by_name(t, "aten::add").bytes == -1);  // not recorded

  const wb::Event& gpu_ann = by_name(t, "matmul_add", 1);
  CHECK(gpu_ann.kind == wb::Kind::GpuUserAnnotation);
  CHECK(gpu_ann.id == by_name(t, "matmul_add", 0).id);
  CHECK(by_name(t, "cudaDeviceSynchronize").linked_id == 0);  // "External id": 0
}

TEST_CASE("Kineto's 1 ns padding of GPU-side annotations is undone; other events keep theirs",
          "[core][reader][time][cpu]") {
  const wb::Trace t = wb::parse_trace(
      R"({"traceEvents":[
        {"ph":"X","cat":"user_annotation","name":"matmul_add","ts":10.000,"dur":5.000},
        {"ph":"X","cat":"gpu_user_annotation","name":"matmul_add","ts":20.000,"dur":3.002},
        {"ph":"X","cat":"kernel","name":"k","ts":20.001,"dur":3.000},
        {"ph":"X","cat":"gpu_user_annotation","name":"tiny","ts":30.000,"dur":0.001}]})",
      "padding");
  const auto& cpu = by_name(t, "matmul_add", 0);
  const auto& gpu = by_name(t, "matmul_add", 1);
  const auto& kernel = by_name(t, "k");
  CHECK(cpu.dur_ns == 5000);                    // CPU annotations are not padded
  CHECK(gpu.start_ns - cpu.start_ns == 10001);  // 1 ns later ...
  CHECK(gpu.dur_ns == 3000);                    // ... and 2 ns shorter: the kernel's span
  CHECK(gpu.start_ns == kernel.start_ns);
  CHECK(kernel.dur_ns == 3000);
  CHECK(by_name(t, "tiny").dur_ns == 1);  // under 2 ns: left as written
}

TEST_CASE("ts/dur are rounded to the nearest ns, not truncated", "[core][reader][time][cpu]") {
  const wb::Trace t = wb::parse_trace(
      R"({"traceEvents":[
        {"ph":"X","name":"a","ts":10.0000,"dur":1.0005},
        {"ph":"X","name":"b","ts":10.0004,"dur":1.0004},
        {"ph":"X","name":"c","ts":10.0019999,"dur":2e-3},
        {"ph":"X","name":"d","ts":10,"dur":0.9999}]})");
  CHECK(by_name(t, "a").dur_ns == 1001);  // truncation would say 1000
  CHECK(by_name(t, "b").dur_ns == 1000);
  CHECK(by_name(t, "b").start_ns == 0);   // 10.0004 us -> 10000 ns, same as a
  CHECK(by_name(t, "c").start_ns == 2);   // 10.0019999 -> 10002 ns
  CHECK(by_name(t, "c").dur_ns == 2);     // exponent form goes through a double, still rounded
  CHECK(by_name(t, "d").dur_ns == 1000);  // truncation would say 999
  CHECK(t.base_ns == 10000);
}

TEST_CASE("absolute-us traces and relative ts + baseTimeNanoseconds agree", "[core][reader][time][cpu]") {
  // The same two events, written the new way (relative ts + base) and the old way (absolute
  // us since the epoch, no base). The absolute ts needs all its digits: through a double it
  // would be off by up to 0.25 us.
  const std::string relative = R"({"baseTimeNanoseconds": 1790857026000000000, "traceEvents":[
      {"ph":"X","name":"a","ts":123456.789,"dur":5.5},
      {"ph":"X","name":"b","ts":123460.001,"dur":0.001}]})";
  const std::string absolute = R"({"traceEvents":[
      {"ph":"X","name":"a","ts":1790857026123456.789,"dur":5.5},
      {"ph":"X","name":"b","ts":1790857026123460.001,"dur":0.001}]})";
  const wb::Trace r = wb::parse_trace(relative);
  const wb::Trace a = wb::parse_trace(absolute);
  CHECK(r.base_ns == 1790857026123456789);
  CHECK(a.base_ns == r.base_ns);
  for (const char* name : {"a", "b"}) {
    CHECK(by_name(a, name).start_ns == by_name(r, name).start_ns);
    CHECK(by_name(a, name).dur_ns == by_name(r, name).dur_ns);
  }
  CHECK(by_name(a, "b").start_ns == 3212);
  // The naive double path really is wrong here: this check would fail without exact parsing.
  CHECK(std::llround(1790857026123456.789 * 1000.0) != 1790857026123456789);

  // Wrong input: the relative trace without its base is a different clock.
  std::string no_base = relative;
  no_base.replace(no_base.find("1790857026000000000"), 19, "0");
  CHECK(wb::parse_trace(no_base).base_ns != r.base_ns);
}

TEST_CASE("gzip: read by magic bytes, same events as plain JSON", "[core][reader][gzip][cpu]") {
  TempDir dir;
  const std::string json = slurp(kPyCpu);
  const wb::Trace plain = wb::read_trace(kPyCpu);
  // Named .json on purpose: detection is by content, never by file name.
  for (const char* name : {"trace.json.gz", "actually_gzip.json"}) {
    const wb::Trace z = wb::read_trace(dir.write(name, gzip(json)));
    REQUIRE(z.events.size() == plain.events.size());
    CHECK(z.base_ns == plain.base_ns);
    for (size_t i = 0; i < z.events.size(); ++i) {
      CHECK(z.events[i].name == plain.events[i].name);
      CHECK(z.events[i].start_ns == plain.events[i].start_ns);
      CHECK(z.events[i].dur_ns == plain.events[i].dur_ns);
    }
  }
  // Two gzip members back to back (what `cat a.gz b.gz` makes) decompress as one stream.
  const size_t half = json.size() / 2;
  const wb::Trace two = wb::parse_trace(gzip(json.substr(0, half)) + gzip(json.substr(half)));
  CHECK(two.events.size() == plain.events.size());
  // parse_trace takes gzip bytes too.
  CHECK(wb::parse_trace(gzip(json)).events.size() == plain.events.size());
}

TEST_CASE("lenient fields fall back to their defaults", "[core][reader][lenient][cpu]") {
  const wb::Trace t = wb::parse_trace(R"({"traceEvents":[
    {"ph":"X","ts":1,"dur":1},
    {"ph":"X","name":7,"cat":["x"],"ts":1,"dur":1,"args":"not an object"},
    {"ph":"X","name":"ids","cat":"cpu_op","ts":1,"dur":1,"pid":"123","tid":-5,
     "args":{"External id":"abc","correlation":[1]}},
    {"ph":"X","name":"k","cat":"kernel","ts":1,"dur":1,"pid":3,"tid":4,
     "args":{"registers per thread":"many","grid":[1,"x"],"block":5,"blocks per SM":"inf",
             "shared memory":null,"bytes":{},"device":"zero","stream":9}},
    {"ph":"X","name":"neg","cat":"mystery_category","ts":1,"dur":-4},
    {"ph":"s","id":1,"ts":1,"cat":"ac2g"},{"ph":"f","id":1,"ts":2,"cat":"ac2g","bp":"e"},
    {"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"x"}},
    {"ph":"C","name":"counter","ts":1,"args":{"v":1}},
    {"ph":"B","name":"begin","ts":1},
    {"ph":"i","name":"mark","cat":"cpu_instant_event","ts":3,"s":"t"}]})");
  REQUIRE(t.events.size() == 6);  // s, f, M, C, B are not kept
  CHECK(t.events[0].name.empty());
  CHECK(t.events[0].kind == wb::Kind::Other);
  CHECK(t.events[1].name.empty());
  CHECK(t.events[1].category.empty());
  const wb::Event& ids = by_name(t, "ids");
  CHECK(ids.pid == 123);
  CHECK(ids.tid == -5);
  CHECK(ids.id == 0);
  const wb::Event& k = by_name(t, "k");
  REQUIRE(k.kernel.has_value());
  CHECK(k.kernel->registers_per_thread == -1);
  CHECK(k.kernel->grid == std::array<int, 3>{1, 0, 0});
  CHECK(k.kernel->block == std::array<int, 3>{0, 0, 0});
  CHECK(k.kernel->blocks_per_sm == -1);
  CHECK(k.kernel->shared_memory == -1);
  CHECK(k.bytes == -1);
  CHECK(k.pid == 3);  // "device" of the wrong type: keep pid
  CHECK(k.tid == 9);  // "stream" is fine
  const wb::Event& neg = by_name(t, "neg");
  CHECK(neg.kind == wb::Kind::Other);
  CHECK(neg.category == "mystery_category");
  CHECK(neg.dur_ns == 0);  // negative dur clamped, as Kineto does
  CHECK(by_name(t, "mark").kind == wb::Kind::Instant);
  CHECK(by_name(t, "mark").category == "cpu_instant_event");
}

TEST_CASE("deeply nested but valid args are skipped without recursion", "[core][reader][hostile][cpu]") {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  const wb::Trace t = wb::parse_trace(one_event(R"("ts":1,"dur":1,"args":{"x":)" + deep + "}"));
  CHECK(t.events.size() == 1);
}

namespace {
struct BadCase {
  const char* label;
  std::string input;
  int64_t offset;    // expected TraceError::offset(); -2: any known offset (>= 0)
  const char* says;  // a phrase the message must contain
  wb::ReadOptions opts{};
};

wb::ReadOptions small(int64_t max_bytes, int64_t max_events = 50'000'000) {
  wb::ReadOptions o;
  o.max_bytes = max_bytes;
  o.max_events = max_events;
  return o;
}

std::vector<BadCase> bad_cases() {
  const std::string valid = one_event(R"("ts":1,"dur":1)");
  const std::string truncated = R"({"traceEvents":[{"ph":"X","ts":1,"dur":1},)";
  const std::string deep_open =
      R"({"traceEvents":[{"ph":"X","ts":1,"dur":1,"args":{"x":)" + std::string(100000, '[');
  const std::string bomb = gzip(R"({"traceEvents":[)" + std::string(4 << 20, ' ') + "]}");
  const size_t dur_at = one_event(R"("ts":1,"dur":)").size() - 3;  // minus the closing }]}
  const size_t ts_at = one_event(R"("ts":)").size() - 3;
  std::string bad_utf8 = one_event(R"("ts":1,"dur":1,"name":"x)");
  bad_utf8.insert(bad_utf8.find("\"x") + 2, "\xC3\x28");
  return {
      {"empty input", "", 0, "empty input"},
      {"not JSON", "hello world", 0, "invalid JSON"},
      {"truncated after an event", truncated, int64_t(truncated.size()), "unexpected end of input"},
      {"truncated inside a string", R"({"traceEvents":[{"ph":"X","na)", 29, "missing closing quote"},
      {"top level is an array", "[{}]", 0, "not a JSON object"},
      {"missing traceEvents", R"({"schemaVersion":1})", 0, "no \"traceEvents\""},
      {"traceEvents not an array", R"({"traceEvents":{"a":1}})", 15, "not an array"},
      {"event not an object", R"({"traceEvents":[1]})", 16, "not a JSON object"},
      {"no ph", R"({"traceEvents":[ {"ts":1}]})", 17, "no \"ph\""},
      {"ph not a string", R"({"traceEvents":[{"ph":88}]})", 22, "\"ph\" is not a string"},
      {"dur is a string", one_event(R"("ts":1,"dur":"abc")"), int64_t(dur_at), "\"dur\" is not a number"},
      {"ts is null", one_event(R"("ts":null,"dur":1)"), int64_t(ts_at), "\"ts\" is not a number"},
      {"X without dur", one_event(R"("ts":1)"), 16, "has no \"dur\""},
      {"X without ts", one_event(R"("dur":1)"), 16, "has no \"ts\""},
      {"huge ts (double)", one_event(R"("ts":1e300,"dur":1)"), int64_t(ts_at), "out of range"},
      {"huge ts (integer)", one_event(R"("ts":123456789012345678901234567890,"dur":1)"), int64_t(ts_at),
       "out of range"},
      {"huge dur", one_event(R"("ts":1,"dur":4e15)"), int64_t(dur_at), "out of range"},
      {"base + ts overflows",
       R"({"baseTimeNanoseconds":9000000000000000000,"traceEvents":[{"ph":"i","ts":1e15}]})", 23,
       "overflows"},
      {"base not a number", R"({"baseTimeNanoseconds":"now","traceEvents":[]})", 23, "not a number"},
      {"malformed number", one_event(R"("ts":1.2.3,"dur":1)"), int64_t(ts_at) + 3, "invalid JSON"},
      {"deep nesting, never closed", deep_open, int64_t(deep_open.size()), "unexpected end of input"},
      {"trailing garbage", valid + " x", int64_t(valid.size()) + 1, "invalid JSON"},
      {"NUL byte", valid + std::string(1, '\0'), int64_t(valid.size()), "NUL byte"},
      {"invalid UTF-8 in a string", bad_utf8, -2, "invalid JSON"},
      {"gzip garbage", std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage!", 18), 0,
       "gzip data is corrupt"},
      {"gzip truncated", gzip(valid).substr(0, 20), -2, "ends inside the gzip stream"},
      {"over max_bytes", valid, -1, "max_bytes", small(int64_t(valid.size()) - 1)},
      {"gzip bomb over max_bytes", bomb, -1, "gzip bomb", small(1 << 20)},
      {"over max_events", R"({"traceEvents":[{"ph":"i","ts":1},{"ph":"i","ts":2}]})", 34, "max_events",
       small(1 << 20, 1)},
  };
}
}  // namespace

TEST_CASE("malformed input: TraceError with the file name and the byte", "[core][reader][errors][cpu]") {
  for (const BadCase& c : bad_cases()) {
    DYNAMIC_SECTION(c.label) {
      try {
        wb::parse_trace(c.input, "bad_input.json", c.opts);
        FAIL("no TraceError for: " << c.label);
      } catch (const wb::TraceError& e) {
        INFO(e.what());
        CHECK(e.source() == "bad_input.json");
        CHECK_THAT(e.what(), ContainsSubstring("bad_input.json"));
        CHECK_THAT(e.what(), ContainsSubstring(c.says));
        if (c.offset == -2) {
          CHECK(e.offset() >= 0);
        } else {
          CHECK(e.offset() == c.offset);
        }
        if (e.offset() >= 0) CHECK_THAT(e.what(), ContainsSubstring("byte " + std::to_string(e.offset())));
      }
    }
  }
}

TEST_CASE("the malformed-input table is not vacuous: fixed inputs parse", "[core][reader][errors][cpu]") {
  // The same shapes with the defect removed must read fine, so each row above really
  // tests its defect and not something else.
  CHECK_NOTHROW(wb::parse_trace(one_event(R"("ts":1,"dur":2)")));
  CHECK_NOTHROW(wb::parse_trace(one_event(R"("ts":1.23,"dur":1)")));
  CHECK_NOTHROW(wb::parse_trace(one_event(R"("ts":1e3,"dur":4e12)")));
  CHECK_NOTHROW(wb::parse_trace(R"({"traceEvents":[{"ph":"X","ts":1,"dur":1}]})"));
  CHECK_NOTHROW(wb::parse_trace(R"({"traceEvents":[ {"ph":"M","ts":1}]})"));
  CHECK_NOTHROW(
      wb::parse_trace(R"({"baseTimeNanoseconds":9000000000000000000,"traceEvents":[{"ph":"i","ts":1}]})"));
  CHECK_NOTHROW(wb::parse_trace(one_event(R"("ts":1,"dur":1)"), "x", small(1 << 20, 1)));
  CHECK_NOTHROW(
      wb::parse_trace(gzip(R"({"traceEvents":[)" + std::string(4 << 20, ' ') + "]}"), "x", small(8 << 20)));
  CHECK_THROWS_AS(wb::parse_trace(one_event(R"("ts":1,"dur":"abc")")), wb::TraceError);
}

TEST_CASE("read_trace: missing file and limits name the path", "[core][reader][errors][cpu]") {
  TempDir dir;
  const fs::path missing = dir.path / "no_such_trace.json";
  try {
    wb::read_trace(missing);
    FAIL("no TraceError");
  } catch (const wb::TraceError& e) {
    CHECK_THAT(e.what(), ContainsSubstring("no_such_trace.json"));
    CHECK(e.offset() == -1);
  }
  const fs::path big = dir.write("big.json", one_event(R"("ts":1,"dur":1)"));
  CHECK_THROWS_WITH(wb::read_trace(big, small(10)),
                    ContainsSubstring("big.json") && ContainsSubstring("max_bytes"));
  CHECK_THROWS_WITH(wb::read_trace(dir.path), ContainsSubstring("not a regular file"));
}

TEST_CASE("every fuzz corpus file ends in a Trace or a TraceError", "[core][reader][fuzz][cpu]") {
  // Regression net for the fuzzer (fuzz/README.md): its seeds and any fixed crash
  // reproducers are replayed here on every test run, without needing clang.
  const fs::path corpus = fs::path(WORKBOOK_ROOT) / "fuzz" / "corpus" / "trace_reader";
  REQUIRE(fs::is_directory(corpus));
  wb::ReadOptions opts;
  opts.max_bytes = 8 << 20;  // the fuzzer's limits
  opts.max_events = 100'000;
  int parsed = 0, refused = 0;
  for (const auto& entry : fs::directory_iterator(corpus)) {
    INFO(entry.path().filename().string());
    try {
      const wb::Trace t = wb::parse_trace(slurp(entry.path()), "corpus", opts);
      const wb::TraceModel m(t);
      for (wb::EventIdx i = 0; i < t.events.size(); ++i) {
        CHECK(t.events[i].start_ns >= 0);
        if (auto p = m.parent(i)) CHECK(t.events[*p].end_ns() >= t.events[i].end_ns());
      }
      ++parsed;
    } catch (const wb::TraceError& e) {
      CHECK(e.source() == "corpus");
      ++refused;
    }
  }
  CHECK(parsed >= 12);  // the real and synthetic traces, and the lenient edge cases
  CHECK(refused >= 8);  // truncated, garbage, overflow, ...
}

TEST_CASE("record_shapes: input shapes as Python prints them, FLOPs by torch's formula",
          "[reader][tools][cpu]") {
  const wb::Trace t =
      wb::read_trace(std::string(WORKBOOK_ROOT) + "/fuzz/corpus/trace_reader/record_shapes_flops.json");
  CHECK(t.record_shapes);
  CHECK(t.with_flops);
  auto ev = [&](const std::string& name) -> const wb::Event& {
    for (const auto& e : t.events)
      if (e.name == name) return e;
    throw std::runtime_error("no " + name);
  };
  CHECK(ev("aten::addmm").input_shapes == "[[192], [128, 64], [64, 192], [], []]");
  CHECK(ev("aten::addmm").flops == 2 * 128 * 64 * 192);
  // A list of tensors has no shape in Python's table: [].
  CHECK(ev("aten::cat").input_shapes == "[[], []]");
  CHECK(ev("aten::cat").flops == 0);
  // 1x3x8x8 * 4x3x3x3, stride 1, padding 1: an 8x8 output; 2 * 8*8 * 3*3 * 3 * 4.
  CHECK(ev("aten::conv2d").flops == 2 * 8 * 8 * 3 * 3 * 3 * 4);
  // Args of the wrong type are not recorded (lenient), never an error.
  CHECK(ev("aten::mul").input_shapes.empty());
  CHECK(ev("aten::mul").flops == 0);
  CHECK(ev("PyTorch Profiler (0)").input_shapes.empty());
}

// ---- big inputs are read in pieces (ReadOptions::piece_bytes): the same trace, or the same error
namespace {

// What reading `json` gives: the dump, or the error's text.
std::string outcome(const std::string& json, int64_t piece_bytes) {
  wb::ReadOptions o;
  o.piece_bytes = piece_bytes;
  try {
    return fuzz::dump_trace(wb::parse_trace(json, "pieces.json", o));
  } catch (const wb::TraceError& e) {
    return std::string("TraceError at ") + std::to_string(e.offset()) + ": " + e.what();
  }
}

// A trace laid out as Kineto writes it: one event per group of lines, "  },\n  {" between them.
std::string kineto_layout(const std::vector<std::string>& events, const std::string& before = "",
                          const std::string& after = "") {
  std::string s = "{\n  \"schemaVersion\": 1," + before + "\n  \"traceEvents\": [\n";
  for (size_t i = 0; i < events.size(); ++i) s += (i ? ",\n  {\n    " : "  {\n    ") + events[i] + "\n  }";
  return s + "\n  ]," + after + "\n  \"traceName\": \"t\"\n}";
}

std::vector<std::string> op_events(int n) {
  std::vector<std::string> ev;
  for (int i = 0; i < n; ++i)
    ev.push_back(R"("ph": "X", "cat": "cpu_op", "name": "aten::op)" + std::to_string(i % 7) +
                 R"(", "pid": 7, "tid": 8, "ts": )" + std::to_string(1000 + 10 * i) +
                 R"(.125, "dur": 5.5, "args": {"External id": )" + std::to_string(i + 1) + "}");
  return ev;
}

}  // namespace

TEST_CASE("a trace read in pieces is the trace read whole: every recording and fixture",
          "[core][reader][pieces][cpu]") {
  std::vector<fs::path> files;
  for (const char* dir : {"expected_output", "tests/data/python", "tests/data/traces"})
    for (const auto& e : fs::recursive_directory_iterator(fs::path(WORKBOOK_ROOT) / dir)) {
      const std::string name = e.path().filename().string();
      auto ends = [&](const std::string& tail) {
        return name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
      };
      if (name == "trace.json" || ends(".json.gz") ||
          (std::string(dir) == "tests/data/traces" && ends(".json")))
        files.push_back(e.path());
    }
  REQUIRE(files.size() >= 30);
  for (const auto& f : files) {
    INFO(f.string());
    const std::string bytes = slurp(f);
    const std::string whole = outcome(bytes, 0);
    for (int64_t piece : {64, 1000, 20000}) {
      INFO("piece_bytes " << piece);
      CHECK(outcome(bytes, piece) == whole);
    }
  }
}

TEST_CASE("a trace read in pieces: cuts in the wrong place, names, errors", "[core][reader][pieces][cpu]") {
  // Sizes small enough that every case below is cut many times.
  const int64_t kPiece = 64;
  SECTION("plain events (the reference for the others)") {
    const std::string t = kineto_layout(op_events(200));
    CHECK(outcome(t, 0).find("aten::op6") != std::string::npos);
    CHECK(outcome(t, kPiece) == outcome(t, 0));
  }
  SECTION("args holding objects laid out like events: a cut there is at the wrong depth") {
    auto ev = op_events(120);
    for (size_t i = 0; i < ev.size(); i += 3)
      ev[i].insert(ev[i].size() - 1,
                   ", \"list\": [\n  {\"a\": 1},\n  {\"b\": [\n  {}\n  ]},\n  {\"c\": 3}\n  ]");
    const std::string t = kineto_layout(ev);
    CHECK(outcome(t, 0).find("TraceError") == std::string::npos);
    CHECK(outcome(t, kPiece) == outcome(t, 0));
  }
  SECTION("pids and tids that are names are numbered in the order they come, across pieces") {
    auto ev = op_events(150);
    ev[3] = R"("ph": "M", "name": "process_name", "pid": "Spans", "tid": "Zeta", "args": {"name": "x"})";
    ev[70] = R"("ph": "i", "name": "Iteration Start", "pid": "Traces", "tid": "", "ts": 1500.5)";
    ev[71] =
        R"("ph": "X", "cat": "kernel", "name": "k", "pid": "Spans", "tid": "Later", "ts": 1600, "dur": 2, )"
        R"("args": {"device": 0, "stream": 7, "correlation": 9})";
    ev[140] = R"("ph": "i", "name": "Record Window End", "pid": "Zeta", "tid": "Traces", "ts": 1700)";
    // A key given twice: the last value counts, a name given first still takes its number
    // (found by the fuzzer: fuzz/corpus/trace_reader/regress_pieces_tid_given_twice.json).
    ev[100] = R"("ph": "X", "tid": "first", "name": "twice", "pid": 1, "tid": 2, "ts": 1650, "dur": 1)";
    ev[101] = R"("ph": "X", "tid": 3, "name": "twice", "pid": "P", "tid": "second", "ts": 1660, "dur": 1)";
    const std::string t = kineto_layout(ev);
    CHECK(outcome(t, kPiece) == outcome(t, 0));
  }
  SECTION("the top level around the array: devices, flags, base time, a second traceEvents") {
    const std::string t = kineto_layout(op_events(90),
                                        R"(
  "deviceProperties": [
  {"id": 0, "name": "NVIDIA H200", "computeMajor": 9, "computeMinor": 0, "numSms": 132}
  ],
  "traceName2": "a \"traceEvents\": [ inside a string",
  "record_shapes": 1,)",
                                        "\n  \"baseTimeNanoseconds\": 1700000000000000000,\n  "
                                        "\"traceEvents\": [{\"ph\": \"i\", \"ts\": 5},\n  "
                                        "{\"ph\": \"i\", \"ts\": 6, \"pid\": \"Spans\"}],");
    CHECK(outcome(t, kPiece) == outcome(t, 0));
  }
  SECTION("broken input gives the same error, at the same byte") {
    const std::string good = kineto_layout(op_events(100));
    std::vector<std::string> broken;
    auto ev = op_events(100);
    ev[50] = R"("cat": "cpu_op", "name": "no phase", "ts": 1, "dur": 1)";
    broken.push_back(kineto_layout(ev));  // an event without "ph", in the middle
    ev = op_events(100);
    ev[60] = R"("ph": "X", "name": "a},
  {", "ts": 1, "dur": 1)";
    broken.push_back(kineto_layout(ev));  // a raw newline inside a string: "},\n  {" in it
    ev = op_events(100);
    ev[40] += ", \"args2\": [1, 2";
    broken.push_back(kineto_layout(ev));  // a bracket never closed
    ev = op_events(100);
    ev[40] += "}";
    broken.push_back(kineto_layout(ev));                       // one closed too many
    broken.push_back(good.substr(0, good.size() / 2));         // truncated in the middle
    broken.push_back(good.substr(0, good.size() - 3) + "]]");  // the end mangled
    for (const auto& b : broken) {
      const std::string whole = outcome(b, 0);
      INFO(whole.substr(0, 200));
      CHECK(whole.rfind("TraceError", 0) == 0);
      CHECK(outcome(b, kPiece) == whole);
    }
  }
  SECTION("max_events counts every piece") {
    const std::string t = kineto_layout(op_events(100));
    wb::ReadOptions o;
    o.piece_bytes = kPiece;
    o.max_events = 99;
    CHECK_THROWS_WITH(wb::parse_trace(t, "x", o), ContainsSubstring("max_events"));
    o.max_events = 100;
    CHECK(wb::parse_trace(t, "x", o).events.size() == 100);
  }
}

TEST_CASE("every fuzz corpus file reads the same in pieces as whole", "[core][reader][pieces][fuzz][cpu]") {
  // The fuzz target checks this on every input (fuzz_input.hpp); here on the corpus, in CI.
  const fs::path corpus = fs::path(WORKBOOK_ROOT) / "fuzz" / "corpus" / "trace_reader";
  int files = 0;
  for (const auto& entry : fs::directory_iterator(corpus)) {
    INFO(entry.path().filename().string());
    const std::string bytes = slurp(entry.path());
    CHECK(outcome(bytes, 32) == outcome(bytes, 0));
    ++files;
  }
  CHECK(files >= 20);
}
