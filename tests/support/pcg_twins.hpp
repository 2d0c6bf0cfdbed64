#pragma once
// The PCG twins under one interface, so a PCG property is written once and checked on the CPU
// twin (double) and on the CUDA twin (float) with every implementation choice.

#include "cuda/cuda_pcg.hpp"
#include "sim/simulation.hpp"
#include "solver/pcg.hpp"
#include "support/linear_system.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace edn::test {

/// Every CUDA PCG implementation choice worth testing (cuda::PcgOptions and its tuning).
std::vector<cuda::PcgOptions> cuda_pcg_variants();

/// Short name of a set of CUDA PCG options ("fused+pdl+graph+upper"), for traces.
std::string pcg_variant_name(const cuda::PcgOptions& options);

/// One PCG twin solving a LinearSystem with double vectors: the CPU twin in double, or the CUDA
/// twin in float with one set of options (b and x rounded to float on the way in).
class PcgTwin {
public:
    virtual ~PcgTwin() = default;
    /// "cpu" or the CUDA variant's name.
    virtual std::string name() const = 0;
    /// Solves s x = b (solver/pcg.hpp); `fixed` empty or #rows.
    virtual PcgResult solve(LinearSystem& s, const std::vector<double>& b, std::vector<double>& x,
                            const PcgSettings& settings,
                            const std::vector<std::uint8_t>& fixed = {}) = 0;
    /// `v` as this twin holds it (rounded to float on CUDA): what an untouched x reads back as.
    virtual std::vector<double> held(const std::vector<double>& v) const = 0;
};

/// The twins of `backend`: the CPU one, or one CUDA twin per cuda_pcg_variants() entry.
std::vector<std::unique_ptr<PcgTwin>> pcg_twins(Backend backend);

} // namespace edn::test
