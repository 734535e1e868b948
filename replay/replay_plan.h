// What a replay of operator-input logs registered, in plain C++ so that the reporter and its
// tests need no LibTorch: one ReplayCase per (operator, input, backend) Google Benchmark case, and
// every recorded input that is not registered, with the reason. Docs: docs/oplog.md, "Replay".
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace opbench::replay {

// Backends: "eager" (the boxed call, timed with CUDA events or the host clock) and, on a GPU,
// "graph" (the same call captured in a CUDA graph and replayed). eager is always first.
inline constexpr const char* kEager = "eager";
inline constexpr const char* kGraph = "graph";

// `Replay/<model>/<op>/<input>/<backend>`, e.g. Replay/BertForMaskedLM_training/aten.add.Tensor/0/eager.
std::string case_name(const std::string& model, const std::string& op, int input,
                      const std::string& backend);

struct ReplayCase {
  std::string name;      // case_name(model, op, input, backend)
  std::string model;     // the log's model name (file stem)
  std::string op;        // "aten.add.Tensor"
  int input = 0;         // 0-based index of the input within the operator's entry in the log
  std::string backend;   // kEager or kGraph
  std::int64_t weight = 1;  // the recorded count (`cnt`) of this input
};

// A recorded input (or a whole operator, input = -1, or a log line that did not parse, op empty)
// that is not registered as a case, and why.
struct NotRun {
  std::string model;
  std::string op;        // "" for a log line that did not parse
  int input = -1;        // -1: the whole operator (every input of it)
  int inputs = 1;        // how many recorded inputs this entry stands for
  std::string where;     // "file:line" or "file:line:column" in the log
  std::string reason;
};

// Per (model, operator) as in the log, in log order: how many inputs it recorded and replays.
struct ReplayOperator {
  std::string model, op;
  int recorded_inputs = 0;   // inputs in the log
  int selected_inputs = 0;   // after --oplog_max_inputs
};

struct ReplayPlan {
  std::vector<std::string> backends;       // kEager first, then kGraph where it is registered
  std::vector<ReplayOperator> operators;   // every operator of every log, in log order
  std::vector<ReplayCase> cases;           // in registration (= run) order
  std::vector<NotRun> not_run;
  int unparsed_lines = 0;                  // log lines that did not parse (bench_ops then exits 1)
};

}  // namespace opbench::replay
