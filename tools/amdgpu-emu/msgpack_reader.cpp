#include "msgpack_reader.hpp"

#include <cstring>

#include "emu_error.hpp"

namespace zyfa {
namespace emu {

const MsgpackValue* MsgpackValue::get(const std::string& key) const {
    if (type != Type::Map) return nullptr;
    for (const auto& kv : map) {
        if (kv.first.type == Type::String && kv.first.string == key) return &kv.second;
    }
    return nullptr;
}

namespace {

class Reader {
public:
    Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

    MsgpackValue value(int depth = 0) {
        if (depth > 64) fail("nesting too deep");
        const uint8_t tag = byte();
        MsgpackValue v;
        if (tag <= 0x7f) return integer(tag);
        if (tag >= 0xe0) return integer(static_cast<int8_t>(tag));
        if ((tag & 0xf0) == 0x80) return map(tag & 0x0f, depth);
        if ((tag & 0xf0) == 0x90) return array(tag & 0x0f, depth);
        if ((tag & 0xe0) == 0xa0) return string(tag & 0x1f);
        switch (tag) {
            case 0xc0: return v;
            case 0xc2:
            case 0xc3:
                v.type = MsgpackValue::Type::Bool;
                v.integer = tag == 0xc3;
                return v;
            case 0xca: {
                const uint32_t bits = static_cast<uint32_t>(big(4));
                float f;
                std::memcpy(&f, &bits, 4);
                v.type = MsgpackValue::Type::Float;
                v.real = f;
                return v;
            }
            case 0xcb: {
                const uint64_t bits = big(8);
                double d;
                std::memcpy(&d, &bits, 8);
                v.type = MsgpackValue::Type::Float;
                v.real = d;
                return v;
            }
            case 0xcc: return integer(static_cast<int64_t>(big(1)));
            case 0xcd: return integer(static_cast<int64_t>(big(2)));
            case 0xce: return integer(static_cast<int64_t>(big(4)));
            case 0xcf: return integer(static_cast<int64_t>(big(8)));
            case 0xd0: return integer(static_cast<int8_t>(big(1)));
            case 0xd1: return integer(static_cast<int16_t>(big(2)));
            case 0xd2: return integer(static_cast<int32_t>(big(4)));
            case 0xd3: return integer(static_cast<int64_t>(big(8)));
            case 0xd9: return string(big(1));
            case 0xda: return string(big(2));
            case 0xdb: return string(big(4));
            case 0xc4: return string(big(1));  // bin: kept as bytes
            case 0xc5: return string(big(2));
            case 0xc6: return string(big(4));
            case 0xdc: return array(big(2), depth);
            case 0xdd: return array(big(4), depth);
            case 0xde: return map(big(2), depth);
            case 0xdf: return map(big(4), depth);
            default: fail("unsupported tag " + std::to_string(tag));
        }
        return v;
    }

private:
    [[noreturn]] void fail(const std::string& why) {
        throw EmuError("AMDGPU metadata (msgpack): " + why + " at byte " + std::to_string(pos_));
    }
    uint8_t byte() {
        if (pos_ >= size_) fail("truncated");
        return data_[pos_++];
    }
    uint64_t big(int n) {
        uint64_t r = 0;
        for (int i = 0; i < n; ++i) r = (r << 8) | byte();
        return r;
    }
    MsgpackValue integer(int64_t i) {
        MsgpackValue v;
        v.type = MsgpackValue::Type::Int;
        v.integer = i;
        return v;
    }
    MsgpackValue string(uint64_t n) {
        if (n > size_ - pos_) fail("string past the end");
        MsgpackValue v;
        v.type = MsgpackValue::Type::String;
        v.string.assign(reinterpret_cast<const char*>(data_ + pos_), n);
        pos_ += n;
        return v;
    }
    MsgpackValue array(uint64_t n, int depth) {
        if (n > size_ - pos_) fail("array longer than the input");
        MsgpackValue v;
        v.type = MsgpackValue::Type::Array;
        for (uint64_t i = 0; i < n; ++i) v.array.push_back(value(depth + 1));
        return v;
    }
    MsgpackValue map(uint64_t n, int depth) {
        if (n > size_ - pos_) fail("map longer than the input");
        MsgpackValue v;
        v.type = MsgpackValue::Type::Map;
        for (uint64_t i = 0; i < n; ++i) {
            MsgpackValue key = value(depth + 1);
            MsgpackValue val = value(depth + 1);
            v.map.emplace_back(std::move(key), std::move(val));
        }
        return v;
    }

    const uint8_t* data_;
    size_t size_;
    size_t pos_ = 0;
};

}  // namespace

MsgpackValue parse_msgpack(const uint8_t* data, size_t size) {
    Reader reader(data, size);
    return reader.value();
}

}  // namespace emu
}  // namespace zyfa
