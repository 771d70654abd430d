// The SVG element builder (see svg.hpp for the output rules).
#include "workbook/svg.hpp"

#include <charconv>
#include <cmath>
#include <ostream>

namespace wb::svg {

std::string num(double v, int decimals) {
  if (!std::isfinite(v)) v = 0;
  const double scale = std::pow(10.0, decimals);
  v = std::round(v * scale) / scale;
  if (v == 0) v = 0;  // folds -0 into 0
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  std::string s(buf, r.ptr);
  // "12.0" -> "12": shorter files, same picture.
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

char32_t next_code_point(std::string_view s, size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  int len = b0 < 0x80 ? 1 : (b0 >> 5) == 0x6 ? 2 : (b0 >> 4) == 0xE ? 3 : (b0 >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || i + len > s.size()) {
    ++i;
    return 0xFFFD;
  }
  char32_t cp = len == 1 ? b0 : b0 & (0x7F >> len);
  for (int k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b >> 6) != 0x2) {
      ++i;
      return 0xFFFD;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  static constexpr char32_t kMinForLen[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinForLen[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++i;
    return 0xFFFD;
  }
  i += len;
  return cp;
}

namespace {

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

void append_escaped(std::string& out, std::string_view s, bool attribute) {
  for (size_t i = 0; i < s.size();) {
    const char32_t cp = next_code_point(s, i);
    switch (cp) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\t': out += attribute ? "&#9;" : "\t"; break;
      case '\n': out += attribute ? "&#10;" : "\n"; break;
      case '\r': out += attribute ? "&#13;" : "\r"; break;
      default:
        const bool bad = cp < 0x20 || cp == 0xFFFE || cp == 0xFFFF;
        append_utf8(out, bad ? 0xFFFD : cp);
    }
  }
}

}  // namespace

std::string escape_text(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  append_escaped(out, s, false);
  return out;
}

std::string escape_attribute(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  append_escaped(out, s, true);
  return out;
}

Element& Element::attr(std::string_view name, std::string_view value) & {
  for (auto& [n, v] : attrs_)
    if (n == name) {
      v = std::string(value);
      return *this;
    }
  attrs_.emplace_back(std::string(name), std::string(value));
  return *this;
}

Element& Element::text(std::string_view s) & {
  text_ = std::string(s);
  has_text_ = true;
  return *this;
}

Element& Element::add(Element child) & {
  children_.push_back(std::move(child));
  return *this;
}

Element& Element::add_children_of(Element other) & {
  if (children_.empty()) {
    children_ = std::move(other.children_);
  } else {
    for (auto& c : other.children_) children_.push_back(std::move(c));
  }
  return *this;
}

void Element::append_to(std::string& out) const {
  const bool fragment = tag_.empty();
  if (!fragment) {
    out += '<';
    out += tag_;
    for (const auto& [n, v] : attrs_) {
      out += ' ';
      out += n;
      out += "=\"";
      append_escaped(out, v, true);
      out += '"';
    }
    if (empty()) {
      out += "/>";
      return;
    }
    out += '>';
  }
  append_escaped(out, text_, false);
  if (multiline_ && !fragment) out += '\n';
  for (const auto& c : children_) {
    c.append_to(out);
    if (multiline_) out += '\n';
  }
  if (!fragment) {
    out += "</";
    out += tag_;
    out += '>';
  }
}

std::string Element::str() const {
  std::string out;
  append_to(out);
  return out;
}

void Element::write(std::ostream& os) const {
  const std::string s = str();
  os.write(s.data(), static_cast<std::streamsize>(s.size()));
}

}  // namespace wb::svg
