// Library information behind zyfa_version, zyfa_version_string, zyfa_build_info and
// zyfa_status_string. Every string is static: callers never free it.
#pragma once

#include <cstdint>

#include "zyfa.h"

namespace zyfa {

uint32_t version_number() noexcept;
const char* version_string() noexcept;
const char* build_info() noexcept;
const char* status_string(zyfa_status status) noexcept;

}  // namespace zyfa
