// Reading a caller's growable struct (first field uint32_t struct_size). An older caller passes a
// smaller struct: the fields beyond its struct_size take their defaults. A newer caller passes a
// larger one: accepted when the bytes this library does not know are all zero (the new fields are
// at their defaults), NOT_SUPPORTED otherwise. Nothing beyond struct_size is ever read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "errors.hpp"

namespace zyfa {

// No real struct comes near this; a larger value is almost surely an uninitialised struct_size,
// and scanning its "tail" would read far past the caller's object.
constexpr uint32_t kMaxPlausibleStructSize = 4096;

// Checks the struct_size of *user (named `name` in messages) and returns how many of its bytes
// may be copied into a struct of known_size bytes. min_size covers the fields every caller has,
// the last of which is last_required_field (named in the message).
inline size_t checked_struct_size(const void* user, size_t known_size, size_t min_size, const char* name,
                                  const char* last_required_field) {
    uint32_t struct_size = 0;
    std::memcpy(&struct_size, user, sizeof(struct_size));
    if (struct_size < min_size) {
        throw_invalid(std::string(name) + ".struct_size = " + std::to_string(struct_size) +
                      " is too small: at least " + std::to_string(min_size) + " bytes (through " +
                      last_required_field + ") are required; fill the struct with its *_init function");
    }
    if (struct_size > kMaxPlausibleStructSize) {
        throw_invalid(std::string(name) + ".struct_size = " + std::to_string(struct_size) +
                      " is implausibly large (uninitialised struct?); fill the struct with its *_init function");
    }
    if (struct_size > known_size) {
        const unsigned char* bytes = static_cast<const unsigned char*>(user);
        for (size_t i = known_size; i < struct_size; ++i) {
            if (bytes[i] != 0) {
                throw_not_supported(std::string(name) + ".struct_size = " + std::to_string(struct_size) +
                                    ": byte " + std::to_string(i) + " lies beyond the " +
                                    std::to_string(known_size) +
                                    " bytes this library knows and is not zero (a field of a newer zyfa is set)");
            }
        }
        return known_size;
    }
    return struct_size;
}

// Whether a field at `offset` of `field_size` bytes lies wholly within the caller's struct_size.
inline bool field_within(size_t struct_size, size_t offset, size_t field_size) {
    return offset + field_size <= struct_size;
}

}  // namespace zyfa
