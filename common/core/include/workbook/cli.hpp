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
