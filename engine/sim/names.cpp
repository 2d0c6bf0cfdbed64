// The name/parse functions declared beside their enums (sim/simulation.hpp,
// sparse/summation.hpp), all read from the table in sim/names.hpp.

#include "sim/names.hpp"

namespace edn {

const char* material_name(Material material) {
    return name_of(material);
}

std::optional<Material> parse_material(std::string_view name) {
    return parse_name<Material>(name);
}

const char* integrator_name(Integrator integrator) {
    return name_of(integrator);
}

std::optional<Integrator> parse_integrator(std::string_view name) {
    return parse_name<Integrator>(name);
}

const char* backend_name(Backend backend) {
    return name_of(backend);
}

std::optional<Backend> parse_backend(std::string_view name) {
    return parse_name<Backend>(name);
}

const char* preconditioner_name(Preconditioner preconditioner) {
    return name_of(preconditioner);
}

std::optional<Preconditioner> parse_preconditioner(std::string_view name) {
    return parse_name<Preconditioner>(name);
}

const char* summation_method_name(SummationMethod method) {
    return name_of(method);
}

std::optional<SummationMethod> parse_summation_method(std::string_view name) {
    return parse_name<SummationMethod>(name);
}

} // namespace edn
