// The communicator (communicator.h): NCCL's C API on a GPU, c10d's ProcessGroupGloo on the CPU. gloo is
// compiled in when its headers were found (OPBENCH_HAVE_GLOO), NCCL in a CUDA build that found nccl.h
// and libnccl (OPBENCH_HAVE_NCCL): benchmarks/collective/collective.cmake.
//
// Why not c10d's ProcessGroupNCCL: made from C++ it crashed with SIGSEGV at the first collective (an
// H100 world of one, 2026-11-24; 2 ranks on a 4xH200 host, 2026-11-27), with the same nccl.h as LibTorch's
// NCCL. Its class layout follows macros of LibTorch's own build, which a build outside cannot see; NCCL's
// C API has no such layout (docs/decisions.md).
#include "collective/communicator.h"

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef OPBENCH_HAVE_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#ifdef OPBENCH_HAVE_NCCL
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include "collective/nccl_check.h"
#endif

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>

#include "opbench/check.h"
#include "opbench/device.h"
#include "opbench/world.h"

namespace opbench::collective {

double collective_timeout_seconds() {
  const char* text = std::getenv("OPBENCH_COLLECTIVE_TIMEOUT_S");
  if (!text || !*text) return 1800;
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  if (*end != '\0' || !(seconds > 0))
    throw Error(std::string("OPBENCH_COLLECTIVE_TIMEOUT_S=") + text + ": expected a positive number of seconds");
  return seconds;
}

namespace {

std::chrono::milliseconds timeout_ms() {
  return std::chrono::milliseconds(static_cast<int64_t>(collective_timeout_seconds() * 1000));
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

// The env rendezvous, as torch.distributed's env:// does it: rank 0 serves a TCPStore at
// MASTER_ADDR:MASTER_PORT (unless torchrun's agent already does), every rank is its client.
c10::intrusive_ptr<c10d::Store> rendezvous(const World& world) {
  if (!world.has_rendezvous()) return c10::make_intrusive<c10d::HashStore>();   // a world of one
  c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(world.master_port);
  options.isServer = world.is_root() && !world.agent_store;
  options.numWorkers = static_cast<size_t>(world.size);
  options.timeout = timeout_ms();
  auto store = c10::make_intrusive<c10d::TCPStore>(world.master_addr, options);
  return c10::make_intrusive<c10d::PrefixStore>("opbench/collective", store);
}

#ifdef OPBENCH_HAVE_NCCL
// One NCCL communicator: destroyed (ncclCommDestroy) when healthy, aborted (ncclCommAbort: local, never
// waits on a peer) once a collective failed.
class NcclComm {
 public:
  NcclComm(const ncclUniqueId& id, int rank, int size) { OPBENCH_NCCL_CHECK(ncclCommInitRank(&comm_, size, id, rank)); }
  ~NcclComm() {
    if (comm_) ncclCommDestroy(comm_);   // every collective was waited for: nothing is in flight
    for (const auto& [key, w] : windows_) ncclMemFree(w.memory);   // its windows went with the comm
  }
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;
  ncclComm_t get() const { return comm_; }
  void abort() {
    if (comm_) ncclCommAbort(comm_);
    comm_ = nullptr;
  }
  // `bytes` (a multiple of 4096, NCCL's window alignment) of ncclMemAlloc's memory registered as a symmetric
  // window, one per user and byte count (communicator.h: symmetric_tensor).
  void* symmetric_window(const std::string& user, size_t bytes) {
    if (auto known = windows_.find({user, bytes}); known != windows_.end()) return known->second.memory;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
    void* memory = nullptr;
    OPBENCH_CUDA_CHECK(cudaSetDevice(current_device().index));   // ncclMemAlloc allocates on the current device
    OPBENCH_NCCL_CHECK(ncclMemAlloc(&memory, bytes));
    ncclWindow_t window = nullptr;
    const ncclResult_t registered = ncclCommWindowRegister(comm_, memory, bytes, &window, NCCL_WIN_COLL_SYMMETRIC);
    if (registered != ncclSuccess) ncclMemFree(memory);
    OPBENCH_NCCL_CHECK(registered);
    windows_.emplace(std::make_pair(user, bytes), Window{memory, window});
    return memory;
#else
    throw Error("NCCL " + std::to_string(NCCL_VERSION_CODE) + " has no symmetric windows (2.27 added them)");
#endif
  }
  // The window handle of symmetric_window's `memory`; nullptr for other memory.
  void* window_of(const void* memory) const {
    for (const auto& [key, w] : windows_)
      if (w.memory == memory) return w.handle;
    return nullptr;
  }

 private:
  ncclComm_t comm_ = nullptr;
  struct Window {
    void* memory;
    void* handle;   // ncclWindow_t (NCCL >= 2.27)
  };
  std::map<std::pair<std::string, size_t>, Window> windows_;   // (user, bytes) -> memory registered as a symmetric window
};

ncclDataType_t nccl_type(c10::ScalarType dtype) {
  switch (dtype) {
    case c10::ScalarType::BFloat16: return ncclBfloat16;
    case c10::ScalarType::Float: return ncclFloat32;
    case c10::ScalarType::Long: return ncclInt64;
    default: throw Error(std::string("Collective: NCCL path has no dtype ") + c10::toString(dtype));
  }
}

std::unique_ptr<NcclComm> make_nccl(c10d::Store& store, const World& world) {
  ::setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0);   // NVLink multicast off unless the user chose
  // No support for NCCL work from parallel graphs or a graph beside eager calls in flight: here every
  // collective goes to one stream in order, and with the support on each captured collective costs
  // ~15 us more (an 8 KiB all_reduce in a graph: 21.1 us with it, 5.6 us without; 2xH200, 2026-11-27).
  ::setenv("NCCL_GRAPH_MIXING_SUPPORT", "0", /*overwrite=*/0);
  OPBENCH_CUDA_CHECK(cudaSetDevice(current_device().index));
  const std::string key = "nccl_unique_id";
  ncclUniqueId id;
  if (world.is_root()) {
    OPBENCH_NCCL_CHECK(ncclGetUniqueId(&id));
    store.set(key, std::vector<uint8_t>(id.internal, id.internal + sizeof id.internal));
  } else {
    std::vector<uint8_t> bytes = store.get(key);   // waits up to the store's timeout for rank 0
    if (bytes.size() != sizeof id.internal)
      throw Error("Collective: the NCCL unique id in the store has " + std::to_string(bytes.size()) + " bytes");
    std::memcpy(id.internal, bytes.data(), bytes.size());
  }
  // Waits for every rank to join: one that died after the store's rendezvous is not noticed here.
  return std::make_unique<NcclComm>(id, world.rank, world.size);
}
#endif

#ifdef OPBENCH_HAVE_GLOO
c10::intrusive_ptr<c10d::Backend> make_gloo(const c10::intrusive_ptr<c10d::Store>& store, const World& world) {
  c10::intrusive_ptr<c10d::ProcessGroupGloo::Options> options;
  if (!world.has_rendezvous() || is_loopback(world.master_addr)) {   // one host: the loopback interface
    options = c10d::ProcessGroupGloo::Options::create(timeout_ms());
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  } else {   // GLOO_SOCKET_IFNAME's interfaces, else the address this host's name resolves to
    options = c10d::ProcessGroupGloo::Options::create_default(timeout_ms());
  }
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, world.rank, world.size, options);
}
#endif

std::string error_text(const std::exception& e) {
  if (auto* c10_error = dynamic_cast<const c10::Error*>(&e)) return c10_error->what_without_backtrace();
  return e.what();
}

}  // namespace

struct Communicator::Impl {
  std::string name;
  int rank = 0;
  int size = 1;
  bool gpu = false;
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::Backend> gloo;
#ifdef OPBENCH_HAVE_NCCL
  std::unique_ptr<NcclComm> nccl;
#endif
  std::string broken;   // the first failure; once set, every call throws it

  void check_usable() const {
    if (!broken.empty()) throw Error("Collective: the communicator is unusable since an earlier failure: " + broken);
  }
  // Records the failure, aborts NCCL and throws.
  [[noreturn]] void fail(const std::string& what) {
    broken = what;
#ifdef OPBENCH_HAVE_NCCL
    if (nccl) nccl->abort();
#endif
    throw Error("Collective: " + what);
  }
  std::string where(const char* what) const {
    return std::string(what) + " failed on rank " + std::to_string(rank) + " of " + std::to_string(size) + " (" +
           name + ")";
  }
};

namespace {

std::unique_ptr<Communicator> make_communicator(bool gpu) {
  if (auto why = Communicator::unavailable(gpu)) throw Error(*why);
  const World& world = current_world();
  auto impl = std::make_unique<Communicator::Impl>();
  impl->rank = world.rank;
  impl->size = world.size;
  impl->gpu = gpu;
  impl->store = rendezvous(world);
#ifdef OPBENCH_HAVE_NCCL
  if (gpu) {
    impl->nccl = make_nccl(*impl->store, world);
    impl->name = "nccl";
  }
#endif
#ifdef OPBENCH_HAVE_GLOO
  if (!gpu) {
    impl->gloo = make_gloo(impl->store, world);
    impl->name = "gloo";
  }
#endif
  return std::make_unique<Communicator>(std::move(impl));
}

#ifdef OPBENCH_HAVE_NCCL
void enqueue_nccl(ncclComm_t comm, int ranks, Op op, const at::Tensor& in, const at::Tensor& out) {
  const ncclDataType_t type = nccl_type(in.scalar_type());
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream().stream();
  void* send = in.data_ptr();
  void* receive = out.data_ptr();
  switch (op) {
    case Op::kAllReduce:
      OPBENCH_NCCL_CHECK(ncclAllReduce(send, receive, in.numel(), type, ncclSum, comm, stream));
      return;
    case Op::kBroadcast:
      OPBENCH_NCCL_CHECK(ncclBroadcast(send, receive, in.numel(), type, /*root=*/0, comm, stream));
      return;
    case Op::kAllGather:
      OPBENCH_NCCL_CHECK(ncclAllGather(send, receive, in.numel(), type, comm, stream));
      return;
    case Op::kReduceScatter:
      OPBENCH_NCCL_CHECK(ncclReduceScatter(send, receive, out.numel(), type, ncclSum, comm, stream));
      return;
    case Op::kAllToAll: {
      const size_t share = static_cast<size_t>(in.numel() / ranks);
      const size_t share_bytes = share * in.element_size();
      OPBENCH_NCCL_CHECK(ncclGroupStart());
      for (int peer = 0; peer < ranks; ++peer) {
        OPBENCH_NCCL_CHECK(ncclSend(static_cast<char*>(send) + peer * share_bytes, share, type, peer, comm, stream));
        OPBENCH_NCCL_CHECK(ncclRecv(static_cast<char*>(receive) + peer * share_bytes, share, type, peer, comm, stream));
      }
      OPBENCH_NCCL_CHECK(ncclGroupEnd());
      return;
    }
  }
}
#endif

#ifdef OPBENCH_HAVE_GLOO
void run_gloo(c10d::Backend& group, Op op, const at::Tensor& input, const at::Tensor& output) {
  std::vector<at::Tensor> tensors{output};
  if (!output.is_same(input) && (op == Op::kAllReduce || op == Op::kBroadcast)) output.copy_(input);
  c10::intrusive_ptr<c10d::Work> work;
  at::Tensor in = input, out = output;
  switch (op) {
    case Op::kAllReduce: work = group.allreduce(tensors, c10d::AllreduceOptions{}); break;
    case Op::kBroadcast: work = group.broadcast(tensors, c10d::BroadcastOptions{}); break;   // root 0
    case Op::kAllGather: work = group._allgather_base(out, in, c10d::AllgatherOptions{}); break;
    case Op::kReduceScatter: work = group._reduce_scatter_base(out, in, c10d::ReduceScatterOptions{}); break;
    case Op::kAllToAll: {
      std::vector<int64_t> even_out, even_in;   // empty: equal shares
      work = group.alltoall_base(out, in, even_out, even_in, c10d::AllToAllOptions{});
      break;
    }
  }
  work->wait();
}
#endif

}  // namespace

Communicator::Communicator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Communicator::~Communicator() = default;

std::optional<std::string> Communicator::unavailable(bool gpu) {
#ifndef OPBENCH_HAVE_NCCL
  if (gpu) return std::string("this build has no NCCL (nccl.h or libnccl was not found when it was configured)");
#endif
#ifndef OPBENCH_HAVE_GLOO
  if (!gpu)
    return std::string("this build has no gloo process group (gloo's headers were not found when it was "
                       "configured; Debian package libgloo-dev, which scripts/setup.sh installs)");
#endif
  (void)gpu;
  return std::nullopt;
}

Communicator& Communicator::of_world(bool gpu) {
  // Made after LibTorch's and CUDA's own state, so destroyed at exit before them.
  static std::unique_ptr<Communicator> made;
  static std::string failed;   // a failed rendezvous is not retried case after case
  if (!failed.empty()) throw Error(failed);
  if (!made) {
    try {
      made = make_communicator(gpu);
    } catch (const std::exception& e) {
      failed = "Collective: the communicator could not be made: " + error_text(e);
      throw Error(failed);
    }
  }
  if (made->impl_->gpu != gpu)
    throw Error(std::string("Collective: this process's communicator is on the ") + (gpu ? "CPU" : "GPU"));
  return *made;
}

int Communicator::rank() const { return impl_->rank; }
int Communicator::size() const { return impl_->size; }
const std::string& Communicator::backend() const { return impl_->name; }

void Communicator::enqueue(Op op, const at::Tensor& input, const at::Tensor& output) {
  Impl& impl = *impl_;
  impl.check_usable();
  if (!input.is_contiguous() || !output.is_contiguous() || input.scalar_type() != output.scalar_type())
    throw Error(std::string("Collective: ") + op_name(op) + " needs contiguous tensors of one dtype");
  if (input.numel() % impl.size != 0 && op == Op::kAllToAll)
    throw Error("Collective: all_to_all needs an input that splits into equal shares");
#ifdef OPBENCH_HAVE_NCCL
  if (impl.nccl) {   // refused before any call: the communicator stays usable
    nccl_type(input.scalar_type());
    if (!input.is_cuda() || !output.is_cuda())
      throw Error(std::string("Collective: ") + op_name(op) + " over NCCL needs CUDA tensors");
  }
#endif
  try {
#ifdef OPBENCH_HAVE_NCCL
    if (impl.nccl) return enqueue_nccl(impl.nccl->get(), impl.size, op, input, output);
#endif
#ifdef OPBENCH_HAVE_GLOO
    if (impl.gloo) return run_gloo(*impl.gloo, op, input, output);
#endif
  } catch (const std::exception& e) {
    impl.fail(impl.where(op_name(op)) + ": " + error_text(e));
  }
  throw Error("Collective: no backend in this build");
}

void Communicator::wait() {
  Impl& impl = *impl_;
  impl.check_usable();
#ifdef OPBENCH_HAVE_NCCL
  if (!impl.nccl) return;
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream().stream();
  const auto start = std::chrono::steady_clock::now();
  const auto limit = timeout_ms();
  for (int64_t polls = 1;; ++polls) {
    const cudaError_t state = cudaStreamQuery(stream);
    if (state == cudaSuccess) return;
    if (state != cudaErrorNotReady)
      impl.fail(impl.where("waiting for the stream") + ": CUDA error " + cudaGetErrorString(state));
    if (polls % 64 != 0) continue;   // NCCL's error and the clock every 64 polls (~0.1 ms)
    ncclResult_t async = ncclSuccess;
    const ncclResult_t asked = ncclCommGetAsyncError(impl.nccl->get(), &async);
    if (asked != ncclSuccess || (async != ncclSuccess && async != ncclInProgress))
      impl.fail(impl.where("a collective") + ": NCCL's asynchronous error " +
                ncclGetErrorString(asked != ncclSuccess ? asked : async) + " (a peer may have exited)");
    if (std::chrono::steady_clock::now() - start > limit)
      impl.fail(impl.where("a collective") + ": not complete after " + std::to_string(limit.count() / 1000) +
                " s (OPBENCH_COLLECTIVE_TIMEOUT_S); a peer may have exited or be at another case");
  }
#endif
}

void Communicator::run(Op op, const at::Tensor& input, const at::Tensor& output) {
  enqueue(op, input, output);
  wait();
}

std::vector<int64_t> Communicator::max_over_ranks(const std::vector<int64_t>& values) {
  Impl& impl = *impl_;
  impl.check_usable();
  at::Tensor flags = at::tensor(values, at::TensorOptions().dtype(at::kLong));
  try {
#ifdef OPBENCH_HAVE_NCCL
    if (impl.nccl) {
      flags = flags.to(at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(current_device().index)));
      OPBENCH_NCCL_CHECK(ncclAllReduce(flags.data_ptr(), flags.data_ptr(), flags.numel(), ncclInt64, ncclMax,
                                       impl.nccl->get(), c10::cuda::getCurrentCUDAStream().stream()));
    }
#endif
#ifdef OPBENCH_HAVE_GLOO
    if (impl.gloo) {
      std::vector<at::Tensor> tensors{flags};
      c10d::AllreduceOptions o;
      o.reduceOp = c10d::ReduceOp::MAX;
      impl.gloo->allreduce(tensors, o)->wait();
    }
#endif
  } catch (const std::exception& e) {
    impl.fail(impl.where("the agreement all_reduce") + ": " + error_text(e));
  }
  wait();
  at::Tensor host = flags.cpu().contiguous();   // after the all_reduce on the same stream
  return std::vector<int64_t>(host.data_ptr<int64_t>(), host.data_ptr<int64_t>() + host.numel());
}

std::pair<void*, void*> Communicator::nccl_handles(const at::Tensor& window_memory) const {
#ifdef OPBENCH_HAVE_NCCL
  if (impl_->nccl) {
    impl_->check_usable();
    if (void* window = impl_->nccl->window_of(window_memory.data_ptr())) return {impl_->nccl->get(), window};
    throw Error("Collective: that tensor is not a symmetric window's memory (symmetric_tensor)");
  }
#endif
  (void)window_memory;
  throw Error("Collective: NCCL's handles exist on an NCCL communicator only (this one is " + impl_->name + ")");
}

at::Tensor Communicator::symmetric_tensor(at::IntArrayRef sizes, c10::ScalarType dtype, const std::string& user) {
  Impl& impl = *impl_;
  impl.check_usable();
  const at::TensorOptions options = at::TensorOptions().dtype(dtype);
#ifdef OPBENCH_HAVE_NCCL
  if (impl.nccl) {
    const size_t align = 4096;   // NCCL_WIN_REQUIRED_ALIGNMENT of NCCL 2.28
    const size_t bytes = static_cast<size_t>(c10::multiply_integers(sizes)) * c10::elementSize(dtype);
    void* memory = impl.nccl->symmetric_window(user, std::max(align, (bytes + align - 1) / align * align));
    return at::from_blob(memory, sizes, options.device(at::kCUDA, static_cast<c10::DeviceIndex>(current_device().index)));
  }
#endif
  return at::empty(sizes, options);
}

}  // namespace opbench::collective
