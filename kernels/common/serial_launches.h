// While a ScopedSerialLaunches lives, launch_kernel (launch.cuh) launches every kernel without the
// programmatic attribute, yet the kernels stay the ones a programmatic launch picks: the same arithmetic,
// each kernel waiting for the one before to finish (griddepcontrol.wait then returns at once). The decode
// test compares such a step with the overlapped one: a kernel that reads its inputs before they are
// complete changes the logits; a kernel choice that differs between the two launch modes (the int8 and
// int4 GEMVs on tensor cores) cannot. Not thread-safe: tests and tools only. Plain C++.
#pragma once

namespace opbench::kernels {

inline bool& serial_launches_forced() {
  static bool forced = false;
  return forced;
}

class ScopedSerialLaunches {
 public:
  ScopedSerialLaunches() : previous_(serial_launches_forced()) { serial_launches_forced() = true; }
  ~ScopedSerialLaunches() { serial_launches_forced() = previous_; }
  ScopedSerialLaunches(const ScopedSerialLaunches&) = delete;
  ScopedSerialLaunches& operator=(const ScopedSerialLaunches&) = delete;

 private:
  bool previous_;
};

}  // namespace opbench::kernels
