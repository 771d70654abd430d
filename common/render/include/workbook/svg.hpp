// A small SVG (XML) element builder: a tag, attributes in the order they were set, text content
// and child elements, written out as one string. Everything the timeline draws goes through it,
// so escaping happens in one place and no caller concatenates tags.
//
//   svg::Element g("g");
//   g.attr("class", "ev");
//   g.add(svg::Element("title").text("aten::mm <bf16>"));
//   g.add(svg::Element("rect").attr("x", 12.25).attr("width", 3));
//   g.str()  ->  <g class="ev"><title>aten::mm &lt;bf16&gt;</title><rect x="12.3" width="3"/></g>
//
// Output rules (the bytes are part of the contract: same calls, same bytes):
//   * attributes in the order of their first attr() call; setting one again replaces its value
//     in place;
//   * text and attribute values are escaped (escape_text / escape_attribute); tag and attribute
//     names are written as given (they come from code, not from traces);
//   * no text and no children: a self-closing tag (<rect .../>); text(""), even empty, writes
//     a start and an end tag;
//   * children are written one after another with no whitespace, unless multiline() is set:
//     then a newline follows the start tag and every child (<g ...>\n<a/>\n<b/>\n</g>);
//   * Element::fragment() has no tag: only its text and children are written (a way to keep
//     several elements on one line of a multiline parent, or to collect elements for later).
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace wb::svg {

// Fixed-point, locale-free (to_chars), never "-0"; trailing zeros dropped ("12.0" -> "12").
std::string num(double v, int decimals = 1);

// Decodes one UTF-8 code point at s[i] and advances i past it; on bad input (a stray or
// truncated sequence, an overlong form, a surrogate) returns U+FFFD and advances one byte.
char32_t next_code_point(std::string_view s, size_t& i);

// Text content: escapes the five XML specials (& < > " ', kernel names are full of them) and
// replaces what XML 1.0 cannot hold (control characters other than tab/newline/CR, U+FFFE,
// U+FFFF, broken UTF-8) with U+FFFD.
std::string escape_text(std::string_view s);
// An attribute value: as escape_text, and tab, newline and CR become &#9; &#10; &#13; (a
// parser would otherwise normalise them to spaces).
std::string escape_attribute(std::string_view s);

class Element {
 public:
  explicit Element(std::string tag) : tag_(std::move(tag)) {}
  static Element fragment() { return Element(std::string()); }

  // Attributes. A double is written with num(v, 1); an integer in full.
  Element& attr(std::string_view name, std::string_view value) &;
  Element& attr(std::string_view name, double value) & { return attr(name, std::string_view(num(value))); }
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Element& attr(std::string_view name, T value) & {
    return attr(name, std::string_view(std::to_string(value)));
  }
  // The text content (replaces earlier text); written escaped, before any children.
  Element& text(std::string_view s) &;
  // Appends a child; returns this element (for chaining).
  Element& add(Element child) &;
  // Appends the children of `other` (not `other` itself): joins a fragment built elsewhere.
  Element& add_children_of(Element other) &;
  // One child per line (see the rules above).
  Element& multiline(bool on = true) & {
    multiline_ = on;
    return *this;
  }

  // The same on a temporary: svg::Element("rect").attr("x", 1).attr("y", 2) stays an rvalue.
  template <class V>
  Element&& attr(std::string_view name, V&& value) && {
    return std::move(attr(name, std::forward<V>(value)));
  }
  Element&& text(std::string_view s) && { return std::move(text(s)); }
  Element&& add(Element child) && { return std::move(add(std::move(child))); }
  Element&& add_children_of(Element other) && { return std::move(add_children_of(std::move(other))); }
  Element&& multiline(bool on = true) && { return std::move(multiline(on)); }

  const std::string& tag() const { return tag_; }
  const std::vector<std::pair<std::string, std::string>>& attrs() const { return attrs_; }
  const std::vector<Element>& children() const { return children_; }
  bool empty() const { return children_.empty() && !has_text_; }

  // The element and everything under it.
  std::string str() const;
  void write(std::ostream& os) const;
  void append_to(std::string& out) const;  // str(), appended to `out`

 private:
  std::string tag_;
  std::vector<std::pair<std::string, std::string>> attrs_;  // values unescaped
  std::string text_;                                        // unescaped
  bool has_text_ = false;
  bool multiline_ = false;
  std::vector<Element> children_;
};

}  // namespace wb::svg
