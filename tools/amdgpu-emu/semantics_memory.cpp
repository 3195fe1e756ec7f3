// Vector memory: global loads/stores (device memory is host memory, bounds-checked against the
// registered ranges) and LDS (DS) reads, writes, atomics and ds_bpermute.
#include <algorithm>
#include <cstring>

#include "semantics.hpp"

namespace zyfa {
namespace emu {

namespace {

template <class F>
void each_lane(Wave& w, F f) {
    for (int lane = 0; lane < kLanes; ++lane) {
        if (w.lane_active(lane)) f(lane);
    }
}

// global_* vaddr, saddr|off, offset:N: 64-bit VGPR address, or SGPR base + 32-bit VGPR offset.
uint64_t global_address(R& r, const Wave& w, const Instruction& in, int vaddr_index, int lane) {
    const Operand& saddr = in.ops.at(vaddr_index + (in.num_dst == 0 ? 2 : 1));
    if (saddr.kind == OperandKind::Off) return r.read64(w, in.ops[vaddr_index], lane) + uint64_t(in.offset);
    return r.read_scalar64(w, saddr) + r.read32(w, in.ops[vaddr_index], lane) + uint64_t(in.offset);
}

// The BYTES (1, 2, 4, 8, 12, 16) a load read, into the destination VGPRs (ops[0]) of lane l;
// sub-dword kinds: 0 zero-extend, 1 sign-extend, 2 d16 low half (keeps the high half), 3 d16
// high half (keeps the low half).
template <int BYTES, int KIND>
void write_loaded(R& r, Wave& w, const Instruction& in, int l, const uint8_t* data) {
    if (BYTES >= 4) {
        for (int k = 0; k < BYTES / 4; ++k) std::memcpy(&r.reg(w, in.ops[0], k, l), data + 4 * k, 4);
        return;
    }
    uint32_t v = BYTES == 1 ? data[0] : uint32_t(data[0] | data[1] << 8);
    uint32_t& d = r.reg(w, in.ops[0], 0, l);
    if (KIND == 1) v = BYTES == 1 ? uint32_t(int32_t(int8_t(v))) : uint32_t(int32_t(int16_t(v)));
    if (KIND == 2) v = (d & 0xffff0000u) | (v & 0xffff);
    if (KIND == 3) v = (d & 0x0000ffffu) | (v << 16);
    d = v;
}

// The data VGPRs (ops[1]) of lane l that a store writes, whole dwords; KIND 1: the high 16 bits
// of the data (d16_hi).
template <int BYTES, int KIND>
void read_store_data(R& r, Wave& w, const Instruction& in, int l, uint8_t* data) {
    for (int k = 0; k < (BYTES + 3) / 4; ++k) {
        uint32_t v = r.reg_value(w, in.ops[1], k, l);
        if (KIND == 1) v >>= 16;
        std::memcpy(data + 4 * k, &v, 4);
    }
}

template <int BYTES, int KIND>
void global_load(R& r, Wave& w, const Instruction& in) {
    each_lane(w, [&](int l) {
        uint8_t data[16] = {};
        r.global_read(w, in, global_address(r, w, in, 1, l), data, BYTES);
        write_loaded<BYTES, KIND>(r, w, in, l, data);
    });
}

template <int BYTES, int KIND>
void global_store(R& r, Wave& w, const Instruction& in) {
    each_lane(w, [&](int l) {
        uint8_t data[16];
        read_store_data<BYTES, KIND>(r, w, in, l, data);
        r.global_write(w, in, global_address(r, w, in, 0, l), data, BYTES);
    });
}

uint64_t ds_address(R& r, const Wave& w, const Instruction& in, int index, int lane, int64_t offset) {
    return uint64_t(r.read32(w, in.ops[index], lane)) + uint64_t(offset);
}

template <int BYTES, int KIND>
void ds_read(R& r, Wave& w, const Instruction& in) {
    each_lane(w, [&](int l) {
        uint8_t data[16] = {};
        r.lds_read(w, in, ds_address(r, w, in, 1, l, in.offset), data, BYTES);
        write_loaded<BYTES, KIND>(r, w, in, l, data);
    });
}

template <int BYTES, int KIND>
void ds_write(R& r, Wave& w, const Instruction& in) {
    each_lane(w, [&](int l) {
        uint8_t data[16];
        read_store_data<BYTES, KIND>(r, w, in, l, data);
        r.lds_write(w, in, ds_address(r, w, in, 0, l, in.offset), data, BYTES);
    });
}

// ds_read2 / ds_write2: two elements at offset0 and offset1 (in element units; st64: x64).
template <int BYTES, int STRIDE>
void ds_read2(R& r, Wave& w, const Instruction& in) {
    each_lane(w, [&](int l) {
        // Both elements are read before the destination is written: the address VGPR may be
        // part of the destination (clang emits ds_read2_b64 v[20:23], v20).
        uint8_t data[2][8];
        for (int e = 0; e < 2; ++e) {
            const int64_t off = (e == 0 ? in.offset0 : in.offset1) * BYTES * STRIDE;
            r.lds_read(w, in, ds_address(r, w, in, 1, l, off), data[e], BYTES);
        }
        for (int e = 0; e < 2; ++e) {
            for (int k = 0; k < BYTES / 4; ++k) std::memcpy(&r.reg(w, in.ops[0], e * (BYTES / 4) + k, l), data[e] + 4 * k, 4);
        }
    });
}
template <int BYTES, int STRIDE>
void ds_write2(R& r, Wave& w, const Instruction& in) {
    each_lane(w, [&](int l) {
        for (int e = 0; e < 2; ++e) {
            uint8_t data[8];
            for (int k = 0; k < BYTES / 4; ++k) {
                const uint32_t v = r.reg_value(w, in.ops[1 + e], k, l);
                std::memcpy(data + 4 * k, &v, 4);
            }
            const int64_t off = (e == 0 ? in.offset0 : in.offset1) * BYTES * STRIDE;
            r.lds_write(w, in, ds_address(r, w, in, 0, l, off), data, BYTES);
        }
    });
}

// LDS atomics without return: ds_OP vaddr, vdata.
template <class F>
void ds_atomic(R& r, Wave& w, const Instruction& in, F f) {
    each_lane(w, [&](int l) {
        const uint64_t address = ds_address(r, w, in, 0, l, in.offset);
        uint32_t old;
        std::memcpy(&old, r.lds_peek(w, in, address, 4), 4);
        const uint32_t value = f(old, r.read32(w, in.ops[1], l));
        r.lds_write(w, in, address, &value, 4, true);
    });
}

}  // namespace

void register_memory(Registry& reg) {
    const Unit M = Unit::Vmem;
    reg.add("global_load_ubyte", global_load<1, 0>, M, 1);
    reg.add("global_load_sbyte", global_load<1, 1>, M, 1);
    reg.add("global_load_ushort", global_load<2, 0>, M, 1);
    reg.add("global_load_sshort", global_load<2, 1>, M, 1);
    reg.add("global_load_short_d16", global_load<2, 2>, M, 1, true);
    reg.add("global_load_short_d16_hi", global_load<2, 3>, M, 1, true);
    reg.add("global_load_dword", global_load<4, 0>, M, 1);
    reg.add("global_load_dwordx2", global_load<8, 0>, M, 1);
    reg.add("global_load_dwordx3", global_load<12, 0>, M, 1);
    reg.add("global_load_dwordx4", global_load<16, 0>, M, 1);
    reg.add("global_store_byte", global_store<1, 0>, M, 0);
    reg.add("global_store_byte_d16_hi", global_store<1, 1>, M, 0);
    reg.add("global_store_short", global_store<2, 0>, M, 0);
    reg.add("global_store_short_d16_hi", global_store<2, 1>, M, 0);
    reg.add("global_store_dword", global_store<4, 0>, M, 0);
    reg.add("global_store_dwordx2", global_store<8, 0>, M, 0);
    reg.add("global_store_dwordx3", global_store<12, 0>, M, 0);
    reg.add("global_store_dwordx4", global_store<16, 0>, M, 0);

    const Unit D = Unit::Ds;
    reg.add("ds_read_u8", ds_read<1, 0>, D, 1);
    reg.add("ds_read_i8", ds_read<1, 1>, D, 1);
    reg.add("ds_read_u16", ds_read<2, 0>, D, 1);
    reg.add("ds_read_i16", ds_read<2, 1>, D, 1);
    reg.add("ds_read_u16_d16", ds_read<2, 2>, D, 1, true);
    reg.add("ds_read_u16_d16_hi", ds_read<2, 3>, D, 1, true);
    reg.add("ds_read_b32", ds_read<4, 0>, D, 1);
    reg.add("ds_read_b64", ds_read<8, 0>, D, 1);
    reg.add("ds_read_b96", ds_read<12, 0>, D, 1);
    reg.add("ds_read_b128", ds_read<16, 0>, D, 1);
    reg.add("ds_read2_b32", ds_read2<4, 1>, D, 1);
    reg.add("ds_read2_b64", ds_read2<8, 1>, D, 1);
    reg.add("ds_read2st64_b32", ds_read2<4, 64>, D, 1);
    reg.add("ds_read2st64_b64", ds_read2<8, 64>, D, 1);
    reg.add("ds_write_b8", ds_write<1, 0>, D, 0);
    reg.add("ds_write_b8_d16_hi", ds_write<1, 1>, D, 0);
    reg.add("ds_write_b16", ds_write<2, 0>, D, 0);
    reg.add("ds_write_b16_d16_hi", ds_write<2, 1>, D, 0);
    reg.add("ds_write_b32", ds_write<4, 0>, D, 0);
    reg.add("ds_write_b64", ds_write<8, 0>, D, 0);
    reg.add("ds_write_b96", ds_write<12, 0>, D, 0);
    reg.add("ds_write_b128", ds_write<16, 0>, D, 0);
    reg.add("ds_write2_b32", ds_write2<4, 1>, D, 0);
    reg.add("ds_write2_b64", ds_write2<8, 1>, D, 0);
    reg.add("ds_write2st64_b32", ds_write2<4, 64>, D, 0);
    reg.add("ds_write2st64_b64", ds_write2<8, 64>, D, 0);
    reg.add("ds_min_i32", [](R& r, Wave& w, const Instruction& in) {
        ds_atomic(r, w, in, [](uint32_t a, uint32_t b) { return int32_t(a) < int32_t(b) ? a : b; }); }, D, 0);
    reg.add("ds_max_i32", [](R& r, Wave& w, const Instruction& in) {
        ds_atomic(r, w, in, [](uint32_t a, uint32_t b) { return int32_t(a) > int32_t(b) ? a : b; }); }, D, 0);
    reg.add("ds_min_u32", [](R& r, Wave& w, const Instruction& in) {
        ds_atomic(r, w, in, [](uint32_t a, uint32_t b) { return std::min(a, b); }); }, D, 0);
    reg.add("ds_max_u32", [](R& r, Wave& w, const Instruction& in) {
        ds_atomic(r, w, in, [](uint32_t a, uint32_t b) { return std::max(a, b); }); }, D, 0);
    reg.add("ds_add_u32", [](R& r, Wave& w, const Instruction& in) {
        ds_atomic(r, w, in, [](uint32_t a, uint32_t b) { return a + b; }); }, D, 0);
    // ds_bpermute_b32 vdst, vaddr, vdata: lane l reads vdata of lane (vaddr + offset) / 4 % 64; an
    // inactive source lane gives 0.
    reg.add("ds_bpermute_b32", [](R& r, Wave& w, const Instruction& in) {
        uint32_t result[kLanes];
        for (int l = 0; l < kLanes; ++l) {
            if (!w.lane_active(l)) continue;
            const int source = int(((r.read32(w, in.ops[1], l) + uint32_t(in.offset)) >> 2) & 63);
            result[l] = w.lane_active(source) ? r.read32(w, in.ops[2], source) : 0u;
        }
        for (int l = 0; l < kLanes; ++l) {
            if (w.lane_active(l)) r.reg(w, in.ops[0], 0, l) = result[l];
        }
    }, D, 1);
}

}  // namespace emu
}  // namespace zyfa
