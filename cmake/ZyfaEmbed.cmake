# Embedding GPU code objects (cubins, AMD code objects) into libzyfa.so.
#
# The contract for kernel subdirectories (kernels/nvidia, kernels/amd):
#
#   zyfa_add_embedded_image(VENDOR  nvidia|amd
#                           ARCH    sm_90a|sm_80|gfx950|gfx942|...
#                           VARIANT <name>            # e.g. attn_fwd_bf16; [A-Za-z0-9_]
#                           FILE    <absolute path>   # the binary, produced at BUILD time
#                           DEPENDS <target or file>...)  # what produces FILE
#
#   - Build FILE with an add_custom_command (nvcc -cubin, clang, ld.lld) and wrap the commands in
#     one add_custom_target; pass that target (and/or FILE) as DEPENDS. A target is needed for
#     cross-directory ordering: zyfa_objects gets add_dependencies() on every DEPENDS that names a
#     target, and a file-level dependency on FILE, so editing a kernel re-embeds it.
#   - (VENDOR, ARCH, VARIANT) must be unique. At run time src/gpu/kernel_registry.hpp looks images
#     up by exactly these three strings: the host launch plan names VARIANT, the backend supplies
#     VENDOR and the device's ARCH.
#   - Call it from any directory added BEFORE the top-level CMakeLists calls
#     zyfa_generate_embedded_images(zyfa_objects) (the top level adds kernels/* first).
#
# zyfa_generate_embedded_images() writes a manifest at configure time and, at BUILD time, a
# generated embedded_images.cpp holding each FILE as an unsigned char array plus the table that
# src/gpu/kernel_registry.cpp reads (format version kEmbeddedImageFormatVersion). With no images
# the table is empty and every GPU device reports "no embedded image for <arch>".
#
# The same file is the generator script: `cmake -DZYFA_EMBED_MANIFEST=... -DZYFA_EMBED_OUTPUT=...
# -DZYFA_EMBED_FUNCTION=... -P ZyfaEmbed.cmake`.

# Bump together with kEmbeddedImageFormatVersion in src/gpu/kernel_registry.hpp.
set(ZYFA_EMBED_FORMAT_VERSION 1)

if(CMAKE_SCRIPT_MODE_FILE)
  # --- generator (runs at build time) ------------------------------------------------------------
  file(STRINGS "${ZYFA_EMBED_MANIFEST}" entries)
  set(arrays "")
  set(rows "")
  set(index 0)
  foreach(entry IN LISTS entries)
    string(REPLACE "|" ";" fields "${entry}")
    list(GET fields 0 vendor)
    list(GET fields 1 arch)
    list(GET fields 2 variant)
    list(GET fields 3 path)
    if(NOT EXISTS "${path}")
      message(FATAL_ERROR "zyfa embed: ${vendor}/${arch}/${variant}: ${path} does not exist")
    endif()
    file(SIZE "${path}" size)
    if(size EQUAL 0)
      message(FATAL_ERROR "zyfa embed: ${vendor}/${arch}/${variant}: ${path} is empty")
    endif()
    file(READ "${path}" hex HEX)
    # 16 bytes a line, then each byte as 0xNN.
    string(REGEX REPLACE "([0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f])"
           "\\1\n" hex "${hex}")
    string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
    string(APPEND arrays "// ${path}\nalignas(64) const unsigned char kImage${index}[] = {\n${hex}\n};\n")
    string(APPEND rows "    {\"${vendor}\", \"${arch}\", \"${variant}\", kImage${index}, sizeof(kImage${index})},\n")
    math(EXPR index "${index} + 1")
  endforeach()
  if(index EQUAL 0)
    set(table "const EmbeddedImage* const kImages = nullptr;\n")
  else()
    set(table "const EmbeddedImage kImages[] = {\n${rows}};\n")
  endif()
  set(text "// Generated at build time by cmake/ZyfaEmbed.cmake from ${ZYFA_EMBED_MANIFEST}. Do not edit.
#include \"gpu/kernel_registry.hpp\"

namespace zyfa {
namespace gpu {
namespace {

${arrays}
${table}
}  // namespace

EmbeddedImageTable ${ZYFA_EMBED_FUNCTION}() noexcept {
    return EmbeddedImageTable{${ZYFA_EMBED_FORMAT_VERSION}u, kImages, ${index}u};
}

}  // namespace gpu
}  // namespace zyfa
")
  file(WRITE "${ZYFA_EMBED_OUTPUT}" "${text}")
  return()
endif()

# --- configure-time API --------------------------------------------------------------------------
set(ZYFA_EMBED_SCRIPT "${CMAKE_CURRENT_LIST_FILE}")

function(zyfa_add_embedded_image)
  cmake_parse_arguments(E "" "VENDOR;ARCH;VARIANT;FILE" "DEPENDS" ${ARGN})
  foreach(required VENDOR ARCH VARIANT FILE)
    if(NOT E_${required})
      message(FATAL_ERROR "zyfa_add_embedded_image: ${required} is required")
    endif()
  endforeach()
  if(NOT E_VENDOR MATCHES "^(nvidia|amd)$")
    message(FATAL_ERROR "zyfa_add_embedded_image: VENDOR ${E_VENDOR} is not nvidia or amd")
  endif()
  foreach(key ARCH VARIANT)
    if(NOT E_${key} MATCHES "^[A-Za-z0-9_]+$")
      message(FATAL_ERROR "zyfa_add_embedded_image: ${key} '${E_${key}}' must match [A-Za-z0-9_]+")
    endif()
  endforeach()
  if(NOT IS_ABSOLUTE "${E_FILE}")
    message(FATAL_ERROR "zyfa_add_embedded_image: FILE ${E_FILE} must be an absolute path")
  endif()
  get_property(existing GLOBAL PROPERTY ZYFA_EMBEDDED_IMAGE_KEYS)
  set(key "${E_VENDOR}/${E_ARCH}/${E_VARIANT}")
  if(key IN_LIST existing)
    message(FATAL_ERROR "zyfa_add_embedded_image: ${key} is added twice")
  endif()
  set_property(GLOBAL APPEND PROPERTY ZYFA_EMBEDDED_IMAGE_KEYS "${key}")
  set_property(GLOBAL APPEND PROPERTY ZYFA_EMBEDDED_IMAGES "${E_VENDOR}|${E_ARCH}|${E_VARIANT}|${E_FILE}")
  set_property(GLOBAL APPEND PROPERTY ZYFA_EMBEDDED_IMAGE_DEPENDS ${E_DEPENDS})
endfunction()

# zyfa_embed_files(OUTPUT <cpp> FUNCTION <name> MANIFEST <txt> ENTRIES <v|a|var|file>... DEPENDS ...)
# Generates <cpp> (at build time) defining zyfa::gpu::<name>() -> EmbeddedImageTable. The library
# uses it through zyfa_generate_embedded_images; tests use it for fixture tables.
function(zyfa_embed_files)
  cmake_parse_arguments(E "" "OUTPUT;FUNCTION;MANIFEST" "ENTRIES;DEPENDS" ${ARGN})
  set(manifest_text "")
  set(image_files "")
  foreach(entry IN LISTS E_ENTRIES)
    string(APPEND manifest_text "${entry}\n")
    string(REPLACE "|" ";" fields "${entry}")
    list(GET fields 3 path)
    list(APPEND image_files "${path}")
  endforeach()
  # Rewritten only when it changes, so that reconfiguring does not regenerate the sources.
  file(CONFIGURE OUTPUT "${E_MANIFEST}" CONTENT "${manifest_text}")
  set(file_depends "")
  foreach(dep IN LISTS E_DEPENDS)
    if(NOT TARGET "${dep}")
      list(APPEND file_depends "${dep}")
    endif()
  endforeach()
  add_custom_command(OUTPUT "${E_OUTPUT}"
    COMMAND ${CMAKE_COMMAND} -DZYFA_EMBED_MANIFEST=${E_MANIFEST} -DZYFA_EMBED_OUTPUT=${E_OUTPUT}
            -DZYFA_EMBED_FUNCTION=${E_FUNCTION} -P ${ZYFA_EMBED_SCRIPT}
    DEPENDS "${E_MANIFEST}" "${ZYFA_EMBED_SCRIPT}" ${image_files} ${file_depends} ${E_DEPENDS}
    COMMENT "Embedding GPU code objects into ${E_OUTPUT}"
    VERBATIM)
endfunction()

# Called once by the top-level CMakeLists after every kernels/* directory: compiles the registry
# table of all zyfa_add_embedded_image() calls into <target> and sets ZYFA_EMBEDDED_TARGETS (in the
# caller's scope) to the embedded archs, e.g. "sm_90a;sm_80", for the configure summary.
function(zyfa_generate_embedded_images target)
  get_property(entries GLOBAL PROPERTY ZYFA_EMBEDDED_IMAGES)
  get_property(depends GLOBAL PROPERTY ZYFA_EMBEDDED_IMAGE_DEPENDS)
  set(generated "${PROJECT_BINARY_DIR}/generated/embedded_images.cpp")
  zyfa_embed_files(OUTPUT "${generated}" FUNCTION embedded_image_table
                   MANIFEST "${PROJECT_BINARY_DIR}/generated/embedded_images.manifest"
                   ENTRIES ${entries} DEPENDS ${depends})
  target_sources(${target} PRIVATE "${generated}")
  foreach(dep IN LISTS depends)
    if(TARGET "${dep}")
      add_dependencies(${target} "${dep}")
    endif()
  endforeach()
  set(archs "")
  foreach(entry IN LISTS entries)
    string(REPLACE "|" ";" fields "${entry}")
    list(GET fields 1 arch)
    list(APPEND archs "${arch}")
  endforeach()
  list(REMOVE_DUPLICATES archs)
  set(ZYFA_EMBEDDED_TARGETS "${archs}" PARENT_SCOPE)
endfunction()
