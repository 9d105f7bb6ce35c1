#pragma once
// JSON text for every machine-readable output: nlohmann-json's dump refuses (throws
// type_error.316 for) strings that are not UTF-8, and names come from files a user or an
// attacker wrote (hwloc XML, NCCL files, nvidia-smi output, specs). Dump writes such bytes as
// "\xNN" text instead, so an output never fails and never carries invalid UTF-8. Pure;
// thread-safe.

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "base/strings.h"

namespace gpufleet {

namespace json_detail {

template <typename Json>
Json Sanitized(const Json& j) {
  if (j.is_string()) return strings::ValidUtf8(j.template get_ref<const std::string&>());
  if (j.is_array()) {
    Json out = Json::array();
    for (const auto& v : j) out.push_back(Sanitized(v));
    return out;
  }
  if (j.is_object()) {
    Json out = Json::object();
    for (auto it = j.begin(); it != j.end(); ++it) {
      out[strings::ValidUtf8(it.key())] = Sanitized(it.value());
    }
    return out;
  }
  return j;
}

template <typename Json>
bool AllUtf8(const Json& j) {
  if (j.is_string()) return strings::IsValidUtf8(j.template get_ref<const std::string&>());
  if (j.is_array()) {
    for (const auto& v : j) {
      if (!AllUtf8(v)) return false;
    }
  }
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!strings::IsValidUtf8(it.key()) || !AllUtf8(it.value())) return false;
    }
  }
  return true;
}

}  // namespace json_detail

// `j` as text with `indent` spaces (-1: one line) and a final newline when indented; bytes that
// are not UTF-8 in any string or key become "\xNN".
template <typename Json>
std::string DumpJson(const Json& j, int indent = 2) {
  std::string text =
      json_detail::AllUtf8(j) ? j.dump(indent) : json_detail::Sanitized(j).dump(indent);
  if (indent >= 0) text += "\n";
  return text;
}

}  // namespace gpufleet
