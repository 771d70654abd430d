// The names of an enum's values, listed once in the order of the values (0, 1, 2, ...), and
// the two lookups every such list needs:
//
//   constexpr wb::EnumNames<DiffKind, DiffKind::Removed> kNames{"same", "changed", "added", "removed"};
//   kNames.name(DiffKind::Added)  // "added"
//   kNames.value("added")         // std::optional<DiffKind>
//
// `Last` is the enum's last value: a list with a name too few or too many does not compile.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace wb {

template <class E, E Last>
class EnumNames {
 public:
  static constexpr size_t kCount = static_cast<size_t>(Last) + 1;

  template <class... S>
  constexpr EnumNames(S... names) : names_{std::string_view(names)...} {  // NOLINT: a list, not a conversion
    static_assert(sizeof...(S) == kCount, "EnumNames: one name for each value of the enum");
  }

  constexpr std::string_view name(E value) const {
    const auto i = static_cast<size_t>(value);
    return i < kCount ? names_[i] : std::string_view("?");
  }

  constexpr std::optional<E> value(std::string_view name) const {
    for (size_t i = 0; i < kCount; ++i)
      if (names_[i] == name) return static_cast<E>(i);
    return std::nullopt;
  }

 private:
  std::string_view names_[kCount];
};

}  // namespace wb
