// Precompiled once per build: the ATen and Google Benchmark headers most translation units include.
#pragma once
#include <ATen/core/Tensor.h>
#include <benchmark/benchmark.h>
#include <c10/core/ScalarType.h>
