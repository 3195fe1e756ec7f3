// SALU (SOP1/SOP2/SOPC/SOPK), SOPP (branches, waits, barrier) and SMEM (scalar loads).
#include <cstring>

#include "semantics.hpp"

namespace zyfa {
namespace emu {

namespace {

uint32_t s32(R& r, Wave& w, const Instruction& in, int i) { return r.read_scalar32(w, in.ops.at(i)); }
uint64_t s64(R& r, Wave& w, const Instruction& in, int i) { return r.read_scalar64(w, in.ops.at(i)); }

// Binary 32-bit: f(a, b, scc_in, scc_out&) -> result.
template <class F>
void sop2_32(R& r, Wave& w, const Instruction& in, F f) {
    bool scc = w.scc;
    const uint32_t d = f(s32(r, w, in, 1), s32(r, w, in, 2), w.scc, scc);
    r.write_scalar32(w, in.ops.at(0), d);
    w.scc = scc;
}
template <class F>
void sop2_64(R& r, Wave& w, const Instruction& in, F f) {
    bool scc = w.scc;
    const uint64_t d = f(s64(r, w, in, 1), s64(r, w, in, 2), scc);
    r.write_scalar64(w, in.ops.at(0), d);
    w.scc = scc;
}

void branch_if(Wave& w, const Instruction& in, bool taken) {
    w.pc = taken ? in.branch_target : in.address + in.size;
}

}  // namespace

void register_scalar(Registry& reg) {
    const Unit S = Unit::Salu;
    // Moves.
    reg.add("s_mov_b32", [](R& r, Wave& w, const Instruction& in) { r.write_scalar32(w, in.ops[0], s32(r, w, in, 1)); }, S, 1);
    reg.add("s_mov_b64", [](R& r, Wave& w, const Instruction& in) { r.write_scalar64(w, in.ops[0], s64(r, w, in, 1)); }, S, 1);
    reg.add("s_movk_i32", [](R& r, Wave& w, const Instruction& in) {
        r.write_scalar32(w, in.ops[0], static_cast<uint32_t>(static_cast<int32_t>(static_cast<int16_t>(in.ops[1].integer))));
    }, S, 1);
    reg.add("s_cmov_b32", [](R& r, Wave& w, const Instruction& in) { if (w.scc) r.write_scalar32(w, in.ops[0], s32(r, w, in, 1)); }, S, 1);
    reg.add("s_cselect_b32", [](R& r, Wave& w, const Instruction& in) {
        r.write_scalar32(w, in.ops[0], w.scc ? s32(r, w, in, 1) : s32(r, w, in, 2));
    }, S, 1);
    reg.add("s_cselect_b64", [](R& r, Wave& w, const Instruction& in) {
        r.write_scalar64(w, in.ops[0], w.scc ? s64(r, w, in, 1) : s64(r, w, in, 2));
    }, S, 1);
    // Arithmetic.
    reg.add("s_add_u32", [](R& r, Wave& w, const Instruction& in) {
        sop2_32(r, w, in, [](uint32_t a, uint32_t b, bool, bool& c) { const uint64_t s = uint64_t(a) + b; c = s >> 32; return uint32_t(s); });
    }, S, 1);
    reg.add("s_addc_u32", [](R& r, Wave& w, const Instruction& in) {
        sop2_32(r, w, in, [](uint32_t a, uint32_t b, bool ci, bool& c) { const uint64_t s = uint64_t(a) + b + ci; c = s >> 32; return uint32_t(s); });
    }, S, 1);
    reg.add("s_sub_u32", [](R& r, Wave& w, const Instruction& in) {
        sop2_32(r, w, in, [](uint32_t a, uint32_t b, bool, bool& c) { c = b > a; return a - b; });
    }, S, 1);
    reg.add("s_subb_u32", [](R& r, Wave& w, const Instruction& in) {
        sop2_32(r, w, in, [](uint32_t a, uint32_t b, bool ci, bool& c) { c = uint64_t(b) + ci > a; return a - b - ci; });
    }, S, 1);
    reg.add("s_add_i32", [](R& r, Wave& w, const Instruction& in) {
        sop2_32(r, w, in, [](uint32_t a, uint32_t b, bool, bool& c) {
            const uint32_t d = a + b; c = ((a ^ d) & (b ^ d)) >> 31; return d; });
    }, S, 1);
    reg.add("s_sub_i32", [](R& r, Wave& w, const Instruction& in) {
        sop2_32(r, w, in, [](uint32_t a, uint32_t b, bool, bool& c) {
            const uint32_t d = a - b; c = ((a ^ b) & (a ^ d)) >> 31; return d; });
    }, S, 1);
    reg.add("s_mul_i32", [](R& r, Wave& w, const Instruction& in) {
        sop2_32(r, w, in, [](uint32_t a, uint32_t b, bool, bool&) { return a * b; });
    }, S, 1);
    reg.add("s_mul_hi_u32", [](R& r, Wave& w, const Instruction& in) {
        sop2_32(r, w, in, [](uint32_t a, uint32_t b, bool, bool&) { return uint32_t((uint64_t(a) * b) >> 32); });
    }, S, 1);
    reg.add("s_mul_hi_i32", [](R& r, Wave& w, const Instruction& in) {
        sop2_32(r, w, in, [](uint32_t a, uint32_t b, bool, bool&) {
            return uint32_t(uint64_t(int64_t(int32_t(a)) * int32_t(b)) >> 32); });
    }, S, 1);
    reg.add("s_min_i32", [](R& r, Wave& w, const Instruction& in) {
        sop2_32(r, w, in, [](uint32_t a, uint32_t b, bool, bool& c) { c = int32_t(a) < int32_t(b); return c ? a : b; });
    }, S, 1);
    reg.add("s_max_i32", [](R& r, Wave& w, const Instruction& in) {
        sop2_32(r, w, in, [](uint32_t a, uint32_t b, bool, bool& c) { c = int32_t(a) > int32_t(b); return c ? a : b; });
    }, S, 1);
    reg.add("s_min_u32", [](R& r, Wave& w, const Instruction& in) {
        sop2_32(r, w, in, [](uint32_t a, uint32_t b, bool, bool& c) { c = a < b; return c ? a : b; });
    }, S, 1);
    reg.add("s_max_u32", [](R& r, Wave& w, const Instruction& in) {
        sop2_32(r, w, in, [](uint32_t a, uint32_t b, bool, bool& c) { c = a > b; return c ? a : b; });
    }, S, 1);
    reg.add("s_abs_i32", [](R& r, Wave& w, const Instruction& in) {
        const int32_t a = int32_t(s32(r, w, in, 1));
        const uint32_t d = a < 0 ? 0u - uint32_t(a) : uint32_t(a);
        r.write_scalar32(w, in.ops[0], d);
        w.scc = d != 0;
    }, S, 1);
    // Bitwise: SCC = result != 0.
#define ZYFA_SBIT(name32, name64, expr)                                                                   \
    reg.add(name32, [](R& r, Wave& w, const Instruction& in) {                                           \
        sop2_32(r, w, in, [](uint32_t a, uint32_t b, bool, bool& c) { const uint32_t d = (expr); c = d != 0; return d; }); \
    }, S, 1);                                                                                             \
    reg.add(name64, [](R& r, Wave& w, const Instruction& in) {                                           \
        sop2_64(r, w, in, [](uint64_t a, uint64_t b, bool& c) { const uint64_t d = (expr); c = d != 0; return d; }); \
    }, S, 1);
    ZYFA_SBIT("s_and_b32", "s_and_b64", a & b)
    ZYFA_SBIT("s_or_b32", "s_or_b64", a | b)
    ZYFA_SBIT("s_xor_b32", "s_xor_b64", a ^ b)
    ZYFA_SBIT("s_andn2_b32", "s_andn2_b64", a & ~b)
    ZYFA_SBIT("s_orn2_b32", "s_orn2_b64", a | ~b)
    ZYFA_SBIT("s_nand_b32", "s_nand_b64", ~(a & b))
    ZYFA_SBIT("s_nor_b32", "s_nor_b64", ~(a | b))
    ZYFA_SBIT("s_xnor_b32", "s_xnor_b64", ~(a ^ b))
#undef ZYFA_SBIT
    reg.add("s_not_b32", [](R& r, Wave& w, const Instruction& in) {
        const uint32_t d = ~s32(r, w, in, 1); r.write_scalar32(w, in.ops[0], d); w.scc = d != 0; }, S, 1);
    reg.add("s_not_b64", [](R& r, Wave& w, const Instruction& in) {
        const uint64_t d = ~s64(r, w, in, 1); r.write_scalar64(w, in.ops[0], d); w.scc = d != 0; }, S, 1);
    reg.add("s_lshl_b32", [](R& r, Wave& w, const Instruction& in) {
        sop2_32(r, w, in, [](uint32_t a, uint32_t b, bool, bool& c) { const uint32_t d = a << (b & 31); c = d != 0; return d; }); }, S, 1);
    // s_lshl{1,2,3,4}_add_u32 (gfx9): D = (S0 << n) + S1 formed in 64 bits, SCC = the carry out
    // of bit 31 (shifted-out bits of S0 included), as the CDNA3 ISA guide's pseudocode writes it.
    reg.add("s_lshl1_add_u32", [](R& r, Wave& w, const Instruction& in) {
        sop2_32(r, w, in, [](uint32_t a, uint32_t b, bool, bool& c) { const uint64_t t = (uint64_t(a) << 1) + b; c = t >> 32; return uint32_t(t); }); }, S, 1);
    reg.add("s_lshl2_add_u32", [](R& r, Wave& w, const Instruction& in) {
        sop2_32(r, w, in, [](uint32_t a, uint32_t b, bool, bool& c) { const uint64_t t = (uint64_t(a) << 2) + b; c = t >> 32; return uint32_t(t); }); }, S, 1);
    reg.add("s_lshl3_add_u32", [](R& r, Wave& w, const Instruction& in) {
        sop2_32(r, w, in, [](uint32_t a, uint32_t b, bool, bool& c) { const uint64_t t = (uint64_t(a) << 3) + b; c = t >> 32; return uint32_t(t); }); }, S, 1);
    reg.add("s_lshl4_add_u32", [](R& r, Wave& w, const Instruction& in) {
        sop2_32(r, w, in, [](uint32_t a, uint32_t b, bool, bool& c) { const uint64_t t = (uint64_t(a) << 4) + b; c = t >> 32; return uint32_t(t); }); }, S, 1);
    reg.add("s_lshr_b32", [](R& r, Wave& w, const Instruction& in) {
        sop2_32(r, w, in, [](uint32_t a, uint32_t b, bool, bool& c) { const uint32_t d = a >> (b & 31); c = d != 0; return d; }); }, S, 1);
    reg.add("s_ashr_i32", [](R& r, Wave& w, const Instruction& in) {
        sop2_32(r, w, in, [](uint32_t a, uint32_t b, bool, bool& c) { const uint32_t d = uint32_t(int32_t(a) >> (b & 31)); c = d != 0; return d; }); }, S, 1);
    reg.add("s_lshl_b64", [](R& r, Wave& w, const Instruction& in) {
        const uint64_t d = s64(r, w, in, 1) << (s32(r, w, in, 2) & 63);
        r.write_scalar64(w, in.ops[0], d); w.scc = d != 0; }, S, 1);
    reg.add("s_lshr_b64", [](R& r, Wave& w, const Instruction& in) {
        const uint64_t d = s64(r, w, in, 1) >> (s32(r, w, in, 2) & 63);
        r.write_scalar64(w, in.ops[0], d); w.scc = d != 0; }, S, 1);
    reg.add("s_ashr_i64", [](R& r, Wave& w, const Instruction& in) {
        const uint64_t d = uint64_t(int64_t(s64(r, w, in, 1)) >> (s32(r, w, in, 2) & 63));
        r.write_scalar64(w, in.ops[0], d); w.scc = d != 0; }, S, 1);
    reg.add("s_brev_b32", [](R& r, Wave& w, const Instruction& in) {
        uint32_t a = s32(r, w, in, 1), d = 0;
        for (int i = 0; i < 32; ++i) d |= ((a >> i) & 1u) << (31 - i);
        r.write_scalar32(w, in.ops[0], d); }, S, 1);
    reg.add("s_ff1_i32_b64", [](R& r, Wave& w, const Instruction& in) {
        const uint64_t a = s64(r, w, in, 1);
        r.write_scalar32(w, in.ops[0], a ? uint32_t(__builtin_ctzll(a)) : 0xffffffffu); }, S, 1);
    reg.add("s_ff1_i32_b32", [](R& r, Wave& w, const Instruction& in) {
        const uint32_t a = s32(r, w, in, 1);
        r.write_scalar32(w, in.ops[0], a ? uint32_t(__builtin_ctz(a)) : 0xffffffffu); }, S, 1);
    reg.add("s_bcnt1_i32_b64", [](R& r, Wave& w, const Instruction& in) {
        const uint32_t d = uint32_t(__builtin_popcountll(s64(r, w, in, 1)));
        r.write_scalar32(w, in.ops[0], d); w.scc = d != 0; }, S, 1);
    reg.add("s_bcnt1_i32_b32", [](R& r, Wave& w, const Instruction& in) {
        const uint32_t d = uint32_t(__builtin_popcount(s32(r, w, in, 1)));
        r.write_scalar32(w, in.ops[0], d); w.scc = d != 0; }, S, 1);
    reg.add("s_sext_i32_i16", [](R& r, Wave& w, const Instruction& in) {
        r.write_scalar32(w, in.ops[0], uint32_t(int32_t(int16_t(s32(r, w, in, 1))))); }, S, 1);
    reg.add("s_bfe_u32", [](R& r, Wave& w, const Instruction& in) {
        sop2_32(r, w, in, [](uint32_t a, uint32_t b, bool, bool& c) {
            const uint32_t off = b & 31, width = (b >> 16) & 0x7f;
            const uint32_t d = width == 0 ? 0 : width >= 32 ? a >> off : (a >> off) & ((1u << width) - 1);
            c = d != 0; return d; }); }, S, 1);
    // Saveexec: D = EXEC; EXEC = f(S0, EXEC); SCC = EXEC != 0.
#define ZYFA_SAVEEXEC(name, expr)                                                      \
    reg.add(name, [](R& r, Wave& w, const Instruction& in) {                          \
        const uint64_t a = s64(r, w, in, 1), e = w.exec;                              \
        r.write_scalar64(w, in.ops[0], e);                                            \
        w.exec = (expr);                                                              \
        w.scc = w.exec != 0;                                                          \
    }, S, 1);
    ZYFA_SAVEEXEC("s_and_saveexec_b64", a & e)
    ZYFA_SAVEEXEC("s_or_saveexec_b64", a | e)
    ZYFA_SAVEEXEC("s_xor_saveexec_b64", a ^ e)
    ZYFA_SAVEEXEC("s_andn2_saveexec_b64", a & ~e)
    ZYFA_SAVEEXEC("s_orn2_saveexec_b64", a | ~e)
#undef ZYFA_SAVEEXEC
    // Compares.
#define ZYFA_SCMP(name, type, op)                                                                 \
    reg.add(name, [](R& r, Wave& w, const Instruction& in) {                                     \
        w.scc = type(s32(r, w, in, 0)) op type(s32(r, w, in, 1)); }, S, 0);
    ZYFA_SCMP("s_cmp_eq_i32", int32_t, ==) ZYFA_SCMP("s_cmp_lg_i32", int32_t, !=)
    ZYFA_SCMP("s_cmp_gt_i32", int32_t, >) ZYFA_SCMP("s_cmp_ge_i32", int32_t, >=)
    ZYFA_SCMP("s_cmp_lt_i32", int32_t, <) ZYFA_SCMP("s_cmp_le_i32", int32_t, <=)
    ZYFA_SCMP("s_cmp_eq_u32", uint32_t, ==) ZYFA_SCMP("s_cmp_lg_u32", uint32_t, !=)
    ZYFA_SCMP("s_cmp_gt_u32", uint32_t, >) ZYFA_SCMP("s_cmp_ge_u32", uint32_t, >=)
    ZYFA_SCMP("s_cmp_lt_u32", uint32_t, <) ZYFA_SCMP("s_cmp_le_u32", uint32_t, <=)
#undef ZYFA_SCMP
    reg.add("s_cmp_eq_u64", [](R& r, Wave& w, const Instruction& in) { w.scc = s64(r, w, in, 0) == s64(r, w, in, 1); }, S, 0);
    reg.add("s_cmp_lg_u64", [](R& r, Wave& w, const Instruction& in) { w.scc = s64(r, w, in, 0) != s64(r, w, in, 1); }, S, 0);
    reg.add("s_bitcmp1_b32", [](R& r, Wave& w, const Instruction& in) { w.scc = (s32(r, w, in, 0) >> (s32(r, w, in, 1) & 31)) & 1; }, S, 0);
    reg.add("s_bitcmp0_b32", [](R& r, Wave& w, const Instruction& in) { w.scc = !((s32(r, w, in, 0) >> (s32(r, w, in, 1) & 31)) & 1); }, S, 0);

    // SOPP.
    const Unit P = Unit::Sopp;
    reg.add("s_nop", [](R&, Wave&, const Instruction&) {}, P, 0);
    reg.add("s_waitcnt", [](R&, Wave&, const Instruction&) {}, P, 0);  // the runner retires the counters
    reg.add("s_setprio", [](R&, Wave& w, const Instruction& in) { w.priority = static_cast<int>(in.immediate & 3); }, P, 0);
    reg.add("s_sleep", [](R&, Wave&, const Instruction&) {}, P, 0);
    reg.add("s_endpgm", [](R&, Wave& w, const Instruction&) { w.state = WaveState::Done; }, P, 0);
    reg.add("s_barrier", [](R&, Wave& w, const Instruction& in) {
        w.pc = in.address + in.size;
        w.state = WaveState::AtBarrier;
    }, P, 0);
    reg.add("s_branch", [](R&, Wave& w, const Instruction& in) { branch_if(w, in, true); }, P, 0);
    reg.add("s_cbranch_scc0", [](R&, Wave& w, const Instruction& in) { branch_if(w, in, !w.scc); }, P, 0);
    reg.add("s_cbranch_scc1", [](R&, Wave& w, const Instruction& in) { branch_if(w, in, w.scc); }, P, 0);
    reg.add("s_cbranch_vccz", [](R&, Wave& w, const Instruction& in) { branch_if(w, in, w.vcc == 0); }, P, 0);
    reg.add("s_cbranch_vccnz", [](R&, Wave& w, const Instruction& in) { branch_if(w, in, w.vcc != 0); }, P, 0);
    reg.add("s_cbranch_execz", [](R&, Wave& w, const Instruction& in) { branch_if(w, in, w.exec == 0); }, P, 0);
    reg.add("s_cbranch_execnz", [](R&, Wave& w, const Instruction& in) { branch_if(w, in, w.exec != 0); }, P, 0);
    reg.add("s_getpc_b64", [](R& r, Wave& w, const Instruction& in) { r.write_scalar64(w, in.ops[0], in.address + in.size); }, S, 1);

    // SMEM: s_load_dword{,x2,x4,x8,x16} sdst, sbase, offset (bytes; address dword-aligned).
#define ZYFA_SLOAD(name, dwords)                                                                  \
    reg.add(name, [](R& r, Wave& w, const Instruction& in) {                                     \
        const uint64_t address = (s64(r, w, in, 1) + s32(r, w, in, 2)) & ~uint64_t(3);            \
        uint32_t data[dwords];                                                                    \
        r.global_read(w, in, address, data, 4 * (dwords));                                        \
        for (int i = 0; i < (dwords); ++i) w.s[in.ops[0].index + i] = data[i];                    \
    }, Unit::Smem, 1);
    ZYFA_SLOAD("s_load_dword", 1) ZYFA_SLOAD("s_load_dwordx2", 2) ZYFA_SLOAD("s_load_dwordx4", 4)
    ZYFA_SLOAD("s_load_dwordx8", 8) ZYFA_SLOAD("s_load_dwordx16", 16)
#undef ZYFA_SLOAD
}

}  // namespace emu
}  // namespace zyfa
