# Checks that llc (LLC) still inserts, for CPU, the wait states docs/emulator.md's gfx940+ VALU
# hazard list and runner.cpp's check_valu_hazards assume: runs LLVM's hazard recognizer on
# valu_hazards_llc.mir (MIR) and compares the s_nop of every function with the list below.
execute_process(COMMAND ${LLC} -mtriple=amdgcn-amd-amdhsa -mcpu=${CPU} -run-pass=post-RA-hazard-rec ${MIR} -o -
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "llc failed (${rc}): ${err}")
endif()
string(REGEX MATCHALL "name: +[a-z_]+|S_NOP [0-9]+" tokens "${out}")
string(REGEX REPLACE "name: +" "" got "${tokens}")
set(want "sgpr_mask;S_NOP 1;readlane_src;S_NOP 0;exec_readfirstlane;S_NOP 3;writelane_select;S_NOP 3;wide_store;S_NOP 1;pk_add;S_NOP 0;trans_trans;S_NOP 0;div_fmas;S_NOP 3;sdwa_waw;S_NOP 0;S_NOP 0;exec_mfma;S_NOP 3;vcc_carry;S_NOP 1")
if(NOT got STREQUAL want)
  message(FATAL_ERROR "LLVM's hazard recognizer changed for ${CPU}:\n  got  ${got}\n  want ${want}")
endif()
message(STATUS "${CPU}: ${got}")
