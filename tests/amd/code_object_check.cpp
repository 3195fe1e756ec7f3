// Static checks of one AMD code object built by kernels/amd (no GPU needed):
//   usage: amd_code_object_check READELF OBJDUMP FILE ARCH VARIANT
// Rules (each failure prints "FILE: rule <name>: <what>" and the exit status is 1):
//   elf        an ELF64 little-endian AMDGPU HSA code object, code object v5 (ABI version 3), whose
//              e_flags processor is ARCH (gfx950 0x4f, gfx942 0x4c); metadata target names ARCH;
//   kernels    the metadata lists exactly the kernels the HIP launch plan's catalogue has for
//              (ARCH, VARIANT), each with two by-value arguments, AttnKernelArgs at offset 0 and
//              amd::AttnExtraArgs (the paged block table, split-KV) right after it (the generated
//              assembly kernels, variants attn_fwd_asm_*: AttnKernelArgs only, but for their paged
//              variants attn_fwd_asm_*_paged_*), wavefront 64, max_flat_workgroup_size = the plan's block size;
//   registers  VGPRs + AGPRs (AGPRs start at the next multiple of 4) <= 512 and
//              <= 512 / kWavesPerSimd (the intended waves per SIMD); no VGPR spills;
//   lds        group segment <= 160 KiB (gfx950) / 64 KiB (gfx942);
//   scratch    private segment 0, no dynamic stack, no scratch_* instruction;
//   mfma       BF16: v_mfma_f32_32x32x16_bf16 (gfx950) / v_mfma_f32_32x32x8_bf16 (gfx942);
//              FP8: v_mfma_scale_f32_32x32x64_f8f6f4 (gfx950) / v_mfma_f32_32x32x16_fp8_fp8
//              (gfx942), and no v_exp_f32 in a LEAN kernel (Lean P needs no exponential);
//              INT8 (the INT8 Q/K mode): the int8 score MFMA v_mfma_i32_32x32x32_i8 (gfx950) /
//              v_mfma_i32_32x32x16_i8 (gfx942) beside the FP8 one of P.V, the same LEAN rule;
//   uniform-mfma  every MFMA runs with a full EXEC on every path from the kernel entry
//              (exec_mask_analysis.hpp: a dataflow proof over the disassembly's control flow).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "amd/attention_extra_args.h"
#include "amd/attention_tile_shape.h"
#include "common/attention_kernel_args.h"
#include "common/paged_kv_args.h"
#include "exec_mask_analysis.hpp"
#include "hip/attention_launch_plan.hpp"

namespace {

int failures = 0;
std::string object_name;
std::set<std::string> failed_rules;

void fail(const std::string& rule, const std::string& what) {
    std::fprintf(stderr, "%s: rule %s: %s\n", object_name.c_str(), rule.c_str(), what.c_str());
    failed_rules.insert(rule);
    ++failures;
}

std::string run(const std::string& command) {
    std::string output;
    FILE* pipe = popen(command.c_str(), "r");
    if (pipe == nullptr) return output;
    char buffer[4096];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
    if (pclose(pipe) != 0) fail("tools", "command failed: " + command);
    return output;
}

std::string trim(const std::string& s) {
    const size_t b = s.find_first_not_of(" \t");
    const size_t e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// One kernel of the amdhsa.kernels metadata list: its scalar fields and its args.
struct KernelMetadata {
    std::map<std::string, std::string> fields;
    std::vector<std::map<std::string, std::string>> args;
    long number(const std::string& key) const {
        auto it = fields.find(key);
        return it == fields.end() ? -1 : std::strtol(it->second.c_str(), nullptr, 10);
    }
};

// Parses llvm-readelf --notes YAML: "  - .name: x" starts a kernel, "      - .offset:" an arg.
std::vector<KernelMetadata> parse_kernels(const std::string& notes, std::string& target) {
    std::vector<KernelMetadata> kernels;
    std::istringstream in(notes);
    std::string line;
    bool in_kernels = false, in_args = false;
    while (std::getline(in, line)) {
        const size_t indent = line.find_first_not_of(' ');
        if (indent == std::string::npos) continue;
        const std::string body = trim(line);
        if (body.rfind("amdhsa.target:", 0) == 0) target = trim(body.substr(14));
        if (indent == 0) {
            in_kernels = body == "amdhsa.kernels:";
            continue;
        }
        if (!in_kernels) continue;
        std::string entry = body;
        bool starts_item = false;
        if (entry.rfind("- ", 0) == 0) {
            entry = trim(entry.substr(2));
            starts_item = true;
        }
        const size_t colon = entry.find(':');
        if (colon == std::string::npos) continue;
        const std::string key = entry.substr(0, colon);
        const std::string value = trim(entry.substr(colon + 1));
        if (indent == 2 && starts_item) {
            kernels.emplace_back();
            in_args = false;
        }
        if (kernels.empty()) continue;
        if (indent <= 4 && !starts_item) in_args = false;
        if (key == ".args") {
            in_args = true;
            continue;
        }
        if (in_args && indent >= 6) {
            if (starts_item) kernels.back().args.emplace_back();
            if (!kernels.back().args.empty()) kernels.back().args.back()[key] = value;
        } else {
            kernels.back().fields[key] = value;
        }
    }
    return kernels;
}

void check_elf(const std::string& path, const std::string& arch) {
    std::ifstream file(path, std::ios::binary);
    std::vector<unsigned char> h((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    if (h.size() < 64 || h[0] != 0x7f || h[1] != 'E' || h[2] != 'L' || h[3] != 'F') {
        fail("elf", "not an ELF file");
        return;
    }
    if (h[4] != 2 || h[5] != 1) fail("elf", "not ELF64 little-endian");
    if (h[7] != 64) fail("elf", "OS/ABI " + std::to_string(h[7]) + ", expected 64 (AMDGPU HSA)");
    if (h[8] != 3) fail("elf", "ABI version " + std::to_string(h[8]) + ", expected 3 (code object v5)");
    const unsigned machine = h[18] | (h[19] << 8);
    if (machine != 224) fail("elf", "e_machine " + std::to_string(machine) + ", expected 224 (EM_AMDGPU)");
    const unsigned flags = h[48] | (h[49] << 8) | (h[50] << 16) | (static_cast<unsigned>(h[51]) << 24);
    const unsigned expected_mach = arch == "gfx950" ? 0x4f : arch == "gfx942" ? 0x4c : 0;
    if ((flags & 0xff) != expected_mach) {
        char text[128];
        std::snprintf(text, sizeof text, "e_flags processor 0x%02x, expected 0x%02x (%s)", flags & 0xff, expected_mach,
                      arch.c_str());
        fail("elf", text);
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 6) {
        std::fprintf(stderr, "usage: %s READELF OBJDUMP FILE ARCH VARIANT\n", argv[0]);
        return 2;
    }
    const std::string readelf = argv[1], objdump = argv[2], path = argv[3], arch = argv[4], variant = argv[5];
    object_name = path;

    check_elf(path, arch);

    std::string target;
    const std::vector<KernelMetadata> kernels = parse_kernels(run(readelf + " --notes '" + path + "'"), target);
    if (target.find("--" + arch) == std::string::npos) fail("elf", "metadata target '" + target + "' is not " + arch);

    // The kernels the launch plan may launch from this object.
    std::set<std::string> expected;
    for (const auto& spec : zyfa::hip::make_hip_attn_catalogue()->kernels(arch)) {
        if (variant == spec.variant) expected.insert(spec.symbol);
    }
    if (expected.empty()) fail("kernels", "the HIP catalogue lists no kernel of variant " + variant + " on " + arch);
    std::set<std::string> found;
    for (const KernelMetadata& k : kernels) found.insert(k.fields.count(".name") ? k.fields.at(".name") : "?");
    if (found != expected) {
        std::string text = "metadata kernels {";
        for (const auto& name : found) text += " " + name;
        text += " }, the catalogue expects {";
        for (const auto& name : expected) text += " " + name;
        fail("kernels", text + " }");
    }

    const long args_size = static_cast<long>(sizeof(zyfa::AttnKernelArgs));
    const long register_budget = 512 / zyfa::amd::kWavesPerSimd;
    const long lds_limit = arch == "gfx950" ? 160 * 1024 : 64 * 1024;
    for (const KernelMetadata& k : kernels) {
        const std::string name = k.fields.count(".name") ? k.fields.at(".name") : "?";
        const std::string where = "kernel " + name + ": ";
        // Every HIP C++ kernel takes AttnExtraArgs (block table, split-KV) by value after
        // AttnKernelArgs; the assembly kernels (variants attn_fwd_asm_*) AttnKernelArgs only, but
        // their paged variants (attn_fwd_asm_*_paged_*), which take the block table as HIP C++ does.
        const bool assembly = variant.rfind("attn_fwd_asm_", 0) == 0 && variant.find("_paged_") == std::string::npos;
        const size_t arg_count = assembly ? 1 : 2;
        auto by_value_at = [&](size_t i, long offset, long size) {
            return k.args[i].count(".value_kind") != 0 && k.args[i].at(".value_kind") == "by_value" &&
                   std::strtol(k.args[i].at(".offset").c_str(), nullptr, 10) == offset &&
                   std::strtol(k.args[i].at(".size").c_str(), nullptr, 10) == size;
        };
        const long extra_size = static_cast<long>(sizeof(zyfa::amd::AttnExtraArgs));
        if (k.args.size() != arg_count || !by_value_at(0, 0, args_size) ||
            (!assembly && !by_value_at(1, args_size, extra_size))) {
            fail("kernels", where + "expected by_value arguments AttnKernelArgs (" + std::to_string(args_size) +
                                " bytes at offset 0)" +
                                (assembly ? "" : " and AttnExtraArgs (" + std::to_string(extra_size) + " bytes after it)") +
                                ", found " + std::to_string(k.args.size()) + " argument(s)");
        }
        if (k.number(".kernarg_segment_size") < args_size + (assembly ? 0 : extra_size)) {
            fail("kernels", where + "kernarg_segment_size " + std::to_string(k.number(".kernarg_segment_size")));
        }
        if (k.number(".wavefront_size") != 64) fail("kernels", where + "wavefront_size is not 64");
        if (k.number(".max_flat_workgroup_size") != zyfa::amd::kThreads) {
            fail("kernels", where + "max_flat_workgroup_size " + std::to_string(k.number(".max_flat_workgroup_size")) +
                                ", the plan launches " + std::to_string(zyfa::amd::kThreads) + " threads");
        }
        const long vgprs = k.number(".vgpr_count");
        const long agprs = k.number(".agpr_count") < 0 ? 0 : k.number(".agpr_count");
        const long total = agprs > 0 ? (vgprs + 3) / 4 * 4 + agprs : vgprs;
        if (vgprs <= 0 || total > 512 || total > register_budget) {
            fail("registers", where + std::to_string(vgprs) + " VGPRs + " + std::to_string(agprs) + " AGPRs = " +
                                  std::to_string(total) + ", over " + std::to_string(register_budget) + " for " +
                                  std::to_string(zyfa::amd::kWavesPerSimd) + " waves per SIMD");
        }
        if (k.number(".vgpr_spill_count") > 0) {
            fail("registers", where + std::to_string(k.number(".vgpr_spill_count")) + " VGPRs spilled");
        }
        const long lds = k.number(".group_segment_fixed_size");
        if (lds < 0 || lds > lds_limit) {
            fail("lds", where + "group segment " + std::to_string(lds) + " bytes, " + arch + " allows " +
                            std::to_string(lds_limit));
        }
        if (k.number(".private_segment_fixed_size") != 0) {
            fail("scratch", where + "private segment " + std::to_string(k.number(".private_segment_fixed_size")) +
                                " bytes per lane (spills or a stack), expected 0");
        }
        if (k.fields.count(".uses_dynamic_stack") && k.fields.at(".uses_dynamic_stack") != "false") {
            fail("scratch", where + "uses a dynamic stack");
        }
    }

    // Instructions: the object holds one kernel family, so the whole disassembly is checked; the
    // rule on exponentials reads each LEAN kernel's own code (an FP8 object also holds EXACT).
    const std::string code = run(objdump + " -d --mcpu=" + arch + " '" + path + "'");
    auto starts_with_mnemonic = [](const std::string& body, const std::string& mnemonic) {
        return body.compare(0, mnemonic.size(), mnemonic) == 0 &&
               (body.size() == mnemonic.size() || body[mnemonic.size()] == ' ' || body[mnemonic.size()] == '_');
    };
    // In the kernel whose disassembly label (`<name>:`) names `kernel`, or anywhere for "".
    auto contains_in = [&](const std::string& mnemonic, const std::string& kernel) {
        std::istringstream in(code);
        std::string line;
        bool inside = kernel.empty();
        while (std::getline(in, line)) {
            const std::string body = trim(line);
            if (!kernel.empty() && !body.empty() && body.back() == ':' && body.find(" <") != std::string::npos) {
                inside = body.find("<" + kernel + ">:") != std::string::npos;
                continue;
            }
            if (inside && starts_with_mnemonic(body, mnemonic)) return true;
        }
        return false;
    };
    auto contains = [&](const std::string& mnemonic) { return contains_in(mnemonic, ""); };
    if (code.find("scratch_") != std::string::npos) fail("scratch", "the code contains scratch_* instructions");
    const bool int8 = variant.find("_int8_") != std::string::npos;
    const bool fp8 = int8 || variant.find("_fp8_") != std::string::npos;  // INT8: P.V is FP8
    std::string mfma;
    if (int8) {
        const std::string scores = arch == "gfx950" ? "v_mfma_i32_32x32x32_i8" : "v_mfma_i32_32x32x16_i8";
        if (!contains(scores)) fail("mfma", "no " + scores + " (the INT8 scores) in the code");
    }
    if (fp8) {
        mfma = arch == "gfx950" ? "v_mfma_scale_f32_32x32x64_f8f6f4" : "v_mfma_f32_32x32x16_fp8_fp8";
        for (const KernelMetadata& k : kernels) {
            const std::string name = k.fields.count(".name") ? k.fields.at(".name") : "";
            if (name.find("_lean_") != std::string::npos && contains_in("v_exp_f32", name))
                fail("mfma", name + ", a LEAN kernel, contains v_exp_f32 (Lean P needs no exponential)");
        }
    } else {
        mfma = arch == "gfx950" ? "v_mfma_f32_32x32x16_bf16" : "v_mfma_f32_32x32x8_bf16";
    }
    if (!contains(mfma)) fail("mfma", "no " + mfma + " in the code");

    const zyfa_amd_check::ExecReport exec = zyfa_amd_check::find_mfma_under_partial_exec(code);
    if (!exec.error.empty()) fail("uniform-mfma", "the disassembly could not be analysed: " + exec.error);
    if (exec.error.empty() && exec.mfma_count == 0) fail("uniform-mfma", "no MFMA reached from a kernel entry");
    for (const zyfa_amd_check::ExecFinding& f : exec.partial_exec) {
        char where[512];
        std::snprintf(where, sizeof where, "PC 0x%llx (%s+0x%llx)", static_cast<unsigned long long>(f.address),
                      f.kernel.c_str(), static_cast<unsigned long long>(f.kernel_offset));
        fail("uniform-mfma", std::string(where) + ": EXEC is not proven full at '" + f.instruction + "'");
    }

    if (failures == 0) {
        std::printf("%s: %zu kernel(s), all rules hold (elf, kernels, registers, lds, scratch, mfma, "
                    "uniform-mfma: %zu MFMAs with a full EXEC)\n",
                    path.c_str(), kernels.size(), exec.mfma_count);
        return 0;
    }
    std::string rules;
    for (const std::string& rule : failed_rules) rules += " " + rule;
    std::fprintf(stderr, "%s: FAILED rules:%s\n", path.c_str(), rules.c_str());
    return 1;
}
