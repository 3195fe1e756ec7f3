// Errors inside the C++ core: thrown as zyfa::Error, turned into a status and a thread-local
// message by the C layer (src/api/c_api.cpp). Nothing in the core aborts on user input.
#pragma once

#include <stdexcept>
#include <string>

#include "zyfa.h"

namespace zyfa {

class Error : public std::runtime_error {
public:
    Error(zyfa_status status, const std::string& message) : std::runtime_error(message), status_(status) {}
    zyfa_status status() const noexcept { return status_; }

private:
    zyfa_status status_;
};

[[noreturn]] inline void throw_invalid(const std::string& message) {
    throw Error(ZYFA_ERROR_INVALID_ARGUMENT, message);
}
[[noreturn]] inline void throw_not_supported(const std::string& message) {
    throw Error(ZYFA_ERROR_NOT_SUPPORTED, message);
}

// The thread-local message behind zyfa_last_error_message.
void set_last_error(const char* message) noexcept;
const char* last_error() noexcept;

}  // namespace zyfa
