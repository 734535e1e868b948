// Standalone: new GEMV kernel variants vs the main-branch kernel, back-to-back launches over rotating
// copies of W (cold L2 each launch), events; plus fp64 checks on odd shapes.
#include "gemv_kernel.cu"
#define kernels kernels_old
#include "old/gemv_kernel.h"
#undef kernels
#include <cstdio>
#include <vector>
#include <random>
#include <cmath>
namespace opbench::detail {
void throw_call_failed(const char* api, int code, const char* what, const char* call, const char* file, int line) {
  fprintf(stderr, "%s %d %s %s %s:%d\n", api, code, what, call, file, line); std::exit(1);
}}
using namespace opbench::kernels;
#define CK(x) OPBENCH_CUDA_CHECK(x)
static float bf2f(uint16_t b){uint32_t u=uint32_t(b)<<16; float f; memcpy(&f,&u,4); return f;}
static uint16_t f2bf(float f){uint32_t u; memcpy(&u,&f,4); return uint16_t((u+0x7fff+((u>>16)&1))>>16);}
using Fn = void(*)(const GemvArgs&, cudaStream_t);
static void old_fn(const GemvArgs& a, cudaStream_t s){ opbench::kernels_old::GemvArgs o; o.w=a.w; o.w_type=a.w_type==WeightType::kInt8?opbench::kernels_old::WeightType::kInt8:opbench::kernels_old::WeightType::kBf16; o.rows=a.rows;o.cols=a.cols;o.row_stride=a.row_stride;o.x=a.x;o.y=a.y;o.expert_idx=a.expert_idx;o.num_selected=a.num_selected;o.expert_stride=a.expert_stride;o.num_experts=a.num_experts; opbench::kernels_old::launch_gemv(o,s);}
template<int R,int S> void var(const GemvArgs& a, cudaStream_t s){ if(a.w_type==WeightType::kInt8) launch_vector<int8_t,R,S>(a,s); else launch_vector<__nv_bfloat16,R,S>(a,s);}
// fp64 check of launch_gemv on one shape; returns max |err| / (sum |w x| bound)
static double check(bool i8, int64_t rows, int64_t cols, int64_t off, bool gather, bool scale) {
  std::mt19937 g(1); std::uniform_real_distribution<float> u(-1,1);
  int64_t E = gather?3:1, sel = gather?2:1, es = rows*cols, n = E*es+off;
  size_t eb = i8?1:2; std::vector<uint8_t> hw(n*eb); std::vector<uint16_t> hx(cols+1), hs(rows);
  for (int64_t i=0;i<n;++i){ if(i8) hw[i]=uint8_t(int(g()%256)-128); else {uint16_t b=f2bf(u(g)); memcpy(&hw[2*i],&b,2);} }
  for (auto& v: hx) v=f2bf(u(g)); for (auto& v: hs) v=f2bf(0.5f+u(g));
  int64_t hidx[2]={2,0};
  void *dw,*dx,*dy,*ds; int64_t* di; CK(cudaMalloc(&dw,n*eb)); CK(cudaMalloc(&dx,(cols+1)*2)); CK(cudaMalloc(&dy,sel*rows*2)); CK(cudaMalloc(&ds,rows*2)); CK(cudaMalloc(&di,16));
  CK(cudaMemcpy(dw,hw.data(),n*eb,cudaMemcpyHostToDevice)); CK(cudaMemcpy(dx,hx.data(),(cols+1)*2,cudaMemcpyHostToDevice)); CK(cudaMemcpy(ds,hs.data(),rows*2,cudaMemcpyHostToDevice)); CK(cudaMemcpy(di,hidx,16,cudaMemcpyHostToDevice));
  GemvArgs a; a.w=(char*)dw+off*eb; a.w_type=i8?WeightType::kInt8:WeightType::kBf16; a.rows=rows;a.cols=cols;a.row_stride=cols;a.x=dx;a.y=dy;
  if(gather){a.expert_idx=di;a.num_selected=2;a.expert_stride=es;a.num_experts=E;} if(scale) a.row_scale=ds;
  launch_gemv(a,0); CK(cudaDeviceSynchronize());
  std::vector<uint16_t> hy(sel*rows); CK(cudaMemcpy(hy.data(),dy,sel*rows*2,cudaMemcpyDeviceToHost));
  double worst=0;
  for(int64_t s=0;s<sel;++s) for(int64_t r=0;r<rows;++r){ double acc=0,mag=0; int64_t base=off+(gather?hidx[s]:0)*es+r*cols;
    for(int64_t c=0;c<cols;++c){ double wv = i8? double(int8_t(hw[base+c])) : bf2f(*(uint16_t*)&hw[2*(base+c)]); acc+=wv*bf2f(hx[c]); mag+=std::fabs(wv*bf2f(hx[c]));}
    if(scale){acc*=bf2f(hs[r]); mag*=std::fabs(bf2f(hs[r]));}
    double e=std::fabs(acc-bf2f(hy[s*rows+r]))/(mag+1e-30); if(!(e<1e30)) e=1e30; worst=std::max(worst,e);}
  printf("check %s rows=%ld cols=%ld off=%ld gather=%d scale=%d vec=%d : max err/sum|wx| = %.3g %s\n", i8?"int8":"bf16", rows, cols, off, gather, scale, (int)gemv_vectorizable(a), worst, worst<1e-2?"OK":"FAIL");
  cudaFree(dw);cudaFree(dx);cudaFree(dy);cudaFree(ds);cudaFree(di); return worst;
}
int main(){
  int bad=0;
  for(bool i8:{false,true}) for(bool ga:{false,true}) for(bool sc:{false,true}){
    bad += check(i8,37,1024,0,ga,sc)>1e-2; bad += check(i8,37,1001,0,ga,sc)>1e-2; bad += check(i8,64,4096,i8?3:1,ga,sc)>1e-2; bad += check(i8,1024,1024,0,ga,sc)>1e-2; bad += check(i8,33,16*37,0,ga,sc)>1e-2; }
  printf("checks failed: %d\n", bad);
  struct V{const char* n; Fn f;}; V vs[]={{"old",old_fn},{"new",launch_gemv},{"r1s2",var<1,2>},{"r1s4",var<1,4>},{"r1s8",var<1,8>},{"r2s2",var<2,2>},{"r2s4",var<2,4>},{"r4s2",var<4,2>},{"r4s4",var<4,4>}};
  cudaEvent_t e0,e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  void *dx,*dy; int64_t* di; CK(cudaMalloc(&dx,1<<16)); CK(cudaMalloc(&dy,1<<17)); CK(cudaMalloc(&di,16)); CK(cudaMemset(dx,0x3c,1<<16));
  int64_t hidx[2]={7,0}; CK(cudaMemcpy(di,hidx,16,cudaMemcpyHostToDevice));
  for(bool ga:{false,true}) for(bool i8:{false,true}) for(int64_t d:{1024,4096,8192,16384}){
    size_t eb=i8?1:2, mat=d*d*eb, region = ga? 8*mat : mat; int copies = std::max<int64_t>(2,(int64_t)((1ull<<30)/region)); copies=std::min(copies,16);
    void* dw; CK(cudaMalloc(&dw,region*copies)); CK(cudaMemset(dw,0x11,region*copies));
    double bytes = (ga?2:1)*double(mat);
    printf("%s/%s/%ld:", ga?"GatherGemv":"Gemv", i8?"int8":"bf16", d);
    for(auto& v: vs){ int it=std::max(20,copies*4);
      auto args=[&](int i){ GemvArgs a=square_gemv_args((char*)dw+(size_t)(i%copies)*region, i8?WeightType::kInt8:WeightType::kBf16, d, dx, dy); if(ga){a.expert_idx=di;a.num_selected=2;a.expert_stride=d*d;a.num_experts=8;} return a;};
      for(int i=0;i<copies;++i) v.f(args(i),0);
      float best=1e30; for(int rep=0;rep<3;++rep){ CK(cudaEventRecord(e0)); for(int i=0;i<it;++i) v.f(args(i),0); CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1)); float ms; CK(cudaEventElapsedTime(&ms,e0,e1)); best=std::min(best,ms/it);}
      printf(" %s %.2fus %.0fGB/s |", v.n, best*1e3, bytes/(best*1e-3)/1e9); }
    printf("\n"); fflush(stdout); CK(cudaFree(dw)); }
  return bad;
}
