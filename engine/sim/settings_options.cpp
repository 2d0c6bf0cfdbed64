#include "sim/settings_options.hpp"

#include "core/error.hpp"
#include "sim/names.hpp"
#include "sim/presets.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

namespace edn {
namespace {

// The help strings carry SimulationSettings' defaults (a test checks the numbers are the
// struct's); the app's own defaults (frame budget, backend) are stated in its usage text.
constexpr std::array<SettingsOption, 29> kOptions = {{
    {"preset", "NAME",
     "material preset (sim/presets.cpp): sets E, nu, rho; explicit --E/--nu/--rho win"},
    {"order", "P", "polynomial order 1..3 (default 1)"},
    {"material", "M", "linear | corotational | neohookean (default neohookean)"},
    {"E", "E", "Young's modulus [Pa] (default 1e5)"},
    {"nu", "NU", "Poisson's ratio in (-1, 0.5) (default 0.3)"},
    {"rho", "RHO", "density [kg/m^3] (default 1000)"},
    {"dt", "H", "time step [s] (default 1/60)"},
    {"integrator", "I", "backward_euler | midpoint (default backward_euler)"},
    {"static", "", "solve for equilibrium instead of stepping in time"},
    {"backend", "B", "cpu | cuda (default cpu)"},
    {"summation", "S",
     "auto | per_entry | per_simplex | inline (default auto: per-simplex on CUDA for p = 1 meshes "
     "whose element blocks exceed 4x the L2 cache, per-entry otherwise)"},
    {"preconditioner", "P",
     "multigrid | two_level | block_jacobi (default multigrid: smoothed aggregation, "
     "p-multigrid to P1 first at p >= 2; two_level: block Jacobi + P1 coarse correction at "
     "p >= 2, multigrid at p = 1)"},
    {"gravity", "G", "g along -z, or gx,gy,gz (default 9.81)"},
    {"damping", "A", "mass-proportional damping [1/s] (default 0)"},
    {"stiffness-damping", "B", "stiffness-proportional (Rayleigh beta) damping [s] (default 0)"},
    {"newton", "K", "cap on Newton iterations per frame (default 40)"},
    {"newton-tol", "T", "Newton decrement tolerance, relative to the first (default 1e-3)"},
    {"frame-budget-ms", "MS",
     "wall-clock budget of a frame's Newton iterations (default 0: none, deterministic)"},
    {"cg-tol", "T", "PCG relative tolerance; with --cg-forcing its floor (default 1e-4)"},
    {"cg-max", "K", "PCG iteration cap (default 1000)"},
    {"cg-forcing", "on|off", "inexact Newton: CG tolerance follows the gradient (default on)"},
    {"multigrid-refresh", "step|iteration",
     "multigrid: re-value the hierarchy once per frame (default) or every Newton iteration"},
    {"multigrid-lag", "N",
     "multigrid: at most N steps share a re-value (sooner when solves slow down; default 2)"},
    {"multigrid-modes", "current|rest",
     "multigrid: rigid-body modes of the current (default) or the rest positions"},
    {"projection", "on_demand|always|never",
     "PSD projection of element Hessians: when the exact one fails (default), always, never"},
    {"exact-hessian", "", "do not project element Hessians to PSD (--projection never)"},
    {"deterministic", "", "cuda: bitwise-reproducible runs"},
    {"ground", "Z", "penalty ground plane at height Z"},
    {"ground-friction", "F", "viscous friction [1/s] of the nodes on the ground (default 0)"},
}};

/// Parses and checks the values of one option; every failure names the option.
class ValueParser {
public:
    ValueParser(std::string_view command, std::string_view name, std::string_view text)
        : text_(text) {
        if (!command.empty()) prefix_ = std::string(command) + ": ";
        prefix_ += "option '--" + std::string(name) + "': ";
    }

    [[noreturn]] void fail(const std::string& message) const {
        throw Error(ErrorCode::Usage, prefix_ + message);
    }

    /// A finite decimal number in [min, max].
    double real(double min, double max) const {
        errno = 0;
        char* end = nullptr;
        const double number = std::strtod(text_.c_str(), &end);
        // Decimal only: strtod also reads hexadecimal ("0x10"), which no user means by --E.
        const bool decimal = text_.find_first_not_of("0123456789+-.eE") == std::string::npos;
        if (text_.empty() || end != text_.c_str() + text_.size() || !decimal)
            fail("'" + text_ + "' is not a number");
        if (!std::isfinite(number) || errno == ERANGE)
            fail("'" + text_ + "' is not a finite number");
        if (number < min || number > max) {
            std::ostringstream message;
            message << text_ << " is out of range [" << min << ", " << max << "]";
            fail(message.str());
        }
        return number;
    }

    /// A decimal integer in [min, max].
    long long integer(long long min, long long max) const {
        errno = 0;
        char* end = nullptr;
        const long long number = std::strtoll(text_.c_str(), &end, 10);
        if (text_.empty() || end != text_.c_str() + text_.size() || errno == ERANGE)
            fail("'" + text_ + "' is not an integer");
        if (number < min || number > max) {
            std::ostringstream message;
            message << number << " is out of range [" << min << ", " << max << "]";
            fail(message.str());
        }
        return number;
    }

    /// A value of the names table of E.
    template <class E> E choice(std::string_view separator = ", ") const {
        if (auto value = parse_name<E>(text_)) return *value;
        fail("unknown value '" + text_ + "' (" + names_list<E>(separator) + ")");
    }

    /// One of two words; true for the first.
    bool either(const char* first, const char* second) const {
        if (text_ != first && text_ != second)
            fail(std::string("expected ") + first + " or " + second + ", got '" + text_ + "'");
        return text_ == first;
    }

    /// "g" (magnitude along -z) or "gx,gy,gz" (commas and/or spaces).
    std::array<double, 3> gravity(double limit) const {
        const std::string expected = "expected g or gx,gy,gz, got '" + text_ + "'";
        const std::optional<std::vector<double>> parsed = parse_number_list(text_);
        if (!parsed) fail(expected);
        const std::vector<double>& values = *parsed;
        if (values.size() != 1 && values.size() != 3) fail(expected);
        for (double v : values)
            if (std::abs(v) > limit) {
                std::ostringstream message;
                message << "'" << text_ << "' is out of range (|g| <= " << limit
                        << " per component)";
                fail(message.str());
            }
        if (values.size() == 1) return {0, 0, -values[0]};
        return {values[0], values[1], values[2]};
    }

    const std::string& text() const { return text_; }

private:
    std::string text_;
    std::string prefix_;
};

} // namespace

std::span<const SettingsOption> settings_options() {
    return kOptions;
}

const SettingsOption* find_settings_option(std::string_view name) {
    for (const SettingsOption& option : kOptions)
        if (name == option.name) return &option;
    return nullptr;
}

void apply_settings_option(std::string_view name, std::string_view value, SimulationSettings& s,
                           std::string_view command) {
    const ValueParser v(command, name, value);
    if (find_settings_option(name) == nullptr) v.fail("not a simulation setting");
    constexpr double huge = std::numeric_limits<double>::max();
    constexpr double tiny = std::numeric_limits<double>::min();
    // Physical parameters must be floats (the CUDA backend's type); the time step also with
    // 1/dt^2 and dt^2, which scale the inertia term and gravity's displacement per step.
    constexpr double float_max = std::numeric_limits<float>::max();
    constexpr double float_min = std::numeric_limits<float>::min();
    if (name == "preset") {
        const MaterialPreset* preset = find_preset(value);
        if (preset == nullptr)
            v.fail("unknown preset '" + v.text() + "' (" + preset_names(", ") + ")");
        apply_preset(*preset, s);
    } else if (name == "order") {
        s.order = static_cast<int>(v.integer(1, 3));
    } else if (name == "material") {
        s.material = v.choice<Material>();
    } else if (name == "E") {
        s.young = v.real(float_min, float_max);
    } else if (name == "nu") {
        s.poisson = v.real(-1.0, 0.5);
        if (s.poisson <= -1.0 || s.poisson >= 0.5) v.fail("must be in (-1, 0.5), got " + v.text());
    } else if (name == "rho") {
        s.density = v.real(float_min, float_max);
    } else if (name == "dt") {
        s.dt = v.real(1.0 / std::sqrt(float_max), std::sqrt(float_max));
    } else if (name == "integrator") {
        const Integrator integrator = v.choice<Integrator>();
        if (integrator == Integrator::Static)
            v.fail("unknown integrator 'static' (backward_euler or midpoint; use --static)");
        s.integrator = integrator;
    } else if (name == "static") {
        s.integrator = Integrator::Static;
    } else if (name == "backend") {
        s.backend = v.choice<Backend>(" or ");
    } else if (name == "summation") {
        s.summation = v.choice<SummationMethod>();
    } else if (name == "preconditioner") {
        s.preconditioner = v.choice<Preconditioner>();
    } else if (name == "gravity") {
        s.gravity = v.gravity(float_max);
    } else if (name == "damping") {
        s.mass_damping = v.real(0.0, float_max);
    } else if (name == "stiffness-damping") {
        s.stiffness_damping = v.real(0.0, float_max);
    } else if (name == "newton") {
        s.max_newton_iterations = static_cast<int>(v.integer(1, 1000));
    } else if (name == "newton-tol") {
        s.newton_tolerance = v.real(tiny, huge);
    } else if (name == "frame-budget-ms") {
        s.frame_budget_ms = v.real(0.0, huge);
    } else if (name == "cg-tol") {
        s.pcg.relative_tolerance = v.real(tiny, 0.999);
    } else if (name == "cg-max") {
        s.pcg.max_iterations = static_cast<int>(v.integer(1, 1000000));
    } else if (name == "cg-forcing") {
        s.cg_forcing = v.either("on", "off");
    } else if (name == "multigrid-refresh") {
        s.multigrid_every_iteration = !v.either("step", "iteration");
    } else if (name == "multigrid-lag") {
        s.multigrid_lag = static_cast<int>(v.integer(1, 1000));
    } else if (name == "multigrid-modes") {
        s.multigrid_rest_modes = !v.either("current", "rest");
    } else if (name == "projection") {
        s.projection = v.choice<HessianProjection>();
    } else if (name == "exact-hessian") {
        s.projection = HessianProjection::Never;
    } else if (name == "deterministic") {
        s.deterministic = true;
    } else if (name == "ground") {
        s.ground_height = v.real(-huge, huge);
    } else if (name == "ground-friction") {
        s.ground_friction = v.real(0.0, float_max);
    }
}

void apply_settings_options(const std::vector<std::pair<std::string, std::string>>& given,
                            SimulationSettings& settings, std::string_view command) {
    const std::string prefix = command.empty() ? std::string() : std::string(command) + ": ";
    for (std::size_t i = 0; i < given.size(); ++i) {
        if (find_settings_option(given[i].first) == nullptr)
            throw Error(ErrorCode::Usage,
                        prefix + "option '--" + given[i].first + "': not a simulation setting");
        for (std::size_t j = 0; j < i; ++j)
            if (given[j].first == given[i].first)
                throw Error(ErrorCode::Usage,
                            prefix + "option '--" + given[i].first + "' given twice");
    }
    // The table's order, not the command line's: the result depends only on what was given.
    for (const SettingsOption& option : kOptions)
        for (const auto& [name, value] : given)
            if (name == option.name) apply_settings_option(name, value, settings, command);
}

std::optional<std::vector<double>> parse_number_list(const std::string& text) {
    std::string s = text;
    std::replace(s.begin(), s.end(), ',', ' ');
    std::istringstream in(s);
    std::vector<double> values;
    std::string token;
    while (in >> token) {
        char* end = nullptr;
        const double v = std::strtod(token.c_str(), &end);
        if (!end || *end != '\0' || !std::isfinite(v)) return std::nullopt;
        values.push_back(v);
    }
    return values;
}

} // namespace edn
