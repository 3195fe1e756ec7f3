# Checks what zyfa-check prints beyond its pass/fail rows (issue 23, item 5): the clock, the
# estimate column and its arithmetic, and the send-back block.
#   cmake -DMODE=emulated|no_gpu|estimates -P output_test.cmake -- zyfa-check args...
# emulated  (label emu; the tiny grid on the HIP stand-in as gfx950): the stand-in's 2,400 MHz; an
#           estimate on every FP8 and BF16 row, each equal to busy x the gfx950 peak per CU per
#           clock (FP8 8,192, BF16 4,096) x 256 CUs x 2.4 GHz as the row prints the busy; the
#           gfx950 assembly kernels on the FP8 and the BF16 rows; every case passed; the block
#           repeating the exact command line, with rocm-smi and amd-smi.
# no_gpu    (label tools; a HIP runtime that cannot load): SKIP, exit 77, and the block anyway.
# estimates (label tools; --estimates): the twelve gfx950 assembly kernels, same arithmetic.
cmake_minimum_required(VERSION 3.20)
set(command)
set(after_dashes FALSE)
foreach(i RANGE 1 ${CMAKE_ARGC})
  if(i EQUAL CMAKE_ARGC)
    break()
  endif()
  if(after_dashes)
    list(APPEND command "${CMAKE_ARGV${i}}")
  elseif(CMAKE_ARGV${i} STREQUAL "--")
    set(after_dashes TRUE)
  endif()
endforeach()
execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REPLACE ";" " " shown "${command}")
set(report "command: ${shown}\nexit status: ${rc}\n--- stdout ---\n${out}--- stderr ---\n${err}")
function(expect regex why)
  if(NOT out MATCHES "${regex}")
    message(FATAL_ERROR "${why} (no match for '${regex}')\n${report}")
  endif()
endfunction()

# est. TFLOP/s for a printed busy percentage: pct / 100 x per-CU-clock FLOP x 256 CUs x 2.4e9 / 1e12,
# rounded as printf's %.0f rounds it (no ties arise for integer percentages here).
function(expected_tflops pct flop_per_cu_clock result)
  math(EXPR scaled "${pct} * ${flop_per_cu_clock} * 256 * 24")       # x 1e-6 = TFLOP/s
  math(EXPR rounded "(${scaled} + 500000) / 1000000")
  set(${result} ${rounded} PARENT_SCOPE)
endfunction()

# Every row naming `kernel` (after `prefix`, a regex): its estimate "T (P% MFMA busy)", or in the
# --estimates table "P% | ... | T at 256 x 2400 MHz", must hold T = expected(P).
function(check_estimate_rows prefix kernel flop_per_cu_clock min_rows)
  string(REGEX MATCHALL "${prefix}\\| ${kernel} \\|[^\n]*" rows "${out}")
  list(LENGTH rows count)
  if(count LESS ${min_rows})
    message(FATAL_ERROR "${count} rows name ${kernel}, expected at least ${min_rows}\n${report}")
  endif()
  set(checked 0)
  foreach(row IN LISTS rows)
    if(row MATCHES "\\| ([0-9]+) \\(([0-9]+)% MFMA busy\\) \\|")       # zyfa-check's rows
      set(tflops ${CMAKE_MATCH_1})
      set(pct ${CMAKE_MATCH_2})
    elseif(row MATCHES "\\| ([0-9]+)% \\|[^|]*\\| ([0-9]+) at 256 x 2400 MHz \\|")  # --estimates
      set(pct ${CMAKE_MATCH_1})
      set(tflops ${CMAKE_MATCH_2})
    else()
      message(FATAL_ERROR "no estimate with its busy percentage in: ${row}\n${report}")
    endif()
    expected_tflops(${pct} ${flop_per_cu_clock} want)
    if(NOT tflops EQUAL want)
      message(FATAL_ERROR "${kernel} at ${pct}% busy: est. ${tflops} TFLOP/s, expected ${want}\n${report}")
    endif()
    math(EXPR checked "${checked} + 1")
  endforeach()
  message(STATUS "${kernel}: ${checked} estimate(s) as busy x ${flop_per_cu_clock} x 256 x 2.4 GHz")
endfunction()

set(block "\n```sh\n\\{ [^\n]*zyfa-check")
if(MODE STREQUAL "emulated")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "expected exit status 0\n${report}")
  endif()
  expect("\nClock: 2400 MHz, the peak HIP reports \\(hipDeviceAttributeClockRate\\)" "the stand-in's clock")
  expect("\\| est\\. TFLOP/s \\(model\\) \\| achieved / est\\. \\|" "the estimate columns")
  expect("\\| FP8 causal \\| [^|]*\\| zyfa_gfx950_fp8_lean_d128_causal_tl \\|" "the asm kernel on FP8 causal")
  check_estimate_rows("" zyfa_gfx950_fp8_lean_d128_causal_tl 8192 2)
  check_estimate_rows("" zyfa_gfx950_fp8_lean_d192_128_causal_tl 8192 1)
  expect("\\| BF16 causal \\| [^|]*\\| zyfa_gfx950_bf16_d128_causal_tl \\|" "the asm kernel on BF16 causal")
  check_estimate_rows("" zyfa_gfx950_bf16_d128_causal_tl 4096 1)
  check_estimate_rows("" zyfa_gfx950_bf16_d192_128_causal_tl 4096 1)
  if(out MATCHES "\\| no estimate")
    message(FATAL_ERROR "a row on the emulated gfx950 has no estimate\n${report}")
  endif()
  expect("\nzyfa-check: 7 of 7 cases passed\n" "every case passed")
  expect("${block} --tiny --repeats 1 --require-gpu\n  rocm-smi --showclocks\n  amd-smi metric --clock\n\\} > zyfa-check-report\\.txt 2>&1\n```\n$"
         "the send-back block, last, with this run's command line")
elseif(MODE STREQUAL "no_gpu")
  if(NOT rc EQUAL 77)
    message(FATAL_ERROR "expected exit status 77\n${report}")
  endif()
  expect("^SKIP zyfa-check: no GPU backend here \\(HIP: " "the SKIP line")
  expect("issue 23" "where to send it")
  expect("${block} --backend hip --repeats 2\n  rocm-smi --showclocks\n  amd-smi metric --clock\n\\} > zyfa-check-report\\.txt 2>&1\n```\n$"
         "the send-back block with this run's command line")
elseif(MODE STREQUAL "estimates")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "expected exit status 0\n${report}")
  endif()
  foreach(kernel d128_causal_br d128_causal_tl d128_none d192_128_causal_br d192_128_causal_tl d192_128_none)
    check_estimate_rows("\\| gfx950 \\| MI355X " zyfa_gfx950_fp8_lean_${kernel} 8192 1)
    check_estimate_rows("\\| gfx950 \\| MI355X " zyfa_gfx950_bf16_${kernel} 4096 1)
  endforeach()
  check_estimate_rows("\\| gfx950 \\| MI355X " zyfa_attn_fwd_bf16_d128 4096 1)
else()
  message(FATAL_ERROR "output_test.cmake: MODE must be emulated, no_gpu or estimates")
endif()
