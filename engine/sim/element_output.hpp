#pragma once
/// What an element evaluation computes (bit flags), shared by the element kernels and the Newton
/// loop that asks for them.

namespace edn {

/// Outputs of an element pass: energy, gradient (element forces) and element Hessian blocks.
enum ElementOutput : int { kEnergy = 1, kGradient = 2, kHessian = 4 };

} // namespace edn
