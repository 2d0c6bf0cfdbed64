// `bench repattern`'s split-cut cases: the element-splitting cut (mesh/split_cut.hpp) of a mesh
// by a full plane through its middle and by a partial blade, on the rest shape (split_cut alone,
// with its phase times) and through Simulation::cut on a deformed shape (split, state transfer
// and the re-pattern, as the app and the CLI run it), median wall and CPU time per repeat, with
// its two phases timed apart (basis, prepare, commit: sim/prepared_change.hpp); and the cut as
// the app makes it, prepared on a thread while the simulation steps, then committed; with
// --preconditioner, the first steps after a prepared cut against a backend that sets up lazily.
#include "bench_common.hpp"
#include "core/device.hpp"
#include "mesh/split_cut.hpp"
#include "sim/prepared_change.hpp"
#include "sim/simulation.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>

namespace edn::bench {
namespace {

/// The split cut's own phase times as JSON.
JsonObject phase_json(const SplitCutTimes& t) {
    JsonObject j;
    j.add("classify", t.classify)
        .add("quality_before", t.quality_before)
        .add("snap_and_split", t.snap_and_split)
        .add("assemble", t.assemble)
        .add("separate", t.separate)
        .add("components", t.components)
        .add("quality_after", t.quality_after)
        .add("total", t.total);
    return j;
}

/// Median of each phase over the repeats.
JsonObject median_phases(const std::vector<SplitCutTimes>& runs) {
    auto med = [&](double SplitCutTimes::*field) {
        std::vector<double> v;
        for (const SplitCutTimes& t : runs) v.push_back(t.*field);
        return median(v);
    };
    SplitCutTimes m;
    for (double SplitCutTimes::*f :
         {&SplitCutTimes::classify, &SplitCutTimes::quality_before, &SplitCutTimes::snap_and_split,
          &SplitCutTimes::assemble, &SplitCutTimes::separate, &SplitCutTimes::components,
          &SplitCutTimes::quality_after, &SplitCutTimes::total})
        m.*f = med(f);
    return phase_json(m);
}

/// A blade through the middle of `mesh`'s bounding box (normal (1, 0.3, 0.2)); with a radius of
/// a quarter of the box's diagonal when `partial`.
CutPlane middle_blade(const TetMesh& mesh, bool partial) {
    Vec3 lo = mesh.positions.front(), hi = lo;
    for (const Vec3& p : mesh.positions)
        for (int d = 0; d < 3; ++d) lo[d] = std::min(lo[d], p[d]), hi[d] = std::max(hi[d], p[d]);
    CutPlane plane;
    double diagonal = 0;
    for (int d = 0; d < 3; ++d) {
        plane.point[d] = 0.5 * (lo[d] + hi[d]);
        diagonal += (hi[d] - lo[d]) * (hi[d] - lo[d]);
    }
    plane.normal = {1.0, 0.3, 0.2};
    if (partial) plane.radius = 0.25 * std::sqrt(diagonal);
    return plane;
}

/// The cut as the app makes it: prepared on a thread of its own while this thread keeps
/// stepping, then committed between two steps. Reports the steps taken meanwhile and their
/// slowest and median times against steps alone (what the preparation costs the frame when it
/// shares the machine), and the commit (what the frame waits for).
JsonObject overlapped_cut(const Options& o, const std::string& name, Simulation& sim,
                          const CutPlane& plane, int order) {
    progress("Simulation::cut prepared while stepping " + name + " p" + std::to_string(order));
    std::vector<double> alone;
    for (int k = 0; k < 3; ++k) {
        const double t0 = now_ms();
        sim.step();
        sim.finish_device_work();
        alone.push_back(now_ms() - t0);
    }
    const ChangeBasis basis = sim.change_basis();
    PreparedChange prepared;
    std::atomic<bool> done{false};
    const double start = now_ms();
    std::thread preparing([&] {
        prepared = Simulation::prepare_cut(basis, plane);
        done.store(true, std::memory_order_release);
    });
    std::vector<double> during;
    while (!done.load(std::memory_order_acquire)) {
        const double t0 = now_ms();
        sim.step();
        sim.finish_device_work();
        during.push_back(now_ms() - t0);
    }
    preparing.join();
    const double prepared_after = now_ms() - start;
    const double t0 = now_ms();
    const TopologyChangeRecord record = sim.commit(std::move(prepared));
    sim.finish_device_work();
    const double commit = now_ms() - t0;
    sim.undo();
    JsonObject c;
    c.add("mesh", name)
        .add("change", "Simulation::cut prepared on a thread while stepping, then committed")
        .add("order", order)
        .add("backend", o.backend)
        .add("tets", static_cast<std::int64_t>(record.cells_after))
        .add("prepare_ms_wall", record.prepare_ms)
        .add("prepared_after_ms_wall", prepared_after)
        .add("steps_while_preparing", static_cast<std::int64_t>(during.size()))
        .add("step_ms_alone_median", median(alone))
        .add("step_ms_while_preparing_median", during.empty() ? 0.0 : median(during))
        .add("step_ms_while_preparing_max",
             during.empty() ? 0.0 : *std::max_element(during.begin(), during.end()))
        .add("commit_ms_wall", commit)
        .add("commit_ms_record", record.commit_ms);
    return c;
}

/// The first steps after a cut prepared off the frame: what the frame pays for the new backend's
/// preconditioner set-up (multigrid: the hierarchy). The simulation is set to rest, pinned at its
/// base (lowest 2% of the height, as bench step --mesh) and stepped once first. Peer in the same
/// run: the same cut mesh, state and pins on a fresh backend, whose first step builds the set-up
/// inside the step (the lazy path); its first step must equal the committed one bit for bit.
JsonObject first_steps_after_cut(const Options& o, const std::string& name, Simulation& sim,
                                 const CutPlane& plane, int order) {
    progress("first steps after a prepared cut " + name + " p" + std::to_string(order) + " " +
             o.preconditioner);
    const std::vector<double>& rest = sim.rest_positions();
    // From rest: the cases before stepped the unpinned body (on the GPU some 60 steps while a cut
    // was prepared: it fell below the blade, which then split nothing).
    sim.set_state(rest, std::vector<double>(rest.size(), 0.0));
    double low = rest[2], high = rest[2];
    for (std::size_t i = 2; i < rest.size(); i += 3)
        low = std::min(low, rest[i]), high = std::max(high, rest[i]);
    const Index pinned = sim.pin_below(low + 0.02 * (high - low));
    sim.step();
    sim.finish_device_work();
    const auto timed_step = [](Simulation& s, StepResult* result = nullptr) {
        const double t0 = now_ms();
        const StepResult r = s.step();
        s.finish_device_work();
        if (result) *result = r;
        return now_ms() - t0;
    };
    std::vector<double> prepare, hierarchy, pattern, both, commit, first, second, lazy_first,
        lazy_second; // both: the pattern and the hierarchy of one preparation
    std::vector<double> first_assembly, lazy_first_assembly; // StageTimes::summation
    bool equal = true;
    StepResult first_result, second_result;
    TopologyChangeRecord record;
    SolverSetupStats prepared_setup, lazy_setup;
    for (int k = 0; k < std::max(1, o.repeat); ++k) {
        PreparedChange prepared = Simulation::prepare_cut(sim.change_basis(), plane);
        double t0 = now_ms();
        record = sim.commit(std::move(prepared));
        sim.finish_device_work();
        commit.push_back(now_ms() - t0);
        prepare.push_back(record.prepare_ms);
        hierarchy.push_back(record.hierarchy_ms);
        pattern.push_back(record.pattern_build_ms);
        both.push_back(record.pattern_build_ms + record.hierarchy_ms);
        const TetMesh cut_mesh = sim.mesh();
        const std::vector<double> x = sim.positions(), v = sim.velocities();
        const std::vector<std::uint8_t> pins = sim.pinned();
        first.push_back(timed_step(sim, &first_result));
        first_assembly.push_back(first_result.times.summation);
        prepared_setup = sim.solver_setup();
        const std::vector<double> after = sim.positions();
        second.push_back(timed_step(sim, &second_result));
        sim.undo();
        Simulation lazy(cut_mesh, sim.settings());
        lazy.set_pins(pins);
        lazy.set_state(x, v);
        StepResult lazy_result;
        lazy_first.push_back(timed_step(lazy, &lazy_result));
        lazy_first_assembly.push_back(lazy_result.times.summation);
        lazy_setup = lazy.solver_setup();
        equal = equal && lazy.positions() == after;
        lazy_second.push_back(timed_step(lazy));
    }
    JsonObject c;
    c.add("mesh", name)
        .add("change", "first steps after Simulation::cut prepared, then committed")
        .add("order", order)
        .add("backend", o.backend)
        .add("preconditioner", preconditioner_name(preconditioner_in_use(sim.settings(), order)))
        .add("tets", static_cast<std::int64_t>(record.cells_after))
        .add("pinned_nodes_before", static_cast<std::int64_t>(pinned))
        .add("prepare_ms_wall", median(prepare))
        .add("hierarchy_ms_in_prepare", median(hierarchy))
        .add("pattern_ms_in_prepare", median(pattern))
        .add("pattern_and_hierarchy_ms", median(both))
        .add("commit_ms_wall", median(commit))
        .add("first_step_ms_wall", median(first))
        .add("second_step_ms_wall", median(second))
        .add("first_step_assembly_ms", median(first_assembly))
        .add("first_step_hierarchy_builds", prepared_setup.builds_in_step)
        .add("first_step_newton_iterations", first_result.newton_iterations)
        .add("first_step_cg_iterations", first_result.cg_iterations)
        .add("second_step_newton_iterations", second_result.newton_iterations)
        .add("second_step_assembly_ms", second_result.times.summation)
        .add("first_step_equal_to_lazy", equal)
        .add("baseline", JsonObject()
                             .add("name", "lazy set-up: a fresh backend of the cut mesh, state "
                                          "and pins, its first step builds the hierarchy")
                             .add("first_step_ms_wall", median(lazy_first))
                             .add("second_step_ms_wall", median(lazy_second))
                             .add("first_step_assembly_ms", median(lazy_first_assembly))
                             .add("first_step_hierarchy_builds", lazy_setup.builds_in_step)
                             .add("hierarchy_build_ms", lazy_setup.last_build_ms));
    return c;
}

} // namespace

void add_split_cut_cases(const Options& o, const std::string& name, const TetMesh& mesh,
                         const std::function<void(JsonObject)>& add_case) {
    const int repeat = std::max(1, o.repeat);
    for (bool partial : {false, true}) {
        const CutPlane plane = middle_blade(mesh, partial);
        const char* blade = partial ? "partial plane" : "full plane";
        progress("split cut " + name + " " + blade);
        std::vector<double> wall, cpu;
        std::vector<SplitCutTimes> phases;
        SplitCutResult r;
        for (int k = 0; k < repeat; ++k) {
            Stopwatch watch;
            r = split_cut(mesh, plane);
            const Interval spent = watch.lap();
            wall.push_back(spent.wall_ms);
            cpu.push_back(spent.cpu_ms);
            phases.push_back(r.times);
        }
        JsonObject c;
        c.add("mesh", name)
            .add("change", std::string("split cut, ") + blade + ", rest shape")
            .add("tets_before", static_cast<std::int64_t>(mesh.num_cells()))
            .add("tets", static_cast<std::int64_t>(r.cells_after))
            .add("split_cells", static_cast<std::int64_t>(r.split_cells))
            .add("new_vertices", static_cast<std::int64_t>(r.new_vertices))
            .add("snapped_vertices", static_cast<std::int64_t>(r.snapped_vertices))
            .add("moved_vertices", static_cast<std::int64_t>(r.moved_vertices))
            .add("cut_faces", static_cast<std::int64_t>(r.cut_faces))
            .add("components", static_cast<std::int64_t>(r.components))
            .add("min_dihedral_deg_after", r.after.min_dihedral_deg)
            .add("split_ms_wall", median(wall))
            .add("split_ms_cpu", median(cpu))
            .add("phases_ms_wall", median_phases(phases));
        add_case(c);
    }

    // Through Simulation::cut: the blade on a deformed shape, the nested state transfer and the
    // new backend (re-pattern), undone between repeats.
    const std::vector<int> orders = o.orders_given ? o.orders : std::vector<int>{1};
    for (int order : orders) {
        progress("Simulation::cut " + name + " p" + std::to_string(order));
        SimulationSettings s;
        s.order = order;
        s.backend = o.backend == "cuda" ? Backend::Cuda : Backend::Cpu;
        s.material = Material::Corotational;
        if (!o.preconditioner.empty()) s.preconditioner = *parse_preconditioner(o.preconditioner);
        Simulation sim(mesh, s);
        // A smooth deformation: the blade is measured on positions that differ from the rest.
        std::vector<double> x = sim.rest_positions();
        for (std::size_t i = 0; i < x.size(); i += 3) x[i] += 0.02 * std::sin(7.0 * x[i + 2]);
        sim.set_state(x, std::vector<double>(x.size(), 0.0));
        const CutPlane plane = middle_blade(mesh, false);
        std::vector<double> wall, cpu, split_ms, repattern_ms, basis_ms, prepare_ms, commit_ms;
        TopologyChangeRecord record;
        for (int k = 0; k < repeat; ++k) {
            // The two phases of Simulation::cut (sim/prepared_change.hpp) timed apart: the basis
            // (a copy of the positions) and the commit are what the frame waits for when the
            // preparation runs off it.
            Stopwatch watch;
            const double t0 = now_ms();
            const ChangeBasis basis = sim.change_basis();
            const double t1 = now_ms();
            PreparedChange prepared = Simulation::prepare_cut(basis, plane);
            const double t2 = now_ms();
            record = sim.commit(std::move(prepared));
            const double t3 = now_ms();
            const Interval spent = watch.lap();
            wall.push_back(spent.wall_ms);
            cpu.push_back(spent.cpu_ms);
            split_ms.push_back(record.refine_ms);
            repattern_ms.push_back(record.repattern_ms);
            basis_ms.push_back(t1 - t0);
            prepare_ms.push_back(t2 - t1);
            commit_ms.push_back(t3 - t2);
            sim.undo();
        }
        JsonObject c;
        c.add("mesh", name)
            .add("change", "Simulation::cut, full plane, deformed shape")
            .add("order", order)
            .add("tets_before", static_cast<std::int64_t>(record.cells_before))
            .add("tets", static_cast<std::int64_t>(record.cells_after))
            .add("split_cells", static_cast<std::int64_t>(record.split_cells))
            .add("snapped_vertices", static_cast<std::int64_t>(record.snapped_vertices))
            .add("components", static_cast<std::int64_t>(record.components))
            .add("split_and_transfer_ms_wall", median(split_ms))
            .add("repattern_ms_wall", median(repattern_ms))
            .add("cut_ms_wall", median(wall))
            .add("cut_ms_cpu", median(cpu))
            .add("basis_ms_wall", median(basis_ms))
            .add("prepare_ms_wall", median(prepare_ms))
            .add("commit_ms_wall", median(commit_ms));
        add_case(c);
        add_case(overlapped_cut(o, name, sim, plane, order));
        if (!o.preconditioner.empty()) add_case(first_steps_after_cut(o, name, sim, plane, order));
    }
}

} // namespace edn::bench
