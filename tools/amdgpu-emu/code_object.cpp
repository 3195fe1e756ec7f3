#include "code_object.hpp"

#include <elf.h>

#include <cstring>

#include "disassembly.hpp"
#include "emu_error.hpp"
#include "msgpack_reader.hpp"

namespace zyfa {
namespace emu {

const char* arch_name(Arch arch) { return arch == Arch::Gfx942 ? "gfx942" : "gfx950"; }

namespace {

constexpr uint32_t kMachGfx942 = 0x04c;  // EF_AMDGPU_MACH_AMDGCN_GFX942
constexpr uint32_t kMachGfx950 = 0x04f;  // EF_AMDGPU_MACH_AMDGCN_GFX950
constexpr uint32_t kNoteAmdgpuMetadata = 32;  // NT_AMDGPU_METADATA

struct ElfView {
    const uint8_t* data;
    size_t size;
    const Elf64_Ehdr* header;
    std::vector<const Elf64_Shdr*> sections;

    template <class T>
    const T* at(uint64_t offset, uint64_t count = 1) const {
        if (offset > size || count * sizeof(T) > size - offset) throw EmuError("code object: truncated ELF");
        return reinterpret_cast<const T*>(data + offset);
    }
    // Bytes at virtual address `address`, from the section that holds it.
    const uint8_t* bytes_at(uint64_t address, uint64_t length) const {
        for (const Elf64_Shdr* s : sections) {
            if (s->sh_type == SHT_NOBITS || s->sh_addr == 0) continue;
            if (address >= s->sh_addr && address + length <= s->sh_addr + s->sh_size) {
                return at<uint8_t>(s->sh_offset + (address - s->sh_addr), length);
            }
        }
        throw EmuError("code object: no section holds address " + std::to_string(address));
    }
};

KernelDescriptor parse_descriptor(const uint8_t* p) {
    KernelDescriptor d;
    std::memcpy(&d.group_segment_fixed_size, p + 0, 4);
    std::memcpy(&d.private_segment_fixed_size, p + 4, 4);
    std::memcpy(&d.kernarg_size, p + 8, 4);
    std::memcpy(&d.entry_offset, p + 16, 8);
    std::memcpy(&d.rsrc3, p + 44, 4);
    std::memcpy(&d.rsrc1, p + 48, 4);
    std::memcpy(&d.rsrc2, p + 52, 4);
    std::memcpy(&d.code_properties, p + 56, 2);
    std::memcpy(&d.kernarg_preload, p + 58, 2);
    // gfx90a+: VGPR granule 8 over the unified file; accum_offset in rsrc3[5:0] as (offset/4 - 1).
    d.total_vgprs = static_cast<int>((d.rsrc1 & 0x3f) + 1) * 8;
    d.accum_offset = static_cast<int>((d.rsrc3 & 0x3f) + 1) * 4;
    d.user_sgpr_count = static_cast<int>((d.rsrc2 >> 1) & 0x1f);
    for (int i = 0; i < 3; ++i) d.workgroup_id[i] = (d.rsrc2 >> (7 + i)) & 1;
    d.workitem_id_dims = static_cast<int>((d.rsrc2 >> 11) & 3);
    return d;
}

void read_metadata(const MsgpackValue& root, std::vector<Kernel>& kernels) {
    const MsgpackValue* list = root.get("amdhsa.kernels");
    if (!list || list->type != MsgpackValue::Type::Array) throw EmuError("code object: metadata has no amdhsa.kernels");
    for (const MsgpackValue& k : list->array) {
        const MsgpackValue* symbol = k.get(".symbol");
        if (!symbol) throw EmuError("code object: kernel metadata without .symbol");
        for (Kernel& kernel : kernels) {
            if (kernel.name + ".kd" != symbol->string) continue;
            if (const MsgpackValue* v = k.get(".kernarg_segment_size")) kernel.kernarg_segment_size = v->integer;
            if (const MsgpackValue* v = k.get(".max_flat_workgroup_size")) kernel.max_flat_workgroup_size = v->integer;
            if (const MsgpackValue* args = k.get(".args")) {
                for (const MsgpackValue& a : args->array) {
                    KernelArgument arg;
                    if (const MsgpackValue* v = a.get(".offset")) arg.offset = v->integer;
                    if (const MsgpackValue* v = a.get(".size")) arg.size = v->integer;
                    if (const MsgpackValue* v = a.get(".value_kind")) arg.value_kind = v->string;
                    kernel.args.push_back(arg);
                }
            }
        }
    }
}

}  // namespace

std::shared_ptr<CodeObject> CodeObject::load(const void* data, size_t size) {
    ElfView elf{static_cast<const uint8_t*>(data), size, nullptr, {}};
    elf.header = elf.at<Elf64_Ehdr>(0);
    if (std::memcmp(elf.header->e_ident, ELFMAG, SELFMAG) != 0 || elf.header->e_ident[EI_CLASS] != ELFCLASS64 ||
        elf.header->e_machine != EM_AMDGPU) {
        throw EmuError("code object: not a 64-bit AMDGPU ELF");
    }
    auto object = std::make_shared<CodeObject>();
    const uint32_t mach = elf.header->e_flags & 0xff;
    if (mach == kMachGfx942) {
        object->arch_ = Arch::Gfx942;
    } else if (mach == kMachGfx950) {
        object->arch_ = Arch::Gfx950;
    } else {
        throw EmuError("code object: unsupported target (EF_AMDGPU_MACH " + std::to_string(mach) +
                       "); the emulator models gfx942 and gfx950");
    }
    const Elf64_Shdr* shdrs = elf.at<Elf64_Shdr>(elf.header->e_shoff, elf.header->e_shnum);
    for (int i = 0; i < elf.header->e_shnum; ++i) elf.sections.push_back(&shdrs[i]);

    // Kernels: every symbol NAME.kd (STT_OBJECT) has a kernel NAME.
    for (const Elf64_Shdr* s : elf.sections) {
        if (s->sh_type != SHT_SYMTAB && s->sh_type != SHT_DYNSYM) continue;
        const Elf64_Shdr* strtab = elf.sections.at(s->sh_link);
        const size_t count = s->sh_size / sizeof(Elf64_Sym);
        const Elf64_Sym* syms = elf.at<Elf64_Sym>(s->sh_offset, count);
        for (size_t i = 0; i < count; ++i) {
            const char* name = elf.at<char>(strtab->sh_offset + syms[i].st_name);
            const std::string symbol(name, strnlen(name, strtab->sh_size - syms[i].st_name));
            if (symbol.size() < 4 || symbol.compare(symbol.size() - 3, 3, ".kd") != 0) continue;
            const std::string kernel_name = symbol.substr(0, symbol.size() - 3);
            if (object->find_kernel(kernel_name)) continue;  // .symtab and .dynsym both list it
            Kernel k;
            k.name = kernel_name;
            k.descriptor_address = syms[i].st_value;
            k.descriptor = parse_descriptor(elf.bytes_at(k.descriptor_address, 64));
            k.entry = k.descriptor_address + k.descriptor.entry_offset;
            object->kernels_.push_back(k);
        }
    }
    if (object->kernels_.empty()) throw EmuError("code object: no kernel descriptor symbol (NAME.kd)");

    // Metadata note.
    for (const Elf64_Shdr* s : elf.sections) {
        if (s->sh_type != SHT_NOTE) continue;
        uint64_t pos = s->sh_offset;
        const uint64_t end = s->sh_offset + s->sh_size;
        while (pos + sizeof(Elf64_Nhdr) <= end) {
            const Elf64_Nhdr* note = elf.at<Elf64_Nhdr>(pos);
            const uint64_t name_at = pos + sizeof(Elf64_Nhdr);
            const uint64_t desc_at = name_at + ((note->n_namesz + 3) & ~3u);
            const uint8_t* name = elf.at<uint8_t>(name_at, note->n_namesz);
            if (note->n_type == kNoteAmdgpuMetadata && note->n_namesz >= 6 && std::memcmp(name, "AMDGPU", 6) == 0) {
                read_metadata(parse_msgpack(elf.at<uint8_t>(desc_at, note->n_descsz), note->n_descsz),
                              object->kernels_);
            }
            pos = desc_at + ((note->n_descsz + 3) & ~3u);
        }
    }

    object->instructions_ = disassemble(data, size, object->arch_);
    for (size_t i = 0; i < object->instructions_.size(); ++i) object->by_address_[object->instructions_[i].address] = i;
    for (const Kernel& k : object->kernels_) {
        if (!object->at(k.entry)) throw EmuError("code object: kernel " + k.name + " entry is not an instruction");
    }
    return object;
}

const Kernel* CodeObject::find_kernel(const std::string& name) const {
    for (const Kernel& k : kernels_) {
        if (k.name == name) return &k;
    }
    return nullptr;
}

const Instruction* CodeObject::at(uint64_t address) const {
    auto it = by_address_.find(address);
    return it == by_address_.end() ? nullptr : &instructions_[it->second];
}

std::vector<std::string> CodeObject::unsupported_mnemonics() const {
    std::vector<std::string> out;
    for (const Instruction& inst : instructions_) {
        if (inst.handler) continue;
        bool seen = false;
        for (const std::string& m : out) seen = seen || m == inst.mnemonic;
        if (!seen) out.push_back(inst.mnemonic);
    }
    return out;
}

}  // namespace emu
}  // namespace zyfa
