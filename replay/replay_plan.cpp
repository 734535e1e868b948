#include "replay/replay_plan.h"

namespace opbench::replay {

std::string case_name(const std::string& model, const std::string& op, int input,
                      const std::string& backend) {
  return "Replay/" + model + "/" + op + "/" + std::to_string(input) + "/" + backend;
}

}  // namespace opbench::replay
