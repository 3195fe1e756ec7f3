// Choosing and creating the backend behind zyfa_context_create.
#pragma once

#include <memory>

#include "backend.hpp"
#include "zyfa.h"

namespace zyfa {

// Reads the caller's options (NULL = defaults; a smaller struct_size leaves the later fields at
// their defaults) and creates the requested backend. With AUTO, the first of HIP, CUDA, CPU that
// is compiled in and finds a device. Throws Error: INVALID_ARGUMENT for bad options,
// NOT_SUPPORTED for a backend not compiled in, or what the backend's creation threw.
std::unique_ptr<Backend> create_backend(const zyfa_context_options* options);

// The backends compiled into this build, in AUTO order, lower case: "cpu", "hip, cpu".
const char* compiled_backend_names() noexcept;

}  // namespace zyfa
