// Per-element error of the ways to turn t = x (log2 of a probability, <= 0) into an e4m3 P:
// exp2 + round-to-nearest-even (EXACT), Lean P with several constants c and both conversions,
// and a Lean P with a quadratic mantissa correction (more instructions than LEAN may spend).
#pragma once

namespace zyfa_accuracy {

void print_per_element_study();

}  // namespace zyfa_accuracy
