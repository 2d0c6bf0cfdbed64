#pragma once
/// Internal to the Python module: the pieces module.cpp puts together and the array helpers the
/// binding files share. The module is a thin layer: it converts arguments and arrays and calls the
/// engine; every check and every number comes from the engine.

#include "core/types.hpp"
#include "sim/simulation.hpp"

#include <cstdint>
#include <optional>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <string>
#include <vector>

namespace edn::python {

namespace py = pybind11;

/// Registers elastodyn.Error and its subclasses and translates edn::Error into them.
void bind_errors(py::module_& m);
/// Mesh, load_mesh, box_mesh, tetrahedralize, tangent, export_matrix_market.
void bind_mesh(py::module_& m);
/// Settings.
void bind_settings(py::module_& m);
/// StepResult, TopologyChange, Simulation, convergence_summary.
void bind_simulation(py::module_& m);
/// `base` (default SimulationSettings{}) with simulate's options given as keyword arguments
/// applied by the CLI's parser; edn::Error(Usage) prefixed with `command` on a bad one.
SimulationSettings settings_from(const std::optional<SimulationSettings>& base,
                                 const py::kwargs& keywords, const char* command);

/// A new (rows, 3) float64 array holding `flat` (3 per row).
py::array_t<double> rows3_copy(const std::vector<double>& flat);
/// `array` (any shape with 3 * expected_rows float64 values, e.g. (n, 3)) as a flat vector;
/// throws edn::Error(Usage) naming `what` when the size does not match (-1: any row count).
std::vector<double>
flat3_from(const py::array_t<double, py::array::c_style | py::array::forcecast>& array,
           long long expected_rows, const char* what);
/// A 3-vector from a sequence of 3 numbers; edn::Error(Usage) naming `what` otherwise.
Vec3 vec3_from(const py::handle& values, const char* what);
/// Marks `array` read-only (its memory belongs to an engine object).
void make_read_only(py::array& array);

} // namespace edn::python
