// What the MLP family exposes to its tests: the tolerance rule of its output (explained in mlp.cpp).
#pragma once
#include "opbench/reference.h"

namespace opbench::mlp {
Tolerance output_tolerance(double max_abs_final_ln_weight);
}  // namespace opbench::mlp
