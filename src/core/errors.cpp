// The thread-local message behind zyfa_last_error_message. A fixed buffer, so that storing a
// message can never throw or allocate (the C layer calls this from its catch blocks).
#include "errors.hpp"

#include <cstring>

namespace zyfa {
namespace {

constexpr size_t kMessageCapacity = 1024;  // longer messages are truncated
thread_local char t_last_error[kMessageCapacity] = "";

}  // namespace

void set_last_error(const char* message) noexcept {
    if (message == nullptr) message = "";
    size_t length = std::strlen(message);
    if (length >= kMessageCapacity) length = kMessageCapacity - 1;
    std::memcpy(t_last_error, message, length);
    t_last_error[length] = '\0';
}

const char* last_error() noexcept { return t_last_error; }

}  // namespace zyfa
