// scripts/setup.sh: the plan (which packages, from where) for a system's os-release file, on the
// supported systems (Debian 12, Ubuntu 24.04) and two others (Ubuntu 22.04, an unknown one);
// an unsupported system stops before installing anything; an importable torch of another
// version than scripts/torch_version.txt is not used. Nothing is installed: apt-get, sudo, pip
// and python3 are stand-ins on PATH that write down every call.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "process.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::ContainsSubstring;

namespace {

const fs::path kRoot = WORKBOOK_ROOT;
const fs::path kScript = kRoot / "scripts" / "setup.sh";
const fs::path kOsRelease = kRoot / "tests" / "data" / "os-release";

// The plan's key=value lines.
std::map<std::string, std::string> plan_of(const std::string& file) {
  const proc::Exit e = proc::run("/bin/bash", {kScript.string(), "--plan", (kOsRelease / file).string()});
  INFO(e.out << e.err);
  REQUIRE(e.code == 0);
  std::map<std::string, std::string> plan;
  std::istringstream in(e.out);
  for (std::string line; std::getline(in, line);) {
    const size_t eq = line.find('=');
    if (eq != std::string::npos) plan[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return plan;
}

// A folder of stand-ins for the tools that install: each writes its name and arguments into
// `calls` and fails. python3 answers as an importable torch `version` would.
fs::path stand_ins(const std::string& tag, const std::string& version) {
  const fs::path d = proc::scratch("setup_" + tag);
  const std::string log = (d / "calls").string();
  for (const char* tool : {"apt-get", "apt", "sudo", "pip", "pip3", "dpkg", "tee"}) {
    std::ofstream(d / tool) << "#!/bin/sh\necho \"" << tool << " $*\" >>'" << log << "'\nexit 1\n";
    fs::permissions(d / tool, fs::perms::owner_all, fs::perm_options::add);
  }
  std::ofstream(d / "python3") << "#!/bin/sh\necho \"python3 $*\" >>'" << log << "'\n"
                               << "case \"$*\" in\n"
                               << "  *__version__*) printf '" << version << "' ;;\n"
                               << "  *cmake_prefix_path*) printf '/nowhere/torch/share/cmake' ;;\n"
                               << "  *) exit 1 ;;\n"
                               << "esac\n";
  fs::permissions(d / "python3", fs::perms::owner_all, fs::perm_options::add);
  return d;
}

// setup.sh with the stand-ins first on PATH, `os_release` as the system, an empty cache.
proc::Exit run_setup(const fs::path& tools, const std::string& os_release) {
  return proc::run("/usr/bin/env",
                   {"PATH=" + tools.string() + ":/usr/bin:/bin",
                    "WORKBOOK_OS_RELEASE=" + (kOsRelease / os_release).string(),
                    "XDG_CACHE_HOME=" + (tools / "cache").string(), "HOME=" + tools.string(),
                    "Torch_DIR=", "CMAKE_PREFIX_PATH=", "TORCH_VERSION=", "/bin/bash", kScript.string()});
}

std::string calls_of(const fs::path& tools) { return proc::slurp(tools / "calls"); }

}  // namespace

TEST_CASE("setup plan: Debian 12 and Ubuntu 24.04 are supported, Catch2 v3 from where it is",
          "[tools][cpu]") {
  const auto debian = plan_of("debian-12");
  CHECK(debian.at("system") == "Debian GNU/Linux 12 (bookworm)");
  CHECK(debian.at("supported") == "yes");
  CHECK(debian.at("catch2") == "bookworm-backports");  // bookworm itself has Catch2 v2
  CHECK_THAT(debian.at("add_source"), ContainsSubstring("bookworm-backports main"));
  const auto noble = plan_of("ubuntu-24.04");
  CHECK(noble.at("system") == "Ubuntu 24.04.3 LTS");
  CHECK(noble.at("supported") == "yes");
  CHECK(noble.at("catch2") == "distribution");  // noble ships Catch2 3.4: no backports
  CHECK(noble.at("add_source").empty());
  for (const auto* plan : {&debian, &noble}) {
    for (const char* p : {"libspdlog-dev", "nlohmann-json3-dev", "libcli11-dev", "libsimdjson-dev",
                          "ninja-build", "cmake", "clang-format-14", "cmark-gfm", "python3-venv"})
      CHECK_THAT(plan->at("packages"), ContainsSubstring(p));
    CHECK(plan->at("by_hand").empty());
  }
}

TEST_CASE("setup plan: Ubuntu 22.04 and an unknown system are not supported, the packages named",
          "[tools][cpu]") {
  for (const char* file : {"ubuntu-22.04", "unknown"}) {
    INFO(file);
    const auto plan = plan_of(file);
    CHECK(plan.at("supported") == "no");
    CHECK(plan.at("packages").empty());  // nothing to ask apt for
    CHECK(plan.at("catch2") == "by hand");
    CHECK_THAT(plan.at("by_hand"), ContainsSubstring("Catch2 v3"));
    CHECK_THAT(plan.at("by_hand"), ContainsSubstring("spdlog"));
  }
  CHECK(plan_of("ubuntu-22.04").at("system") == "Ubuntu 22.04.5 LTS");
  CHECK(plan_of("unknown").at("system") == "Some Other Linux 7");
  // A file that is not there is said, not a plan.
  const proc::Exit missing = proc::run("/bin/bash", {kScript.string(), "--plan", "/nonexistent/os-release"});
  CHECK(missing.code == 2);
  CHECK_THAT(missing.out, ContainsSubstring("cannot read /nonexistent/os-release"));
}

TEST_CASE("setup on an unsupported system names the packages and stops before installing anything",
          "[tools][cpu]") {
  for (const char* file : {"ubuntu-22.04", "unknown"}) {
    INFO(file);
    const fs::path tools =
        stand_ins(std::string("other_") + (file[0] == 'u' && file[1] == 'b' ? "jammy" : "x"), "2.11.0");
    const proc::Exit e = run_setup(tools, file);
    INFO(e.out << e.err);
    CHECK(e.code == 1);
    CHECK_THAT(e.err, ContainsSubstring("is not a supported system (Debian 12 and Ubuntu 24.04 are)"));
    CHECK_THAT(e.err, ContainsSubstring("Catch2 v3"));
    CHECK_THAT(e.err, ContainsSubstring("Nothing was installed"));
    CHECK(calls_of(tools).empty());  // no apt, no sudo, no pip, not even python3
  }
}

TEST_CASE("setup uses an importable torch only at the supported version", "[tools][cpu]") {
  std::string version;
  std::ifstream(kRoot / "scripts" / "torch_version.txt") >> version;
  REQUIRE(!version.empty());
  // The supported version (a CUDA build's local suffix aside): used, nothing installed.
  const fs::path same = stand_ins("torch_same", version + "+cu130");
  const proc::Exit ok = run_setup(same, "debian-12");
  INFO(ok.out << ok.err);
  if (ok.err.find("packages all present") == std::string::npos)
    SKIP("this machine lacks some of the workbook's packages: setup would install them");
  CHECK(ok.code == 0);
  CHECK_THAT(ok.out, ContainsSubstring("/nowhere/torch/share/cmake"));
  CHECK_THAT(ok.err, ContainsSubstring("importable torch " + version + "+cu130"));
  // Another version: said, and the venv is made instead (here python3 -m venv fails: stopped).
  const fs::path other = stand_ins("torch_other", "2.9.1+cu128");
  const proc::Exit no = run_setup(other, "debian-12");
  INFO(no.out << no.err);
  CHECK(no.code == 1);
  CHECK_THAT(no.err, ContainsSubstring("the importable torch is 2.9.1+cu128, not " + version));
  CHECK_THAT(no.err, ContainsSubstring("python3 -m venv failed"));
  CHECK_THAT(no.out, !ContainsSubstring("/nowhere"));
  CHECK_THAT(calls_of(other), !ContainsSubstring("pip"));
}
