// Parsing a program's flags the same way in every chapter, tool and example: --help prints the
// flags and exits 0; a bad flag prints one line that names the program and how to get help, and
// exits 2, before any work is done.
#pragma once

#include <CLI/CLI.hpp>

#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>
#include <string>

namespace wb {

// A whole number in [lo, hi], for an integer flag: "--row-limit: 'abc' is not a whole number
// (-1 .. 1073741824)" rather than CLI11's "Value abc not in range". `what` says what the number
// counts, for the message ("rows to print").
inline CLI::Validator whole_number(long long lo, long long hi, const std::string& what) {
  return CLI::Validator(
      [lo, hi, what](std::string& in) -> std::string {
        long long v = 0;
        size_t used = 0;
        try {
          v = std::stoll(in, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (in.empty() || used != in.size())
          return "'" + in + "' is not a whole number (" + what + ": " + std::to_string(lo) + " .. " +
                 std::to_string(hi) + ")";
        if (v < lo || v > hi)
          return std::to_string(v) + " is out of range (" + what + ": " + std::to_string(lo) + " .. " +
                 std::to_string(hi) + ")";
        return {};
      },
      "INT in [" + std::to_string(lo) + " - " + std::to_string(hi) + "]");
}

// nullopt: the flags parsed, go on. A value: return it from main(). `validate` runs after the
// parse for checks that span flags; it reports a bad value by throwing CLI::ValidationError.
inline std::optional<int> parse_flags(CLI::App& app, int argc, char** argv,
                                      const std::function<void()>& validate = {}) {
  try {
    app.parse(argc, argv);
    if (validate) validate();
  } catch (const CLI::Success& e) {  // --help, --help-all
    return app.exit(e);
  } catch (const CLI::Error& e) {
    std::string name = app.get_name();
    if (name.empty() && argc > 0) name = std::filesystem::path(argv[0]).filename().string();
    std::cerr << name << ": " << e.what() << "\nRun '" << name << " --help' for the flags.\n";
    return 2;
  }
  return std::nullopt;
}

}  // namespace wb
