// A gzip file's text, for the tests that read the committed *.json.gz fixtures (tables, traces).
// The test links ZLIB::ZLIB.
#pragma once

#include <zlib.h>

#include <catch2/catch_test_macros.hpp>

#include <filesystem>
#include <string>

inline std::string gunzip_file(const std::filesystem::path& p) {
  gzFile gz = gzopen(p.c_str(), "rb");
  REQUIRE(gz != nullptr);
  std::string out;
  char buf[1 << 16];
  for (int n; (n = gzread(gz, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  gzclose(gz);
  return out;
}
