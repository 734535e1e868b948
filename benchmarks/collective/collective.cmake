# What the Collective family's process groups (communicator.cpp) need beyond LibTorch. The wheel ships
# c10d's headers, but ProcessGroupGloo.hpp includes gloo's own headers, which it leaves out (Debian
# package libgloo-dev; scripts/setup.sh installs it), and ProcessGroupNCCL.hpp includes nccl.h (the pip
# package nvidia-nccl beside torch, or a CUDA install). communicator.cpp uses only c10d's classes,
# which run the gloo and NCCL inside libtorch_cpu.so and libtorch_cuda.so, so gloo's headers only need
# to declare its types. Without a header, that backend's cases skip as unavailable.
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
  find_path(OPBENCH_NCCL_INCLUDE nccl.h
            HINTS "${OPBENCH_TORCH_LIBDIR}/../../nvidia/nccl/include" ${CUDAToolkit_INCLUDE_DIRS})
  if(OPBENCH_NCCL_INCLUDE)
    set_property(SOURCE "${_opbench_collective_pg}" APPEND PROPERTY COMPILE_DEFINITIONS OPBENCH_HAVE_NCCL USE_C10D_NCCL)
    set_property(SOURCE "${_opbench_collective_pg}" APPEND PROPERTY INCLUDE_DIRECTORIES "${OPBENCH_NCCL_INCLUDE}")
    list(APPEND _opbench_collective_backends "nccl (${OPBENCH_NCCL_INCLUDE}/nccl.h)")
  endif()
endif()
if(NOT _opbench_collective_backends)
  set(_opbench_collective_backends "none: its cases skip as unavailable")
endif()
list(JOIN _opbench_collective_backends ", " _opbench_collective_backends)
message(STATUS "opbench: Collective process groups: ${_opbench_collective_backends}")
