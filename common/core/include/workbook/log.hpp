// Logging facade. Implemented with spdlog in a torch-free file, because LibTorch ships its own
// fmt headers that clash with the system fmt spdlog is built on. Torch-side code logs through here.
#pragma once
#include <string_view>

namespace wb::log {
enum class Level { debug, info, warn, error, off };
void set_level(Level level);
void debug(std::string_view msg);
void info(std::string_view msg);
void warn(std::string_view msg);
void error(std::string_view msg);
// A one-line progress note for long steps ("compiling AOTI package ... 12 s").
void progress(std::string_view msg);
}  // namespace wb::log
