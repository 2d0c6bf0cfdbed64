#include "core/parallel.hpp"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace edn {

int num_threads() {
#if defined(_OPENMP)
    return omp_get_max_threads();
#else
    return 1;
#endif
}

} // namespace edn
