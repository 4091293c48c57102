#pragma once
// Expected failures are values: Result<T> holds either a T or an Error.
// Error kinds are a closed set; each maps to one exit code in app/.
#include <string>
#include <utility>
#include <variant>

namespace td {

enum class ErrorKind {
    Usage,        // bad command line
    Config,       // bad manifest / data / lock file (user input)
    Io,           // a file could not be read or written
    Environment,  // a needed part is missing (engine, GPU, tool)
    Timeout,      // something ran past its limit
    CheckFailed,  // a check ran and failed (render --check found stale files)
};

struct Error {
    ErrorKind kind;
    std::string message;
};

template <typename T>
class [[nodiscard]] Result {
  public:
    Result(T value) : m_v(std::move(value)) {}
    Result(Error error) : m_v(std::move(error)) {}

    bool ok() const { return std::holds_alternative<T>(m_v); }
    explicit operator bool() const { return ok(); }
    T& value() & { return std::get<T>(m_v); }
    const T& value() const& { return std::get<T>(m_v); }
    T&& value() && { return std::get<T>(std::move(m_v)); }
    const Error& error() const { return std::get<Error>(m_v); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

  private:
    std::variant<T, Error> m_v;
};

struct Unit {};
using Status = Result<Unit>;
inline Status ok_status() { return Unit{}; }

}  // namespace td
