// `bench assembly --materials corotational,neohookean`: the element stage and the summation as
// the simulation backends run them in one Newton iteration of a step (evaluate with the Hessians,
// then assemble), per summation method, at one fixed deformed state of the mesh.
#include "bench_common.hpp"
#include "core/error.hpp"
#include "sim/simulation_backend.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

namespace edn::bench {
namespace {

constexpr double kYoung = 1.0e5;
constexpr double kPoisson = 0.3;
constexpr double kDensity = 1000;
/// The twist of the deformed state over the body's height [rad].
constexpr double kTwist = 0.3;

/// The rest nodes (3 per node) stretched 5% in x, compressed 3% in y, stretched 2% and sheared
/// 5% in z, and twisted about the vertical axis through the centre by up to kTwist at the top:
/// every material's tangent away from rest (rotations for co-rotational, stretch and shear for
/// neo-Hookean), no cell inverted.
std::vector<double> deformed_state(const std::vector<double>& rest) {
    double lower[3], upper[3];
    for (int a = 0; a < 3; ++a) lower[a] = upper[a] = rest[a];
    for (std::size_t i = 0; i < rest.size(); ++i)
        lower[i % 3] = std::min(lower[i % 3], rest[i]),
                  upper[i % 3] = std::max(upper[i % 3], rest[i]);
    double centre[3];
    for (int a = 0; a < 3; ++a) centre[a] = 0.5 * (lower[a] + upper[a]);
    const double height = std::max(upper[2] - lower[2], 1e-30);
    std::vector<double> x(rest.size());
    for (std::size_t i = 0; i + 2 < rest.size(); i += 3) {
        const double px = 1.05 * (rest[i] - centre[0]), py = 0.97 * (rest[i + 1] - centre[1]);
        const double pz = 1.02 * (rest[i + 2] - centre[2]) + 0.05 * (rest[i] - centre[0]);
        const double angle = kTwist * (rest[i + 2] - lower[2]) / height;
        x[i] = centre[0] + std::cos(angle) * px - std::sin(angle) * py;
        x[i + 1] = centre[1] + std::sin(angle) * px + std::cos(angle) * py;
        x[i + 2] = centre[2] + pz;
    }
    return x;
}

/// Largest |a_i - b_i| over largest |b_i|.
double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
    double diff = 0, scale = 0;
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
        diff = std::max(diff, std::abs(a[i] - b[i])), scale = std::max(scale, std::abs(b[i]));
    return diff / std::max(scale, 1e-300);
}

} // namespace

void backend_assembly_cases(const std::string& mesh_name, const TetMesh& mesh, int order,
                            Material material, const Options& o, std::vector<JsonObject>& cases) {
    const Backend backend = o.backend == "cuda" ? Backend::Cuda : Backend::Cpu;
    std::vector<double> reference_hv; // per_entry's H v, the check of the other methods
    std::vector<double> v;
    for (SummationMethod method : bench_methods(o)) {
        SimulationSettings s;
        s.order = order;
        s.material = material;
        s.young = kYoung;
        s.poisson = kPoisson;
        s.density = kDensity;
        s.backend = backend;
        s.summation = method;
        // Block Jacobi: no coarse level, so inline keeps no element blocks at p >= 2 either.
        s.preconditioner = Preconditioner::BlockJacobi;
        JsonObject c;
        c.add("mesh", mesh_name)
            .add("tets", mesh.num_cells())
            .add("order", order)
            .add("material", material_name(material))
            .add("path", "simulation_backend")
            .add("method", summation_method_name(method));
        progress("  " + std::string(material_name(material)) + " " + summation_method_name(method));
        try {
            const double t0 = now_ms();
            std::unique_ptr<SimulationBackend> b =
                backend == Backend::Cuda ? make_cuda_backend(mesh, s) : make_cpu_backend(mesh, s);
            const double setup_ms = now_ms() - t0;
            const std::vector<double> x = deformed_state(b->rest);
            b->set_state(x, std::vector<double>(x.size(), 0.0));
            b->begin_step(); // the iterate is the prediction x + h v = x
            const int outputs = kEnergy | kGradient | kHessian;
            std::vector<double> element, summation, assembly;
            for (int r = -1; r < o.repeat; ++r) { // r = -1: warm-up, not recorded
                double t = now_ms();
                // Returns the potential (a host value): the element pass has finished.
                b->evaluate(NewtonVector::Iterate, outputs, NewtonVector::Gradient);
                const double e = now_ms() - t;
                t = now_ms();
                b->assemble(); // returns when the matrix is complete
                const double sum = now_ms() - t;
                if (r < 0) continue;
                element.push_back(e), summation.push_back(sum), assembly.push_back(e + sum);
            }
            // The assembled matrix against per-entry's: H v at the same state.
            if (v.empty()) {
                std::mt19937 random(18);
                std::uniform_real_distribution<double> uniform(-1.0, 1.0);
                v.resize(x.size());
                for (double& value : v) value = uniform(random);
            }
            const std::vector<double> hv = b->hessian_product(x, v);
            if (method == SummationMethod::PerEntry) reference_hv = hv;
            const double element_ms = median(element), summation_ms = median(summation);
            c.add("nodes", b->layout.num_nodes())
                .add("nnz_blocks", b->nnz_blocks())
                .add("scalar", backend == Backend::Cuda ? "mixed" : "double")
                .add("state", "stretched, sheared and twisted 0.3 rad over the height, at rest "
                              "velocity; block Jacobi (no coarse level)")
                .add("median_ms", JsonObject()
                                      .add("element", element_ms)
                                      .add("summation", summation_ms)
                                      .add("total", median(assembly)))
                .add("assembly",
                     assembly_json("call", element_ms, summation_ms, b->element_block_bytes()))
                .add("bytes", JsonObject()
                                  .add("matrix", b->matrix_bytes())
                                  .add("element_blocks", b->element_block_bytes()))
                .add("setup_ms", setup_ms);
            if (!reference_hv.empty())
                c.add("check", JsonObject().add("hv_rel_diff_vs_per_entry",
                                                relative_difference(hv, reference_hv)));
        } catch (const Error& e) {
            if (e.code() != ErrorCode::OutOfMemory) throw;
            c.add("skipped", std::string("out of memory: ") + e.what());
        }
        cases.push_back(c);
    }
}

} // namespace edn::bench
