#include "log.hpp"

#include <cstdlib>
#include <cstring>

namespace zyfa {

bool log_info() noexcept {
    static const bool enabled = [] {
        const char* level = std::getenv("ZYFA_LOG");
        return level != nullptr && std::strcmp(level, "info") == 0;
    }();
    return enabled;
}

}  // namespace zyfa
