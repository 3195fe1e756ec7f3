# The cycle model's calibration run (docs/emulator.md, "Calibration against ZYFA's figures"): the
# shipped Lean P schedule beside the same schedule with the exact exponential, which the generator
# emits only on request (--estimate-only-exact-exp) and which is assembled here, in the build tree,
# never into prebuilt/ or libzyfa. Prints the estimate table; fails like emu_cycle_estimate (no
# steady-state loop, an estimate outside (0, 1], or a hazard the emulator refuses), never on the
# percentages, which are model outputs.
# Inputs: GENERATOR CLANG LLD ESTIMATE PREBUILT_DIR WORK_DIR.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
execute_process(COMMAND ${GENERATOR} --estimate-only-exact-exp ${WORK_DIR} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "zyfa-gfx950-fp8-gen --estimate-only-exact-exp failed (${rc})")
endif()
set(objects)
foreach(dims d128 d192_128)
  foreach(mask causal_br none)
    set(stem zyfa_gfx950_fp8_exactexp_estimate_${dims}_${mask})
    execute_process(COMMAND ${CLANG} -x assembler -target amdgcn-amd-amdhsa -mcpu=gfx950 -mcode-object-version=5
                            -c ${WORK_DIR}/${stem}.s -o ${WORK_DIR}/${stem}.o RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "assembling ${stem}.s failed (${rc})")
    endif()
    execute_process(COMMAND ${LLD} -shared ${WORK_DIR}/${stem}.o -o ${WORK_DIR}/${stem}.co RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "linking ${stem}.o failed (${rc})")
    endif()
    list(APPEND objects ${PREBUILT_DIR}/zyfa_gfx950_fp8_lean_${dims}_${mask}.co ${WORK_DIR}/${stem}.co)
  endforeach()
endforeach()
execute_process(COMMAND ${ESTIMATE} --mask causal_br ${objects} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "zyfa-amd-cycle-estimate failed (${rc})")
endif()
