// L2 eviction policies for 16-byte loads and stores, and L1 hints for the loads (sm_80 and newer; before
// that the policy is 0 and the access plain). Used by the cold flush (timer_kernels.cu) and the two-pass
// row norms (kernels/row_norm/row_norm_kernels.cuh).
// Include only from .cu files.
#pragma once
#include <cstdint>

namespace opbench::detail {

// A policy that keeps the lines a load brings into L2 (evict_last) or lets them go first (evict_first).
__device__ __forceinline__ uint64_t l2_policy(bool keep) {
  uint64_t policy = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if (keep)
    asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  else
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
#else
  (void)keep;
#endif
  return policy;
}

// What a load asks of L1 beside its L2 policy: nothing, to keep the line (L1::evict_last: it is read
// again soon) or to give it up first (L1::evict_first: its last use).
enum class L1Hint { kNone, kEvictLast, kEvictFirst };

// One 16-byte load under `policy`, with kL1's hint.
template <L1Hint kL1 = L1Hint::kNone>
__device__ __forceinline__ uint4 load_with_policy(const uint4* p, uint64_t policy) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  uint4 v;
  if constexpr (kL1 == L1Hint::kEvictLast)
    asm volatile("ld.global.L1::evict_last.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p), "l"(policy));
  else if constexpr (kL1 == L1Hint::kEvictFirst)
    asm volatile("ld.global.L1::evict_first.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p), "l"(policy));
  else
    asm volatile("ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p), "l"(policy));
  return v;
#else
  (void)policy;
  return *p;
#endif
}

// One 16-byte store under `policy`.
__device__ __forceinline__ void store_with_policy(uint4* p, uint4 v, uint64_t policy) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z),
               "r"(v.w), "l"(policy)
               : "memory");
#else
  (void)policy;
  *p = v;
#endif
}

}  // namespace opbench::detail
