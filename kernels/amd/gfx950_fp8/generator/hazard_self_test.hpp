// `zyfa-gfx950-fp8-gen --self-test`: programs with a hazard the checker must refuse, each beside
// a corrected twin it must accept (MFMA -> VALU, VALU -> MFMA, a missing s_waitcnt, an MFMA under
// a narrowed EXEC, VALU-written VCC -> VALU, VALU -> v_readfirstlane, and a hazard carried around a
// loop's back edge). Returns the failures.
#ifndef ZYFA_GFX950_FP8_HAZARD_SELF_TEST_HPP
#define ZYFA_GFX950_FP8_HAZARD_SELF_TEST_HPP

namespace zyfa {
namespace gfx950_fp8 {

int run_hazard_self_test();

}  // namespace gfx950_fp8
}  // namespace zyfa

#endif
