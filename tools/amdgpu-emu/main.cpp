// amdgpu-emu: inspect a code object the way the emulator sees it.
//   amdgpu-emu FILE            kernels, descriptors, arguments, instruction count
//   amdgpu-emu --check FILE    also lists mnemonics the emulator does not implement (exit 1 if any)
// Running kernels needs buffers and arguments: use the library (runner.hpp) or the HIP stand-in.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "code_object.hpp"
#include "emu_error.hpp"

int main(int argc, char** argv) {
    bool check = false;
    const char* path = nullptr;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--check") == 0) {
            check = true;
        } else {
            path = argv[i];
        }
    }
    if (!path) {
        std::fprintf(stderr, "usage: amdgpu-emu [--check] CODE_OBJECT\n");
        return 2;
    }
    std::ifstream in(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
        std::fprintf(stderr, "cannot read %s\n", path);
        return 2;
    }
    try {
        auto object = zyfa::emu::CodeObject::load(bytes.data(), bytes.size());
        std::printf("%s: %s, %zu instructions\n", path, zyfa::emu::arch_name(object->arch()),
                    object->instructions().size());
        for (const auto& k : object->kernels()) {
            const auto& d = k.descriptor;
            std::printf("kernel %s: entry 0x%llx, LDS %u B, kernarg %u B, VGPR %d + AGPR %d, user SGPRs %d, args %zu\n",
                        k.name.c_str(), static_cast<unsigned long long>(k.entry), d.group_segment_fixed_size,
                        d.kernarg_size, d.accum_offset, d.total_vgprs - d.accum_offset, d.user_sgpr_count,
                        k.args.size());
        }
        const auto missing = object->unsupported_mnemonics();
        if (check) {
            for (const auto& m : missing) std::printf("unsupported: %s\n", m.c_str());
            return missing.empty() ? 0 : 1;
        }
    } catch (const zyfa::emu::EmuError& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    return 0;
}
