// Settings in Python: elastodyn.Settings (SimulationSettings), set through simulate's own option
// parser so that keyword arguments mean exactly what the CLI's flags mean.
#include "bindings.hpp"
#include "core/error.hpp"
#include "sim/names.hpp"
#include "sim/settings_options.hpp"

#include <algorithm>
#include <pybind11/stl.h>
#include <sstream>

namespace edn::python {
namespace {

/// The value of enum E named `name`; edn::Error(Usage) listing the names otherwise.
template <class E> E parse_or_throw(const std::string& name, const char* what) {
    const std::optional<E> value = parse_name<E>(name);
    EDN_VERIFY(value, ErrorCode::Usage,
               what << ": unknown value '" << name << "' (expected " << names_list<E>(", ") << ")");
    return *value;
}

/// Keyword arguments as simulate's options: `newton_tol=1e-3` is `--newton-tol 1e-3`, a flag
/// (`static`, `exact_hessian`, `deterministic`) is given by True, `cg_forcing` takes a bool, a
/// sequence is written "a,b,c" (gravity). Parsed by the engine's one settings parser, so every
/// value is checked and named as on the command line.
void apply_keywords(SimulationSettings& settings, const py::dict& keywords, const char* command) {
    std::vector<std::pair<std::string, std::string>> given;
    for (const auto& [key, value] : keywords) {
        std::string name = py::str(key);
        std::replace(name.begin(), name.end(), '_', '-');
        const SettingsOption* option = find_settings_option(name);
        EDN_VERIFY(option, ErrorCode::Usage,
                   command << ": unknown setting '" << std::string(py::str(key))
                           << "' (elastodyn.settings_options() lists them; write '-' as '_')");
        std::string text;
        if (!option->takes_value()) {
            EDN_VERIFY(py::isinstance<py::bool_>(value), ErrorCode::Usage,
                       command << ": setting '" << std::string(py::str(key))
                               << "' is a flag: True or False");
            if (!value.cast<bool>()) continue;
        } else if (py::isinstance<py::bool_>(value)) {
            text = value.cast<bool>() ? "on" : "off";
        } else if (!py::isinstance<py::str>(value) && py::isinstance<py::sequence>(value)) {
            for (const py::handle item : value.cast<py::sequence>())
                text += (text.empty() ? "" : ",") + std::string(py::str(item));
        } else {
            text = py::str(value); // repr of a float: the shortest text that reads back exactly
        }
        given.emplace_back(name, text);
    }
    apply_settings_options(given, settings, command);
}

/// One field of Settings as a read/write Python property of enum type E (its name).
template <class E>
void enum_property(py::class_<SimulationSettings>& cls, const char* name,
                   E SimulationSettings::*field, const char* doc) {
    cls.def_property(
        name, [field](const SimulationSettings& s) { return std::string(name_of(s.*field)); },
        [field, name](SimulationSettings& s, const std::string& value) {
            s.*field = parse_or_throw<E>(value, name);
        },
        doc);
}

/// A 3-vector argument as a tuple.
py::tuple as_tuple(const std::array<double, 3>& v) {
    return py::make_tuple(v[0], v[1], v[2]);
}

} // namespace

/// Settings from an optional Settings object and keyword overrides.
SimulationSettings settings_from(const std::optional<SimulationSettings>& base,
                                 const py::kwargs& keywords, const char* command) {
    SimulationSettings settings = base.value_or(SimulationSettings{});
    apply_keywords(settings, keywords, command);
    return settings;
}

void bind_settings(py::module_& m) {
    py::class_<SimulationSettings> cls(
        m, "Settings",
        "SimulationSettings. Settings(**options) takes simulate's settings options with '-' "
        "written '_' (preset, order, material, E, nu, rho, dt, integrator, static, backend, "
        "summation, preconditioner, gravity, damping, stiffness_damping, newton, newton_tol, "
        "frame_budget_ms, cg_tol, cg_max, cg_forcing, multigrid_refresh, projection, exact_hessian, "
        "deterministic, ground, ground_friction), parsed and checked by the CLI's own parser; "
        "the attributes read and write the fields.");
    cls.def(py::init([](const py::kwargs& keywords) {
           return settings_from(std::nullopt, keywords, "Settings");
       }))
        .def(
            "with_options",
            [](const SimulationSettings& s, const py::kwargs& keywords) {
                return settings_from(s, keywords, "Settings");
            },
            "A copy with simulate options applied (as Settings(**options) does).")
        .def_readwrite("order", &SimulationSettings::order)
        .def_readwrite("E", &SimulationSettings::young, "Young's modulus [Pa]")
        .def_readwrite("nu", &SimulationSettings::poisson, "Poisson's ratio")
        .def_readwrite("rho", &SimulationSettings::density, "density [kg/m^3]")
        .def_readwrite("dt", &SimulationSettings::dt, "time step [s]")
        .def_property(
            "gravity", [](const SimulationSettings& s) { return as_tuple(s.gravity); },
            [](SimulationSettings& s, const py::object& g) { s.gravity = vec3_from(g, "gravity"); },
            "(gx, gy, gz) [m/s^2]")
        .def_readwrite("damping", &SimulationSettings::mass_damping, "Rayleigh alpha [1/s]")
        .def_readwrite("stiffness_damping", &SimulationSettings::stiffness_damping,
                       "Rayleigh beta [s]")
        .def_readwrite("newton", &SimulationSettings::max_newton_iterations,
                       "Newton iteration cap per step")
        .def_readwrite("newton_tol", &SimulationSettings::newton_tolerance)
        .def_readwrite("frame_budget_ms", &SimulationSettings::frame_budget_ms)
        .def_property(
            "cg_tol", [](const SimulationSettings& s) { return s.pcg.relative_tolerance; },
            [](SimulationSettings& s, double t) { s.pcg.relative_tolerance = t; })
        .def_property(
            "cg_max", [](const SimulationSettings& s) { return s.pcg.max_iterations; },
            [](SimulationSettings& s, int k) { s.pcg.max_iterations = k; })
        .def_readwrite("cg_forcing", &SimulationSettings::cg_forcing)
        .def_readwrite("coarse_iterations", &SimulationSettings::coarse_iterations)
        .def_readwrite("multigrid_every_iteration", &SimulationSettings::multigrid_every_iteration)
        .def_readwrite("multigrid_lag", &SimulationSettings::multigrid_lag)
        .def_readwrite("multigrid_rest_modes", &SimulationSettings::multigrid_rest_modes)
        .def_readwrite("deterministic", &SimulationSettings::deterministic)
        .def_readwrite("ground", &SimulationSettings::ground_height, "ground height (or None)")
        .def_readwrite("ground_stiffness", &SimulationSettings::ground_stiffness)
        .def_readwrite("ground_friction", &SimulationSettings::ground_friction);
    enum_property<Material>(cls, "material", &SimulationSettings::material, "material model");
    enum_property<Integrator>(cls, "integrator", &SimulationSettings::integrator, "integrator");
    enum_property<Backend>(cls, "backend", &SimulationSettings::backend, "'cpu' or 'cuda'");
    enum_property<SummationMethod>(cls, "summation", &SimulationSettings::summation,
                                   "summation method");
    enum_property<Preconditioner>(cls, "preconditioner", &SimulationSettings::preconditioner,
                                  "preconditioner");
    enum_property<HessianProjection>(cls, "projection", &SimulationSettings::projection,
                                     "PSD projection of element Hessians");
    cls.def("__repr__", [](const SimulationSettings& s) {
        std::ostringstream out;
        out << "<elastodyn.Settings order=" << s.order << " material=" << name_of(s.material)
            << " E=" << s.young << " nu=" << s.poisson << " rho=" << s.density << " dt=" << s.dt
            << " integrator=" << name_of(s.integrator) << " backend=" << name_of(s.backend) << ">";
        return out.str();
    });
}

} // namespace edn::python
