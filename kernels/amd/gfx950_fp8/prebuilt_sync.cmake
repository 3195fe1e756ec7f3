# Regenerates the gfx950 FP8 kernels from the generator and clang, then either checks them against
# the committed copies in prebuilt/ (MODE=check: the CTest test amd_gfx950_fp8_prebuilt_current) or
# replaces the committed copies (MODE=refresh: target zyfa_gfx950_fp8_refresh_prebuilt).
#   cmake -DMODE=check|refresh -DGENERATOR=... -DCLANG=... -DLLD=... -DOBJDUMP=... -DREADELF=...
#         -DWORK_DIR=... -DPREBUILT_DIR=... -P prebuilt_sync.cmake
#
# Comparison is byte for byte: clang-22's assembler and ld.lld-22 are deterministic here (the same
# .s assembled in two directories, by relative or absolute path, gives identical .co files;
# checked 2026-11-29). The one toolchain-dependent part of a .co is the linker's identification in
# .comment ("Linker: Debian LLD 22.1.8"): when that differs (another LLVM build), a .co counts as
# current if its disassembly and its metadata notes equal the committed one's, and the output says so.
cmake_minimum_required(VERSION 3.20)  # script mode: IN_LIST and the other policies of the project
foreach(required MODE GENERATOR CLANG LLD WORK_DIR PREBUILT_DIR)
  if(NOT DEFINED ${required} OR "${${required}}" STREQUAL "")
    message(FATAL_ERROR "prebuilt_sync.cmake: -D${required}= is required")
  endif()
endforeach()
if(NOT MODE MATCHES "^(check|refresh)$")
  message(FATAL_ERROR "prebuilt_sync.cmake: MODE must be check or refresh, not '${MODE}'")
endif()

# The target of a kernel: zyfa_gfx942_* are gfx942 (MI300X), every other one gfx950.
function(mcpu_of stem out)
  if(stem MATCHES "^zyfa_gfx942_")
    set(${out} gfx942 PARENT_SCOPE)
  else()
    set(${out} gfx950 PARENT_SCOPE)
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
execute_process(COMMAND ${GENERATOR} --out-dir ${WORK_DIR} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${GENERATOR} --out-dir ${WORK_DIR} failed (${rc})")
endif()

file(GLOB sources RELATIVE ${WORK_DIR} ${WORK_DIR}/*.s)
list(SORT sources)
if(NOT sources)
  message(FATAL_ERROR "the generator wrote no .s file into ${WORK_DIR}")
endif()
if(NOT EXISTS ${WORK_DIR}/manifest.json)
  message(FATAL_ERROR "the generator wrote no manifest.json into ${WORK_DIR}")
endif()
foreach(source IN LISTS sources)
  string(REGEX REPLACE "\\.s$" "" stem "${source}")
  mcpu_of(${stem} mcpu)
  execute_process(
    COMMAND ${CLANG} -x assembler -target amdgcn-amd-amdhsa -mcpu=${mcpu} -mcode-object-version=5
            -c ${source} -o ${stem}.o
    WORKING_DIRECTORY ${WORK_DIR} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "assembling ${WORK_DIR}/${source} failed (${rc})")
  endif()
  execute_process(COMMAND ${LLD} -shared ${stem}.o -o ${stem}.co WORKING_DIRECTORY ${WORK_DIR} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "linking ${WORK_DIR}/${stem}.o failed (${rc})")
  endif()
  file(REMOVE ${WORK_DIR}/${stem}.o)
endforeach()

file(GLOB regenerated RELATIVE ${WORK_DIR} ${WORK_DIR}/*.s ${WORK_DIR}/*.co ${WORK_DIR}/manifest.json)
list(SORT regenerated)

if(MODE STREQUAL "refresh")
  file(GLOB old ${PREBUILT_DIR}/*.s ${PREBUILT_DIR}/*.co ${PREBUILT_DIR}/manifest.json)
  if(old)
    file(REMOVE ${old})
  endif()
  foreach(name IN LISTS regenerated)
    file(COPY ${WORK_DIR}/${name} DESTINATION ${PREBUILT_DIR})
  endforeach()
  list(LENGTH regenerated count)
  message(STATUS "prebuilt/ refreshed: ${count} files from the generator and ${CLANG}")
  return()
endif()

# The linker identification (.comment) of a code object, or "" when it cannot be read.
function(toolchain_comment file out)
  set(text "")
  if(READELF)
    execute_process(COMMAND ${READELF} -p .comment ${file} OUTPUT_VARIABLE text ERROR_QUIET)
  endif()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# Disassembly plus metadata notes, without the file name line objdump prints.
function(code_listing file out)
  get_filename_component(stem ${file} NAME_WE)
  mcpu_of(${stem} mcpu)
  execute_process(COMMAND ${OBJDUMP} -d --mcpu=${mcpu} ${file} OUTPUT_VARIABLE code ERROR_QUIET)
  execute_process(COMMAND ${READELF} --notes ${file} OUTPUT_VARIABLE notes ERROR_QUIET)
  string(REGEX REPLACE "[^\n]*file format[^\n]*\n" "" code "${code}")
  string(REGEX REPLACE "File: [^\n]*\n" "" notes "${notes}")
  set(${out} "${code}${notes}" PARENT_SCOPE)
endfunction()

set(problems "")
file(GLOB committed RELATIVE ${PREBUILT_DIR} ${PREBUILT_DIR}/*.s ${PREBUILT_DIR}/*.co ${PREBUILT_DIR}/manifest.json)
foreach(name IN LISTS committed)
  if(NOT name IN_LIST regenerated)
    string(APPEND problems "  prebuilt/${name}: committed, but the generator no longer produces it\n")
  endif()
endforeach()
set(same 0)
foreach(name IN LISTS regenerated)
  if(NOT EXISTS ${PREBUILT_DIR}/${name})
    string(APPEND problems "  prebuilt/${name}: missing (the generator produces it)\n")
    continue()
  endif()
  file(SHA256 ${WORK_DIR}/${name} new_hash)
  file(SHA256 ${PREBUILT_DIR}/${name} old_hash)
  if(new_hash STREQUAL old_hash)
    math(EXPR same "${same} + 1")
    continue()
  endif()
  if(name MATCHES "\\.co$" AND OBJDUMP AND READELF)
    toolchain_comment(${WORK_DIR}/${name} new_comment)
    toolchain_comment(${PREBUILT_DIR}/${name} old_comment)
    if(NOT new_comment STREQUAL old_comment)
      code_listing(${WORK_DIR}/${name} new_listing)
      code_listing(${PREBUILT_DIR}/${name} old_listing)
      if(new_listing STREQUAL old_listing)
        message(STATUS "prebuilt/${name}: bytes differ only through the toolchain identification; "
                       "disassembly and metadata are identical")
        math(EXPR same "${same} + 1")
        continue()
      endif()
    endif()
  endif()
  string(APPEND problems "  prebuilt/${name}: differs from what the generator and clang produce now\n")
endforeach()

if(problems)
  message(FATAL_ERROR "kernels/amd/gfx950_fp8/prebuilt/ is out of date:\n${problems}"
                      "Run `cmake --build <build dir> --target zyfa_gfx950_fp8_refresh_prebuilt` and commit "
                      "prebuilt/ (after the emulator tests pass).")
endif()
list(LENGTH regenerated count)
message(STATUS "prebuilt/ is current: ${same} of ${count} files identical to a fresh regeneration")
