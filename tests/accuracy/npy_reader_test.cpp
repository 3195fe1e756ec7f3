// zyfa-accuracy's .npy reader (tools/zyfa-accuracy/npy.cpp): arrays written here byte by byte as
// numpy writes them (so the test needs no numpy), the three accepted dtypes, format version 2,
// the rejections with their messages, and --npy-dir's loader with GQA: a GQA problem must give
// exactly the figures of the same problem with K and V repeated per query head.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "accuracy_run.hpp"
#include "common/half_types.h"
#include "npy.hpp"
#include "numerics/cmocka_cpp.hpp"

using namespace zyfa_accuracy;

namespace {

// A .npy file as numpy writes it: magic, version, header length, the dict padded with spaces and a
// newline to a multiple of 64 bytes, then the raw data.
std::vector<uint8_t> npy_bytes(const std::string& dict, const void* data, size_t size, int version = 1) {
    const size_t prefix = version == 1 ? 10 : 12;
    std::string header = dict;
    while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::vector<uint8_t> b = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(version), 0};
    const size_t n = header.size();
    b.push_back(static_cast<uint8_t>(n & 0xff));
    b.push_back(static_cast<uint8_t>(n >> 8));
    if (version != 1) {
        b.push_back(static_cast<uint8_t>(n >> 16));
        b.push_back(static_cast<uint8_t>(n >> 24));
    }
    b.insert(b.end(), header.begin(), header.end());
    const auto* p = static_cast<const uint8_t*>(data);
    b.insert(b.end(), p, p + size);
    return b;
}

std::string dict(const std::string& descr, const std::string& shape, const char* fortran = "False") {
    return "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
}

// The message of the runtime_error that parsing `bytes` throws ("" if none).
std::string error_of(const std::vector<uint8_t>& bytes) {
    try {
        parse_npy(bytes, "t.npy");
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "";
}

bool contains(const std::string& s, const char* part) {
    if (s.find(part) != std::string::npos) return true;
    std::printf("  message \"%s\" lacks \"%s\"\n", s.c_str(), part);
    return false;
}

void test_float32_float16_bfloat16(void**) {
    const float f[6] = {1.0f, -2.5f, 0.0f, 3.0e-8f, 65504.0f, -1.0e30f};
    NpyArray a = parse_npy(npy_bytes(dict("<f4", "(2, 3)"), f, sizeof f), "f4");
    assert_true(a.shape == (std::vector<int64_t>{2, 3}));
    assert_string_equal(a.descr.c_str(), "<f4");
    assert_memory_equal(a.data.data(), f, sizeof f);

    uint16_t h[6], bf[6];
    for (int i = 0; i < 6; ++i) {
        h[i] = zyfa::numerics::float_to_fp16(f[i] > 65504.0f || f[i] < -65504.0f ? 1.0f : f[i]);
        bf[i] = zyfa::numerics::float_to_bf16(f[i]);
    }
    a = parse_npy(npy_bytes(dict("<f2", "(6,)"), h, sizeof h), "f2");
    assert_true(a.shape == (std::vector<int64_t>{6}));
    for (int i = 0; i < 6; ++i) assert_true(a.data[i] == zyfa::numerics::fp16_to_float(h[i]));
    assert_true(a.data[1] == -2.5f);
    a = parse_npy(npy_bytes(dict("<u2", "(1, 2, 3)"), bf, sizeof bf, 2), "u2 v2");
    assert_true(a.shape == (std::vector<int64_t>{1, 2, 3}));
    for (int i = 0; i < 6; ++i) assert_true(a.data[i] == zyfa::numerics::bf16_to_float(bf[i]));
    assert_true(a.data[5] == zyfa::numerics::bf16_to_float(zyfa::numerics::float_to_bf16(-1.0e30f)));
}

void test_malformed_rejected(void**) {
    const float f[4] = {1, 2, 3, 4};
    std::vector<uint8_t> b = npy_bytes(dict("<f4", "(4,)"), f, sizeof f);
    b[1] = 'X';
    assert_true(contains(error_of(b), "bad magic"));
    assert_true(contains(error_of(npy_bytes(dict("<f8", "(2,)"), f, sizeof f)), "'<f8' is not supported"));
    assert_true(contains(error_of(npy_bytes(dict(">f4", "(4,)"), f, sizeof f)), "big-endian"));
    assert_true(contains(error_of(npy_bytes(dict("<f4", "(2, 2)", "True"), f, sizeof f)), "fortran_order"));
    assert_true(contains(error_of(npy_bytes(dict("<f4", "(5,)"), f, sizeof f)), "does not match the shape"));
    assert_true(contains(error_of(npy_bytes("{'descr': '<f4', 'fortran_order': False, }", f, sizeof f)),
                         "no 'shape' entry"));
    assert_true(contains(error_of(npy_bytes(dict("<f4", "(a, 2)"), f, sizeof f)), "bad shape"));
    b = npy_bytes(dict("<f4", "(4,)"), f, sizeof f);
    b[8] = 0xff;  // a header length past the end of the file
    assert_true(contains(error_of(b), "truncated"));
    b = npy_bytes(dict("<f4", "(4,)"), f, sizeof f);
    b[6] = 9;
    assert_true(contains(error_of(b), "format version 9"));
}

struct TempDir {
    std::string path;
    TempDir() {
        char tmpl[] = "/tmp/zyfa_npy_XXXXXX";
        assert_non_null(mkdtemp(tmpl));
        path = tmpl;
    }
    ~TempDir() {
        for (const char* n : {"q.npy", "k.npy", "v.npy"}) std::remove((path + "/" + n).c_str());
        rmdir(path.c_str());
    }
};

void write_file(const std::string& path, const std::vector<uint8_t>& b) {
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    assert_true(f.good());
}

void write_array(const std::string& path, const std::vector<float>& x, int64_t s, int64_t h, int64_t d) {
    const std::string shape = "(" + std::to_string(s) + ", " + std::to_string(h) + ", " + std::to_string(d) + ")";
    write_file(path, npy_bytes(dict("<f4", shape), x.data(), x.size() * 4));
}

// Deterministic values, without a generator: a smooth function of the index, with some spread.
std::vector<float> values(size_t n, double phase) {
    std::vector<float> x(n);
    for (size_t i = 0; i < n; ++i) x[i] = static_cast<float>(2.0 * std::sin(0.37 * static_cast<double>(i) + phase));
    return x;
}

// [S, Hkv, D] -> [S, Hkv * g, D], each kv head repeated for its g query heads.
std::vector<float> repeat_heads(const std::vector<float>& x, int64_t s, int64_t hkv, int64_t d, int64_t g) {
    std::vector<float> out;
    for (int64_t r = 0; r < s; ++r)
        for (int64_t h = 0; h < hkv; ++h)
            for (int64_t i = 0; i < g; ++i)
                out.insert(out.end(), x.begin() + (r * hkv + h) * d, x.begin() + (r * hkv + h + 1) * d);
    return out;
}

void test_load_gqa_matches_repeated_heads(void**) {
    const int64_t S = 70, HQ = 4, HKV = 2, D = 64;  // 70 rows: the last 6 are dropped
    const std::vector<float> q = values(static_cast<size_t>(S * HQ * D), 0.1);
    const std::vector<float> k = values(static_cast<size_t>(S * HKV * D), 0.7);
    const std::vector<float> v = values(static_cast<size_t>(S * HKV * D), 1.3);
    TempDir gqa, mha;
    write_array(gqa.path + "/q.npy", q, S, HQ, D);
    write_array(gqa.path + "/k.npy", k, S, HKV, D);
    write_array(gqa.path + "/v.npy", v, S, HKV, D);
    write_array(mha.path + "/q.npy", q, S, HQ, D);
    write_array(mha.path + "/k.npy", repeat_heads(k, S, HKV, D, HQ / HKV), S, HQ, D);
    write_array(mha.path + "/v.npy", repeat_heads(v, S, HKV, D, HQ / HKV), S, HQ, D);

    ActivationShape sg, sm;
    Activations ag = load_npy_activations(gqa.path, 0.0f, sg);
    Activations am = load_npy_activations(mha.path, 0.0f, sm);
    assert_int_equal(sg.seqlen, 64);
    assert_int_equal(sg.heads, HQ);
    assert_int_equal(sg.kv_heads(), HKV);
    assert_int_equal(sm.kv_heads(), HQ);
    assert_true(ag.softmax_scale == 0.125f);

    zyfa_context_options o;
    zyfa_context_options_init(&o, sizeof o);
    o.backend = ZYFA_BACKEND_CPU;
    o.num_threads = 2;
    zyfa_context* ctx = nullptr;
    assert_int_equal(zyfa_context_create(&o, &ctx), ZYFA_SUCCESS);
    zyfa::cpu::WorkerPool pool(2);
    {
        const AccuracyConfig cg(sg, std::move(ag), 8, pool, ctx), cm(sm, std::move(am), 8, pool, ctx);
        zyfa::cpu::NumericsModel exact;
        exact.scheme = zyfa::cpu::SoftmaxScheme::Exact;
        // BF16 has no descales, so the two layouts compute the same numbers in the same order.
        const TileOutputs rg = cg.reference(cg.original()), rm = cm.reference(cm.original());
        const TileOutputs og = cg.run_model(cg.bf16(), exact), om = cm.run_model(cm.bf16(), exact);
        assert_true(rg.o == rm.o && rg.lse == rm.lse);
        assert_true(og.o == om.o && og.lse == om.lse);
        const double bf16_err = AccuracyConfig::compare(og, rg).rel_rms;
        std::printf("  GQA 4/2, S=64: BF16 end to end %.3e\n", bf16_err);
        assert_true(bf16_err > 0.0 && bf16_err < 2e-2);  // bf16 inputs: about 2^-9 relative
        // FP8: one Q scale per kv head (the ABI's q_descale shape); the kernel matches its reference.
        const KernelInputs f = cg.fp8(ZYFA_DTYPE_FP8_E4M3FN, true);
        assert_int_equal(f.q_descale.size(), HKV);
        const double fp8_kernel = AccuracyConfig::compare(cg.run_model(f, exact), cg.reference(f)).rel_rms;
        assert_true(fp8_kernel < 5e-2);
    }
    zyfa_context_destroy(ctx);

    // Heads that do not group, and a 2-D array.
    TempDir bad;
    write_array(bad.path + "/q.npy", values(static_cast<size_t>(32 * 3 * 8), 0), 32, 3, 8);
    write_array(bad.path + "/k.npy", values(static_cast<size_t>(32 * 2 * 8), 0), 32, 2, 8);
    write_array(bad.path + "/v.npy", values(static_cast<size_t>(32 * 2 * 8), 0), 32, 2, 8);
    ActivationShape s;
    std::string msg;
    try {
        load_npy_activations(bad.path, 0.0f, s);
    } catch (const std::runtime_error& e) {
        msg = e.what();
    }
    assert_true(contains(msg, "must be a multiple of k's"));
    const std::vector<float> flat = values(32 * 8, 0);
    write_file(bad.path + "/v.npy", npy_bytes(dict("<f4", "(32, 8)"), flat.data(), flat.size() * 4));
    msg.clear();
    try {
        load_npy_activations(bad.path, 0.0f, s);
    } catch (const std::runtime_error& e) {
        msg = e.what();
    }
    assert_true(contains(msg, "must be 3-D"));
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_float32_float16_bfloat16),
        cmocka_unit_test(test_malformed_rejected),
        cmocka_unit_test(test_load_gqa_matches_repeated_heads),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
