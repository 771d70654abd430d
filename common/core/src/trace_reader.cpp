// Kineto Chrome-trace JSON -> wb::Trace.
//
// Fast path: simdjson On-Demand over the whole buffer (no DOM, so memory stays ~ the input
// size). Error path: when simdjson reports a syntax error, the same bytes are re-parsed with
// nlohmann-json's SAX parser, which knows the exact byte (and line/column) where the JSON
// breaks. Speed does not matter there; a precise message does.
//
// Input policy (what is strict, what is lenient) -- decided once, applied everywhere:
//   * Strict, TraceError: invalid JSON; a top level that is not an object; no "traceEvents"
//     array; an event that is not an object or has no string "ph"; "ts", "dur" or
//     "baseTimeNanoseconds" that are not numbers or are out of range; an X event without
//     "ts"/"dur", an instant without "ts"; more than ReadOptions::max_events events; inputs
//     over ReadOptions::max_bytes (before and after gunzip). Time is what every analysis
//     stands on, so a wrong time is an error, never a silent default.
//   * Lenient, default value: descriptive fields. A missing or non-string "name"/"cat" -> "";
//     "pid"/"tid" may be numbers or strings; "args" that is not an object is ignored; every
//     field inside "args" of the wrong type keeps the "not recorded" default of trace.hpp.
//   * Kept: ph "X" (complete) and "i"/"I" (instant -> Kind::Instant). Skipped without
//     complaint: "M" metadata (process/thread names), "s"/"t"/"f" flows (ac2g: the same
//     links are rebuilt from the correlation ids in args), "C" counters and any other phase.
//   * Negative "dur" is clamped to 0, as Kineto itself does when writing.
//
// Time: Kineto writes ts/dur in microseconds with exactly three decimals. We parse that text
// as a decimal (not through a double: absolute traces have ts ~ 1.7e15 us, where a double is
// only good to 0.25 us) and round to whole nanoseconds. Then we shift: start_ns == 0 is the
// earliest kept event, and Trace::base_ns is the absolute time of that instant
// (baseTimeNanoseconds + earliest ts; older traces without baseTimeNanoseconds wrote
// absolute ts, so there base_ns is simply the earliest ts). Start times are therefore small
// and never negative, for new and old traces alike.
#include "workbook/trace_reader.hpp"

#include "workbook/rules.hpp"

#include <fcntl.h>
#include <simdjson.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <utility>

namespace wb {

namespace {

std::string error_text(const std::string& source, int64_t offset, const std::string& what) {
  std::string s = source;
  if (offset >= 0) s += ": byte " + std::to_string(offset);
  return s + ": " + what;
}

}  // namespace

TraceError::TraceError(std::string source, int64_t offset, const std::string& what)
    : std::runtime_error(error_text(source, offset, what)), source_(std::move(source)), offset_(offset) {}

namespace {

namespace od = simdjson::ondemand;

// |ts| and dur are capped at 3e18 ns (~95 years after 1970), so that after the shift to the
// earliest event every start (< 6e18) and end (< 9e18) still fits in int64.
constexpr int64_t kMaxTimeNs = 3'000'000'000'000'000'000;
// pid/tid strings that are not numbers (Kineto writes "Spans", "Traces", "") get stable ids
// far below any real process or thread id: kNamedIdBase - (order of first appearance).
constexpr int64_t kNamedIdBase = -(int64_t{1} << 40);
// The id of the `count`-th name to appear (1, 2, ...): both ways of reading number them so.
constexpr int64_t named_id(size_t count) { return kNamedIdBase - static_cast<int64_t>(count); }

// JSON's whitespace (RFC 8259: space, tab, line feed, carriage return).
constexpr bool is_json_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
// The first index at or after `i` that is not whitespace (s.size() when there is none).
size_t skip_json_space(std::string_view s, size_t i) {
  while (i < s.size() && is_json_space(s[i])) ++i;
  return i;
}

// A file mapped read-only, followed by zero pages: at least SIMDJSON_PADDING readable zero
// bytes after its end (the rest of the file's last page reads as zeros, then anonymous pages).
// Mapping instead of reading saves zero-filling, faulting in and copying a buffer as large as
// the file: ~80 ms of a 95 MB trace's ~0.35 s read on the 2-core VM (docs/performance.md).
class MappedFile {
 public:
  MappedFile() = default;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  MappedFile(MappedFile&& o) noexcept : base_(std::exchange(o.base_, nullptr)), total_(o.total_) {}
  MappedFile& operator=(MappedFile&& o) noexcept {
    std::swap(base_, o.base_);
    std::swap(total_, o.total_);
    return *this;
  }
  ~MappedFile() {
    if (base_) ::munmap(base_, total_);
  }
  // False (and nothing mapped) where the system says no; the caller then reads the file.
  bool map(const std::filesystem::path& path, size_t size) {
    const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    if (size == 0 || page == 0 || size > SIZE_MAX - simdjson::SIMDJSON_PADDING - page) return false;
    const size_t total = (size + simdjson::SIMDJSON_PADDING + page - 1) / page * page;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    // Reserve the whole span as zero pages, then put the file over its start.
    void* base = ::mmap(nullptr, total, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void* file = base == MAP_FAILED
                     ? MAP_FAILED
                     : ::mmap(base, size, PROT_READ, MAP_PRIVATE | MAP_FIXED | MAP_POPULATE, fd, 0);
    ::close(fd);
    if (file == MAP_FAILED) {
      if (base != MAP_FAILED) ::munmap(base, total);
      return false;
    }
    base_ = base;
    total_ = total;
    return true;
  }
  const char* data() const { return static_cast<const char*>(base_); }
  size_t capacity() const { return total_; }

 private:
  void* base_ = nullptr;
  size_t total_ = 0;
};

// A buffer with the zeroed tail simdjson needs to read past the end safely: owned bytes, or a
// mapped file (read_trace on a file).
struct PaddedBuffer {
  std::string bytes;  // size() == len + SIMDJSON_PADDING (unused when `mapped` holds the bytes)
  MappedFile mapped;
  size_t len = 0;
  void resize(size_t n) {
    len = n;
    bytes.resize(n + simdjson::SIMDJSON_PADDING, '\0');
  }
  const char* data() const { return mapped.data() ? mapped.data() : bytes.data(); }
  size_t capacity() const { return mapped.data() ? mapped.capacity() : bytes.size(); }
};

std::string human_bytes(int64_t n) { return std::to_string(n) + " bytes"; }

// An event name for an error message: quoted, and short even if the name is not.
std::string quoted(std::string_view name) {
  constexpr size_t kMax = 80;
  if (name.size() <= kMax) return "\"" + std::string(name) + "\"";
  return "\"" + std::string(name.substr(0, kMax)) + "...\"";
}

// ---- numbers ---------------------------------------------------------------------------

enum class Parsed { Ok, NotPlain, OutOfRange };

// "5093781631814.737" (microseconds) -> 5093781631814737 (ns), exactly, rounding the fourth
// decimal half away from zero. Anything that is not [-]digits[.digits] (an exponent, say)
// returns NotPlain so the caller can take the slower double path.
Parsed parse_us_as_ns(std::string_view tok, int64_t& out) {
  while (!tok.empty() && is_json_space(tok.back()))
    tok.remove_suffix(1);  // raw tokens carry the whitespace up to the next token
  size_t i = 0;
  const bool neg = i < tok.size() && tok[i] == '-';
  if (neg) ++i;
  const size_t int_begin = i;
  constexpr uint64_t kMaxUs = kMaxTimeNs / 1000;
  uint64_t us = 0;
  for (; i < tok.size() && tok[i] >= '0' && tok[i] <= '9'; ++i) {
    us = us * 10 + static_cast<uint64_t>(tok[i] - '0');
    if (us > kMaxUs) return Parsed::OutOfRange;
  }
  if (i == int_begin) return Parsed::NotPlain;
  uint64_t frac_ns = 0;
  if (i < tok.size() && tok[i] == '.') {
    ++i;
    const size_t frac_begin = i;
    int digit = 0;
    for (; i < tok.size() && tok[i] >= '0' && tok[i] <= '9'; ++i, ++digit) {
      const auto d = static_cast<uint64_t>(tok[i] - '0');
      if (digit < 3)
        frac_ns = frac_ns * 10 + d;
      else if (digit == 3 && d >= 5)
        frac_ns += 1;  // round on the first dropped digit
    }
    if (i == frac_begin) return Parsed::NotPlain;
    for (; digit < 3; ++digit) frac_ns *= 10;
  }
  if (i != tok.size()) return Parsed::NotPlain;
  const uint64_t ns = us * 1000 + frac_ns;
  if (ns > static_cast<uint64_t>(kMaxTimeNs)) return Parsed::OutOfRange;
  out = neg ? -static_cast<int64_t>(ns) : static_cast<int64_t>(ns);
  return Parsed::Ok;
}

bool fits_int64(double d) { return std::isfinite(d) && std::fabs(d) < 9.2e18; }

// ---- the nlohmann-based error locator ---------------------------------------------------

// Accepts everything and remembers the first parse error. nlohmann's SAX parser keeps its
// nesting on the heap, so even absurdly deep input cannot overflow the call stack.
struct ErrorLocator : nlohmann::json_sax<nlohmann::json> {
  size_t position = 0;
  std::string message;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t pos, const std::string&, const nlohmann::detail::exception& ex) override {
    position = pos;
    message = ex.what();
    return false;
  }
};

// ---- the parser --------------------------------------------------------------------------

// What one event object said, before we know its phase and category (keys come in any order).
struct RawEvent {
  std::string_view ph;
  bool has_ph = false, has_ts = false, has_dur = false;
  int64_t ts_ns = 0, dur_ns = 0;
  std::string_view name, cat;
  int64_t pid = 0, tid = 0;
  // args
  int64_t external_id = 0, correlation = 0;
  bool has_correlation = false;
  std::optional<int64_t> device, stream;
  KernelInfo kernel;
  bool has_kernel_info = false;
  int64_t bytes = -1;
  int64_t cbid = -1;                            // runtime / driver calls: CUPTI's callback id
  int64_t sequence_nr = -1, fwd_thread_id = 0;  // autograd's ("Sequence number", "Fwd thread id")
  std::string_view call_stack;                  // with_stack (verbose): "frame;frame;..."
  // record_shapes: "Input Dims" (-> Event::input_shapes), and for the FLOPs formula the first
  // inputs' dims and types and the concrete values (conv2d's stride...: inputs 3..6).
  // Raw JSON texts (pointing into the input); parsed further only for ops with a FLOPs formula.
  std::string_view dims, types, concrete;
  // profile_memory: a "[memory]" instant's "Bytes", "Total Allocated", ... (Event::memory)
  MemoryRecord memory;
  int64_t memory_bytes = 0;
  bool has_memory = false;
};

// key == lit, with the literal's length known at compile time, so the comparison is a few
// inline instructions instead of a call to memcmp (the reader asks it ~10 times per event).
template <size_t N>
inline bool is_key(std::string_view key, const char (&lit)[N]) {
  return key.size() == N - 1 && std::memcmp(key.data(), lit, N - 1) == 0;
}

// Keys read straight into a field: the top level's flags, the args kept as raw JSON text.
template <class M>
using KeyField = std::pair<std::string_view, M>;
constexpr KeyField<bool Trace::*> kTraceFlags[] = {{"record_shapes", &Trace::record_shapes},
                                                   {"with_flops", &Trace::with_flops},
                                                   {"profile_memory", &Trace::profile_memory},
                                                   {"with_stack", &Trace::with_stack}};
constexpr KeyField<std::string_view RawEvent::*> kRawArrayArgs[] = {{"Input Dims", &RawEvent::dims},
                                                                    {"Input type", &RawEvent::types},
                                                                    {"Concrete Inputs", &RawEvent::concrete}};
template <class M, size_t N>
M field_of(const KeyField<M> (&table)[N], std::string_view key) {
  for (const auto& [k, f] : table)
    if (k == key) return f;
  return nullptr;
}

// The inputs the FLOPs formula reads, from the raw "Input Dims" / "Input type" / "Concrete
// Inputs" texts. Only ops with a formula get here (a few per step), so nlohmann parses them.
int64_t flops_from_args(std::string_view op, std::string_view dims, std::string_view types,
                        std::string_view concrete, std::string& dtype) {
  if (op != "aten::mm" && op != "aten::addmm" && op != "aten::bmm" && op != "aten::baddbmm" &&
      op != "aten::mul" && op != "aten::add" && op != "aten::conv2d")
    return 0;
  const auto d = nlohmann::json::parse(dims, nullptr, false);
  if (!d.is_array()) return 0;
  const auto t = types.empty() ? nlohmann::json() : nlohmann::json::parse(types, nullptr, false);
  const auto c = concrete.empty() ? nlohmann::json() : nlohmann::json::parse(concrete, nullptr, false);
  std::vector<OpInput> in;
  for (size_t i = 0; i < d.size() && i < 3; ++i) {
    OpInput x;
    x.is_tensor = d[i].is_array();
    for (const auto& v : d[i]) {
      if (!v.is_number_integer()) {
        x.is_tensor = false;
        x.dims.clear();
        break;
      }
      x.dims.push_back(v.get<int64_t>());
    }
    if (t.is_array() && i < t.size()) {
      const std::string ty = t[i].is_string() ? t[i].get<std::string>() : "";
      x.is_tensor = x.is_tensor && !ty.empty() && ty != "Scalar" && ty != "ScalarList" &&
                    ty != "TensorList" && ty != "GenericList" && ty != "String";
      if (x.is_tensor && dtype.empty()) dtype = ty;
    }
    in.push_back(std::move(x));
  }
  std::vector<std::string> strings;
  if (c.is_array())
    for (const auto& v : c) strings.push_back(v.is_string() ? v.get<std::string>() : "");
  const std::vector<std::string_view> views(strings.begin(), strings.end());
  return op_flops(op, in, views);
}

class Parser {
 public:
  // `pieces`: this parser reads a part of a trace for parse_in_pieces (below): it gives up at
  // the first problem without locating it (the whole input is then read again, the usual way,
  // which says where), and leaves pid/tid names and the time shift to the caller.
  Parser(const PaddedBuffer& buf, const std::string& source, const ReadOptions& opts, bool pieces = false)
      : buf_(&buf), source_(source), opts_(opts), pieces_(pieces) {}

  Trace run() {
    od::parser parser;
    read_document(parser, buf_->len);
    normalize_time(trace_, base_time_ns_, base_time_offset_);
    return std::move(trace_);
  }

  // The top-level object. `events_bytes`: how much of the input the events take (to reserve).
  void read_document(od::parser& parser, size_t events_bytes) {
    if (buf_->len == 0) fail(0, "empty input: expected a JSON object with \"traceEvents\"");
    if (buf_->len > simdjson::SIMDJSON_MAXSIZE_BYTES)
      fail(-1, "input of " + human_bytes(static_cast<int64_t>(buf_->len)) +
                   " is larger than the JSON parser's 4 GiB limit");
    od::document doc;
    check(parser.iterate(simdjson::padded_string_view(buf_->data(), buf_->len, buf_->capacity())).get(doc));
    trace_.source = source_;
    reserve_events(events_bytes);

    od::object top;
    if (auto err = doc.get_object().get(top)) {
      if (err == simdjson::INCORRECT_TYPE)
        fail_json(first_non_space(),
                  "the top level is not a JSON object (expected {\"traceEvents\": [...]})");
      check(err);
    }
    bool saw_events = false;
    for_each_field(top, [&](std::string_view key, od::value& v) {
      if (key == "traceEvents") {
        if (!saw_events) events_offset_ = offset_of(v);
        saw_events = true;
        read_events(v);
      } else if (key == "baseTimeNanoseconds") {
        base_time_offset_ = offset_of(v);
        base_time_ns_ = strict_int(v, "baseTimeNanoseconds");
      } else if (key == "deviceProperties") {
        read_devices(v);
      } else if (bool Trace::*f = field_of(kTraceFlags, key)) {
        trace_.*f = flag(v);
      }
    });
    check_trailing(doc);
    if (!saw_events) fail(first_non_space(), "the top-level object has no \"traceEvents\" array");
  }

  // pieces: a run of whole events from the traceEvents array, as the JSON array "[" run "]".
  void read_piece(const PaddedBuffer& piece, od::parser& parser) {
    // Offsets count in the piece while it is read; after that buf_ is the input again, not
    // the caller's scratch buffer (which the next piece overwrites).
    struct Restore {
      const PaddedBuffer*& buf;
      const PaddedBuffer* was;
      ~Restore() { buf = was; }
    } restore{buf_, buf_};
    buf_ = &piece;
    od::document doc;
    check(parser.iterate(simdjson::padded_string_view(piece.data(), piece.len, piece.capacity())).get(doc));
    od::array arr;
    check(doc.get_array().get(arr));
    read_each_event(arr);
    check_trailing(doc);
  }

  void reserve_events(size_t bytes) {
    trace_.events.reserve(
        static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(bytes / 300), opts_.max_events)));
  }

  // What a pieces parser hands back.
  struct NamedId {       // a pid/tid written as a name: its number depends on what came before
    int64_t event = -1;  // index in trace().events, -1: the event was not kept
    bool tid = false;    // the tid (else the pid)
    bool assign = true;  // false: a later pid/tid, or device/stream in args, replaced it
    std::string name;
  };
  Trace& trace() { return trace_; }
  const std::vector<NamedId>& named() const { return named_; }
  int64_t events_offset() const { return events_offset_; }
  // The time shift of run(), with this document's baseTimeNanoseconds, applied to `t`.
  void normalize(Trace& t) const { normalize_time(t, base_time_ns_, base_time_offset_); }

 private:
  // -- errors --
  [[noreturn]] void fail(int64_t offset, const std::string& what) const {
    throw TraceError(source_, offset, what);
  }

  void check(simdjson::error_code err) const {
    if (err) fail_json(-1, std::string("cannot parse JSON: ") + simdjson::error_message(err));
  }

  // Calls on_field(key, value) for each field of `obj`, in document order. On-Demand reads
  // forward only: on_field reads the value (or leaves it) before the next field is reached.
  template <class OnField>
  void for_each_field(od::object& obj, OnField&& on_field) {
    for (auto field_result : obj) {
      od::field field;
      check(std::move(field_result).get(field));
      std::string_view key;
      check(field.unescaped_key().get(key));
      od::value value = field.value();
      on_field(key, value);
    }
  }

  // simdjson knows *that* the JSON is broken, nlohmann knows *where*: if the bytes are not
  // valid JSON, report nlohmann's position; otherwise the input is valid JSON of the wrong
  // shape and `what` (at `offset`) says how.
  [[noreturn]] void fail_json(int64_t offset, const std::string& what) const {
    if (pieces_) fail(offset, what);
    ErrorLocator loc;
    const char* begin = buf_->data();
    nlohmann::json::sax_parse(begin, begin + buf_->len, &loc);
    if (!loc.message.empty()) {
      // "[json.exception.parse_error.101] parse error at line 3, column 7: ..." -> drop the tag.
      std::string msg = loc.message;
      if (auto p = msg.find("] "); p != std::string::npos && msg[0] == '[') msg.erase(0, p + 2);
      const int64_t at = loc.position > 0 ? static_cast<int64_t>(loc.position) - 1 : 0;
      fail(std::min<int64_t>(at, static_cast<int64_t>(buf_->len)), "invalid JSON: " + msg);
    }
    // nlohmann stops at a NUL byte as if the input ended there; simdjson does not.
    if (const void* nul = std::memchr(begin, '\0', buf_->len))
      fail(static_cast<const char*>(nul) - begin, "unexpected NUL byte (binary data?)");
    fail(offset, what);
  }

  int64_t offset_of(od::value& v) const {
    const std::string_view tok = v.raw_json_token();
    return tok.data() - buf_->data();
  }

  int64_t first_non_space() const {
    return static_cast<int64_t>(skip_json_space({buf_->data(), buf_->len}, 0));
  }

  void check_trailing(od::document& doc) const {
    // After the top-level object the iterator must be at the end of the input.
    const char* loc = nullptr;
    if (doc.current_location().get(loc) == simdjson::SUCCESS && loc != nullptr)
      fail_json(loc - buf_->data(), "unexpected content after the top-level object");
  }

  // -- typed getters --
  od::json_type type_of(od::value& v) const {
    od::json_type t;
    check(v.type().get(t));
    return t;
  }

  // A time in microseconds -> ns. Strict: must be a number within range.
  int64_t strict_time(od::value& v, const char* field) {
    if (type_of(v) != od::json_type::number)
      fail(offset_of(v), std::string("\"") + field + "\" is not a number");
    int64_t ns = 0;
    switch (parse_us_as_ns(v.raw_json_token(), ns)) {
      case Parsed::Ok: return ns;
      case Parsed::OutOfRange: break;
      case Parsed::NotPlain: {  // 1.5e3 and friends: take the double, then round
        double d = 0;
        if (v.get_double().get(d) != simdjson::SUCCESS)
          fail_json(offset_of(v), std::string("\"") + field + "\" is not a valid number");
        if (fits_int64(d) && std::fabs(d * 1000.0) <= static_cast<double>(kMaxTimeNs))
          return std::llround(d * 1000.0);
        break;
      }
    }
    fail(offset_of(v),
         std::string("\"") + field + "\" is out of range (more than ~95 years in microseconds)");
  }

  int64_t strict_int(od::value& v, const char* field) {
    if (type_of(v) != od::json_type::number)
      fail(offset_of(v), std::string("\"") + field + "\" is not a number");
    int64_t out = 0;
    if (v.get_int64().get(out) == simdjson::SUCCESS) return out;
    double d = 0;
    if (v.get_double().get(d) == simdjson::SUCCESS && fits_int64(d)) return std::llround(d);
    fail(offset_of(v), std::string("\"") + field + "\" is not a 64-bit integer");
  }

  // Lenient: an integer if it is one (or a float that fits), otherwise the fallback.
  int64_t loose_int(od::value& v, int64_t fallback) const {
    if (type_of(v) != od::json_type::number) return fallback;
    int64_t i = 0;
    if (v.get_int64().get(i) == simdjson::SUCCESS) return i;
    double d = 0;
    if (v.get_double().get(d) == simdjson::SUCCESS && fits_int64(d)) return std::llround(d);
    return fallback;
  }

  double loose_double(od::value& v, double fallback) const {
    if (type_of(v) != od::json_type::number) return fallback;
    double d = 0;
    if (v.get_double().get(d) == simdjson::SUCCESS && std::isfinite(d)) return d;
    return fallback;
  }

  // Recording flags: 1 / "1" / true.
  bool flag(od::value& v) const {
    switch (type_of(v)) {
      case od::json_type::number: return loose_int(v, 0) != 0;
      case od::json_type::boolean: {
        bool b = false;
        return v.get_bool().get(b) == simdjson::SUCCESS && b;
      }
      case od::json_type::string: {
        const auto s = loose_string(v);
        return !s.empty() && s != "0" && s != "false";
      }
      default: return false;
    }
  }

  // The raw text of an array argument, or "" when it is not an array. Points into the input.
  std::string_view raw_array(od::value& v) const {
    if (type_of(v) != od::json_type::array) return {};
    od::array arr;
    check(v.get_array().get(arr));
    std::string_view raw;
    check(arr.raw_json().get(raw));
    return raw;
  }

  // "Input Dims": [[64, 64], [], [[4, 32], [4, 32]]] -> "[[64, 64], [], []]": Python's
  // str(input_shapes), where a list of tensors has no shape of its own. One pass over the
  // (already validated) text; every op of a record_shapes trace has it, so this stays cheap.
  static std::string python_shapes(std::string_view raw) {
    std::string out = "[";
    out.reserve(raw.size());
    int depth = 0;
    size_t element_start = 0;
    bool first_element = true, first_dim = true, bad = false;
    auto next_element = [&] {
      if (!first_element) out += ", ";
      first_element = false;
    };
    for (size_t i = 0; i < raw.size(); ++i) {
      const char c = raw[i];
      if (c == ' ' || c == ',' || c == '\n' || c == '\r' || c == '\t') continue;
      if (c == '[') {
        if (++depth == 2) {
          next_element();
          element_start = out.size();
          out += '[';
          first_dim = true;
          bad = false;
        } else if (depth > 2) {
          bad = true;  // a list of tensors
        }
      } else if (c == ']') {
        if (depth == 2) {
          if (bad)
            out.resize(element_start), out += "[]";
          else
            out += ']';
        }
        --depth;
      } else {
        // A token: a number, or a string / literal (skipped, escapes included).
        size_t j = i;
        if (c == '"') {
          for (j = i + 1; j < raw.size() && raw[j] != '"'; ++j)
            if (raw[j] == '\\') ++j;
          ++j;
        } else {
          while (j < raw.size() && raw[j] != ',' && raw[j] != ']' && raw[j] != ' ' && raw[j] != '\n') ++j;
        }
        const std::string_view tok = raw.substr(i, j - i);
        if (depth == 1) {  // not a list where a shape should be: Python has []
          next_element();
          out += "[]";
        } else if (depth == 2 && !bad) {
          if (tok.empty() || tok.find_first_not_of("0123456789-") != std::string_view::npos) {
            bad = true;
          } else {
            if (!first_dim) out += ", ";
            out += tok;
            first_dim = false;
          }
        }
        i = j - 1;
      }
    }
    out += ']';
    return out;
  }

  std::string_view loose_string(od::value& v) const {
    if (type_of(v) != od::json_type::string) return {};
    std::string_view s;
    check(v.get_string().get(s));
    return s;
  }

  // pid/tid: 2927, "2927", or a label like "Spans".
  int64_t process_or_thread_id(od::value& v, bool tid) {
    const od::json_type t = type_of(v);
    if (t == od::json_type::number) return loose_int(v, 0);
    if (t != od::json_type::string) return 0;
    std::string_view s = loose_string(v);
    int64_t n = 0;
    if (!s.empty() && s.size() <= 18 &&
        std::all_of(s.begin() + (s[0] == '-' ? 1 : 0), s.end(),
                    [](char c) { return c >= '0' && c <= '9'; }) &&
        s != "-") {
      for (char c : s.substr(s[0] == '-' ? 1 : 0)) n = n * 10 + (c - '0');
      return s[0] == '-' ? -n : n;
    }
    if (pieces_) {  // numbered by parse_in_pieces, in the order the names come
      named_.push_back({-1, tid, true, std::string(s)});
      return 0;
    }
    auto [it, inserted] = named_ids_.try_emplace(std::string(s), 0);
    if (inserted) it->second = named_id(named_ids_.size());
    return it->second;
  }

  void read_triple(od::value& v, std::array<int, 3>& out) const {
    if (type_of(v) != od::json_type::array) return;
    od::array arr;
    check(v.get_array().get(arr));
    size_t i = 0;
    for (auto elem : arr) {
      od::value x;
      check(std::move(elem).get(x));
      if (i < 3) {
        const int64_t n = loose_int(x, 0);
        out[i] = static_cast<int>(std::clamp<int64_t>(n, INT32_MIN, INT32_MAX));
      }
      ++i;
    }
  }

  // -- trace parts --
  void read_devices(od::value& v) {
    if (type_of(v) != od::json_type::array) return;
    od::array arr;
    check(v.get_array().get(arr));
    for (auto elem : arr) {
      od::value dv;
      check(std::move(elem).get(dv));
      if (type_of(dv) != od::json_type::object) continue;
      od::object obj;
      check(dv.get_object().get(obj));
      DeviceProperties d;
      d.id = static_cast<int>(trace_.devices.size());
      for_each_field(obj, [&](std::string_view key, od::value& x) {
        auto small = [&](int fallback) {
          return static_cast<int>(std::clamp<int64_t>(loose_int(x, fallback), INT32_MIN, INT32_MAX));
        };
        if (key == "id")
          d.id = small(d.id);
        else if (key == "name")
          d.name = std::string(loose_string(x));
        else if (key == "computeMajor")
          d.compute_major = small(0);
        else if (key == "computeMinor")
          d.compute_minor = small(0);
        else if (key == "totalGlobalMem")
          d.total_global_mem = loose_int(x, 0);
        else if (key == "numSms")
          d.num_sms = small(0);
      });
      trace_.devices.push_back(std::move(d));
    }
  }

  void read_events(od::value& v) {
    if (type_of(v) != od::json_type::array) fail(offset_of(v), "\"traceEvents\" is not an array");
    od::array arr;
    check(v.get_array().get(arr));
    read_each_event(arr);
  }

  void read_each_event(od::array& arr) {
    for (auto elem : arr) {
      od::value ev;
      check(std::move(elem).get(ev));
      read_event(ev);
    }
  }

  void read_args(od::value& v, RawEvent& r) {
    if (type_of(v) != od::json_type::object) return;  // lenient: args of the wrong type
    od::object obj;
    check(v.get_object().get(obj));
    for_each_field(obj, [&](std::string_view key, od::value& x) {
      if (is_key(key, "External id")) {
        r.external_id = loose_int(x, 0);
      } else if (is_key(key, "correlation")) {
        r.correlation = loose_int(x, 0);
        r.has_correlation = true;
      } else if (is_key(key, "device")) {
        if (type_of(x) == od::json_type::number) r.device = loose_int(x, 0);
      } else if (is_key(key, "stream")) {
        if (type_of(x) == od::json_type::number) r.stream = loose_int(x, 0);
      } else if (is_key(key, "bytes")) {
        r.bytes = loose_int(x, -1);
      } else if (is_key(key, "cbid")) {
        r.cbid = loose_int(x, -1);
      } else if (is_key(key, "Sequence number")) {
        r.sequence_nr = loose_int(x, -1);
      } else if (is_key(key, "Fwd thread id")) {
        r.fwd_thread_id = loose_int(x, 0);
      } else if (is_key(key, "Call stack")) {
        r.call_stack = loose_string(x);
      } else if (is_key(key, "registers per thread")) {
        r.kernel.registers_per_thread =
            static_cast<int>(std::clamp<int64_t>(loose_int(x, -1), -1, INT32_MAX));
        r.has_kernel_info = true;
      } else if (is_key(key, "shared memory")) {
        r.kernel.shared_memory = loose_int(x, -1);
        r.has_kernel_info = true;
      } else if (is_key(key, "grid")) {
        read_triple(x, r.kernel.grid);
        r.has_kernel_info = true;
      } else if (is_key(key, "block")) {
        read_triple(x, r.kernel.block);
        r.has_kernel_info = true;
      } else if (is_key(key, "blocks per SM")) {
        r.kernel.blocks_per_sm = loose_double(x, -1);
        r.has_kernel_info = true;
      } else if (is_key(key, "warps per SM")) {
        r.kernel.warps_per_sm = loose_double(x, -1);
        r.has_kernel_info = true;
      } else if (std::string_view RawEvent::*f = field_of(kRawArrayArgs, key)) {
        r.*f = raw_array(x);
      } else if (!key.empty() && key[0] >= 'A' && key[0] <= 'T') {
        read_memory_arg(key, x, r);
      }
    });
  }

  // profile_memory's args (Kineto writes them on each "[memory]" instant).
  void read_memory_arg(std::string_view key, od::value& x, RawEvent& r) const {
    if (is_key(key, "Bytes")) {
      r.memory_bytes = loose_int(x, 0);
      r.has_memory = true;
    } else if (is_key(key, "Total Allocated")) {
      r.memory.total_allocated = loose_int(x, -1);
    } else if (is_key(key, "Total Reserved")) {
      r.memory.total_reserved = loose_int(x, -1);
    } else if (is_key(key, "Device Type")) {
      r.memory.device_type = static_cast<int>(std::clamp<int64_t>(loose_int(x, -1), -1, INT32_MAX));
    } else if (is_key(key, "Device Id")) {
      r.memory.device_id = static_cast<int>(std::clamp<int64_t>(loose_int(x, -1), INT32_MIN, INT32_MAX));
    } else if (is_key(key, "Addr")) {
      r.memory.addr = loose_int(x, 0);
    }
  }

  void read_event(od::value& v) {
    const int64_t at = offset_of(v);
    // pieces: the names this event gave its pid/tid (named_ indices), -1 when a number came last.
    const size_t named_before = named_.size();
    int64_t pid_named = -1, tid_named = -1;
    if (type_of(v) != od::json_type::object) fail(at, "trace event is not a JSON object");
    od::object obj;
    check(v.get_object().get(obj));
    RawEvent r;
    for_each_field(obj, [&](std::string_view key, od::value& x) {
      if (is_key(key, "ph")) {
        if (type_of(x) != od::json_type::string) fail(offset_of(x), "\"ph\" is not a string");
        r.ph = loose_string(x);
        r.has_ph = true;
      } else if (is_key(key, "ts")) {
        r.ts_ns = strict_time(x, "ts");
        r.has_ts = true;
      } else if (is_key(key, "dur")) {
        r.dur_ns = std::max<int64_t>(0, strict_time(x, "dur"));
        r.has_dur = true;
      } else if (is_key(key, "name")) {
        r.name = loose_string(x);
      } else if (is_key(key, "cat")) {
        r.cat = loose_string(x);
      } else if (is_key(key, "pid")) {  // a key given twice: the last one counts, as in the whole-file read
        const size_t before = named_.size();
        r.pid = process_or_thread_id(x, false);
        pid_named = named_.size() > before ? static_cast<int64_t>(before) : -1;
      } else if (is_key(key, "tid")) {
        const size_t before = named_.size();
        r.tid = process_or_thread_id(x, true);
        tid_named = named_.size() > before ? static_cast<int64_t>(before) : -1;
      } else if (is_key(key, "args")) {
        read_args(x, r);
      }
    });
    if (!r.has_ph) fail(at, "trace event has no \"ph\" (phase)");
    const bool complete = r.ph == "X";
    const bool instant = r.ph == "i" || r.ph == "I";
    if (!complete && !instant) return;  // M, s/t/f, C, ...: nothing we keep
    if (!r.has_ts) fail(at, "trace event " + quoted(r.name) + " has no \"ts\"");
    if (complete && !r.has_dur) fail(at, "complete event (ph X) " + quoted(r.name) + " has no \"dur\"");
    if (static_cast<int64_t>(trace_.events.size()) >= opts_.max_events)
      fail(at, "more than " + std::to_string(opts_.max_events) + " events (ReadOptions::max_events)");
    trace_.events.push_back(make_event(r, instant));
    for (size_t i = named_before; i < named_.size(); ++i) {
      named_[i].event = static_cast<int64_t>(trace_.events.size()) - 1;
      const bool last = static_cast<int64_t>(i) == (named_[i].tid ? tid_named : pid_named);
      const bool replaced = trace_.events.back().on_device() && (named_[i].tid ? r.stream : r.device);
      named_[i].assign = last && !replaced;
    }
  }

  static Event make_event(const RawEvent& r, bool instant) {
    Event e;
    e.name = std::string(r.name);
    e.category = std::string(r.cat);
    e.kind = instant ? Kind::Instant : kind_from_category(r.cat);
    e.start_ns = r.ts_ns;
    e.dur_ns = instant ? 0 : r.dur_ns;
    // Kineto's JSON writer pads every GPU-side annotation by 1 ns on each side, so it draws
    // around its first kernel; the profiled span (what Python's table and our in-memory events
    // see) is 2 ns shorter. Seen on the H200: chapter 01's three matmul_add annotations sum to
    // 86.280 us in trace.json and 86.274 us in table.txt.
    if (e.kind == Kind::GpuUserAnnotation && e.dur_ns >= 2) {
      e.start_ns += 1;
      e.dur_ns -= 2;
    }
    e.pid = r.pid;
    e.tid = r.tid;
    e.bytes = r.bytes;
    e.cbid = r.cbid;
    e.sequence_nr = r.sequence_nr;
    e.fwd_thread_id = r.fwd_thread_id;
    for (size_t at = 0; at < r.call_stack.size();) {  // Kineto joins the frames with ';'
      const size_t end = std::min(r.call_stack.find(';', at), r.call_stack.size());
      const std::string_view frame = r.call_stack.substr(at, end - at);
      if (keep_stack_entry(frame)) e.stack.emplace_back(frame);
      at = end + 1;
    }
    // Ids (trace.hpp): CUPTI-side activity is identified by its correlation and points at
    // the CPU op by External id; CPU ops and annotations are identified by External id.
    const bool cupti_side = e.kind == Kind::Runtime || e.kind == Kind::Driver || e.kind == Kind::Kernel ||
                            e.kind == Kind::Memcpy || e.kind == Kind::Memset ||
                            (r.has_correlation && e.kind != Kind::CpuOp && e.kind != Kind::UserAnnotation);
    if (cupti_side) {
      e.id = r.correlation;
      e.linked_id = r.external_id;
    } else {
      e.id = r.external_id;
    }
    if (e.on_device()) {  // Kineto repeats device/stream in args; prefer them to pid/tid
      if (r.device) e.pid = *r.device;
      if (r.stream) e.tid = *r.stream;
    }
    if (e.kind == Kind::Kernel && r.has_kernel_info) e.kernel = r.kernel;
    if (instant && r.has_memory) {  // a profile_memory record: "Bytes" is what it allocated (< 0: freed)
      e.memory = r.memory;
      e.bytes = r.memory_bytes;
    }
    if (!r.dims.empty()) {
      e.input_shapes = python_shapes(r.dims);
      e.flops = flops_from_args(e.name, r.dims, r.types, r.concrete, e.input_dtype);
    }
    return e;
  }

  void normalize_time(Trace& t, int64_t base_time_ns, int64_t base_time_offset) const {
    if (t.events.empty()) {
      t.base_ns = base_time_ns;
      return;
    }
    int64_t earliest = t.events.front().start_ns;
    for (const Event& e : t.events) earliest = std::min(earliest, e.start_ns);
    if (__builtin_add_overflow(base_time_ns, earliest, &t.base_ns))
      fail(base_time_offset, "baseTimeNanoseconds plus the earliest ts overflows 64 bits");
    for (Event& e : t.events) e.start_ns -= earliest;
  }

 private:
  const PaddedBuffer* buf_;
  const std::string& source_;
  const ReadOptions& opts_;
  const bool pieces_ = false;
  Trace trace_;
  std::unordered_map<std::string, int64_t> named_ids_;
  std::vector<NamedId> named_;
  int64_t events_offset_ = -1;  // where the (first) traceEvents array starts
  int64_t base_time_ns_ = 0, base_time_offset_ = -1;
};

// ---- big inputs: the traceEvents array in pieces, on two threads ---------------------------
// Kineto (and torch.profiler, which writes through it) puts each event on lines of its own:
//   "traceEvents": [\n  {\n    "ph": "X", ...\n  },\n  {\n ...
// A "}," right before a newline is outside any string (a JSON string cannot hold a raw
// newline), so a cut there, where the next thing is "{", falls between two values -- of the
// traceEvents array if it is at the array's own depth. Each piece between two cuts is read as
// the JSON array "[" piece "]" (a thread each for the two halves), and the rest -- all before
// the array, its last piece, all after it -- as one document with the usual reader. A cut at
// another depth leaves brackets unbalanced in the pieces on both sides of it: that, or any
// other problem, gives up on the pieces and the whole input is read again the usual way, which
// says what is wrong and where. When every piece reads, the input is exactly the pieces joined
// by commas, so it holds the same events in the same order. The gain: the parser's index of a
// piece fits in the cache and is reused, and two cores share the work (docs/performance.md).
// Where the "[" of the traceEvents array is, or npos.
size_t events_array_open(std::string_view all) {
  size_t open = all.find("\"traceEvents\"");
  if (open == std::string_view::npos) return std::string_view::npos;
  open = skip_json_space(all, open + 13);
  if (open >= all.size() || all[open] != ':') return std::string_view::npos;
  open = skip_json_space(all, open + 1);
  if (open >= all.size() || all[open] != '[') return std::string_view::npos;
  return open;
}

// Where the "," of each cut is: a "}," before a newline with "{" next, one per `piece` bytes.
std::vector<size_t> find_cuts(std::string_view all, size_t open, size_t piece) {
  std::vector<size_t> cuts;
  for (size_t at = open + piece; at < all.size();) {
    const size_t c = all.find("},\n", at);
    if (c == std::string_view::npos) break;
    const size_t next = skip_json_space(all, c + 2);
    if (next < all.size() && all[next] == '{') {
      cuts.push_back(c + 1);
      at = c + 1 + piece;
    } else {
      at = c + 3;
    }
  }
  return cuts;
}

// Reads pieces [first, last) into `p` (piece k ends at cut k); false when one does not read.
bool read_pieces(Parser& p, std::string_view all, size_t open, const std::vector<size_t>& cuts, size_t first,
                 size_t last) {
  try {
    od::parser parser;
    PaddedBuffer scratch;
    for (size_t k = first; k < last; ++k) {
      const size_t begin = k == 0 ? open + 1 : cuts[k - 1] + 1;
      const std::string_view text = all.substr(begin, cuts[k] - begin);
      scratch.resize(text.size() + 2);
      scratch.bytes[0] = '[';
      std::memcpy(scratch.bytes.data() + 1, text.data(), text.size());
      scratch.bytes[text.size() + 1] = ']';
      std::memset(scratch.bytes.data() + scratch.len, 0, simdjson::SIMDJSON_PADDING);
      p.read_piece(scratch, parser);
    }
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// The three parts' events joined in order into one trace (the last part's), pid/tid names
// numbered in the order they come, as the usual reader numbers them; nullopt when too many.
std::optional<Trace> join_parts(Parser& first, Parser& second, Parser& last, const ReadOptions& opts) {
  Parser* parts[] = {&first, &second, &last};
  size_t total = 0;
  for (Parser* p : parts) total += p->trace().events.size();
  if (total > static_cast<size_t>(opts.max_events)) return std::nullopt;
  std::vector<Event> events = std::move(first.trace().events);
  events.reserve(total);
  std::unordered_map<std::string, int64_t> named_ids;
  for (Parser* p : parts) {
    for (const auto& id : p->named()) {
      auto [it, fresh] = named_ids.try_emplace(id.name, 0);
      if (fresh) it->second = named_id(named_ids.size());
      if (id.event < 0 || !id.assign) continue;
      Event& e = p == &first ? events[static_cast<size_t>(id.event)]
                             : p->trace().events[static_cast<size_t>(id.event)];
      (id.tid ? e.tid : e.pid) = it->second;
    }
    if (p != &first) {
      std::move(p->trace().events.begin(), p->trace().events.end(), std::back_inserter(events));
    }
  }
  Trace t = std::move(last.trace());
  t.events = std::move(events);
  try {
    last.normalize(t);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return t;
}

std::optional<Trace> parse_in_pieces(const PaddedBuffer& buf, const std::string& source,
                                     const ReadOptions& opts) {
  const size_t piece = opts.piece_bytes > 0 ? static_cast<size_t>(opts.piece_bytes) : 0;
  if (piece == 0 || buf.len < 4 * piece) return std::nullopt;
  const std::string_view all(buf.data(), buf.len);
  const size_t open = events_array_open(all);
  if (open == std::string_view::npos) return std::nullopt;
  const std::vector<size_t> cuts = find_cuts(all, open, piece);
  if (cuts.size() < 2) return std::nullopt;
  const size_t n = cuts.size(), half = n / 2;
  // The rest: everything up to and including "[", then from the last cut's "," on.
  PaddedBuffer rest;
  const size_t tail = cuts.back() + 1;
  rest.resize(open + 1 + (all.size() - tail));
  std::memcpy(rest.bytes.data(), all.data(), open + 1);
  std::memcpy(rest.bytes.data() + open + 1, all.data() + tail, all.size() - tail);

  Parser first(buf, source, opts, true), second(buf, source, opts, true), last(rest, source, opts, true);
  first.reserve_events(buf.len);  // the events end up in its vector
  second.reserve_events(cuts[n - 1] - cuts[half - 1]);
  bool second_ok = false;
  std::thread helper;
  try {
    helper = std::thread([&] { second_ok = read_pieces(second, all, open, cuts, half, n); });
  } catch (const std::system_error&) {
    return std::nullopt;  // no thread to be had: the usual way
  }
  bool ok = read_pieces(first, all, open, cuts, 0, half);
  try {
    od::parser parser;
    if (ok) last.read_document(parser, all.size() - tail);
    ok = ok && last.events_offset() == static_cast<int64_t>(open);
  } catch (const std::exception&) {
    ok = false;
  }
  helper.join();
  if (!ok || !second_ok) return std::nullopt;
  return join_parts(first, second, last, opts);
}

Trace parse_buffer(const PaddedBuffer& buf, const std::string& source, const ReadOptions& opts) {
  if (static_cast<int64_t>(buf.len) > opts.max_bytes)
    throw TraceError(source, -1,
                     "JSON is " + human_bytes(static_cast<int64_t>(buf.len)) + ", over the limit of " +
                         human_bytes(opts.max_bytes) + " (ReadOptions::max_bytes)");
  if (auto t = parse_in_pieces(buf, source, opts)) return std::move(*t);
  return Parser(buf, source, opts).run();
}

// ---- gzip --------------------------------------------------------------------------------

bool is_gzip(const PaddedBuffer& b) {
  return b.len >= 2 && static_cast<unsigned char>(b.data()[0]) == 0x1f &&
         static_cast<unsigned char>(b.data()[1]) == 0x8b;
}

// Inflates every gzip member in `in` (tools that append to .gz files produce several).
// Stops at max_bytes of output: a tiny file that inflates to terabytes is refused early.
PaddedBuffer gunzip(const PaddedBuffer& in, const std::string& source, int64_t max_bytes) {
  // The gzip trailer stores the size mod 2^32: a good first guess for the output buffer.
  size_t guess = in.len * 4;
  if (in.len >= 18) {
    uint32_t isize = 0;
    for (int i = 3; i >= 0; --i)
      isize = (isize << 8) | static_cast<unsigned char>(in.data()[in.len - 4 + static_cast<size_t>(i)]);
    // Deflate cannot beat ~1032:1, so a larger claim is a lie; don't allocate for it.
    if (isize > in.len) guess = std::min<size_t>(isize, in.len * 1032);
  }
  const auto limit = static_cast<size_t>(std::max<int64_t>(max_bytes, 0));
  PaddedBuffer out;
  out.resize(std::min(std::max<size_t>(guess, 4096), limit + 1));

  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) throw TraceError(source, -1, "zlib init failed");
  struct Guard {
    z_stream* z;
    ~Guard() { inflateEnd(z); }
  } guard{&zs};
  size_t in_pos = 0, out_pos = 0;
  auto corrupt = [&](const std::string& why) {
    return TraceError(source, static_cast<int64_t>(out_pos),
                      "gzip data is corrupt at compressed byte " + std::to_string(in_pos) + " (" + why +
                          "); the JSON stops here");
  };
  for (;;) {
    if (out_pos == out.len) {
      if (out_pos > limit)
        throw TraceError(source, -1,
                         "decompressed JSON is over the limit of " + human_bytes(max_bytes) +
                             " (ReadOptions::max_bytes; a gzip bomb?)");
      out.resize(std::min(out.len * 2, limit + 1));
    }
    const size_t in_chunk = std::min<size_t>(in.len - in_pos, UINT32_MAX);
    const size_t out_chunk = std::min<size_t>(out.len - out_pos, UINT32_MAX);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + in_pos));
    zs.avail_in = static_cast<uInt>(in_chunk);
    zs.next_out = reinterpret_cast<Bytef*>(out.bytes.data() + out_pos);
    zs.avail_out = static_cast<uInt>(out_chunk);
    const int rc = inflate(&zs, Z_NO_FLUSH);
    in_pos += in_chunk - zs.avail_in;
    out_pos += out_chunk - zs.avail_out;
    if (out_pos > limit)
      throw TraceError(source, -1,
                       "decompressed JSON is over the limit of " + human_bytes(max_bytes) +
                           " (ReadOptions::max_bytes; a gzip bomb?)");
    if (rc == Z_STREAM_END) {
      if (in_pos == in.len) break;
      if (in.len - in_pos >= 2 && static_cast<unsigned char>(in.data()[in_pos]) == 0x1f &&
          static_cast<unsigned char>(in.data()[in_pos + 1]) == 0x8b) {
        inflateReset(&zs);  // another member follows
        continue;
      }
      throw corrupt("unexpected bytes after the gzip stream");
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR && in_pos == in.len) throw corrupt("the file ends inside the gzip stream");
    if (rc == Z_BUF_ERROR) continue;  // output full: grow and go on
    throw corrupt(zs.msg ? zs.msg : "zlib error " + std::to_string(rc));
  }
  out.len = out_pos;
  out.bytes.resize(out_pos + simdjson::SIMDJSON_PADDING);
  std::fill(out.bytes.begin() + static_cast<std::ptrdiff_t>(out_pos), out.bytes.end(), '\0');
  return out;
}

}  // namespace

Trace parse_trace(std::string_view json, const std::string& source, const ReadOptions& opts) {
  if (static_cast<int64_t>(json.size()) > opts.max_bytes)
    throw TraceError(source, -1,
                     "input is " + human_bytes(static_cast<int64_t>(json.size())) + ", over the limit of " +
                         human_bytes(opts.max_bytes) + " (ReadOptions::max_bytes)");
  PaddedBuffer buf;
  buf.resize(json.size());
  if (!json.empty()) std::memcpy(buf.bytes.data(), json.data(), json.size());
  if (is_gzip(buf)) return parse_buffer(gunzip(buf, source, opts.max_bytes), source, opts);
  return parse_buffer(buf, source, opts);
}

Trace read_trace(const std::filesystem::path& path, const ReadOptions& opts) {
  const std::string source = path.string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw TraceError(source, -1, ec ? "cannot open: " + ec.message() : "not a regular file");
  const auto size = static_cast<int64_t>(std::filesystem::file_size(path, ec));
  if (ec) throw TraceError(source, -1, "cannot read size: " + ec.message());
  if (size > opts.max_bytes)
    throw TraceError(source, -1,
                     "file is " + human_bytes(size) + ", over the limit of " + human_bytes(opts.max_bytes) +
                         " (ReadOptions::max_bytes)");
  PaddedBuffer buf;
  // Mapped where the system allows it; read into a buffer otherwise. A file truncated by
  // another process while it is mapped would fault (SIGBUS): traces are read once written.
  if (buf.mapped.map(path, static_cast<size_t>(size))) {
    buf.len = static_cast<size_t>(size);
  } else {
    buf.resize(static_cast<size_t>(size));
    std::ifstream in(path, std::ios::binary);
    if (!in || !in.read(buf.bytes.data(), size)) throw TraceError(source, -1, "cannot read the file");
  }
  if (is_gzip(buf)) return parse_buffer(gunzip(buf, source, opts.max_bytes), source, opts);
  return parse_buffer(buf, source, opts);
}

Trace read_trace_with_events(const std::filesystem::path& path, const ReadOptions& opts) {
  Trace t = read_trace(path, opts);
  if (t.events.empty())
    throw TraceError(path.string(), -1,
                     "no events: the trace's traceEvents holds no duration or instant event (did the "
                     "profiler record a step? with a schedule, run enough steps for a cycle)");
  return t;
}

}  // namespace wb
