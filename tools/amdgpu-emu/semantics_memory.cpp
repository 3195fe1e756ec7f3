// Vector memory: global loads/stores (device memory is host memory, bounds-checked against the
// registered ranges), MUBUF buffer loads/stores with the V# range check, direct-to-LDS loads
// (MUBUF ... lds, global_load_lds_*), and LDS (DS) reads, writes, atomics, ds_bpermute and the
// gfx950 transposing reads.
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

// ---------------------------------------------------------------- MUBUF

// A raw buffer resource (V#, four SGPRs; gfx9 layout): base [47:0] in dwords 0-1, stride in
// dword 1 [29:16], swizzle_enable dword 1 [31], num_records dword 2, data_format dword 3 [18:15],
// add_tid_enable dword 3 [23]. Only raw buffers (stride 0, no swizzle) are modelled.
struct BufferResource {
    uint64_t base;
    uint32_t num_records;
};

BufferResource buffer_resource(R& r, Wave& w, const Instruction& in, const Operand& rsrc) {
    if (rsrc.kind != OperandKind::Sgpr || rsrc.count != 4 || rsrc.index % 4 != 0) {
        r.fail(w, in, "the buffer resource must be four aligned SGPRs");
    }
    const uint32_t d0 = w.s[rsrc.index], d1 = w.s[rsrc.index + 1], d2 = w.s[rsrc.index + 2], d3 = w.s[rsrc.index + 3];
    if (d1 >> 31) r.fail(w, in, "swizzled buffers (V# swizzle_enable) are not modelled");
    if ((d1 >> 16) & 0x3fff) {
        r.fail(w, in, "buffers with a stride (V# stride != 0) are not modelled: gfx9's range check for them is unconfirmed here");
    }
    if ((d3 >> 23) & 1) r.fail(w, in, "V# add_tid_enable is not modelled");
    if (((d3 >> 15) & 0xf) == 0) {
        r.fail(w, in, "V# data_format 0 (invalid) is not modelled; raw dword buffers use 4 (32), dword 3 = 0x00020000");
    }
    return BufferResource{d0 | (uint64_t(d1 & 0xffff) << 32), d2};
}

// One lane's MUBUF access of BYTES bytes; `vaddr` is the index of the address operand (then srsrc,
// soffset). Range check of a raw buffer (stride 0), per dword for the dwordxN forms: a piece is in
// range when its byte offset (VGPR offset with offen + instruction offset) is below num_records;
// soffset is excluded (LLVM's AMDGPU documentation of the buffer intrinsics). gem5's gfx9 model
// includes soffset; where the two rules disagree the access is refused, and so is a piece that
// straddles num_records (both unconfirmed). Out of range: loads read 0, stores write nothing.
void buffer_access(R& r, Wave& w, const Instruction& in, int vaddr, int lane, uint8_t* data, uint32_t bytes,
                   bool store) {
    const BufferResource v = buffer_resource(r, w, in, in.ops.at(vaddr + 1));
    const Operand& address = in.ops[vaddr];
    uint64_t voffset = 0;
    if (in.offen) voffset = r.reg_value(w, address, in.idxen ? 1 : 0, lane);
    // With stride 0 an index (idxen) adds nothing to the address.
    const uint64_t soffset = r.read32(w, in.ops.at(vaddr + 2), lane);
    const uint64_t offset = voffset + uint64_t(in.offset);
    const uint32_t piece = bytes > 4 ? 4 : bytes;
    for (uint32_t at = 0; at < bytes; at += piece) {
        const uint64_t start = offset + at;
        const bool in_range = start < v.num_records;
        const bool in_range_with_soffset = start + soffset < v.num_records;
        if (in_range != in_range_with_soffset) {
            r.fail(w, in, "buffer range check depends on soffset (byte offset " + std::to_string(start) + ", soffset " +
                              std::to_string(soffset) + ", num_records " + std::to_string(v.num_records) +
                              "): whether soffset counts is unconfirmed, so this is not modelled");
        }
        if (in_range && start + piece > v.num_records) {
            r.fail(w, in, "buffer access straddles num_records (byte offset " + std::to_string(start) + ", " +
                              std::to_string(piece) + " bytes, num_records " + std::to_string(v.num_records) +
                              "): not modelled");
        }
        const uint64_t where = v.base + soffset + start;
        if (store) {
            if (in_range) r.global_write(w, in, where, data + at, piece);
        } else if (in_range) {
            r.global_read(w, in, where, data + at, piece);
        } else {
            std::memset(data + at, 0, piece);
        }
    }
}

// buffer_load_* vdata, vaddr|off, srsrc, soffset [offen] [idxen] [offset:N]
template <int BYTES, int KIND>
void buffer_load(R& r, Wave& w, const Instruction& in) {
    each_lane(w, [&](int l) {
        uint8_t data[16] = {};
        buffer_access(r, w, in, 1, l, data, BYTES, false);
        write_loaded<BYTES, KIND>(r, w, in, l, data);
    });
}

// buffer_store_* vdata, vaddr|off, srsrc, soffset ...
template <int BYTES>
void buffer_store(R& r, Wave& w, const Instruction& in) {
    each_lane(w, [&](int l) {
        uint8_t data[16];
        for (int k = 0; k < (BYTES + 3) / 4; ++k) {  // vdata is the first operand here
            const uint32_t v = r.reg_value(w, in.ops[0], k, l);
            std::memcpy(data + 4 * k, &v, 4);
        }
        buffer_access(r, w, in, 1, l, data, BYTES, true);
    });
}

// ---------------------------------------------------------------- direct-to-LDS loads
//
// The LDS destination is M0 + the instruction offset + lane * 4 (1/2/4-byte forms) or lane * 16
// (12/16-byte forms, gfx950), for each active lane. Sources: LLVM's AMDGPU DMA documentation
// (llvm.amdgcn.global.load.lds / raw.buffer.load.lds: "the offset is applied to both global and LDS
// address", "the LDS address is implicitly offset by 4 * lane_id bytes for sizes up to 4 bytes,
// and by 16 * lane_id bytes for larger sizes") and clang-22, which sets M0 to the wave-uniform LDS
// pointer itself. Assumed: all 32 bits of M0 count, and a sub-dword load writes only its bytes;
// an out-of-range buffer piece writes zeros (the data the load returns). The LDS write happens at
// issue for the race checker, tagged with the load's vmcnt operation: reading it before the
// s_waitcnt vmcnt that covers it (same wave) or after a barrier not preceded by that wait (other
// waves) is an error.
uint64_t lds_dma_address(const Wave& w, const Instruction& in, int lane, uint32_t bytes) {
    return uint64_t(w.m0) + uint64_t(in.offset) + uint64_t(lane) * (bytes <= 4 ? 4u : 16u);
}

void check_lds_dma_size(R& r, Wave& w, const Instruction& in, uint32_t bytes) {
    if (bytes > 4 && r.arch != Arch::Gfx950) r.fail(w, in, "12- and 16-byte direct-to-LDS loads exist on gfx950 only");
}

// buffer_load_* vaddr|off, srsrc, soffset [offen] ... lds
template <int BYTES>
void buffer_load_lds(R& r, Wave& w, const Instruction& in) {
    check_lds_dma_size(r, w, in, BYTES);
    each_lane(w, [&](int l) {
        uint8_t data[16] = {};
        buffer_access(r, w, in, 0, l, data, BYTES, false);
        r.lds_write(w, in, lds_dma_address(w, in, l, BYTES), data, BYTES, false, Counter::Vm);
    });
}

// global_load_lds_dword* vaddr, saddr|off [offset:N]
template <int BYTES>
void global_load_lds(R& r, Wave& w, const Instruction& in) {
    check_lds_dma_size(r, w, in, BYTES);
    each_lane(w, [&](int l) {
        const Operand& saddr = in.ops.at(1);
        const uint64_t address = saddr.kind == OperandKind::Off
                                     ? r.read64(w, in.ops[0], l) + uint64_t(in.offset)
                                     : r.read_scalar64(w, saddr) + r.read32(w, in.ops[0], l) + uint64_t(in.offset);
        uint8_t data[16] = {};
        r.global_read(w, in, address, data, BYTES);
        r.lds_write(w, in, lds_dma_address(w, in, l, BYTES), data, BYTES, false, Counter::Vm);
    });
}

// ---------------------------------------------------------------- transposing LDS reads (gfx950)
//
// ds_read_b64_tr_b16 / _b8 vdst[2], vaddr: each lane reads 8 bytes at its address; inside every
// group of 16 lanes the elements are then exchanged. Mapping, derived from Triton's
// chooseLLDsReadB64TrLayout (lib/Dialect/TritonGPU/IR/LinearLayoutConversions.cpp, triton-lang/
// triton): the load layout is the destination layout with its first log2(64/bits) register bases and
// its 4 lane bases rotated (lane bases first). Solving that rotation for lane t of a group and
// element e of its result:
//   b16 (4 elements per lane): result[t].e = loaded[4e + t/4].element(t % 4)
//   b8  (8 elements per lane): result[t].e = loaded[2e + t/8].element(t % 8)
// i.e. for b16 lane t addresses rows 4(t%4)..+3 of column t/4 of a 16x4 block and receives row t.
// Unconfirmed on hardware. Assumed requirements (refused otherwise): every lane of a 16-lane group
// active or none, and 8-byte aligned addresses.
template <int BITS>
void ds_read_tr(R& r, Wave& w, const Instruction& in) {
    if (r.arch != Arch::Gfx950) r.fail(w, in, in.base + " exists on gfx950 only");
    uint8_t loaded[kLanes][8] = {};
    for (int group = 0; group < 4; ++group) {
        const uint64_t mask = (w.exec >> (16 * group)) & 0xffff;
        if (mask != 0 && mask != 0xffff) {
            r.fail(w, in, in.base + " with a partly active 16-lane group is not modelled");
        }
    }
    each_lane(w, [&](int l) {
        const uint64_t address = ds_address(r, w, in, 1, l, in.offset);
        if (address % 8 != 0) r.fail(w, in, in.base + " at an address that is not 8-byte aligned is not modelled");
        r.lds_read(w, in, address, loaded[l], 8);
    });
    const int per_lane = 64 / BITS, bytes_per = BITS / 8;
    each_lane(w, [&](int l) {
        const int group = l & ~15, t = l & 15;
        uint8_t out[8];
        for (int e = 0; e < per_lane; ++e) {
            const int source = BITS == 16 ? 4 * e + t / 4 : 2 * e + t / 8;
            const int element = BITS == 16 ? t % 4 : t % 8;
            std::memcpy(out + e * bytes_per, loaded[group + source] + element * bytes_per, bytes_per);
        }
        std::memcpy(&r.reg(w, in.ops[0], 0, l), out, 4);
        std::memcpy(&r.reg(w, in.ops[0], 1, l), out + 4, 4);
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

    reg.add("buffer_load_ubyte", buffer_load<1, 0>, M, 1);
    reg.add("buffer_load_sbyte", buffer_load<1, 1>, M, 1);
    reg.add("buffer_load_ushort", buffer_load<2, 0>, M, 1);
    reg.add("buffer_load_sshort", buffer_load<2, 1>, M, 1);
    reg.add("buffer_load_dword", buffer_load<4, 0>, M, 1);
    reg.add("buffer_load_dwordx2", buffer_load<8, 0>, M, 1);
    reg.add("buffer_load_dwordx3", buffer_load<12, 0>, M, 1);
    reg.add("buffer_load_dwordx4", buffer_load<16, 0>, M, 1);
    reg.add("buffer_store_byte", buffer_store<1>, M, 0);
    reg.add("buffer_store_short", buffer_store<2>, M, 0);
    reg.add("buffer_store_dword", buffer_store<4>, M, 0);
    reg.add("buffer_store_dwordx2", buffer_store<8>, M, 0);
    reg.add("buffer_store_dwordx3", buffer_store<12>, M, 0);
    reg.add("buffer_store_dwordx4", buffer_store<16>, M, 0);
    // Direct-to-LDS: no destination register; completion is tracked by vmcnt.
    reg.add("buffer_load_ubyte lds", buffer_load_lds<1>, M, 0);
    reg.add("buffer_load_ushort lds", buffer_load_lds<2>, M, 0);
    reg.add("buffer_load_dword lds", buffer_load_lds<4>, M, 0);
    reg.add("buffer_load_dwordx3 lds", buffer_load_lds<12>, M, 0);
    reg.add("buffer_load_dwordx4 lds", buffer_load_lds<16>, M, 0);
    reg.add("global_load_lds_dword", global_load_lds<4>, M, 0);
    reg.add("global_load_lds_dwordx3", global_load_lds<12>, M, 0);
    reg.add("global_load_lds_dwordx4", global_load_lds<16>, M, 0);

    const Unit D = Unit::Ds;
    reg.add("ds_read_b64_tr_b16", ds_read_tr<16>, D, 1);
    reg.add("ds_read_b64_tr_b8", ds_read_tr<8>, D, 1);
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
