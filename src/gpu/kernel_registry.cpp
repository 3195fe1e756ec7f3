#include "kernel_registry.hpp"

#include <cstring>

#include "core/errors.hpp"

namespace zyfa {
namespace gpu {

KernelRegistry::KernelRegistry(const EmbeddedImageTable& table) : images_(table.images), count_(table.count) {
    if (table.format_version != kEmbeddedImageFormatVersion) {
        throw Error(ZYFA_ERROR_INTERNAL, "embedded GPU image table has format version " +
                                             std::to_string(table.format_version) + ", this library reads version " +
                                             std::to_string(kEmbeddedImageFormatVersion));
    }
    if (count_ != 0 && images_ == nullptr) throw Error(ZYFA_ERROR_INTERNAL, "embedded GPU image table has no images");
}

const KernelRegistry& KernelRegistry::embedded() {
    static const KernelRegistry registry(embedded_image_table());  // thread-safe static init
    return registry;
}

const EmbeddedImage* KernelRegistry::find(const char* vendor, const char* arch, const char* variant) const noexcept {
    if (vendor == nullptr || arch == nullptr || variant == nullptr) return nullptr;
    for (size_t i = 0; i < count_; ++i) {
        const EmbeddedImage& image = images_[i];
        if (std::strcmp(image.vendor, vendor) == 0 && std::strcmp(image.arch, arch) == 0 &&
            std::strcmp(image.variant, variant) == 0) {
            return &image;
        }
    }
    return nullptr;
}

bool KernelRegistry::has_arch(const char* vendor, const char* arch) const noexcept {
    if (vendor == nullptr || arch == nullptr) return false;
    for (size_t i = 0; i < count_; ++i) {
        if (std::strcmp(images_[i].vendor, vendor) == 0 && std::strcmp(images_[i].arch, arch) == 0) return true;
    }
    return false;
}

std::string KernelRegistry::list_archs(const char* vendor) const {
    std::string text;
    for (size_t i = 0; i < count_; ++i) {
        const EmbeddedImage& image = images_[i];
        if (vendor != nullptr && std::strcmp(image.vendor, vendor) != 0) continue;
        bool seen = false;
        for (size_t j = 0; j < i; ++j) {
            const bool same_vendor = vendor == nullptr || std::strcmp(images_[j].vendor, vendor) == 0;
            if (same_vendor && std::strcmp(images_[j].arch, image.arch) == 0) seen = true;
        }
        if (seen) continue;
        if (!text.empty()) text += ", ";
        text += image.arch;
    }
    return text.empty() ? "none" : text;
}

}  // namespace gpu
}  // namespace zyfa
