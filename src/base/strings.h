#pragma once
// Small string helpers with no dependencies. Pure; thread-safe.

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

}  // namespace gpufleet::strings
