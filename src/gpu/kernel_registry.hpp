// The GPU code objects embedded in libzyfa.so (cubins for NVIDIA, code objects for AMD), keyed by
// (vendor, arch, variant). cmake/ZyfaEmbed.cmake generates the table at build time from the
// binaries that kernels/*/CMakeLists.txt register with zyfa_add_embedded_image().
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace zyfa {
namespace gpu {

// Version of the generated table's layout; the generator (cmake/ZyfaEmbed.cmake,
// ZYFA_EMBED_FORMAT_VERSION) writes it into the table and the registry refuses any other.
constexpr uint32_t kEmbeddedImageFormatVersion = 1;

struct EmbeddedImage {
    const char* vendor;   // "nvidia", "amd"
    const char* arch;     // "sm_90a", "sm_80", "gfx950"
    const char* variant;  // a kernel family, named by the launch plan: "attn_fwd_bf16"
    const unsigned char* data;
    size_t size;
};

struct EmbeddedImageTable {
    uint32_t format_version;
    const EmbeddedImage* images;
    size_t count;
};

// The table of this build (generated embedded_images.cpp); empty when no GPU code is compiled in.
EmbeddedImageTable embedded_image_table() noexcept;

class KernelRegistry {
public:
    // Throws Error(INTERNAL) when the table was generated with another format version.
    explicit KernelRegistry(const EmbeddedImageTable& table);

    // The registry of this build's embedded images.
    static const KernelRegistry& embedded();

    // Null when there is no image for exactly this (vendor, arch, variant).
    const EmbeddedImage* find(const char* vendor, const char* arch, const char* variant) const noexcept;
    // Whether any image exists for (vendor, arch).
    bool has_arch(const char* vendor, const char* arch) const noexcept;
    // The distinct archs of `vendor` (null: every vendor), comma separated in table order:
    // "sm_90a, sm_80"; "none" when there are none.
    std::string list_archs(const char* vendor = nullptr) const;

    size_t size() const noexcept { return count_; }
    const EmbeddedImage& operator[](size_t i) const noexcept { return images_[i]; }

private:
    const EmbeddedImage* images_;
    size_t count_;
};

}  // namespace gpu
}  // namespace zyfa
