// A minimal MessagePack reader for the AMDGPU metadata note (NT_AMDGPU_METADATA): maps, arrays,
// strings, integers, booleans, nil and floats into a small tree. Only what the note contains.
#ifndef ZYFA_AMDGPU_EMU_MSGPACK_READER_HPP
#define ZYFA_AMDGPU_EMU_MSGPACK_READER_HPP

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace zyfa {
namespace emu {

struct MsgpackValue {
    enum class Type { Nil, Bool, Int, Float, String, Array, Map } type = Type::Nil;
    int64_t integer = 0;
    double real = 0.0;
    std::string string;
    std::vector<MsgpackValue> array;
    std::vector<std::pair<MsgpackValue, MsgpackValue>> map;
    // Map lookup by string key; nullptr when absent or not a map.
    const MsgpackValue* get(const std::string& key) const;
};

// Throws EmuError on malformed input.
MsgpackValue parse_msgpack(const uint8_t* data, size_t size);

}  // namespace emu
}  // namespace zyfa

#endif
