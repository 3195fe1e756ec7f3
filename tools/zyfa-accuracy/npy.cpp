#include "npy.hpp"

#include <cctype>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <stdexcept>

#include "common/half_types.h"

namespace zyfa_accuracy {

namespace {

[[noreturn]] void fail(const std::string& name, const std::string& what) {
    throw std::runtime_error(name + ": " + what);
}

// The header is a Python dict literal written by numpy: {'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), }. Only the three keys' values are needed; find each by its quoted key.
std::string value_after(const std::string& header, const std::string& key, const std::string& name) {
    const std::string quoted[] = {"'" + key + "'", "\"" + key + "\""};
    for (const std::string& q : quoted) {
        size_t p = header.find(q);
        if (p == std::string::npos) continue;
        p = header.find(':', p + q.size());
        if (p == std::string::npos) break;
        ++p;
        while (p < header.size() && std::isspace(static_cast<unsigned char>(header[p]))) ++p;
        return header.substr(p);
    }
    fail(name, "npy header has no '" + key + "' entry");
}

std::string parse_descr(const std::string& rest, const std::string& name) {
    if (rest.empty() || (rest[0] != '\'' && rest[0] != '"')) fail(name, "npy header: descr is not a string");
    const size_t end = rest.find(rest[0], 1);
    if (end == std::string::npos) fail(name, "npy header: unterminated descr");
    return rest.substr(1, end - 1);
}

std::vector<int64_t> parse_shape(const std::string& rest, const std::string& name) {
    if (rest.empty() || rest[0] != '(') fail(name, "npy header: shape is not a tuple");
    const size_t end = rest.find(')');
    if (end == std::string::npos) fail(name, "npy header: unterminated shape");
    std::vector<int64_t> shape;
    size_t p = 1;
    while (p < end) {
        while (p < end && (std::isspace(static_cast<unsigned char>(rest[p])) || rest[p] == ',')) ++p;
        if (p >= end) break;
        if (!std::isdigit(static_cast<unsigned char>(rest[p]))) fail(name, "npy header: bad shape " + rest.substr(0, end + 1));
        int64_t v = 0;
        while (p < end && std::isdigit(static_cast<unsigned char>(rest[p]))) {
            if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) fail(name, "npy header: shape overflows");
            v = v * 10 + (rest[p++] - '0');
        }
        shape.push_back(v);
    }
    return shape;
}

}  // namespace

NpyArray parse_npy(const std::vector<uint8_t>& bytes, const std::string& name) {
    static const uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0) fail(name, "not a .npy file (bad magic)");
    const int major = bytes[6];
    size_t header_len = 0, offset = 0;
    if (major == 1) {
        header_len = static_cast<size_t>(bytes[8]) | static_cast<size_t>(bytes[9]) << 8;
        offset = 10;
    } else if (major == 2 || major == 3) {
        if (bytes.size() < 12) fail(name, "truncated .npy header");
        header_len = static_cast<size_t>(bytes[8]) | static_cast<size_t>(bytes[9]) << 8 |
                     static_cast<size_t>(bytes[10]) << 16 | static_cast<size_t>(bytes[11]) << 24;
        offset = 12;
    } else {
        fail(name, "unsupported .npy format version " + std::to_string(major));
    }
    if (header_len > bytes.size() - offset) fail(name, "truncated .npy header");
    const std::string header(reinterpret_cast<const char*>(bytes.data() + offset), header_len);
    offset += header_len;

    NpyArray a;
    a.descr = parse_descr(value_after(header, "descr", name), name);
    // '|' marks a byte-order-free type; a 2- or 4-byte type always carries '<' or '>' from numpy,
    // but '=' (native) is accepted too since every machine zyfa runs on is little-endian.
    std::string kind = a.descr;
    if (!kind.empty() && (kind[0] == '<' || kind[0] == '=')) kind = kind.substr(1);
    else if (!kind.empty() && kind[0] == '>')
        fail(name, "big-endian dtype '" + a.descr + "' is not supported (use arr.astype('<f4'))");
    size_t elem = 0;
    if (kind == "f4") elem = 4;
    else if (kind == "f2" || kind == "u2") elem = 2;
    else
        fail(name, "dtype '" + a.descr +
                       "' is not supported: use float32 ('<f4'), float16 ('<f2') or bfloat16 bits as uint16 ('<u2')");
    const std::string fortran = value_after(header, "fortran_order", name);
    if (fortran.compare(0, 4, "True") == 0) fail(name, "fortran_order arrays are not supported (use np.ascontiguousarray)");
    if (fortran.compare(0, 5, "False") != 0) fail(name, "npy header: fortran_order is neither True nor False");
    a.shape = parse_shape(value_after(header, "shape", name), name);

    size_t count = 1;
    for (int64_t d : a.shape) {
        if (d != 0 && count > std::numeric_limits<size_t>::max() / static_cast<size_t>(d) / elem)
            fail(name, "shape overflows");
        count *= static_cast<size_t>(d);
    }
    if (bytes.size() - offset != count * elem)
        fail(name, "data size " + std::to_string(bytes.size() - offset) + " bytes does not match the shape (" +
                       std::to_string(count * elem) + " bytes expected)");
    a.data.resize(count);
    const uint8_t* src = bytes.data() + offset;
    for (size_t i = 0; i < count; ++i) {
        if (elem == 4) {
            std::memcpy(&a.data[i], src + 4 * i, 4);
        } else {
            uint16_t h;
            std::memcpy(&h, src + 2 * i, 2);
            a.data[i] = kind == "f2" ? zyfa::numerics::fp16_to_float(h) : zyfa::numerics::bf16_to_float(h);
        }
    }
    return a;
}

NpyArray read_npy(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error("cannot open " + path);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    return parse_npy(bytes, path);
}

Activations load_npy_activations(const std::string& dir, float softmax_scale, ActivationShape& shape) {
    const NpyArray q = read_npy(dir + "/q.npy"), k = read_npy(dir + "/k.npy"), v = read_npy(dir + "/v.npy");
    for (const NpyArray* a : {&q, &k, &v})
        if (a->shape.size() != 3)
            throw std::runtime_error(dir + ": q.npy, k.npy and v.npy must be 3-D [seq, heads, head_dim], one is " +
                                     std::to_string(a->shape.size()) + "-D");
    const int64_t S = q.shape[0], H = q.shape[1], DQ = q.shape[2], HKV = k.shape[1], DV = v.shape[2];
    if (k.shape[0] != S || v.shape[0] != S)
        throw std::runtime_error(dir + ": q, k and v must have the same seq length (self-attention)");
    if (k.shape[2] != DQ) throw std::runtime_error(dir + ": k's head_dim differs from q's");
    if (v.shape[1] != HKV) throw std::runtime_error(dir + ": k and v must have the same number of heads");
    if (H <= 0 || HKV <= 0 || H % HKV != 0)
        throw std::runtime_error(dir + ": q's heads (" + std::to_string(H) + ") must be a multiple of k's (" +
                                 std::to_string(HKV) + ")");
    const int64_t rows = S / 32 * 32;
    if (rows == 0) throw std::runtime_error(dir + ": fewer than 32 tokens");
    shape = ActivationShape{};
    shape.distribution = Distribution::External;
    shape.label = dir;
    shape.seqlen = rows;
    shape.heads = H;
    shape.heads_kv = HKV;
    shape.head_dim_qk = DQ;
    shape.head_dim_v = DV;
    Activations a;
    // Row-major [S, heads, dim]: the first `rows` rows are a prefix of the data.
    a.q.assign(q.data.begin(), q.data.begin() + rows * H * DQ);
    a.k.assign(k.data.begin(), k.data.begin() + rows * HKV * DQ);
    a.v.assign(v.data.begin(), v.data.begin() + rows * HKV * DV);
    a.softmax_scale = softmax_scale > 0.0f ? softmax_scale
                                           : static_cast<float>(1.0 / std::sqrt(static_cast<double>(DQ)));
    return a;
}

}  // namespace zyfa_accuracy
