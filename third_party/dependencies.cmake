# How opbench finds its dependencies (versions pinned in third_party/versions.env; nothing vendored).
#   OPBENCH_TORCH_PREFIX   LibTorch's CMake prefix (torch.utils.cmake_prefix_path); scripts/build.sh sets it
#   OPBENCH_CUDA           AUTO (default): CUDA parts when a CUDA compiler and a CUDA LibTorch are found;
#                          OFF: never
# Provides: target opbench::torch, OPBENCH_HAVE_CUDA (bool), and finds benchmark, nlohmann_json, GTest.
include(CheckLanguage)

set(OPBENCH_CUDA AUTO CACHE STRING "Build the CUDA parts: AUTO or OFF")
set(OPBENCH_TORCH_PREFIX "" CACHE PATH "LibTorch CMake prefix (python -c 'import torch; print(torch.utils.cmake_prefix_path)')")
if(OPBENCH_TORCH_PREFIX)
  list(PREPEND CMAKE_PREFIX_PATH "${OPBENCH_TORCH_PREFIX}")
endif()

find_package(benchmark REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(GTest REQUIRED)
find_package(Threads REQUIRED)

# Is LibTorch a CUDA build? Its install tree has libtorch_cuda.so next to libtorch.so.
find_library(OPBENCH_LIBTORCH torch PATHS "${OPBENCH_TORCH_PREFIX}/../../lib" NO_DEFAULT_PATH)
if(NOT OPBENCH_LIBTORCH)
  find_library(OPBENCH_LIBTORCH torch REQUIRED)
endif()
get_filename_component(OPBENCH_TORCH_LIBDIR "${OPBENCH_LIBTORCH}" DIRECTORY)
set(OPBENCH_TORCH_IS_CUDA OFF)
if(EXISTS "${OPBENCH_TORCH_LIBDIR}/libtorch_cuda.so")
  set(OPBENCH_TORCH_IS_CUDA ON)
endif()

set(OPBENCH_HAVE_CUDA OFF)
if(OPBENCH_TORCH_IS_CUDA AND NOT OPBENCH_CUDA STREQUAL "OFF")
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(OPBENCH_HAVE_CUDA ON)
  endif()
endif()

add_library(opbench_torch INTERFACE)
add_library(opbench::torch ALIAS opbench_torch)
if(OPBENCH_HAVE_CUDA OR NOT OPBENCH_TORCH_IS_CUDA)
  if(OPBENCH_HAVE_CUDA)
    # Torch's CMake turns TORCH_CUDA_ARCH_LIST into -gencode flags for every CUDA source. Default: the
    # compute capabilities of this machine's GPUs, else 9.0 (the H100 and H200 the suite is measured on):
    # each architecture is another compile of every kernel (gemv.cu alone ~25 s on a CI core).
    # -DOPBENCH_CUDA_ARCHS="8.0;9.0" builds for an A100 too.
    if(NOT DEFINED CACHE{OPBENCH_CUDA_ARCHS})   # asked once, at the first configure
      set(_opbench_default_archs "9.0")
      execute_process(COMMAND nvidia-smi --query-gpu=compute_cap --format=csv,noheader
                      OUTPUT_VARIABLE _opbench_gpu_caps RESULT_VARIABLE _opbench_smi_rc ERROR_QUIET
                      OUTPUT_STRIP_TRAILING_WHITESPACE)
      if(_opbench_smi_rc EQUAL 0 AND _opbench_gpu_caps MATCHES "^[0-9]+\\.[0-9]")
        string(REPLACE "\n" ";" _opbench_default_archs "${_opbench_gpu_caps}")
        list(REMOVE_DUPLICATES _opbench_default_archs)
      endif()
    endif()
    set(OPBENCH_CUDA_ARCHS "${_opbench_default_archs}" CACHE STRING "GPU architectures for opbench's own kernels")
    set(TORCH_CUDA_ARCH_LIST "${OPBENCH_CUDA_ARCHS}")
    set(CMAKE_CUDA_ARCHITECTURES OFF)
    enable_language(CUDA)
  endif()
  find_package(Torch REQUIRED)
  target_link_libraries(opbench_torch INTERFACE ${TORCH_LIBRARIES})
  # TORCH_CXX_FLAGS carries the ABI define; keep it on the C++ side only.
  separate_arguments(_opbench_torch_flags UNIX_COMMAND "${TORCH_CXX_FLAGS}")
  target_compile_options(opbench_torch INTERFACE $<$<COMPILE_LANGUAGE:CXX>:${_opbench_torch_flags}>)
else()
  # A CUDA LibTorch but no CUDA compiler: TorchConfig.cmake insists on nvcc, so use LibTorch's CPU
  # API directly. Its CUDA libraries still load (pip ships them); CUDA cases are not built.
  message(STATUS "opbench: CUDA LibTorch without a CUDA compiler: CPU-only build")
  get_filename_component(_opbench_torch_root "${OPBENCH_TORCH_LIBDIR}/.." ABSOLUTE)
  target_include_directories(opbench_torch SYSTEM INTERFACE
    "${_opbench_torch_root}/include" "${_opbench_torch_root}/include/torch/csrc/api/include")
  target_link_libraries(opbench_torch INTERFACE
    "${OPBENCH_TORCH_LIBDIR}/libtorch.so" "${OPBENCH_TORCH_LIBDIR}/libtorch_cpu.so"
    "${OPBENCH_TORCH_LIBDIR}/libc10.so" Threads::Threads)
  target_compile_definitions(opbench_torch INTERFACE _GLIBCXX_USE_CXX11_ABI=1)
endif()
message(STATUS "opbench: LibTorch in ${OPBENCH_TORCH_LIBDIR} (CUDA build: ${OPBENCH_TORCH_IS_CUDA}); "
               "CUDA parts: ${OPBENCH_HAVE_CUDA}; Google Benchmark ${benchmark_VERSION}")
