// Experiment (issue 37): a whole Llama-2-7B bf16 decode step as one persistent kernel. Per layer five
// phases, each a grid-wide dependency: QKV (x = h * attention_norm, rms as a scalar on the dot; k and v
// rows written into the cache at pos), attention, output projection (h += ), W13 (x = h * ffn_norm; its
// units pair rows r of W1 and W3, so the phase's end writes W2's x = bf16(silu(y1) * y3)), W2 (h += );
// then the head (x = h * norm). No RoPE (its cost is a few FMAs a row). Weights stream through a
// cp.async.bulk ring by a producer that claims UNIT_KB units of rows from a counter a phase and never
// waits on a dependency; 8 consumer warps dot on CUDA cores. Attention: a warp a (head, 16 positions),
// every warp of every SM, the head's last chunk merging them (STEP_BLOCK_ATTN=1: a block a head, heads
// claimed). Bisecting switches (environment): STEP_NO_ATTN, STEP_NO_NORM, STEP_NO_RESID, STEP_NO_CACHE;
// STEP_TAIL_ROWS=n: a phase's last n rows claimed a row a unit. -DKV_TOGETHER=1: K's and V's loads in
// flight together. Checked against naive kernels phase by phase (2 layers), then timed (32 layers +
// head, position 200) beside a read stream of the same weights, with every SM's arrival stamped.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(2); } } while (0)

#ifndef UNIT_KB
#define UNIT_KB 32
#endif
constexpr int kWarps = 8, kStageBytes = 8 * 1024, kStages = 24, kUnitBytes = UNIT_KB * 1024;
constexpr int kMaxK = 11008, kSlots = 256, kStep = 256, kThreads = 32 * (1 + kWarps);
constexpr int kDim = 4096, kHeads = 32, kHeadDim = 128, kFfn = 11008, kVocab = 32000;

enum Kind { GEMV = 0, ATTN = 1 };
enum XMode { X_NORM = 0, X_PLAIN = 1, X_SWIGLU = 2, X_BF16 = 3 };
constexpr int kPairRows = UNIT_KB / 8;   // a paired unit: kPairRows rows of W1 and the same rows of W3
constexpr int kChunk = 16, kMaxChunks = 16, kPartial = kHeadDim + 4;   // attention items: a warp a (head, kChunk positions)
struct Phase {
  int kind, xmode;
  const __nv_bfloat16* w;   // GEMV: [rows, k]
  int rows, k;
  const float* xsrc;        // x's source (h, attention output or W13's y)
  const __nv_bfloat16* nw;  // X_NORM: the norm's weight [k]
  float* y;                 // GEMV output [rows]
  int residual;             // y += instead of y =
  __nv_bfloat16 *kc, *vc;   // QKV: the layer's cache [positions, kDim]; rows kDim.. go to kc[pos], vc[pos]
  const float* q;           // ATTN: QKV's output (q at 0..kDim)
  float* attn;              // ATTN: output [kDim] (block attention and the reference)
  float* partials;          // ATTN (warp items): [kHeads][kMaxChunks][kPartial]: o[128], max, sum
  int warp_items;           // ATTN: a warp a (head, chunk) into partials; a head's last chunk merges them
  int pair;                 // W13: units pair rows r of W1 and W3, whose end writes xout[r] = silu(y1) * y3
  __nv_bfloat16* xout;      // pair: [rows / 2] bf16, the next phase's x (X_BF16)
};
struct Step {
  const Phase* phases;
  int n_phases, pos;
  unsigned* counters;  // [n_phases]
  int* claims;         // [n_phases]
  int* head_counts;    // [n_phases][kHeads]: the chunks of a head done
  int tail_rows;       // a phase's last rows claimed one a unit (0: none)
  unsigned long long* stamps;   // [n_phases + 1]: block 0's time each phase's x was ready (ns)
  unsigned long long* arrivals; // [n_phases * grid]: each block's time it arrived at the phase's counter (ns)
};
struct Meta { int phase, slot0, e0, n; };

__device__ __forceinline__ uint32_t sa(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void mbar_init(uint64_t* b, int n) { asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(sa(b)), "r"(n)); }
__device__ __forceinline__ void mbar_expect(uint64_t* b, uint32_t n) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sa(b)), "r"(n) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t* b) { asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(sa(b)) : "memory"); }
__device__ __forceinline__ void mbar_wait(uint64_t* b, uint32_t parity) {
  asm volatile("{\n.reg .pred p;\nW%=:\nmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra W%=;\n}"
               ::"r"(sa(b)), "r"(parity) : "memory");
}
__device__ __forceinline__ void bulk_load(void* dst, const void* src, uint32_t n, uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;"
               ::"r"(sa(dst)), "l"(src), "r"(n), "r"(sa(bar)), "l"(0x12F0000000000000ull) : "memory");
}
__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ void consumers_sync() { asm volatile("bar.sync 1, %0;" ::"n"(32 * kWarps) : "memory"); }
__device__ __forceinline__ float bf_lo(uint32_t v) { return __uint_as_float(v << 16); }
__device__ __forceinline__ float bf_hi(uint32_t v) { return __uint_as_float(v & 0xffff0000u); }
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(~0u, v, o);
  return v;
}

// This lane's part of the dot of n weights (a multiple of kStep, within one row) with x[col..].
__device__ __forceinline__ float segment_dot(const uint8_t* w, const __nv_bfloat16* xs, int col, int n, int lane) {
  float s0 = 0.f, s1 = 0.f;
#pragma unroll 4
  for (int e = lane * 8; e < n; e += kStep) {
    const uint4 xv = *reinterpret_cast<const uint4*>(xs + col + e);
    const uint4 wv = *reinterpret_cast<const uint4*>(w + 2 * e);
    const uint32_t xw[4] = {xv.x, xv.y, xv.z, xv.w}, ww[4] = {wv.x, wv.y, wv.z, wv.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      s0 = fmaf(bf_lo(ww[j]), bf_lo(xw[j]), s0);
      s1 = fmaf(bf_hi(ww[j]), bf_hi(xw[j]), s1);
    }
  }
  return s0 + s1;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o; o >>= 1) v = fmaxf(v, __shfl_xor_sync(~0u, v, o));
  return v;
}
// One head of decode attention over positions 0..pos (< 256) by this block's consumer threads, into
// ph.attn[head]: a thread a position for the scores, then 16 position groups x 16 groups of 8 dims for
// P.V, so that every load of a pass is in flight at once. scr: 2448 floats of shared memory.
__device__ void attend(const Phase& ph, int head, int pos, int ct, int cw, int lane, float* scr) {
  float *qs = scr, *sc = scr + kHeadDim, *part = sc + 256, *red = part + 16 * kHeadDim;
  if (ct < kHeadDim) qs[ct] = __ldcg(ph.q + head * kHeadDim + ct) * rsqrtf((float)kHeadDim);
  consumers_sync();
  float mx = -INFINITY;
  for (int t = ct; t <= pos; t += 32 * kWarps) {
    const uint4* k = reinterpret_cast<const uint4*>(ph.kc + (int64_t)t * kDim + head * kHeadDim);
    uint4 kv[16];
#pragma unroll
    for (int j = 0; j < 16; ++j) kv[j] = __ldcg(k + j);
    float sc0 = 0.f;
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      const uint32_t w4[4] = {kv[j].x, kv[j].y, kv[j].z, kv[j].w};
#pragma unroll
      for (int i = 0; i < 4; ++i) sc0 += qs[8 * j + 2 * i] * bf_lo(w4[i]) + qs[8 * j + 2 * i + 1] * bf_hi(w4[i]);
    }
    sc[t] = sc0;
    mx = fmaxf(mx, sc0);
  }
  mx = warp_max(mx);
  if (lane == 0) red[cw] = mx;
  consumers_sync();
  mx = red[0];
  for (int w = 1; w < kWarps; ++w) mx = fmaxf(mx, red[w]);
  float l = 0.f;
  for (int t = ct; t <= pos; t += 32 * kWarps) { const float p = __expf(sc[t] - mx); sc[t] = p; l += p; }
  l = warp_sum(l);
  if (lane == 0) red[kWarps + cw] = l;
  consumers_sync();
  l = 0.f;
  for (int w = 0; w < kWarps; ++w) l += red[kWarps + w];
  const int dg = ct % 16, pg = ct / 16;
  float o[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
#pragma unroll 4
  for (int t = pg; t <= pos; t += 16) {
    const uint4 vv = __ldcg(reinterpret_cast<const uint4*>(ph.vc + (int64_t)t * kDim + head * kHeadDim + dg * 8));
    const float p = sc[t];
    const uint32_t w4[4] = {vv.x, vv.y, vv.z, vv.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) { o[2 * i] += p * bf_lo(w4[i]); o[2 * i + 1] += p * bf_hi(w4[i]); }
  }
#pragma unroll
  for (int j = 0; j < 8; ++j) part[pg * kHeadDim + dg * 8 + j] = o[j];
  consumers_sync();
  if (ct < kHeadDim) {
    float acc = 0.f;
    for (int g = 0; g < 16; ++g) acc += part[g * kHeadDim + ct];
    ph.attn[head * kHeadDim + ct] = acc / l;
  }
  consumers_sync();
}


// One (head, chunk of kChunk positions) of decode attention by one warp: lane l holds dims 4l..4l+3 of q,
// K and V rows; every K load of the chunk is in flight at once, then every V load. The 32 partial dots are
// reduced across lanes by a butterfly (31 shuffles) that leaves position l's score in lanes l and l + 16.
__device__ __forceinline__ void attend_warp(const Phase& ph, int head, int chunk, int pos, int lane, int* head_counts) {
  const int t0 = chunk * kChunk, n = min(kChunk, pos + 1 - t0);
  const float4 q = __ldcg(reinterpret_cast<const float4*>(ph.q + head * kHeadDim + lane * 4));
  const int64_t base = (int64_t)t0 * kDim + head * kHeadDim + lane * 4;
  uint2 kr[kChunk], vr[kChunk];
#pragma unroll
  for (int t = 0; t < kChunk; ++t) {
    kr[t] = t < n ? __ldcg(reinterpret_cast<const uint2*>(ph.kc + base + (int64_t)t * kDim)) : make_uint2(0, 0);
#if KV_TOGETHER
    vr[t] = t < n ? __ldcg(reinterpret_cast<const uint2*>(ph.vc + base + (int64_t)t * kDim)) : make_uint2(0, 0);
#endif
  }
  float s[kChunk];
#pragma unroll
  for (int t = 0; t < kChunk; ++t)
    s[t] = q.x * bf_lo(kr[t].x) + q.y * bf_hi(kr[t].x) + q.z * bf_lo(kr[t].y) + q.w * bf_hi(kr[t].y);
#if !KV_TOGETHER
#pragma unroll
  for (int t = 0; t < kChunk; ++t)   // V's loads in flight during the reductions
    vr[t] = t < n ? __ldcg(reinterpret_cast<const uint2*>(ph.vc + base + (int64_t)t * kDim)) : make_uint2(0, 0);
#endif
#pragma unroll
  for (int t = 0; t < kChunk; ++t) s[t] += __shfl_xor_sync(~0u, s[t], 16);
#pragma unroll
  for (int o = kChunk / 2; o >= 1; o >>= 1) {
    const bool upper = lane & o;
#pragma unroll
    for (int i = 0; i < o; ++i) {
      const float send = upper ? s[i] : s[i + o], keep = upper ? s[i + o] : s[i];
      s[i] = keep + __shfl_xor_sync(~0u, send, o);
    }
  }
  const float score = lane < n ? s[0] * rsqrtf((float)kHeadDim) : -INFINITY;
  const float mx = warp_max(score);
  const float pr = lane < n ? __expf(score - mx) : 0.f;
  const float l = warp_sum(pr);
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
  for (int t = 0; t < kChunk; ++t) {
    const float pt = __shfl_sync(~0u, pr, t);
    acc.x += pt * bf_lo(vr[t].x); acc.y += pt * bf_hi(vr[t].x); acc.z += pt * bf_lo(vr[t].y); acc.w += pt * bf_hi(vr[t].y);
  }
  float* part = ph.partials + (head * kMaxChunks + chunk) * kPartial;
  *reinterpret_cast<float4*>(part + lane * 4) = acc;
  if (lane == 0) { part[kHeadDim] = mx; part[kHeadDim + 1] = l; }
  // The head's last chunk to finish merges the chunks (flash-decoding) into ph.attn, 8 chunks a pass.
  __threadfence();
  __syncwarp();
  int last = 0;
  const int chunks = (pos + kChunk) / kChunk;
  if (lane == 0) last = atomicAdd(&head_counts[head], 1) == chunks - 1;
  if (!__shfl_sync(~0u, last, 0)) return;
  __threadfence();
  float m_all = -INFINITY, l_all = 0.f;
  float4 o_all = make_float4(0.f, 0.f, 0.f, 0.f);
  for (int c0 = 0; c0 < chunks; c0 += 8) {
    float4 o[8];
    float2 ml[8];
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      if (c0 + c < chunks) {
        const float* pc = ph.partials + (head * kMaxChunks + c0 + c) * kPartial;
        o[c] = __ldcg(reinterpret_cast<const float4*>(pc + lane * 4));
        ml[c] = __ldcg(reinterpret_cast<const float2*>(pc + kHeadDim));
      }
    }
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      if (c0 + c < chunks) {
        const float mn = fmaxf(m_all, ml[c].x), fa = __expf(m_all - mn), fc = __expf(ml[c].x - mn);
        l_all = l_all * fa + ml[c].y * fc;
        o_all.x = o_all.x * fa + o[c].x * fc; o_all.y = o_all.y * fa + o[c].y * fc;
        o_all.z = o_all.z * fa + o[c].z * fc; o_all.w = o_all.w * fa + o[c].w * fc;
        m_all = mn;
      }
    }
  }
  const float r = 1.f / l_all;
  __stcg(reinterpret_cast<float4*>(ph.attn + head * kHeadDim + lane * 4),
         make_float4(o_all.x * r, o_all.y * r, o_all.z * r, o_all.w * r));
}

__global__ void __launch_bounds__(kThreads, 1) step_kernel(Step st) {
  extern __shared__ __align__(128) uint8_t smem[];
  uint8_t* stages = smem;
  __nv_bfloat16* xs = reinterpret_cast<__nv_bfloat16*>(smem + kStages * kStageBytes);
  __shared__ uint64_t full[kStages], empty[kStages];
  __shared__ Meta meta[kStages];
  __shared__ float sumsq[2];
  __shared__ float sacc[4][kSlots];
  __shared__ int slot_row[4][kSlots];
  __shared__ int nslots[4];
  __shared__ int head_claim;
  __shared__ volatile int phase_done;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) { mbar_init(&full[s], 1); mbar_init(&empty[s], 1); }
    sumsq[0] = sumsq[1] = 0.f;
    phase_done = -1;
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  for (int i = threadIdx.x; i < 4 * kSlots; i += blockDim.x) (&sacc[0][0])[i] = 0.f;
  for (int i = threadIdx.x; i < 4; i += blockDim.x) nslots[i] = 0;
  __syncthreads();
  if (warp == 0) {   // producer
    if (lane == 0) {
      int q = 0;
      for (int p = 0; p < st.n_phases; ++p) {
        while (phase_done < p - 3) {}
        const Phase ph = st.phases[p];
        const int b = p & 3;
        int used = 0;
        if (ph.kind == GEMV) {
          const int row_bytes = ph.k * 2;
          const int half = ph.rows / 2, segs = ph.pair ? 2 : 1;
          const int unit_rows = ph.pair ? kPairRows : max(1, kUnitBytes / row_bytes);
          // The last tail_rows rows (of each half for pairs) go a row a unit, so that the SMs end closer together.
          const int n_rows = ph.pair ? half : ph.rows, tail = min(n_rows, st.tail_rows);
          const int big = (n_rows - tail) / unit_rows, tail_start = big * unit_rows;
          const int units = big + (n_rows - tail_start);
          int next = atomicAdd(&st.claims[p], 1);
          while (next < units) {
            const int u = next;
            next = used + 2 * segs * unit_rows <= kSlots ? atomicAdd(&st.claims[p], 1) : units;
            const int u_rows = u < big ? unit_rows : 1, u_first = u < big ? u * unit_rows : tail_start + (u - big);
            for (int g = 0; g < segs; ++g) {
              const int r0 = u_first + g * half, nr = ph.pair ? u_rows : min(u_rows, ph.rows - r0);
              for (int i = 0; i < nr; ++i) slot_row[b][used + i] = r0 + i;
              const uint8_t* src = reinterpret_cast<const uint8_t*>(ph.w) + (int64_t)r0 * row_bytes;
              const int bytes = nr * row_bytes;
              for (int o = 0; o < bytes; o += kStageBytes, ++q) {
                const int s = q % kStages, n = min(kStageBytes, bytes - o);
                mbar_wait(&empty[s], ((q / kStages) & 1) ^ 1);
                meta[s] = Meta{p, used, o / 2, n / 2};
                mbar_expect(&full[s], n);
                bulk_load(stages + s * kStageBytes, src + o, n, &full[s]);
              }
              used += nr;
            }
          }
        }
        nslots[b] = used;
      }
      for (int i = 0; i < kWarps; ++i, ++q) {
        const int s = q % kStages;
        mbar_wait(&empty[s], ((q / kStages) & 1) ^ 1);
        meta[s] = Meta{st.n_phases, 0, 0, 0};
        mbar_arrive(&full[s]);
      }
    }
    return;
  }
  const int cw = warp - 1, ct = threadIdx.x - 32;
  float rms = 1.f;
  int cur = -1;
  for (int q = cw;; q += kWarps) {
    const int s = q % kStages;
    mbar_wait(&full[s], (q / kStages) & 1);
    const Meta m = meta[s];
    while (cur < m.phase) {   // every consumer warp passes every phase boundary, in order
      const int p = cur + 1;
      if (p > 0) {   // phase p-1's rows to y, then every SM's
        consumers_sync();
        const Phase prev = st.phases[p - 1];
        const int b = (p - 1) & 3;
        if (prev.pair) {   // a unit's W1 rows, then W3's same rows: the partner is kPairRows (or 1, a tail unit) on
          const int half = prev.rows / 2;
          for (int i = ct; i < nslots[b]; i += 32 * kWarps) {
            const int row = slot_row[b][i];
            if (row >= half) continue;
            const int j = i + kPairRows < nslots[b] && slot_row[b][i + kPairRows] == row + half ? i + kPairRows : i + 1;
            const float v1 = sacc[b][i] * rms, v3 = sacc[b][j] * rms;
            sacc[b][i] = 0.f; sacc[b][j] = 0.f;
            prev.xout[slot_row[b][i]] = __float2bfloat16_rn(v1 / (1.f + __expf(-v1)) * v3);
          }
        } else {
        for (int i = ct; i < nslots[b]; i += 32 * kWarps) {
          const int row = slot_row[b][i];
          const float v = sacc[b][i] * rms;
          sacc[b][i] = 0.f;
          if (prev.residual) prev.y[row] += v; else prev.y[row] = v;
          if (prev.kc && row >= kDim) {
            __nv_bfloat16* c = row < 2 * kDim ? prev.kc + (int64_t)st.pos * kDim + row - kDim
                                              : prev.vc + (int64_t)st.pos * kDim + row - 2 * kDim;
            *c = __float2bfloat16_rn(v);
          }
        }
        }
        if (p == st.n_phases) { if (ct == 0 && blockIdx.x == 0 && st.stamps) st.stamps[p] = now_ns(); return; }
        consumers_sync();
        if (ct == 0) {
          __threadfence();
          unsigned long long* a = st.arrivals ? st.arrivals + ((int64_t)(p - 1) * gridDim.x + blockIdx.x) * 3 : nullptr;
          if (a) a[0] = now_ns();
          atomicAdd(&st.counters[p - 1], 1u);
          while (ld_acquire(&st.counters[p - 1]) < gridDim.x) {}
          if (a) a[1] = now_ns();
          sumsq[p & 1] = 0.f;
          head_claim = 0;
        }
        consumers_sync();
      }
      const Phase ph = st.phases[p];
      if (ph.kind == ATTN && ph.warp_items) {   // a warp a (head, chunk), the warps of every SM
        const int chunks = (st.pos + kChunk) / kChunk;
        for (int item = cw * gridDim.x + blockIdx.x; item < kHeads * chunks; item += kWarps * gridDim.x)
          attend_warp(ph, item % kHeads, item / kHeads, st.pos, lane, st.head_counts + p * kHeads);
        rms = 1.f;
      } else if (ph.kind == ATTN) {   // heads claimed from the phase's counter, a block at a time
        for (;;) {
          if (ct == 0) head_claim = atomicAdd(&st.claims[p], 1);
          consumers_sync();
          const int head = head_claim;
          consumers_sync();
          if (head >= kHeads) break;
          attend(ph, head, st.pos, ct, cw, lane, reinterpret_cast<float*>(xs));
        }
        rms = 1.f;
      } else {   // stage x
        float ss = 0.f;
        if (ph.xmode == X_BF16) {   // x written by the previous phase's end: a copy
          const int n16 = ph.k / 8;
          uint4 v[6];
#pragma unroll
          for (int j = 0; j < 6; ++j) if (ct + j * 32 * kWarps < n16) v[j] = __ldcg(reinterpret_cast<const uint4*>(ph.xout) + ct + j * 32 * kWarps);
#pragma unroll
          for (int j = 0; j < 6; ++j) if (ct + j * 32 * kWarps < n16) reinterpret_cast<uint4*>(xs)[ct + j * 32 * kWarps] = v[j];
        } else
        {   // X_NORM, X_PLAIN: k = kDim, every load of a thread in flight at once
          float4 v[kDim / (4 * 32 * kWarps)];
          uint2 g[kDim / (4 * 32 * kWarps)];
#pragma unroll
          for (int j = 0; j < kDim / (4 * 32 * kWarps); ++j) {
            const int i = (ct + j * 32 * kWarps) * 4;
            v[j] = __ldcg(reinterpret_cast<const float4*>(ph.xsrc + i));
            if (ph.xmode == X_NORM) g[j] = *reinterpret_cast<const uint2*>(ph.nw + i);
          }
#pragma unroll
          for (int j = 0; j < kDim / (4 * 32 * kWarps); ++j) {
            const int i = (ct + j * 32 * kWarps) * 4;
            ss += v[j].x * v[j].x + v[j].y * v[j].y + v[j].z * v[j].z + v[j].w * v[j].w;
            if (ph.xmode == X_NORM) {
              v[j].x *= bf_lo(g[j].x); v[j].y *= bf_hi(g[j].x); v[j].z *= bf_lo(g[j].y); v[j].w *= bf_hi(g[j].y);
            }
            *reinterpret_cast<__nv_bfloat162*>(xs + i) = __floats2bfloat162_rn(v[j].x, v[j].y);
            *reinterpret_cast<__nv_bfloat162*>(xs + i + 2) = __floats2bfloat162_rn(v[j].z, v[j].w);
          }
        }
        ss = warp_sum(ss);
        if (lane == 0) atomicAdd(&sumsq[p & 1], ss);
        consumers_sync();
        rms = ph.xmode == X_NORM ? rsqrtf(sumsq[p & 1] / ph.k + 1e-5f) : 1.f;
      }
      if (ct == 0) phase_done = p;
      if (ct == 0 && blockIdx.x == 0 && st.stamps) st.stamps[p] = now_ns();
      if (ct == 0 && p > 0 && st.arrivals) st.arrivals[((int64_t)(p - 1) * gridDim.x + blockIdx.x) * 3 + 2] = now_ns();
      cur = p;
    }
    if (m.phase < st.n_phases) {
      const Phase ph = st.phases[m.phase];
      const uint8_t* stg = stages + s * kStageBytes;
      int row = m.e0 / ph.k, col = m.e0 % ph.k;
      for (int done = 0; done < m.n;) {
        const int seg = min(m.n - done, ph.k - col);
        const float v = warp_sum(segment_dot(stg + done * 2, xs, col, seg, lane));
        if (lane == 0) atomicAdd(&sacc[m.phase & 3][m.slot0 + row], v);
        done += seg; ++row; col = 0;
      }
    }
    __syncwarp();
    if (lane == 0) mbar_arrive(&empty[s]);
  }
}

// ---- reference: one kernel a phase, float math ----
__global__ void ref_stage(Phase ph, float* x, float* rms) {
  __shared__ float part[32];
  float ss = 0.f;
  for (int i = threadIdx.x; i < ph.k; i += blockDim.x) {
    float v;
    if (ph.xmode == X_SWIGLU) { const float a = ph.xsrc[i]; v = a / (1.f + expf(-a)) * ph.xsrc[kFfn + i]; }
    else { v = ph.xsrc[i]; ss += v * v; if (ph.xmode == X_NORM) v *= __bfloat162float(ph.nw[i]); }
    x[i] = __bfloat162float(__float2bfloat16_rn(v));
  }
  ss = warp_sum(ss);
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = ss;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0.f;
    for (int i = 0; i < (int)blockDim.x / 32; ++i) t += part[i];
    *rms = ph.xmode == X_NORM ? rsqrtf(t / ph.k + 1e-5f) : 1.f;
  }
}
__global__ void ref_gemv(Phase ph, int pos, const float* x, const float* rms) {
  const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= ph.rows) return;
  double s = 0.0;
  for (int c = lane; c < ph.k; c += 32) s += (double)__bfloat162float(ph.w[(int64_t)row * ph.k + c]) * x[c];
  for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(~0u, s, o);
  if (lane) return;
  const float v = (float)s * *rms;
  if (ph.residual) ph.y[row] += v; else ph.y[row] = v;
  if (ph.kc && row >= kDim) {
    __nv_bfloat16* c = row < 2 * kDim ? ph.kc + (int64_t)pos * kDim + row - kDim : ph.vc + (int64_t)pos * kDim + row - 2 * kDim;
    *c = __float2bfloat16_rn(v);
  }
}
__global__ void ref_attn(Phase ph, int pos) {   // a block a head, a thread a dim; float64 softmax
  const int head = blockIdx.x, d = threadIdx.x;
  __shared__ double p[4096];
  __shared__ double mx, sum;
  if (d == 0) {
    mx = -1e300;
    for (int t = 0; t <= pos; ++t) {
      double s = 0;
      for (int j = 0; j < kHeadDim; ++j)
        s += (double)ph.q[head * kHeadDim + j] * __bfloat162float(ph.kc[(int64_t)t * kDim + head * kHeadDim + j]);
      p[t] = s / sqrt((double)kHeadDim);
      mx = fmax(mx, p[t]);
    }
    sum = 0;
    for (int t = 0; t <= pos; ++t) { p[t] = exp(p[t] - mx); sum += p[t]; }
  }
  __syncthreads();
  double o = 0;
  for (int t = 0; t <= pos; ++t) o += p[t] * __bfloat162float(ph.vc[(int64_t)t * kDim + head * kHeadDim + d]);
  ph.attn[head * kHeadDim + d] = (float)(o / sum);
}

__global__ void fill_bf16(__nv_bfloat16* p, int64_t n, uint32_t seed, float scale, float bias) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    uint32_t h = (uint32_t)i * 2654435761u ^ seed;
    h ^= h >> 15; h *= 2246822519u; h ^= h >> 13;
    p[i] = __float2bfloat16((((h & 0xffff) / 65535.f) - 0.5f) * scale + bias);
  }
}
__global__ void read_stream(const uint4* p, int64_t n16, unsigned* sink) {
  uint32_t acc = 0;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n16; i += (int64_t)gridDim.x * blockDim.x)
    { const uint4 a = __ldcs(p + i); acc ^= a.x ^ a.y ^ a.z ^ a.w; }
  if (acc == 0x12345678u) *sink = acc;
}

struct Model {
  int layers, positions;
  __nv_bfloat16 *w, *norms, *cache;
  float *h, *yqkv, *attn, *y13, *logits, *partials;
  __nv_bfloat16* x2;
  int64_t weight_bytes;
  std::vector<Phase> phases;
};

static Model make_model(int layers, int positions) {
  Model m{layers, positions};
  const int64_t per_layer = (int64_t)3 * kDim * kDim + (int64_t)kDim * kDim + (int64_t)2 * kFfn * kDim + (int64_t)kDim * kFfn;
  const int64_t n = per_layer * layers + (int64_t)kVocab * kDim;
  m.weight_bytes = n * 2;
  CK(cudaMalloc(&m.w, n * 2));
  fill_bf16<<<2048, 256>>>(m.w, n, 1234, 0.05f, 0.f);
  CK(cudaMalloc(&m.norms, (int64_t)(2 * layers + 1) * kDim * 2));
  fill_bf16<<<64, 256>>>(m.norms, (int64_t)(2 * layers + 1) * kDim, 99, 0.5f, 1.f);
  const int64_t cache_n = (int64_t)layers * 2 * positions * kDim;
  CK(cudaMalloc(&m.cache, cache_n * 2));
  fill_bf16<<<1024, 256>>>(m.cache, cache_n, 7, 2.f, 0.f);
  CK(cudaMalloc(&m.h, kDim * 4)); CK(cudaMalloc(&m.yqkv, 3 * kDim * 4)); CK(cudaMalloc(&m.attn, kDim * 4));
  CK(cudaMalloc(&m.y13, 2 * kFfn * 4)); CK(cudaMalloc(&m.partials, kHeads * kMaxChunks * kPartial * 4)); CK(cudaMalloc(&m.x2, kFfn * 2)); CK(cudaMalloc(&m.logits, kVocab * 4));
  const __nv_bfloat16* w = m.w;
  for (int l = 0; l < layers; ++l) {
    __nv_bfloat16* kc = m.cache + (int64_t)l * 2 * positions * kDim;
    __nv_bfloat16* vc = kc + (int64_t)positions * kDim;
    Phase qkv{GEMV, X_NORM, w, 3 * kDim, kDim, m.h, m.norms + (2 * l) * kDim, m.yqkv, 0, kc, vc, nullptr, nullptr};
    w += (int64_t)3 * kDim * kDim;
    Phase at{ATTN, X_PLAIN, nullptr, 0, 0, nullptr, nullptr, nullptr, 0, kc, vc, m.yqkv, m.attn};
    Phase wo{GEMV, X_PLAIN, w, kDim, kDim, m.attn, nullptr, m.h, 1, nullptr, nullptr, nullptr, nullptr};
    w += (int64_t)kDim * kDim;
    Phase w13{GEMV, X_NORM, w, 2 * kFfn, kDim, m.h, m.norms + (2 * l + 1) * kDim, m.y13, 0, nullptr, nullptr, nullptr, nullptr};
    w += (int64_t)2 * kFfn * kDim;
    Phase w2{GEMV, X_SWIGLU, w, kDim, kFfn, m.y13, nullptr, m.h, 1, nullptr, nullptr, nullptr, nullptr};
    w += (int64_t)kDim * kFfn;
    if (!getenv("STEP_BLOCK_ATTN")) { at.partials = m.partials; at.warp_items = 1; }
    w13.pair = 1; w13.xout = m.x2; w2.xmode = X_BF16; w2.xout = m.x2;   // the kernel stages no SwiGLU
    if (getenv("STEP_NO_NORM")) { qkv.xmode = X_PLAIN; w13.xmode = X_PLAIN; }
    if (getenv("STEP_NO_RESID")) { wo.residual = 0; w2.residual = 0; }
    if (getenv("STEP_NO_CACHE")) { qkv.kc = nullptr; qkv.vc = nullptr; }
    if (getenv("STEP_NO_ATTN")) {   // wo straight from q: the step without its attention phase
      wo.xsrc = m.yqkv;
      for (const Phase& p : {qkv, wo, w13, w2}) m.phases.push_back(p);
    } else {
      for (const Phase& p : {qkv, at, wo, w13, w2}) m.phases.push_back(p);
    }
  }
  m.phases.push_back(Phase{GEMV, X_NORM, w, kVocab, kDim, m.h, m.norms + (2 * layers) * kDim, m.logits, 0,
                           nullptr, nullptr, nullptr, nullptr});
  CK(cudaDeviceSynchronize());
  return m;
}

static void reset_h(const Model& m) {
  std::vector<float> h(kDim);
  for (int i = 0; i < kDim; ++i) h[i] = std::sin(0.37f * i);
  CK(cudaMemcpy(m.h, h.data(), kDim * 4, cudaMemcpyHostToDevice));
}

int main(int argc, char** argv) {
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
  const int reps = argc > 1 ? atoi(argv[1]) : 10, pos = 200, positions = 256;
  printf("%s, %d SMs, pos %d\n", prop.name, sms, pos);
  const int smem = kStages * kStageBytes + kMaxK * 2;
  CK(cudaFuncSetAttribute(step_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  for (int layers : {2, 32}) {
    Model m = make_model(layers, positions);
    const int n = (int)m.phases.size();
    Phase* dph; CK(cudaMalloc(&dph, n * sizeof(Phase)));
    CK(cudaMemcpy(dph, m.phases.data(), n * sizeof(Phase), cudaMemcpyHostToDevice));
    unsigned* counters; CK(cudaMalloc(&counters, n * 4));
    int* claims; CK(cudaMalloc(&claims, n * 4));
    unsigned long long* stamps; CK(cudaMalloc(&stamps, (n + 1) * 8));
    unsigned long long* arrivals; CK(cudaMalloc(&arrivals, (size_t)n * sms * 24));
    int* head_counts; CK(cudaMalloc(&head_counts, (size_t)n * kHeads * 4));
    Step st{dph, n, pos, counters, claims, head_counts, getenv("STEP_TAIL_ROWS") ? atoi(getenv("STEP_TAIL_ROWS")) : 0, nullptr, nullptr};
    auto launch = [&]() {
      CK(cudaMemsetAsync(counters, 0, n * 4));
      CK(cudaMemsetAsync(claims, 0, n * 4));
      CK(cudaMemsetAsync(head_counts, 0, (size_t)n * kHeads * 4));
      void* args[] = {&st};
      CK(cudaLaunchCooperativeKernel((void*)step_kernel, sms, kThreads, args, smem, 0));
    };
    if (layers == 2) {   // the kernel's logits against one naive kernel a phase
      reset_h(m);
      launch();
      CK(cudaDeviceSynchronize());
      std::vector<float> got(kVocab), want(kVocab);
      CK(cudaMemcpy(got.data(), m.logits, kVocab * 4, cudaMemcpyDeviceToHost));
      reset_h(m);
      float *x, *rms; CK(cudaMalloc(&x, kMaxK * 4)); CK(cudaMalloc(&rms, 4));
      for (const Phase& ph : m.phases) {
        if (ph.kind == ATTN) { ref_attn<<<kHeads, kHeadDim>>>(ph, pos); continue; }
        Phase r = ph;   // the reference writes W13's y and stages W2's x from it
        if (r.xmode == X_BF16) r.xmode = X_SWIGLU;
        ref_stage<<<1, 1024>>>(r, x, rms);
        ref_gemv<<<(r.rows + 7) / 8, 256>>>(r, pos, x, rms);
      }
      CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(want.data(), m.logits, kVocab * 4, cudaMemcpyDeviceToHost));
      double err = 0, ref = 0; int nonzero = 0;
      for (int i = 0; i < kVocab; ++i) { err = fmax(err, fabs(got[i] - want[i])); ref = fmax(ref, fabs(want[i])); nonzero += got[i] != 0; }
      const int am_got = (int)(std::max_element(got.begin(), got.end()) - got.begin());
      const int am_want = (int)(std::max_element(want.begin(), want.end()) - want.begin());
      printf("check 2 layers + head: max|err| %.3g of max|logit| %.3g, argmax %d / %d, nonzero %d -> %s\n", err, ref,
             am_got, am_want, nonzero, (err <= 0.02 * ref && nonzero > kVocab - 100) ? "OK" : "FAIL");
      CK(cudaFree(x)); CK(cudaFree(rms));
    } else {
      cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
      float best = 1e9, sum = 0;
      for (int r = 0; r < reps; ++r) {
        reset_h(m);
        CK(cudaEventRecord(e0)); launch(); CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
        float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); best = fminf(best, ms); sum += ms;
      }
      st.stamps = stamps; st.arrivals = arrivals;
      reset_h(m);
      launch();
      CK(cudaDeviceSynchronize());
      st.stamps = nullptr; st.arrivals = nullptr;
      std::vector<unsigned long long> ts(n + 1), ar((size_t)n * sms * 3);
      CK(cudaMemcpy(ts.data(), stamps, (n + 1) * 8, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(ar.data(), arrivals, (size_t)n * sms * 24, cudaMemcpyDeviceToHost));
      const char* names[6] = {"qkv", "attention", "wo", "w13", "w2", "head"};
      double span[6] = {0, 0, 0, 0, 0, 0};
      const int per = getenv("STEP_NO_ATTN") ? 4 : 5;
      for (int p = 0; p < n; ++p) {
        const int kind = p == n - 1 ? 5 : (per == 5 ? p % 5 : (int[]){0, 2, 3, 4}[p % 4]);
        span[kind] += (ts[p + 1] - ts[p]) / 1e3;
      }
      double first[6] = {0}, spread[6] = {0}, seen[6] = {0}, staged[6] = {0};
      for (int p = 0; p < n - 1; ++p) {
        const int kind = (per == 5 ? p % 5 : (int[]){0, 2, 3, 4}[p % 4]);
        unsigned long long lo = ~0ull, hi = 0;
        std::vector<double> sn, sg;
        for (int b = 0; b < sms; ++b) {
          const unsigned long long* a = &ar[((size_t)p * sms + b) * 3];
          lo = std::min(lo, a[0]); hi = std::max(hi, a[0]);
        }
        for (int b = 0; b < sms; ++b) {
          const unsigned long long* a = &ar[((size_t)p * sms + b) * 3];
          sn.push_back(((long long)a[1] - (long long)hi) / 1e3); sg.push_back(((long long)a[2] - (long long)a[1]) / 1e3);
        }
        std::sort(sn.begin(), sn.end()); std::sort(sg.begin(), sg.end());
        first[kind] += ((long long)lo - (long long)ts[p]) / 1e3; spread[kind] += (hi - lo) / 1e3;
        seen[kind] += sn[sms / 2]; staged[kind] += sg[sms / 2];
      }
      printf("us a layer: x ready (block 0) -> first SM arrives / first -> last arrival / last arrival -> counter seen (median SM) / seen -> next x staged (median SM):\n");
      for (int i = 0; i < 5; ++i) if (per == 5 || i != 1)
        printf("  %-9s %6.2f %6.2f %6.2f %6.2f\n", names[i], first[i] / layers, spread[i] / layers, seen[i] / layers, staged[i] / layers);
      printf("block 0, x ready to the next x ready, us a token:");
      for (int i = 0; i < 6; ++i) printf(" %s %.1f (%.2f a layer)", names[i], span[i], span[i] / (i == 5 ? 1 : layers));
      printf("\n");
      const double kv_bytes = (double)layers * 2 * (pos + 1) * kDim * 2;
      unsigned* sink; CK(cudaMalloc(&sink, 4));
      float rbest = 1e9;
      for (int r = 0; r < reps; ++r) {
        CK(cudaEventRecord(e0)); read_stream<<<sms * 4, 512>>>((const uint4*)m.w, m.weight_bytes / 16, sink);
        CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
        float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); rbest = fminf(rbest, ms);
      }
      const double bytes = m.weight_bytes + kv_bytes;
      printf("step %d layers + head: %.1f MB weights + %.1f MB cache, best %.3f ms = %.1f tok/s (%.0f GB/s), mean %.3f ms; "
             "read stream %.0f GB/s -> %.1f%% of it\n", layers, m.weight_bytes / 1e6, kv_bytes / 1e6, best, 1e3 / best,
             bytes / best / 1e6, sum / reps, m.weight_bytes / rbest / 1e6, 100.0 * (bytes / best) / (m.weight_bytes / rbest));
    }
    CK(cudaFree(m.w)); CK(cudaFree(m.norms)); CK(cudaFree(m.cache)); CK(cudaFree(m.h)); CK(cudaFree(m.yqkv));
    CK(cudaFree(m.attn)); CK(cudaFree(m.y13)); CK(cudaFree(m.partials)); CK(cudaFree(m.x2)); CK(cudaFree(m.logits)); CK(cudaFree(dph)); CK(cudaFree(counters)); CK(cudaFree(claims));
  }
  return 0;
}
