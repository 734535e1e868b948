# What the Collective family's communicator (communicator.cpp) needs beyond LibTorch.
# - CPU: c10d's ProcessGroupGloo. The wheel ships c10d's headers, but ProcessGroupGloo.hpp includes gloo's
#   own headers, which it leaves out (Debian package libgloo-dev; scripts/setup.sh installs it); the gloo
#   that runs is the one inside libtorch_cpu.so, so gloo's headers only need to declare its types.
# - GPU: NCCL's C API, from nccl.h and libnccl.so.2 of the pip package nvidia-nccl beside torch (the very
#   library libtorch_cuda.so loads), else a CUDA install's. A CUDA build without them still builds.
# Without a backend's header (or library), its cases skip as unavailable.
set(_opbench_collective_pg "${CMAKE_CURRENT_LIST_DIR}/communicator.cpp")
set(_opbench_collective_backends "")
# The defines and includes of this one file differ from the shared precompiled header's: none for it.
set_property(SOURCE "${_opbench_collective_pg}" PROPERTY SKIP_PRECOMPILE_HEADERS ON)

find_path(OPBENCH_GLOO_INCLUDE gloo/algorithm.h)
if(OPBENCH_GLOO_INCLUDE)
  set_property(SOURCE "${_opbench_collective_pg}" APPEND PROPERTY COMPILE_DEFINITIONS OPBENCH_HAVE_GLOO USE_C10D_GLOO)
  if(NOT OPBENCH_GLOO_INCLUDE IN_LIST CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
    set_property(SOURCE "${_opbench_collective_pg}" APPEND PROPERTY INCLUDE_DIRECTORIES "${OPBENCH_GLOO_INCLUDE}")
  endif()
  list(APPEND _opbench_collective_backends gloo)
endif()

if(OPBENCH_HAVE_CUDA)
  set(_opbench_nccl_root "${OPBENCH_TORCH_LIBDIR}/../../nvidia/nccl")
  find_path(OPBENCH_NCCL_INCLUDE nccl.h HINTS "${_opbench_nccl_root}/include" ${CUDAToolkit_INCLUDE_DIRS})
  find_library(OPBENCH_NCCL_LIBRARY NAMES libnccl.so.2 nccl
               HINTS "${_opbench_nccl_root}/lib" ${CUDAToolkit_LIBRARY_DIR})
  if(OPBENCH_NCCL_INCLUDE AND OPBENCH_NCCL_LIBRARY)
    # lsa_sum.cu: NCCL's device API (nccl_device.h, NCCL >= 2.28) beside the C API.
    foreach(_src "${_opbench_collective_pg}" "${CMAKE_CURRENT_LIST_DIR}/lsa_sum.cu")
      set_property(SOURCE "${_src}" APPEND PROPERTY COMPILE_DEFINITIONS OPBENCH_HAVE_NCCL)
      set_property(SOURCE "${_src}" APPEND PROPERTY INCLUDE_DIRECTORIES "${OPBENCH_NCCL_INCLUDE}")
    endforeach()
    target_link_libraries(opbench_families PUBLIC "${OPBENCH_NCCL_LIBRARY}")
    list(APPEND _opbench_collective_backends "nccl (${OPBENCH_NCCL_INCLUDE}/nccl.h, ${OPBENCH_NCCL_LIBRARY})")
  endif()
endif()
if(NOT _opbench_collective_backends)
  set(_opbench_collective_backends "none: its cases skip as unavailable")
endif()
list(JOIN _opbench_collective_backends ", " _opbench_collective_backends)
message(STATUS "opbench: Collective process groups: ${_opbench_collective_backends}")
