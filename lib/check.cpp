#include "opbench/check.h"

namespace opbench::detail {

void throw_call_failed(const char* api, int code, const char* what, const char* call, const char* file,
                       int line) {
  throw Error(std::string(file) + ":" + std::to_string(line) + ": " + api + " error " +
              std::to_string(code) + " (" + what + ") in " + call);
}

}  // namespace opbench::detail
