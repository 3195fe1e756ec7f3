// The embedded-image registry: the format-version check, lookup by (vendor, arch, variant), the
// arch listing behind zyfa_build_info, and the generator (cmake/ZyfaEmbed.cmake) round-tripping
// fixture files byte for byte.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
}

#include "core/errors.hpp"
#include "gpu/kernel_registry.hpp"
#include "zyfa.h"

namespace zyfa {
namespace gpu {
EmbeddedImageTable fixture_image_table() noexcept;  // generated from the files below
}
}  // namespace zyfa

namespace {

using zyfa::gpu::EmbeddedImage;
using zyfa::gpu::EmbeddedImageTable;
using zyfa::gpu::KernelRegistry;

std::vector<unsigned char> read_file(const char* path) {
    std::vector<unsigned char> bytes;
    FILE* file = std::fopen(path, "rb");
    if (file == nullptr) return bytes;
    int c;
    while ((c = std::fgetc(file)) != EOF) bytes.push_back(static_cast<unsigned char>(c));
    std::fclose(file);
    return bytes;
}

void expect_same_bytes(const EmbeddedImage* image, const char* path) {
    assert_non_null(image);
    const std::vector<unsigned char> expected = read_file(path);
    assert_true(!expected.empty());
    assert_int_equal(image->size, expected.size());
    assert_memory_equal(image->data, expected.data(), expected.size());
    // The generator aligns each image to 64 bytes (ELF images are read in place by the drivers).
    assert_int_equal(reinterpret_cast<uintptr_t>(image->data) % 64, 0);
}

void generated_table_round_trips_the_files(void**) {
    const KernelRegistry registry(zyfa::gpu::fixture_image_table());
    assert_int_equal(registry.size(), 4);
    expect_same_bytes(registry.find("nvidia", "sm_90a", "fixture_a"), ZYFA_FIXTURE_A);
    expect_same_bytes(registry.find("nvidia", "sm_90a", "fixture_c"), ZYFA_FIXTURE_C);
    expect_same_bytes(registry.find("nvidia", "sm_80", "fixture_b"), ZYFA_FIXTURE_B);
    expect_same_bytes(registry.find("amd", "gfx950", "fixture_a"), ZYFA_FIXTURE_A);
}

void lookup_needs_all_three_keys(void**) {
    const KernelRegistry registry(zyfa::gpu::fixture_image_table());
    assert_null(registry.find("nvidia", "sm_90", "fixture_a"));   // sm_90a images are not sm_90's
    assert_null(registry.find("nvidia", "sm_80", "fixture_a"));   // variant exists, other arch
    assert_null(registry.find("amd", "sm_90a", "fixture_a"));     // other vendor
    assert_null(registry.find("nvidia", "sm_90a", "fixture"));    // no prefix matching
    assert_null(registry.find(nullptr, "sm_90a", "fixture_a"));
    assert_true(registry.has_arch("nvidia", "sm_80"));
    assert_false(registry.has_arch("nvidia", "sm_75"));
    assert_false(registry.has_arch("amd", "sm_90a"));
}

void lists_distinct_archs_per_vendor(void**) {
    const KernelRegistry registry(zyfa::gpu::fixture_image_table());
    assert_string_equal(registry.list_archs("nvidia").c_str(), "sm_90a, sm_80");
    assert_string_equal(registry.list_archs("amd").c_str(), "gfx950");
    assert_string_equal(registry.list_archs().c_str(), "sm_90a, sm_80, gfx950");
    const KernelRegistry empty(EmbeddedImageTable{zyfa::gpu::kEmbeddedImageFormatVersion, nullptr, 0});
    assert_string_equal(empty.list_archs().c_str(), "none");
    assert_null(empty.find("nvidia", "sm_90a", "fixture_a"));
}

void refuses_another_format_version(void**) {
    const EmbeddedImageTable table = zyfa::gpu::fixture_image_table();
    assert_int_equal(table.format_version, zyfa::gpu::kEmbeddedImageFormatVersion);
    EmbeddedImageTable future = table;
    future.format_version = zyfa::gpu::kEmbeddedImageFormatVersion + 1;
    try {
        KernelRegistry registry(future);
        fail_msg("a table of format version %u was accepted", future.format_version);
    } catch (const zyfa::Error& error) {
        assert_int_equal(error.status(), ZYFA_ERROR_INTERNAL);
        assert_non_null(std::strstr(error.what(), "format version"));
    }
}

// This build's own table: readable, well-formed, and what zyfa_build_info reports.
void embedded_table_matches_build_info(void**) {
    const EmbeddedImageTable table = zyfa::gpu::embedded_image_table();
    assert_int_equal(table.format_version, zyfa::gpu::kEmbeddedImageFormatVersion);
    const KernelRegistry& registry = KernelRegistry::embedded();
    for (size_t i = 0; i < registry.size(); ++i) {
        assert_true(registry[i].size > 0);
        assert_non_null(registry[i].data);
        assert_ptr_equal(registry.find(registry[i].vendor, registry[i].arch, registry[i].variant), &registry[i]);
    }
    const std::string expected = "gpu targets: " + registry.list_archs() + ";";
    assert_non_null(std::strstr(zyfa_build_info(), expected.c_str()));
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(generated_table_round_trips_the_files),
        cmocka_unit_test(lookup_needs_all_three_keys),
        cmocka_unit_test(lists_distinct_archs_per_vendor),
        cmocka_unit_test(refuses_another_format_version),
        cmocka_unit_test(embedded_table_matches_build_info),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
