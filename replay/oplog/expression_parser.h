// Internal to replay/oplog: the expression parser's entry points, shared by parse_value and parse_oplog
// (the parser itself: parser.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "replay/oplog/oplog.h"

namespace opbench::oplog::detail {

struct SyntaxError {
  std::size_t offset = 0;  // byte offset into the text that was parsed (column = offset + 1)
  std::string message;
  bool unsupported = false;  // valid for the reference loader but not supported here (e.g. ST(...))
};

// Parses `((args...), {kwargs...})` from text[begin, end) and nothing else (whitespace aside).
// Fills args and kwargs of *out; on failure returns the error and leaves *out unspecified.
std::optional<SyntaxError> parse_input_payload(std::string_view text, std::size_t begin, OpInput* out);

// Parses exactly one value from the whole of text.
std::optional<SyntaxError> parse_single_value(std::string_view text, Value* out);

}  // namespace opbench::oplog::detail
