#pragma once
// Result<T> and Status: expected failures as values (STYLE.md §4). A small
// [[nodiscard]] type with std::expected's API, so the move to C++23 is
// mechanical. Not thread-safe to mutate; safe to read from many threads.

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace gpufleet {

// Error codes in the leveldb style. Each maps to one process exit code in cli/.
enum class ErrorCode {
  kInvalidArgument,   // the user's input is wrong: spec, flag, value (exit 2)
  kNotFound,          // a file or catalog entry does not exist (exit 2)
  kUnavailable,       // the environment lacks something: tool, device (exit 3)
  kDeadlineExceeded,  // an operation ran out of time (exit 3)
  kInternal,          // could not evaluate for another reason (exit 3)
};

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
};

inline Error InvalidArgument(std::string message) {
  return {ErrorCode::kInvalidArgument, std::move(message)};
}
inline Error NotFound(std::string message) { return {ErrorCode::kNotFound, std::move(message)}; }
inline Error Unavailable(std::string message) {
  return {ErrorCode::kUnavailable, std::move(message)};
}

// Result<T> holds a T or an Error. Access to the wrong alternative is a bug
// and aborts.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { return Get(); }
  const T& value() const& { return Get(); }
  T&& value() && { return std::move(Get()); }
  T& operator*() & { return Get(); }
  const T& operator*() const& { return Get(); }
  T* operator->() { return &Get(); }
  const T* operator->() const { return &Get(); }

  const Error& error() const {
    if (has_value()) Abort("error() on a value");
    return std::get<1>(v_);
  }

 private:
  [[noreturn]] static void Abort(const char* what) {
    std::fprintf(stderr, "gpufleet: Result misuse: %s\n", what);
    std::abort();
  }
  T& Get() {
    if (!has_value()) Abort(std::get<1>(v_).message.c_str());
    return std::get<0>(v_);
  }
  const T& Get() const {
    if (!has_value()) Abort(std::get<1>(v_).message.c_str());
    return std::get<0>(v_);
  }
  std::variant<T, Error> v_;
};

// Result<void>: success or an Error.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)) {}  // NOLINT(google-explicit-constructor)
  bool has_value() const { return !error_.has_value(); }
  explicit operator bool() const { return has_value(); }
  const Error& error() const {
    if (!error_) {
      std::fprintf(stderr, "gpufleet: Result misuse: error() on success\n");
      std::abort();
    }
    return *error_;
  }

 private:
  std::optional<Error> error_;
};

using Status = Result<void>;
inline Status OkStatus() { return {}; }

}  // namespace gpufleet

#define GPUFLEET_CONCAT_INNER(a, b) a##b
#define GPUFLEET_CONCAT(a, b) GPUFLEET_CONCAT_INNER(a, b)

// Returns the error of `expr` (a Result or Status) from the enclosing function.
#define GPUFLEET_RETURN_IF_ERROR(expr)                                  \
  do {                                                                  \
    auto gpufleet_status_ = (expr);                                     \
    if (!gpufleet_status_.has_value()) return gpufleet_status_.error(); \
  } while (0)

// `GPUFLEET_ASSIGN_OR_RETURN(auto x, F());` binds the value or returns the error.
#define GPUFLEET_ASSIGN_OR_RETURN(lhs, expr) \
  GPUFLEET_ASSIGN_OR_RETURN_IMPL(GPUFLEET_CONCAT(gpufleet_result_, __LINE__), lhs, expr)
#define GPUFLEET_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.has_value()) return tmp.error();            \
  lhs = std::move(tmp).value()

// Broken invariants (bugs, never input) abort with file:line.
#define GPUFLEET_CHECK(cond)                                                                 \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      std::fprintf(stderr, "%s:%d: GPUFLEET_CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                          \
    }                                                                                        \
  } while (0)
