#pragma once
/// `with_material(material, lame, f)`: the one place that turns a Material into the material
/// object the element kernels take (sibling of with_order in core/dispatch.hpp, which cannot
/// see the Material enum or the material types). Header-only and CUDA-safe (host code).
///
///     with_material(settings.material, lame, [&](const auto& material) {
///         with_order(layout.order, [&]<int P>() { launch<P>(material); });
///     });

#include "core/error.hpp"
#include "sim/element_kernels.hpp"
#include "sim/simulation.hpp"

namespace edn {

/// Calls `f(material)` with the material object of `material` in scalar type T: LinearMaterial,
/// Corotational with the exact tangent (dR/dF included; the simulation projects per quadrature
/// point itself) or NeoHookean, each built from `lame` with its other members at their
/// defaults. Returns f's result (every call must return the same type).
template <class T, class F>
decltype(auto) with_material(Material material, const LameParameters<T>& lame, F&& f) {
    switch (material) {
    case Material::Linear:
        return f(LinearMaterial<T>{lame});
    case Material::Corotational: {
        Corotational<T> corotational{lame};
        corotational.tangent = CorotationalTangent::exact;
        return f(corotational);
    }
    case Material::NeoHookean:
        return f(NeoHookean<T>{lame});
    }
    EDN_THROW(ErrorCode::Internal, "unknown material " << static_cast<int>(material));
}

} // namespace edn
