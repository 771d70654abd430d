// Small helpers the two halves of the figures library share (not installed).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "workbook/figures.hpp"
#include "workbook/fs_util.hpp"

namespace wb::figures::detail {

inline std::string slurp(const std::filesystem::path& p) {
  try {
    return read_file(p);
  } catch (const std::runtime_error&) {
    throw FigureError("cannot read " + p.string());
  }
}

inline std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t b = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      out.emplace_back(s.substr(b, i - b));
      b = i + 1;
    }
  return out;
}

inline std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string_view::npos ? std::string() : std::string(s.substr(b, e - b + 1));
}

inline bool starts_with(std::string_view s, std::string_view pre) { return s.substr(0, pre.size()) == pre; }
inline bool ends_with(std::string_view s, std::string_view suf) {
  return s.size() >= suf.size() && s.substr(s.size() - suf.size()) == suf;
}

// Where a reference's file lives: expected_output/<platform>/..., docs/... or a second
// recording's lessons and tables, tests/data/reruns/<platform>/...
inline std::filesystem::path source_path(const std::filesystem::path& root, const std::string& file) {
  if (file.find("..") != std::string::npos) throw FigureError("'..' in a source path: " + file);
  if (starts_with(file, "docs/") || starts_with(file, "tests/data/reruns/")) return root / file;
  return root / "expected_output" / file;
}

// ---- numbers as printed ----------------------------------------------------------------

inline int decimals(const std::string& num) {
  auto dot = num.find('.');
  return dot == std::string::npos ? 0 : static_cast<int>(num.size() - dot - 1);
}

inline double to_double(std::string num) {
  num.erase(std::remove(num.begin(), num.end(), ','), num.end());
  return std::stod(num);
}

inline std::string format_like(double v, const std::string& like) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals(like), v);
  std::string s = buf;
  if (like.find(',') == std::string::npos) return s;
  std::string sign = s[0] == '-' ? "-" : "";
  if (!sign.empty()) s.erase(0, 1);
  auto dot = s.find('.');
  std::string ip = s.substr(0, dot), fp = dot == std::string::npos ? "" : s.substr(dot);
  std::string grouped;
  for (size_t i = 0; i < ip.size(); ++i) {
    if (i > 0 && (ip.size() - i) % 3 == 0) grouped += ',';
    grouped += ip[i];
  }
  return sign + grouped + fp;
}

inline bool agrees(const std::string& printed, double value) {
  double tol = 0.5 * std::pow(10.0, -decimals(printed)) * (1 + 1e-9) + 1e-12;
  return std::fabs(to_double(printed) - value) <= tol;
}

// A quoted file's lines, verbatim but for carriage returns and trailing blank lines.
inline std::vector<std::string> file_lines(const std::string& text) {
  std::vector<std::string> v = split(text, '\n');
  for (auto& l : v)
    if (ends_with(l, "\r")) l.pop_back();
  while (!v.empty() && trim(v.back()).empty()) v.pop_back();
  return v;
}

// Numbers that must be backed: a number (or a range/list of them) followed by a unit.
inline const std::regex& figure_re() {
  static const std::regex re(
      R"((^|[^\w.#/-])((\d[\d,]*(?:\.\d+)?)(?:\s?(?:–|-|/|to|vs|→)\s?~?\d[\d,]*(?:\.\d+)?)*)\s?(ns|µs|us|ms|s|TFLOP/s|GFLOP/s|TB/s|GB/s|MB/s|KB|MB|GB|KiB|MiB|B|%|x|×)(?![A-Za-z0-9]))");
  return re;
}

}  // namespace wb::figures::detail
