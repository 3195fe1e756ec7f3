// Loading the emulator's test kernels and running them on host buffers.
#ifndef ZYFA_TESTS_EMU_HARNESS_HPP
#define ZYFA_TESTS_EMU_HARNESS_HPP

#include <cstdint>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "code_object.hpp"
#include "emu_error.hpp"
#include "runner.hpp"

namespace emu_test {

inline std::shared_ptr<zyfa::emu::CodeObject> load(const std::string& file) {
    const std::string path = std::string(ZYFA_EMU_TEST_KERNELS) + "/" + file;
    std::ifstream in(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.empty()) throw zyfa::emu::EmuError("cannot read " + path);
    return zyfa::emu::CodeObject::load(bytes.data(), bytes.size());
}

struct Buffer {
    void* data;
    size_t bytes;
};

// Runs `kernel` with the buffers' addresses as consecutive 8-byte kernel arguments; returns ""
// on success, else the emulator's message.
inline std::string run(const zyfa::emu::CodeObject& object, const std::string& kernel, const std::vector<Buffer>& buffers,
                       uint32_t threads = 64, uint64_t seed = 1, bool random = true, uint32_t groups = 1) {
    const zyfa::emu::Kernel* k = object.find_kernel(kernel);
    if (!k) return "no kernel " + kernel;
    zyfa::emu::LaunchConfig config;
    config.block[0] = threads;
    config.grid[0] = groups;
    config.seed = seed;
    config.random_schedule = random;
    config.threads = 1;
    for (const Buffer& b : buffers) {
        const uint64_t address = reinterpret_cast<uint64_t>(b.data);
        for (int i = 0; i < 8; ++i) config.kernarg.push_back(static_cast<uint8_t>(address >> (8 * i)));
        config.memory.push_back(zyfa::emu::MemoryRange{address, b.bytes, true});
    }
    try {
        zyfa::emu::run_kernel(object, *k, config);
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

}  // namespace emu_test

#endif
