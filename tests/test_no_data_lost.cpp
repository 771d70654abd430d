// No data lost: a run's outputs are complete or absent, never torn, and never mixed with
// another run's.
//   * two runs on the same --out: the second stops at startup (exit 2, "another run is
//     writing to DIR"), before it profiles anything; the first finishes untouched;
//   * a run stopped by Ctrl-C (SIGINT) or SIGTERM while it profiles leaves the previous run's
//     files byte-identical and no temp file behind (exit 130 / 143);
//   * the building blocks: write_file_atomic and DirLock (which nests within one process and
//     excludes other processes).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <sys/stat.h>
#include <csignal>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "process.hpp"
#include "workbook/fs_util.hpp"
#include "workbook/trace_reader.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::ContainsSubstring;

namespace {

const char* kChapter = "01_cold_64";

// Every file in `dir`, name -> bytes (hidden ones too: a temp file left behind shows here).
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) files[e.path().filename().string()] = proc::slurp(e.path());
  return files;
}

// Temp files a writer uses before renaming into place: ".NAME.XXXXXX" (write_file_atomic),
// "NAME.partial-PID" (the trace). `.lock` is the folder's lock file and stays on purpose.
std::string temp_files(const fs::path& dir) {
  std::string found;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if ((n[0] == '.' && n != ".lock") || n.find(".partial-") != std::string::npos) found += n + " ";
  }
  return found;
}

// True once process `pid` holds the flock on DIR/.lock (from /proc/locks: no need to take the
// lock ourselves, which could make the run we watch fail).
bool holds_lock(pid_t pid, const fs::path& dir) {
  struct stat st {};
  if (::stat((dir / ".lock").c_str(), &st) != 0) return false;
  std::ifstream locks("/proc/locks");
  for (std::string line; std::getline(locks, line);) {
    std::istringstream in(line);
    std::string id, type, mode, rw, who, where;
    in >> id >> type;
    if (type == "->") in >> type;  // a waiter: "N: -> FLOCK ..."
    in >> mode >> rw >> who >> where;
    if (type != "FLOCK" || who != std::to_string(pid)) continue;
    const auto colon = where.rfind(':');
    if (colon != std::string::npos && where.substr(colon + 1) == std::to_string(st.st_ino)) return true;
  }
  return false;
}

// Waits until the child holds the lock on `dir` (it is past startup and about to work).
bool wait_for_lock(const proc::Child& c, const fs::path& dir, double timeout_s = 120) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    if (holds_lock(c.pid(), dir)) return true;
    if (!c.running()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// The outputs a run writes that are present in `dir`, in a fixed order.
std::string outputs_in(const fs::path& dir) {
  std::string found;
  for (const char* f : {"trace.json", "table.txt", "lessons.txt", "lessons.json", "timeline.svg"})
    if (fs::exists(dir / f)) found += std::string(f) + " ";
  return found;
}

std::vector<std::string> chapter_args(const fs::path& out, const std::string& schedule) {
  return {"--device", "cpu", "--quiet", "--schedule", schedule, "--out", out.string()};
}

}  // namespace

TEST_CASE("a second run on the same --out stops at startup; the first is untouched",
          "[core][no_data_lost][cpu]") {
  if (!fs::exists(proc::bin(kChapter))) SKIP(kChapter << " not built");
  const fs::path dir = proc::scratch("lost_concurrent"), out = dir / "out";
  // Run A: a wait phase far longer than this test (steps run, nothing is recorded yet).
  proc::Child a(proc::bin(kChapter), chapter_args(out, "1000000,0,1"));
  REQUIRE(wait_for_lock(a, out));

  // Run B on the same folder while A works: it must give up at once, having written nothing.
  const proc::Exit b = proc::run(proc::bin(kChapter), chapter_args(out, "0,0,1"), 120);
  INFO("B stderr: " << b.err);
  CHECK(b.code == 2);
  CHECK_THAT(b.err, ContainsSubstring("another run is writing to " + out.string()));
  CHECK(outputs_in(out) == "");
  CHECK(a.running());  // A carries on

  // Stop A; the lock goes with it, and the next run writes a complete set.
  a.signal(SIGINT);
  const proc::Exit ra = a.wait(120);
  INFO("A stderr: " << ra.err);
  CHECK(ra.code == 130);
  const proc::Exit c = proc::run(proc::bin(kChapter), chapter_args(out, "0,0,1"), 120);
  INFO("C stderr: " << c.err);
  REQUIRE(c.code == 0);
  const wb::Trace t = wb::read_trace(out / "trace.json");
  CHECK(std::count_if(t.events.begin(), t.events.end(),
                      [](const wb::Event& e) { return e.name == "ProfilerStep#0"; }) == 1);
  CHECK(outputs_in(out) == "trace.json table.txt lessons.txt lessons.json timeline.svg ");
  CHECK(temp_files(out) == "");
  fs::remove_all(dir);
}

TEST_CASE("a run stopped by a signal while profiling leaves the previous outputs intact",
          "[core][no_data_lost][cpu]") {
  if (!fs::exists(proc::bin(kChapter))) SKIP(kChapter << " not built");
  struct Case {
    const char* what;
    std::string schedule;  // long enough that the signal lands mid-profile
    int sig, code;
  };
  for (const Case& c : {Case{"SIGINT, recording", "0,0,200000", SIGINT, 130},
                        Case{"SIGINT, waiting", "1000000,0,1", SIGINT, 130},
                        Case{"SIGTERM, recording", "0,0,200000", SIGTERM, 143}}) {
    DYNAMIC_SECTION(c.what) {
      const fs::path dir = proc::scratch("lost_signal"), out = dir / "out";
      REQUIRE(proc::run(proc::bin(kChapter), chapter_args(out, "0,0,1")).code == 0);
      const auto before = snapshot(out);
      REQUIRE(before.count("trace.json"));
      REQUIRE(before.count("lessons.json"));

      proc::Child run(proc::bin(kChapter), chapter_args(out, c.schedule));
      REQUIRE(wait_for_lock(run, out));
      std::this_thread::sleep_for(std::chrono::milliseconds(500));  // into the steps
      REQUIRE(run.running());
      run.signal(c.sig);
      const proc::Exit r = run.wait(120);
      INFO("stderr: " << r.err);
      CHECK(r.code == c.code);
      CHECK_THAT(r.err, ContainsSubstring("nothing was written"));

      const auto after = snapshot(out);
      CHECK(temp_files(out) == "");
      CHECK(after.size() == before.size());
      for (const auto& [name, bytes] : before) {
        INFO(name);
        CHECK(after.count(name) == 1);
        CHECK((after.count(name) && after.at(name) == bytes));  // byte-identical
      }
      fs::remove_all(dir);
    }
  }
}

TEST_CASE("the snapshot check notices a changed or extra file", "[core][no_data_lost][cpu]") {
  const fs::path dir = proc::scratch("lost_wrong");
  wb::write_file_atomic(dir / "a.txt", "one");
  const auto before = snapshot(dir);
  wb::write_file_atomic(dir / "a.txt", "two");
  CHECK(snapshot(dir) != before);
  std::ofstream(dir / ".a.txt.Ab12Cd") << "half";
  CHECK(temp_files(dir) == ".a.txt.Ab12Cd ");
  fs::remove_all(dir);
}

TEST_CASE("write_file_atomic replaces a file whole and leaves no temp file", "[core][no_data_lost][cpu]") {
  const fs::path dir = proc::scratch("lost_atomic");
  wb::write_file_atomic(dir / "t.txt", "old");
  wb::write_file_atomic(dir / "t.txt", std::string(1 << 20, 'x'));
  CHECK(fs::file_size(dir / "t.txt") == (1u << 20));
  CHECK(temp_files(dir) == "");
  // A write that cannot happen throws and leaves the old file as it was.
  wb::write_file_atomic(dir / "keep.txt", "keep");
  CHECK_THROWS(wb::write_file_atomic(dir / "no_such_dir" / "keep.txt", "new"));
  CHECK(proc::slurp(dir / "keep.txt") == "keep");
  fs::remove_all(dir);
}

TEST_CASE("DirLock nests within a process and excludes other processes", "[core][no_data_lost][cpu]") {
  // The other process is util-linux flock(1) on the same lock file: a fresh program, as a
  // second chapter run would be (a fork()ed child would share our lock, as flock intends).
  const fs::path flock_bin = "/usr/bin/flock";
  if (!fs::exists(flock_bin)) SKIP("no /usr/bin/flock (util-linux)");
  const fs::path dir = proc::scratch("lost_lock");
  auto other_process_gets_it = [&] {
    const proc::Exit r =
        proc::run(flock_bin, {"--nonblock", "--conflict-exit-code", "7", (dir / ".lock").string(), "true"});
    REQUIRE((r.code == 0 || r.code == 7));
    return r.code == 0;
  };
  {
    wb::DirLock outer(dir);
    { wb::DirLock inner(dir); }  // the harness holds --out; report() locks it again
    wb::DirLock inner_again(dir);
    CHECK_FALSE(other_process_gets_it());
  }
  CHECK(other_process_gets_it());  // released with the outermost lock
  fs::remove_all(dir);
}
