#pragma once
// Small string helpers with no dependencies. Pure; thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpufleet::strings {

std::string_view Trim(std::string_view s);
std::string ToLower(std::string_view s);
std::vector<std::string> Split(std::string_view s, char sep);
// Levenshtein distance, for "did you mean" hints.
size_t EditDistance(std::string_view a, std::string_view b);
// The candidate closest to `word` within a small distance, or "" if none is close.
std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates);
// Lower-case with every non-alphanumeric character removed: "A100-SXM4 80GB" -> "a100sxm480gb".
std::string Canonical(std::string_view s);
// `s` as a whole integer in `base` (no sign, no spaces, nothing after), or nullopt when it is
// not one or does not fit: std::stol would throw on both, out of a parser's reach.
std::optional<int64_t> ParseInteger(std::string_view s, int base = 10);
// True when `s` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool IsValidUtf8(std::string_view s);
// `s` with every byte that is not part of well-formed UTF-8 written as the four characters
// "\xNN", so names read from hostile files can be printed and put in JSON. `s` itself when valid.
std::string ValidUtf8(std::string_view s);

}  // namespace gpufleet::strings
