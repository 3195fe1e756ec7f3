# The AMD kernels' toolchain: a clang++ with the AMDGPU target that compiles HIP device code
# without ROCm headers (Debian's clang-22 with lld-22, or ROCm's own clang), plus llvm-readelf and
# llvm-objdump for the static checks (tests/amd). Sets ZYFA_AMD_DEFAULT for option(ZYFA_AMD), and
# the cache entries ZYFA_AMD_CLANG, ZYFA_LLVM_READELF, ZYFA_LLVM_OBJDUMP.
#
# A candidate counts only if it compiles and links a probe kernel with the gfx950 scaled MFMA
# and the gfx942 FP8 MFMA into code objects, so an older clang (no gfx950) or a clang without
# lld is rejected with the reason in the configure output.

set(_zyfa_amd_hints /usr/lib/llvm-22/bin /opt/rocm/llvm/bin)
if(DEFINED ENV{ROCM_PATH})
  list(PREPEND _zyfa_amd_hints $ENV{ROCM_PATH}/llvm/bin)
endif()

set(ZYFA_AMD_DEFAULT OFF)
set(ZYFA_AMD_REASON "")
if(NOT ZYFA_AMD_CLANG)
  find_program(ZYFA_AMD_CLANG NAMES clang++-22 clang++ HINTS ${_zyfa_amd_hints}
               DOC "clang++ with the AMDGPU target for kernels/amd (Debian clang++-22 or ROCm's clang++)")
endif()
if(ZYFA_AMD_CLANG)
  set(_probe_dir ${CMAKE_BINARY_DIR}/amd_toolchain_probe)
  file(MAKE_DIRECTORY ${_probe_dir})
  file(WRITE ${_probe_dir}/probe.hip "
#define __global__ __attribute__((global))
typedef float f32x16 __attribute__((ext_vector_type(16)));
typedef int i32x8 __attribute__((ext_vector_type(8)));
extern \"C\" __global__ void probe(f32x16* out, i32x8 a, long b) {
#if defined(__gfx950__)
  *out = __builtin_amdgcn_mfma_scale_f32_32x32x64_f8f6f4(a, a, *out, 0, 0, 0, 127, 0, 127);
#else
  *out = __builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8(b, b, *out, 0, 0, 0);
#endif
}
")
  set(ZYFA_AMD_CLANG_WORKS TRUE)
  foreach(_arch gfx950 gfx942)
    execute_process(
      COMMAND ${ZYFA_AMD_CLANG} -x hip --offload-arch=${_arch} -nogpulib -nogpuinc --cuda-device-only
              --no-gpu-bundle-output -O1 -c ${_probe_dir}/probe.hip -o ${_probe_dir}/probe_${_arch}.hsaco
      RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
    if(NOT _rc EQUAL 0)
      set(ZYFA_AMD_CLANG_WORKS FALSE)
      string(STRIP "${_err}" _err)
      set(ZYFA_AMD_REASON "${ZYFA_AMD_CLANG} cannot build a ${_arch} code object: ${_err}")
      break()
    endif()
  endforeach()
  if(ZYFA_AMD_CLANG_WORKS)
    set(ZYFA_AMD_DEFAULT ON)
  endif()
else()
  set(ZYFA_AMD_REASON "no clang++-22 or ROCm clang++ found (Debian: apt-get install clang-22 lld-22 llvm-22)")
endif()

get_filename_component(_zyfa_amd_clang_dir "${ZYFA_AMD_CLANG}" DIRECTORY)
find_program(ZYFA_LLVM_READELF NAMES llvm-readelf-22 llvm-readelf HINTS ${_zyfa_amd_clang_dir} ${_zyfa_amd_hints}
             DOC "llvm-readelf for the AMD code object checks")
find_program(ZYFA_LLVM_OBJDUMP NAMES llvm-objdump-22 llvm-objdump HINTS ${_zyfa_amd_clang_dir} ${_zyfa_amd_hints}
             DOC "llvm-objdump for the AMD code object checks")

option(ZYFA_AMD "Build the AMD backend's code objects (needs an AMDGPU clang at build time only)" ${ZYFA_AMD_DEFAULT})
if(ZYFA_AMD AND NOT ZYFA_AMD_CLANG_WORKS)
  message(FATAL_ERROR "ZYFA_AMD=ON but ${ZYFA_AMD_REASON}. Set ZYFA_AMD_CLANG, or configure with -DZYFA_AMD=OFF")
endif()
if(ZYFA_AMD)
  message(STATUS "zyfa: AMD backend ON (${ZYFA_AMD_CLANG}; code objects for gfx950, gfx942 unless "
                 "ZYFA_AMD_ARCHS says otherwise)")
else()
  if(NOT ZYFA_AMD_REASON)
    set(ZYFA_AMD_REASON "ZYFA_AMD=OFF")
  endif()
  message(STATUS "zyfa: AMD backend OFF (${ZYFA_AMD_REASON}); HIP contexts will return "
                 "ZYFA_ERROR_NOT_SUPPORTED")
endif()
