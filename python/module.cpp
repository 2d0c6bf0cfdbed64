// The Python module `elastodyn`: errors, module-level queries (presets, settings options, CUDA)
// and the array helpers; mesh_bindings.cpp and simulation_bindings.cpp bind the rest.
#include "bindings.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "sim/presets.hpp"
#include "sim/settings_options.hpp"

#include <algorithm>
#include <pybind11/stl.h>

namespace edn::python {
namespace {

/// The Python exception classes, created once at import.
struct ErrorTypes {
    PyObject* base = nullptr;     ///< elastodyn.Error(Exception)
    PyObject* usage = nullptr;    ///< elastodyn.UsageError(Error, ValueError)
    PyObject* input = nullptr;    ///< elastodyn.InputError(Error, ValueError)
    PyObject* file = nullptr;     ///< elastodyn.FileError(Error, OSError)
    PyObject* resource = nullptr; ///< elastodyn.EngineError(Error, RuntimeError)
};
ErrorTypes error_types;

/// A new exception class elastodyn.NAME derived from `bases` (a tuple or one class), added to `m`.
PyObject* new_exception(py::module_& m, const char* name, PyObject* bases, const char* doc) {
    const std::string qualified = std::string("elastodyn.") + name;
    PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
    if (!type) throw py::error_already_set();
    m.add_object(name, py::reinterpret_borrow<py::object>(type));
    return type;
}

/// The Python class of an engine error of `code`: the CLI's exit codes by kind (2 usage, 3 bad
/// input, 4 resource / numerical / internal), with I/O failures as OSError.
PyObject* error_type_for(ErrorCode code) {
    switch (code) {
    case ErrorCode::Usage:
        return error_types.usage;
    case ErrorCode::Io:
        return error_types.file;
    default:
        break;
    }
    return exit_code_for(code) == 3 ? error_types.input : error_types.resource;
}

} // namespace

void bind_errors(py::module_& m) {
    error_types.base = new_exception(m, "Error", PyExc_Exception,
                                     "Base class of the engine's errors; `code` names the kind "
                                     "(error_code_name: 'usage', 'parse', 'open_surface', ...).");
    const auto pair = [](PyObject* a, PyObject* b) {
        return py::make_tuple(py::handle(a), py::handle(b)).release().ptr();
    };
    error_types.usage = new_exception(m, "UsageError", pair(error_types.base, PyExc_ValueError),
                                      "A bad argument or setting (the CLI's exit 2).");
    error_types.input = new_exception(m, "InputError", pair(error_types.base, PyExc_ValueError),
                                      "Bad input data: a malformed file, an open or "
                                      "self-intersecting surface, a degenerate cell (exit 3).");
    error_types.file = new_exception(m, "FileError", pair(error_types.base, PyExc_OSError),
                                     "A file cannot be opened, read or written.");
    error_types.resource =
        new_exception(m, "EngineError", pair(error_types.base, PyExc_RuntimeError),
                      "Meshing failed, out of memory, no CUDA, a non-finite result or an internal "
                      "error (exit 4).");
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const Error& e) {
            PyObject* type = error_type_for(e.code());
            // An instance carrying `code`, so callers can branch on the kind like the CLI's tests.
            py::object instance = py::reinterpret_borrow<py::object>(type)(e.what());
            instance.attr("code") = error_code_name(e.code());
            PyErr_SetObject(type, instance.ptr());
        }
    });
}

py::array_t<double> rows3_copy(const std::vector<double>& flat) {
    const py::ssize_t rows = static_cast<py::ssize_t>(flat.size() / 3);
    py::array_t<double> out({rows, py::ssize_t{3}});
    std::copy(flat.begin(), flat.end(), out.mutable_data());
    return out;
}

std::vector<double>
flat3_from(const py::array_t<double, py::array::c_style | py::array::forcecast>& array,
           long long expected_rows, const char* what) {
    const bool rows_ok = expected_rows < 0
                             ? array.size() % 3 == 0
                             : array.size() == 3 * static_cast<py::ssize_t>(expected_rows);
    if (!rows_ok) {
        std::string shape;
        for (py::ssize_t i = 0; i < array.ndim(); ++i)
            shape += (i ? ", " : "") + std::to_string(array.shape(i));
        EDN_THROW(ErrorCode::Usage,
                  what << ": expected "
                       << (expected_rows < 0 ? std::string("(n, 3)")
                                             : "(" + std::to_string(expected_rows) + ", 3)")
                       << " values, got shape (" << shape << ")");
    }
    return std::vector<double>(array.data(), array.data() + array.size());
}

Vec3 vec3_from(const py::handle& values, const char* what) {
    std::vector<double> v;
    try {
        v = values.cast<std::vector<double>>();
    } catch (const py::cast_error&) {
        EDN_THROW(ErrorCode::Usage, what << ": expected 3 numbers");
    }
    EDN_VERIFY(v.size() == 3, ErrorCode::Usage, what << ": expected 3 numbers, got " << v.size());
    return {v[0], v[1], v[2]};
}

void make_read_only(py::array& array) {
    array.attr("setflags")(py::arg("write") = false);
}

} // namespace edn::python

PYBIND11_MODULE(elastodyn, m) {
    namespace py = pybind11;
    using namespace edn;
    m.doc() = "elastodyn: implicit FEM soft-body simulation (CPU, and CUDA when built with it). "
              "A thin layer over the C++ engine: mesh a surface, build a Simulation, step it and "
              "read or write its state as NumPy arrays.";
    python::bind_errors(m);
    m.attr("__version__") = EDN_VERSION;
    m.def("built_with_cuda", &built_with_cuda, "Whether this build has the CUDA backend.");
    m.def("cuda_available", &cuda_device_available,
          "Whether the CUDA backend is built and a CUDA device can be used.");
    m.def(
        "default_backend", [] { return cuda_device_available() ? "cuda" : "cpu"; },
        "'cuda' when a usable device exists, else 'cpu' (the app's choice; simulate's default "
        "is 'cpu').");
    m.def(
        "presets",
        [] {
            py::dict out;
            for (const MaterialPreset& p : material_presets())
                out[p.name] = py::dict(py::arg("E") = p.young, py::arg("nu") = p.poisson,
                                       py::arg("rho") = p.density, py::arg("label") = p.label,
                                       py::arg("source") = p.source);
            return out;
        },
        "The named materials (simulate --preset): {name: {E, nu, rho, label, source}}.");
    m.def(
        "settings_options",
        [] {
            py::list out;
            for (const SettingsOption& o : settings_options())
                out.append(py::make_tuple(o.name, o.value_name, o.help));
            return out;
        },
        "simulate's settings options as (name, value name, help); Settings(**kwargs) takes each "
        "with '-' written '_' (newton_tol=1e-3).");
    python::bind_mesh(m);
    python::bind_settings(m);
    python::bind_simulation(m);
}
