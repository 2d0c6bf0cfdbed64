#pragma once
/// Run-time choice to template argument, written once. `with_order(p, f)` turns an element order
/// 1..3 into a compile-time constant; its sibling `with_material` (sim/material_dispatch.hpp,
/// which needs the Material enum and the material types) turns a Material into a material
/// object. Header-only and CUDA-safe (host code of .cu files may use it).
///
/// Convention: the callable is a template lambda, called as `f.template operator()<P>()`:
///
///     const double e = with_order(layout.order, [&]<int P>() { return energy<P>(mesh); });

#include "core/error.hpp"

namespace edn {

/// Calls `f.template operator()<P>()` with P = `order` (1, 2 or 3) and returns its result (every
/// instantiation must return the same type). Throws edn::Error(Usage) for another order.
template <class F> decltype(auto) with_order(int order, F&& f) {
    switch (order) {
    case 1:
        return f.template operator()<1>();
    case 2:
        return f.template operator()<2>();
    case 3:
        return f.template operator()<3>();
    }
    EDN_THROW(ErrorCode::Usage, "element order " << order << " not in 1..3");
}

} // namespace edn
