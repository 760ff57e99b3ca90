#include "runtime/BlasThreads.h"

#include <cblas.h>

#if defined(OPENBLAS_VERSION)
// Exported by OpenBLAS's threaded builds (it is what its fork handler calls);
// not declared in cblas.h.
extern "C" int blas_thread_shutdown_(void);
#endif

namespace tessel::runtime {

void releaseIdleBlasThreads() {
#if defined(OPENBLAS_VERSION)
  blas_thread_shutdown_();
#endif
}

} // namespace tessel::runtime
