// The one check of every NCCL call (include after nccl.h): a failure throws opbench::Error naming the
// call, file:line, NCCL's error string and its last error's detail.
#pragma once
#include <string>

#include "opbench/check.h"

#define OPBENCH_NCCL_CHECK(call)                                                                      \
  do {                                                                                                \
    ncclResult_t opbench_nccl_status_ = (call);                                                       \
    if (opbench_nccl_status_ != ncclSuccess)                                                          \
      ::opbench::detail::throw_call_failed(                                                           \
          "NCCL", static_cast<int>(opbench_nccl_status_),                                             \
          (std::string(ncclGetErrorString(opbench_nccl_status_)) + "; " + ncclGetLastError(nullptr)).c_str(), \
          #call, __FILE__, __LINE__);                                                                 \
  } while (0)
