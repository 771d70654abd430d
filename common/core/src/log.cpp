#include "workbook/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace wb::log {
namespace {
spdlog::logger& logger() {
  // stderr, so a chapter's stdout stays the lesson (table, report) and can be diffed.
  static auto lg = [] {
    auto l = spdlog::stderr_color_mt("workbook");
    l->set_pattern("%^[%l]%$ %v");
    return l;
  }();
  return *lg;
}
}  // namespace

void set_level(Level level) {
  switch (level) {
    case Level::debug: logger().set_level(spdlog::level::debug); break;
    case Level::info: logger().set_level(spdlog::level::info); break;
    case Level::warn: logger().set_level(spdlog::level::warn); break;
    case Level::error: logger().set_level(spdlog::level::err); break;
    case Level::off: logger().set_level(spdlog::level::off); break;
  }
}
void debug(std::string_view m) { logger().debug("{}", m); }
void info(std::string_view m) { logger().info("{}", m); }
void warn(std::string_view m) { logger().warn("{}", m); }
void error(std::string_view m) { logger().error("{}", m); }
void progress(std::string_view m) {
  logger().info("{}", m);
  logger().flush();
}
}  // namespace wb::log
