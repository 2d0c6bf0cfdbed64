// Simulations in Python: StepResult, TopologyChange, convergence_summary and Simulation (a
// Simulation plus the NumPy arrays that mirror its state). Settings: settings_bindings.cpp.
#include "bindings.hpp"
#include "core/error.hpp"
#include "mesh/cut.hpp"
#include "sim/convergence.hpp"
#include "sim/names.hpp"
#include "sim/simulation.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>
#include <sstream>

#include "sim/frame_snapshot.hpp"

namespace edn::python {
namespace {

/// Whether `array` holds exactly the bytes of `values`.
template <class T, class U>
bool same_bytes(const py::array_t<T>& array, const std::vector<U>& values) {
    static_assert(sizeof(T) == sizeof(U));
    return array.size() == static_cast<py::ssize_t>(values.size()) &&
           (values.empty() ||
            std::memcmp(array.data(), values.data(), values.size() * sizeof(T)) == 0);
}

/// A Simulation and the NumPy arrays that mirror its node state. The engine keeps the state in
/// its backend (host vectors for the CPU backend, device memory for CUDA) and replaces the backend
/// on every topology or order change, so NumPy cannot safely point into it; instead the arrays
/// are the binding's own, copied from the engine after every call that moves the state and
/// compared with it before every call that reads it (a write from Python is then handed to the
/// engine with set_state / the pin setters). The same array objects are returned every time, so
/// a view taken once sees every later step; a change of the node count (cut, refinement, order)
/// replaces them (views taken before keep the old state).
class PySimulation {
public:
    PySimulation(TetMesh mesh, const SimulationSettings& settings) {
        {
            py::gil_scoped_release release; // building the pattern takes a while on large meshes
            sim_ = std::make_unique<Simulation>(std::move(mesh), settings);
        }
        pull_all();
    }

    /// One step; the GIL is released while the engine works.
    StepResult step() { return step_many(1).front(); }

    /// `count` steps (Ctrl+C stops between steps).
    std::vector<StepResult> step_many(long long count) {
        EDN_VERIFY(count >= 0, ErrorCode::Usage, "step: count must be >= 0, got " << count);
        push();
        std::vector<StepResult> results;
        results.reserve(static_cast<std::size_t>(std::min(count, 1LL << 20)));
        for (long long i = 0; i < count; ++i) {
            try {
                run_released([&] { results.push_back(sim_->step()); });
            } catch (...) {
                pull_state();
                throw;
            }
            if (PyErr_CheckSignals() != 0) {
                pull_state();
                throw py::error_already_set();
            }
        }
        pull_state();
        return results;
    }

    /// A topology or settings change, `work(simulation)` without the GIL, then every mirror
    /// renewed (the node count may have changed).
    template <class F> auto change(F&& work) {
        push();
        decltype(work(*sim_)) result{};
        run_released([&] { result = work(*sim_); });
        pull_all();
        return result;
    }

    /// The engine, for calls that neither read the state arrays nor change the state.
    Simulation& engine() {
        check_idle();
        return *sim_;
    }
    /// The engine after the arrays' writes were handed to it.
    Simulation& synced() {
        push();
        return *sim_;
    }

    py::array_t<double>& positions() { return check_idle(), positions_; }
    py::array_t<double>& velocities() { return check_idle(), velocities_; }
    py::array_t<double>& rest_positions() { return check_idle(), rest_; }
    py::array_t<bool>& pinned() { return check_idle(), pinned_; }

    /// Copies `values` ((#nodes, 3)) into the positions (or velocities) array and the engine.
    void assign(py::array_t<double>& mirror,
                const py::array_t<double, py::array::c_style | py::array::forcecast>& values,
                const char* what) {
        check_idle();
        const std::vector<double> flat = flat3_from(values, sim_->num_nodes(), what);
        std::copy(flat.begin(), flat.end(), mirror.mutable_data());
        push();
    }
    /// Copies a #nodes mask into the pins array and the engine.
    void assign_pins(const py::array_t<bool, py::array::c_style | py::array::forcecast>& mask) {
        check_idle();
        EDN_VERIFY(mask.size() == sim_->num_nodes(), ErrorCode::Usage,
                   "pinned: expected " << sim_->num_nodes() << " values, got " << mask.size());
        std::copy(mask.data(), mask.data() + mask.size(), pinned_.mutable_data());
        push();
    }

    /// Pins (adds) every node whose rest position lies strictly on the negative side of the
    /// plane through `point` with normal `normal` (pin_below(z) is the plane z with normal +z).
    Index pin_plane(const Vec3& point, const Vec3& normal) {
        check_idle();
        EDN_VERIFY(std::isfinite(point[0] + point[1] + point[2]) &&
                       std::isfinite(normal[0] + normal[1] + normal[2]) &&
                       (normal[0] != 0 || normal[1] != 0 || normal[2] != 0),
                   ErrorCode::Usage, "pin_plane: a finite point and a non-zero normal expected");
        const double* rest = rest_.data();
        bool* pins = pinned_.mutable_data();
        Index count = 0;
        for (Index i = 0; i < sim_->num_nodes(); ++i) {
            double side = 0;
            for (int d = 0; d < 3; ++d) side += normal[d] * (rest[3 * i + d] - point[d]);
            if (side < 0) pins[i] = true, ++count;
        }
        push();
        return count;
    }

    /// Rebuilds the simulation on the same cells with new rest vertex positions (#V x 3),
    /// keeping the node state, pins, frame and topology options; the undo history and the
    /// topology change records start empty (they belong to the old rest mesh).
    void set_rest_vertices(const std::vector<double>& flat) {
        push();
        const Simulation& old = *sim_;
        TetMesh mesh = old.mesh();
        EDN_VERIFY(flat.size() == 3 * std::size_t(mesh.num_vertices()), ErrorCode::Usage,
                   "set_rest_positions: expected (" << mesh.num_vertices() << ", 3) values, got "
                                                    << flat.size());
        for (std::size_t v = 0; v < mesh.positions.size(); ++v)
            mesh.positions[v] = {flat[3 * v], flat[3 * v + 1], flat[3 * v + 2]};
        for (Index c = 0; c < mesh.num_cells(); ++c) {
            const Cell& k = mesh.cells[c];
            const double volume = signed_volume(mesh.positions[k[0]], mesh.positions[k[1]],
                                                mesh.positions[k[2]], mesh.positions[k[3]]);
            EDN_VERIFY(volume > 0, ErrorCode::Usage,
                       "set_rest_positions: cell " << c << " (0-based) would be "
                                                   << (volume < 0 ? "inverted" : "flat"));
        }
        std::unique_ptr<Simulation> next;
        run_released([&] { next = std::make_unique<Simulation>(std::move(mesh), old.settings()); });
        next->set_state(old.positions(), old.velocities());
        next->set_frame(old.frame());
        next->set_topology_options(old.topology_options());
        const std::vector<std::uint8_t>& pins = old.pinned();
        if (old.settings().order == 1)
            next->set_vertex_pins(pins);
        else
            for (std::size_t i = 0; i < pins.size(); ++i)
                if (pins[i]) next->set_pinned(static_cast<Index>(i), true);
        sim_ = std::move(next);
        pull_all();
    }

    /// After the engine's pins changed (pin_below): the mirror follows.
    void pull_pins() {
        const std::vector<std::uint8_t>& pins = sim_->pinned();
        std::copy(pins.begin(), pins.end(), pinned_.mutable_data());
    }

private:
    /// Raises when another thread is inside a released call of this simulation.
    void check_idle() const {
        EDN_VERIFY(!busy_, ErrorCode::Usage,
                   "Simulation is busy: another thread is stepping or changing it");
    }

    /// Runs `work` on the engine without the GIL, marked busy so other threads get an error
    /// instead of racing (they hold the GIL when they check).
    template <class F> void run_released(F&& work) {
        check_idle();
        busy_ = true;
        struct Reset {
            bool& flag;
            ~Reset() { flag = false; }
        } reset{busy_};
        py::gil_scoped_release release;
        work();
    }

    /// `mirror` holding `values` as (rows, 3): the same array when the size matches.
    static void fill_rows3(py::array_t<double>& mirror, const std::vector<double>& values) {
        if (mirror.size() != static_cast<py::ssize_t>(values.size()))
            mirror =
                py::array_t<double>({static_cast<py::ssize_t>(values.size() / 3), py::ssize_t{3}});
        std::copy(values.begin(), values.end(), mirror.mutable_data());
    }

    /// Positions and velocities from the engine.
    void pull_state() {
        fill_rows3(positions_, sim_->positions());
        fill_rows3(velocities_, sim_->velocities());
    }

    /// Every mirror from the engine (after a change of mesh, order or pins).
    void pull_all() {
        pull_state();
        rest_ = rows3_copy(sim_->rest_positions());
        make_read_only(rest_);
        const std::vector<std::uint8_t>& pins = sim_->pinned();
        if (pinned_.size() != static_cast<py::ssize_t>(pins.size()))
            pinned_ = py::array_t<bool>(static_cast<py::ssize_t>(pins.size()));
        pull_pins();
    }

    /// Hands writes to the arrays to the engine: the state when it differs from the engine's, the
    /// pins that differ.
    void push() {
        check_idle();
        const std::vector<double> x = sim_->positions(), v = sim_->velocities();
        if (!same_bytes(positions_, x) || !same_bytes(velocities_, v))
            sim_->set_state(std::vector<double>(positions_.data(), positions_.data() + x.size()),
                            std::vector<double>(velocities_.data(), velocities_.data() + v.size()));
        const std::vector<std::uint8_t>& pins = sim_->pinned();
        std::vector<Index> changed;
        for (std::size_t i = 0; i < pins.size(); ++i)
            if ((pins[i] != 0) != pinned_.data()[i]) changed.push_back(static_cast<Index>(i));
        if (changed.empty()) return;
        if (sim_->settings().order == 1 && changed.size() > 1) {
            // p = 1: nodes are the vertices, so the vertex mask is the node mask (one update).
            sim_->set_vertex_pins(
                std::vector<std::uint8_t>(pinned_.data(), pinned_.data() + pins.size()));
        } else {
            for (Index i : changed) sim_->set_pinned(i, pinned_.data()[i]);
        }
    }

    std::unique_ptr<Simulation> sim_;
    py::array_t<double> positions_, velocities_, rest_;
    py::array_t<bool> pinned_;
    bool busy_ = false;
};

} // namespace

void bind_simulation(py::module_& m) {
    py::class_<StepResult>(m, "StepResult", "What one step did (sim/simulation.hpp StepResult).")
        .def_readonly("newton_iterations", &StepResult::newton_iterations)
        .def_readonly("cg_iterations", &StepResult::cg_iterations)
        .def_readonly("initial_residual", &StepResult::initial_residual,
                      "|g| at the first iterate (free dofs)")
        .def_readonly("final_residual", &StepResult::final_residual, "|g| after the last update")
        .def_readonly("potential", &StepResult::potential, "incremental potential at the end")
        .def_readonly("strain_energy", &StepResult::strain_energy, "W(x) at the end of the step")
        .def_readonly("kinetic_energy", &StepResult::kinetic_energy, "1/2 v^T M v at the end")
        .def_readonly("converged", &StepResult::converged)
        .def_property_readonly(
            "stop", [](const StepResult& r) { return std::string(name_of(r.stop)); },
            "'converged', 'iteration_cap', 'time_budget' or 'failed'")
        .def_readonly("relative_decrement", &StepResult::relative_decrement)
        .def_readonly("line_search_failures", &StepResult::line_search_failures)
        .def_readonly("pcg_breakdowns", &StepResult::pcg_breakdowns)
        .def_readonly("pcg_unconverged", &StepResult::pcg_unconverged)
        .def_readonly("projection_fallbacks", &StepResult::projection_fallbacks,
                      "iterations redone with PSD-projected Hessians (projection on demand)")
        .def_readonly("truncated_solves", &StepResult::truncated_solves,
                      "solves that met negative curvature and kept the CG iterate before it")
        .def_readonly("projected", &StepResult::projected,
                      "some iteration solved with projected Hessians")
        .def_readonly("recovered", &StepResult::recovered)
        .def_readonly("residuals", &StepResult::residuals, "|g| at each Newton iterate")
        .def_property_readonly(
            "ms",
            [](const StepResult& r) {
                return py::dict(
                    py::arg("element") = r.times.element, py::arg("summation") = r.times.summation,
                    py::arg("pcg") = r.times.pcg, py::arg("line_search") = r.times.line_search,
                    py::arg("total") = r.times.total);
            },
            "milliseconds per stage, as run.json's 'ms'")
        .def("__repr__", [](const StepResult& r) {
            return "<elastodyn.StepResult " + std::string(name_of(r.stop)) + ", " +
                   std::to_string(r.newton_iterations) + " Newton, " +
                   std::to_string(r.cg_iterations) + " CG, strain " +
                   std::to_string(r.strain_energy) + ", kinetic " +
                   std::to_string(r.kinetic_energy) + ">";
        });

    py::class_<TopologyChangeRecord>(m, "TopologyChange",
                                     "One cut, refinement or undo (run.json's 'cuts' and "
                                     "'refinements').")
        .def_property_readonly(
            "kind", [](const TopologyChangeRecord& r) { return topology_change_kind_name(r.kind); },
            "'cut', 'sphere', 'uniform' or 'undo'")
        .def_readonly("frame", &TopologyChangeRecord::frame)
        .def_readonly("cells_before", &TopologyChangeRecord::cells_before)
        .def_readonly("cells_after", &TopologyChangeRecord::cells_after)
        .def_readonly("cut_faces", &TopologyChangeRecord::cut_faces)
        .def_readonly("duplicated_vertices", &TopologyChangeRecord::duplicated_vertices)
        .def_readonly("new_vertices", &TopologyChangeRecord::new_vertices)
        .def_readonly("min_dihedral_deg", &TopologyChangeRecord::min_dihedral_deg)
        .def_readonly("input_min_dihedral_deg", &TopologyChangeRecord::input_min_dihedral_deg)
        .def_readonly("refine_ms", &TopologyChangeRecord::refine_ms)
        .def_readonly("repattern_ms", &TopologyChangeRecord::repattern_ms)
        .def("__repr__", [](const TopologyChangeRecord& r) {
            return "<elastodyn.TopologyChange " + std::string(topology_change_kind_name(r.kind)) +
                   " at frame " + std::to_string(r.frame) + ", cells " +
                   std::to_string(r.cells_before) + " -> " + std::to_string(r.cells_after) + ">";
        });

    m.def(
        "convergence_summary",
        [](const std::vector<StepResult>& results, double tolerance) {
            ConvergenceTally tally;
            for (const StepResult& r : results) tally.add(r);
            return py::dict(py::arg("frames") = tally.frames,
                            py::arg("frames_converged") = tally.converged,
                            py::arg("worst_residual") = tally.worst_relative_decrement,
                            py::arg("worst_final_residual") = tally.worst_final_residual,
                            py::arg("line") = convergence_line(tally, tolerance));
        },
        py::arg("results"), py::arg("tolerance"),
        "run.json's convergence summary of StepResults and simulate's closing line ('58/60 "
        "frames met the tolerance ...').");

    using Sim = PySimulation;
    py::class_<Sim>(m, "Simulation",
                    "One simulated solid (engine/sim/simulation.hpp). positions, velocities and "
                    "pinned are NumPy arrays owned by this object and kept in step with the "
                    "engine: read them at any time (the same array objects, updated in place by "
                    "every step), write into them and the next call hands the new values to the "
                    "engine. A cut, refinement or order change that changes the node count "
                    "replaces the arrays (fetch them again).")
        .def(py::init([](const TetMesh& mesh, const std::optional<SimulationSettings>& settings,
                         const py::kwargs& keywords) {
                 return std::make_unique<Sim>(mesh,
                                              settings_from(settings, keywords, "Simulation"));
             }),
             py::arg("mesh"), py::arg("settings") = py::none(),
             "Simulation(mesh, settings=None, **options): `options` are simulate's settings "
             "options (preset='silicone', order=2, E=2e5, newton_tol=1e-4, ground=0.0, ...) "
             "applied over `settings` (default Settings()).")
        .def("step", &Sim::step, "One time step (or static solve); returns a StepResult.")
        .def("step", &Sim::step_many, py::arg("count"), "`count` steps; returns their StepResults.")
        .def_property(
            "positions", [](Sim& s) { return s.positions(); },
            [](Sim& s, const py::array_t<double, py::array::c_style | py::array::forcecast>& x) {
                s.assign(s.positions(), x, "positions");
            },
            "(#nodes, 3) current node positions (vertex nodes first, mesh/node_layout.hpp).")
        .def_property(
            "velocities", [](Sim& s) { return s.velocities(); },
            [](Sim& s, const py::array_t<double, py::array::c_style | py::array::forcecast>& v) {
                s.assign(s.velocities(), v, "velocities");
            },
            "(#nodes, 3) current node velocities.")
        .def_property_readonly(
            "rest_positions", [](Sim& s) { return s.rest_positions(); },
            "(#nodes, 3) rest positions, read-only (a new array after a topology change).")
        .def_property(
            "pinned", [](Sim& s) { return s.pinned(); },
            [](Sim& s, const py::array_t<bool, py::array::c_style | py::array::forcecast>& mask) {
                s.assign_pins(mask);
            },
            "(#nodes,) bool pin mask (Dirichlet nodes keep their position).")
        .def(
            "set_rest_positions",
            [](Sim& s, const py::array_t<double, py::array::c_style | py::array::forcecast>& x) {
                s.set_rest_vertices(flat3_from(x, -1, "set_rest_positions"));
            },
            py::arg("vertices"),
            "New rest positions of the mesh vertices (#V, 3; edge and face nodes follow): "
            "rebuilds the engine's simulation on the same cells, keeping positions, velocities, "
            "pins and frame (not the undo history). Inverted or flat cells raise UsageError.")
        .def(
            "pin_below",
            [](Sim& s, double z) {
                const Index count = s.synced().pin_below(z);
                s.pull_pins();
                return count;
            },
            py::arg("z"), "Pins every node whose rest z is below z (simulate --pin-below).")
        .def(
            "pin_plane",
            [](Sim& s, const py::object& point, const py::object& normal) {
                return s.pin_plane(vec3_from(point, "point"), vec3_from(normal, "normal"));
            },
            py::arg("point"), py::arg("normal"),
            "Pins the nodes whose rest position is on the side the normal points away from "
            "(normal . (x - point) < 0); returns how many.")
        .def(
            "set_drag",
            [](Sim& s, const std::array<Index, 3>& vertices, const std::array<double, 3>& weights,
               const py::object& target, double stiffness) {
                DragSpring drag;
                drag.vertices = vertices;
                drag.weights = weights;
                drag.target = vec3_from(target, "target");
                drag.stiffness = stiffness;
                s.synced().set_drag(drag);
            },
            py::arg("vertices"), py::arg("weights"), py::arg("target"), py::arg("stiffness") = 1e3,
            "The mouse drag of the app: a spring [N/m] from the point sum w_a x_a of three vertex "
            "nodes (weights sum 1, e.g. (v, v, v) and (1, 0, 0) for one vertex) to `target`.")
        .def(
            "clear_drag", [](Sim& s) { s.synced().set_drag(std::nullopt); },
            "Removes the drag spring.")
        .def(
            "set_ground",
            [](Sim& s, std::optional<double> height, double stiffness, double friction) {
                s.synced().set_ground(height, stiffness, friction);
            },
            py::arg("height"), py::arg("stiffness") = 1e5, py::arg("friction") = 0.0,
            "A penalty ground plane z = height (None: none), stiffness [N/m], viscous friction.")
        .def(
            "cut",
            [](Sim& s, const py::object& point, const py::object& normal, double radius) {
                const CutPlane plane{vec3_from(point, "point"), vec3_from(normal, "normal"),
                                     radius};
                return s.change([&](Simulation& sim) { return sim.cut(plane); });
            },
            py::arg("point"), py::arg("normal"),
            py::arg("radius") = std::numeric_limits<double>::infinity(),
            "Cuts along the plane (on the deformed positions), carrying the state; returns the "
            "TopologyChange.")
        .def(
            "refine_sphere",
            [](Sim& s, const py::object& center, double radius, int levels) {
                const Vec3 c = vec3_from(center, "center");
                return s.change(
                    [&](Simulation& sim) { return sim.refine_sphere(c, radius, levels); });
            },
            py::arg("center"), py::arg("radius"), py::arg("levels") = 3,
            "Refines the cells touching the sphere (deformed positions) by `levels` bisection "
            "rounds, carrying the state.")
        .def(
            "refine_uniform",
            [](Sim& s) { return s.change([](Simulation& sim) { return sim.refine_uniform(); }); },
            "Refines every cell into 8, carrying the state.")
        .def(
            "undo", [](Sim& s) { return s.change([](Simulation& sim) { return sim.undo(); }); },
            "Goes back before the newest cut or refinement.")
        .def(
            "change_settings",
            [](Sim& s, const std::optional<SimulationSettings>& settings, const py::kwargs& kw) {
                const SimulationSettings next = settings_from(
                    settings ? *settings : s.engine().settings(), kw, "change_settings");
                s.change([&](Simulation& sim) {
                    sim.change_settings(next);
                    return true;
                });
            },
            py::arg("settings") = py::none(),
            "Rebuilds with new settings (or the current ones with keyword overrides, e.g. "
            "order=2, dt=0.01), carrying the state.")
        .def_property_readonly(
            "settings", [](Sim& s) { return s.engine().settings(); },
            "A copy of the settings in force (change them with change_settings).")
        .def_property(
            "frame", [](Sim& s) { return s.engine().frame(); },
            [](Sim& s, std::int64_t frame) { s.engine().set_frame(frame); },
            "Steps taken (unless set).")
        .def_property_readonly(
            "mesh", [](Sim& s) { return s.engine().mesh(); },
            "A copy of the current rest mesh (after cuts and refinements).")
        .def_property_readonly("num_nodes", [](Sim& s) { return s.engine().num_nodes(); })
        .def_property_readonly("num_vertices",
                               [](Sim& s) { return s.engine().mesh().num_vertices(); })
        .def_property_readonly("num_cells", [](Sim& s) { return s.engine().mesh().num_cells(); })
        .def_property_readonly("components", [](Sim& s) { return s.engine().components(); })
        .def_property_readonly("nnz_blocks", [](Sim& s) { return s.engine().nnz_blocks(); })
        .def_property_readonly("matrix_bytes", [](Sim& s) { return s.engine().matrix_bytes(); })
        .def_property_readonly(
            "cell_nodes",
            [](Sim& s) {
                const Simulation& sim = s.engine();
                const std::vector<Index>& nodes = sim.cell_nodes();
                const py::ssize_t cells = sim.mesh().num_cells();
                const py::ssize_t per_cell = cells ? py::ssize_t(nodes.size()) / cells : 0;
                py::array_t<Index> out({cells, per_cell});
                std::copy(nodes.begin(), nodes.end(), out.mutable_data());
                return out;
            },
            "(#cells, nodes per cell) node indices (a copy).")
        .def_property_readonly(
            "lumped_mass",
            [](Sim& s) {
                const std::vector<double>& mass = s.engine().lumped_mass();
                return py::array_t<double>(static_cast<py::ssize_t>(mass.size()), mass.data());
            },
            "(#nodes,) lumped (HRZ) mass (a copy).")
        .def(
            "von_mises_stress",
            [](Sim& s) {
                const std::vector<double> stress = s.synced().von_mises_stress();
                return py::array_t<double>(static_cast<py::ssize_t>(stress.size()), stress.data());
            },
            "(#cells,) von Mises stress of the current state.")
        .def(
            "incremental_potential",
            [](Sim& s, const py::array_t<double, py::array::c_style | py::array::forcecast>& y) {
                Simulation& sim = s.synced();
                std::vector<double> gradient;
                const double value =
                    sim.incremental_potential(flat3_from(y, sim.num_nodes(), "y"), &gradient);
                return py::make_tuple(value, rows3_copy(gradient));
            },
            py::arg("y"),
            "The incremental potential the next step minimises at node positions y, and its "
            "gradient (zero on pinned nodes).")
        .def_property_readonly("topology_changes",
                               [](Sim& s) { return s.engine().topology_changes(); })
        .def_property_readonly("undo_depth", [](Sim& s) { return s.engine().undo_depth(); })
        .def(
            "set_undo_depth",
            [](Sim& s, std::size_t depth) {
                TopologyChangeOptions options = s.engine().topology_options();
                options.undo_depth = depth;
                s.engine().set_topology_options(options);
            },
            py::arg("depth"), "Snapshots kept for undo() (0: none, as simulate keeps).")
        .def(
            "write_vtu",
            [](Sim& s, const std::filesystem::path& path, bool binary) {
                write_state_vtu(path, s.synced(), binary ? VtuEncoding::Binary : VtuEncoding::Ascii);
            },
            py::arg("path"), py::arg("binary") = false,
            "Writes the state as `simulate --vtu` does (every node; displacement, velocity, "
            "pinned; von_mises per cell), atomically; binary: raw appended encoding.")
        .def("__repr__", [](Sim& s) {
            const Simulation& sim = s.engine();
            return "<elastodyn.Simulation " + std::to_string(sim.num_nodes()) + " nodes, " +
                   std::to_string(sim.mesh().num_cells()) +
                   " cells, p=" + std::to_string(sim.settings().order) + ", " +
                   backend_name(sim.settings().backend) + ", frame " + std::to_string(sim.frame()) +
                   ">";
        });
}

} // namespace edn::python
