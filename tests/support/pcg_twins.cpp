#include "support/pcg_twins.hpp"

namespace edn::test {

std::vector<cuda::PcgOptions> cuda_pcg_variants() {
    std::vector<cuda::PcgOptions> v;
    for (bool fused : {true, false})
        for (bool pdl : {true, false})
            for (bool graph : {true, false}) {
                cuda::PcgOptions o;
                o.tuning.fused_direction = fused;
                o.tuning.programmatic_launch = pdl;
                o.tuning.graph = graph;
                o.upper_spmv = false;
                v.push_back(o);
            }
    for (int warps : {1, 2, 4}) { // q = A p with 1, 2 or 4 warps per bin (unfused)
        cuda::PcgOptions o;
        o.tuning.warps_per_bin = warps;
        o.tuning.fused_direction = false;
        o.upper_spmv = false;
        v.push_back(o);
    }
    for (bool pdl : {true, false}) // no L2 prefetch of the matrix head (on by default)
        for (bool graph : {true, false}) {
            cuda::PcgOptions o;
            o.tuning.fused_direction = false;
            o.tuning.prefetch_bytes = 0;
            o.tuning.programmatic_launch = pdl;
            o.tuning.graph = graph;
            o.upper_spmv = false;
            v.push_back(o);
        }
    for (bool fused : {true, false}) // q = A p from the upper part (the default)
        for (bool pdl : {true, false})
            for (bool graph : {true, false})
                for (std::size_t prefetch : {std::size_t{8} << 20, std::size_t{0}}) {
                    if (prefetch == 0 && (!pdl || !graph)) continue;
                    cuda::PcgOptions o;
                    o.upper_spmv = true;
                    o.tuning.upper_min_rows = 0; // these systems are small: force it
                    o.tuning.upper_max_width = 1e9;
                    o.tuning.fused_direction = fused;
                    o.tuning.programmatic_launch = pdl;
                    o.tuning.graph = graph;
                    o.tuning.prefetch_bytes = prefetch;
                    v.push_back(o);
                    if (pdl && graph && prefetch > 0) { // the one-wave kernel variants
                        o.tuning.force_one_wave = true;
                        v.push_back(o);
                    }
                }
    return v;
}

std::string pcg_variant_name(const cuda::PcgOptions& o) {
    const cuda::PcgTuning& t = o.tuning;
    return std::string(t.fused_direction ? "fused" : "separate") +
           (t.programmatic_launch ? "+pdl" : "") + (t.graph ? "+graph" : "") +
           (t.warps_per_bin > 0 ? "+warps" + std::to_string(t.warps_per_bin) : "") +
           (t.prefetch_bytes == 0 ? "+no_prefetch" : "") + (o.upper_spmv ? "+upper" : "") +
           (t.force_one_wave ? "+one_wave" : "");
}

namespace {

/// cpu::pcg in double, one workspace reused across solves.
class CpuTwin final : public PcgTwin {
public:
    std::string name() const override { return "cpu"; }
    PcgResult solve(LinearSystem& s, const std::vector<double>& b, std::vector<double>& x,
                    const PcgSettings& settings, const std::vector<std::uint8_t>& fixed) override {
        return cpu::pcg(s.a.view(), b.data(), x.data(), settings, workspace_,
                        fixed.empty() ? nullptr : fixed.data());
    }
    std::vector<double> held(const std::vector<double>& v) const override { return v; }

private:
    PcgWorkspace<double> workspace_;
};

/// cuda::Pcg in float with one set of options; the solver is reused while the size stays.
class CudaTwin final : public PcgTwin {
public:
    explicit CudaTwin(const cuda::PcgOptions& options) : options_(options) {}
    std::string name() const override { return pcg_variant_name(options_); }
    PcgResult solve(LinearSystem& s, const std::vector<double>& b, std::vector<double>& x,
                    const PcgSettings& settings, const std::vector<std::uint8_t>& fixed) override {
        if (!pcg_ || pcg_->num_rows() != s.rows())
            pcg_ = std::make_unique<cuda::Pcg>(s.rows(), options_);
        const cuda::DeviceMatrix device(s.af);
        const std::vector<float> bf(b.begin(), b.end());
        std::vector<float> xf(x.begin(), x.end());
        const PcgResult r = pcg_->solve_host(device.view(), bf, xf, settings, fixed);
        x.assign(xf.begin(), xf.end());
        return r;
    }
    std::vector<double> held(const std::vector<double>& v) const override {
        std::vector<double> out(v.size());
        for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<float>(v[i]);
        return out;
    }

private:
    cuda::PcgOptions options_;
    std::unique_ptr<cuda::Pcg> pcg_;
};

} // namespace

std::vector<std::unique_ptr<PcgTwin>> pcg_twins(Backend backend) {
    std::vector<std::unique_ptr<PcgTwin>> twins;
    if (backend == Backend::Cpu) {
        twins.push_back(std::make_unique<CpuTwin>());
    } else {
        for (const cuda::PcgOptions& o : cuda_pcg_variants())
            twins.push_back(std::make_unique<CudaTwin>(o));
    }
    return twins;
}

} // namespace edn::test
