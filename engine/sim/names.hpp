#pragma once
/// The one table of names of the run-time choices: for each value of Material, Integrator,
/// Backend, Preconditioner, SummationMethod and NewtonStop (and each element order) its name on the
/// command line, in scripts and in JSON ("neohookean") and its label in the GUI ("neo-Hookean").
/// The name/parse functions (material_name, parse_material, ...), the CLI usage text and the GUI
/// all read it, so a new value is added in one place.

#include "sim/simulation.hpp"

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace edn {

/// One value of a choice with its two spellings.
template <class E> struct NamedValue {
    E value;           ///< the value
    const char* name;  ///< CLI, script and JSON spelling: lower case, underscores
    const char* label; ///< GUI label
};

/// The names table of choice E (specialised below); `values` lists every value once, in the
/// order the GUI shows them.
template <class E> struct Names;

/// Material models.
template <> struct Names<Material> {
    static constexpr std::array<NamedValue<Material>, 3> values = {{
        {Material::Linear, "linear", "linear"},
        {Material::Corotational, "corotational", "co-rotational"},
        {Material::NeoHookean, "neohookean", "neo-Hookean"},
    }};
};

/// Time integrators.
template <> struct Names<Integrator> {
    static constexpr std::array<NamedValue<Integrator>, 3> values = {{
        {Integrator::BackwardEuler, "backward_euler", "backward Euler"},
        {Integrator::Midpoint, "midpoint", "implicit midpoint"},
        {Integrator::Static, "static", "static"},
    }};
};

/// Backends.
template <> struct Names<Backend> {
    static constexpr std::array<NamedValue<Backend>, 2> values = {{
        {Backend::Cpu, "cpu", "CPU"},
        {Backend::Cuda, "cuda", "CUDA"},
    }};
};

/// Preconditioners (the default first).
template <> struct Names<Preconditioner> {
    static constexpr std::array<NamedValue<Preconditioner>, 3> values = {{
        {Preconditioner::TwoLevel, "two_level", "two-level (p>=2)"},
        {Preconditioner::BlockJacobi, "block_jacobi", "block Jacobi"},
        {Preconditioner::Multigrid, "multigrid", "multigrid"},
    }};
};

/// Summation methods.
template <> struct Names<SummationMethod> {
    static constexpr std::array<NamedValue<SummationMethod>, 4> values = {{
        {SummationMethod::Auto, "auto", "auto"},
        {SummationMethod::PerEntry, "per_entry", "per-entry"},
        {SummationMethod::PerSimplex, "per_simplex", "per-simplex"},
        {SummationMethod::Inline, "inline", "inline"},
    }};
};

/// PSD projection of element Hessians (the default first).
template <> struct Names<HessianProjection> {
    static constexpr std::array<NamedValue<HessianProjection>, 3> values = {{
        {HessianProjection::OnDemand, "on_demand", "on demand"},
        {HessianProjection::Always, "always", "always"},
        {HessianProjection::Never, "never", "never (exact)"},
    }};
};

/// Why a Newton loop ended (run.json's per-frame "stop").
template <> struct Names<NewtonStop> {
    static constexpr std::array<NamedValue<NewtonStop>, 4> values = {{
        {NewtonStop::Converged, "converged", "converged"},
        {NewtonStop::IterationCap, "iteration_cap", "iteration cap"},
        {NewtonStop::TimeBudget, "time_budget", "time budget"},
        {NewtonStop::Failed, "failed", "failed"},
    }};
};

/// Element orders 1..3 (kMaxOrder), named by their digit.
inline constexpr std::array<NamedValue<int>, 3> kOrderNames = {{
    {1, "1", "p=1"},
    {2, "2", "p=2"},
    {3, "3", "p=3"},
}};

/// The table entry of `value`, or nullptr for a value outside the table.
template <class E> constexpr const NamedValue<E>* find_named(E value) {
    for (const NamedValue<E>& entry : Names<E>::values)
        if (entry.value == value) return &entry;
    return nullptr;
}

/// The name of `value` ("unknown" outside the table).
template <class E> constexpr const char* name_of(E value) {
    const NamedValue<E>* entry = find_named(value);
    return entry ? entry->name : "unknown";
}

/// The GUI label of `value` ("unknown" outside the table).
template <class E> constexpr const char* label_of(E value) {
    const NamedValue<E>* entry = find_named(value);
    return entry ? entry->label : "unknown";
}

/// The value named `name`, or nullopt.
template <class E> constexpr std::optional<E> parse_name(std::string_view name) {
    for (const NamedValue<E>& entry : Names<E>::values)
        if (name == entry.name) return entry.value;
    return std::nullopt;
}

/// Every name of E joined by `separator`, for usage text ("linear | corotational | neohookean").
template <class E> std::string names_list(std::string_view separator = " | ") {
    std::string out;
    for (const NamedValue<E>& entry : Names<E>::values) {
        if (!out.empty()) out += separator;
        out += entry.name;
    }
    return out;
}

/// Index of `value` in Names<E>::values (0 outside the table), for GUI lists.
template <class E> constexpr int index_of(E value) {
    for (std::size_t i = 0; i < Names<E>::values.size(); ++i)
        if (Names<E>::values[i].value == value) return static_cast<int>(i);
    return 0;
}

} // namespace edn
