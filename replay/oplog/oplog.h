// The operator-input log: the text format PyTorch's operatorbench replays, parsed without
// LibTorch so that it compiles in seconds and can be fuzzed. Format and semantics: docs/oplog.md.
//
//   Operator: aten.add.Tensor
//   cnt: 73, ((T([64, 128, 768], f16), T([64, 128, 768], f16)), {})
//
// Nothing here throws on bad input: every non-blank line is either parsed or skipped with a
// ParseIssue naming file:line:column (only std::bad_alloc can escape).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace opbench::oplog {

// ---- values -------------------------------------------------------------------------------------

// The dtypes of the log, by their abbreviation (f16 f32 f64 bf16 i8 i16 i32 i64 b8 u8 c32 c64 c128).
enum class DType : std::uint8_t { kF16, kF32, kF64, kBF16, kI8, kI16, kI32, kI64, kB8, kU8, kC32, kC64, kC128 };
const char* dtype_abbr(DType type);                              // DType::kF16 -> "f16"
std::optional<DType> dtype_from_abbr(std::string_view abbr);     // "f16" -> kF16, else nullopt
std::optional<DType> dtype_from_torch_name(std::string_view name);  // "float16", "half", "long" ...
int dtype_itemsize(DType type);                                  // bytes per element (b8: 1, c32: 4)
bool dtype_is_floating(DType type);                              // f16 f32 f64 bf16
bool dtype_is_complex(DType type);                               // c32 c64 c128

struct None {};

// A name the log refers to but that has no value of its own here, e.g. torch.strided or
// torch.contiguous_format (always written with the "torch." prefix; "th." is read as "torch.").
struct Symbol {
  std::string name;
};

// T([shape], dtype[, stride=(...)]): a tensor the replay creates with random contents.
struct TensorSpec {
  std::vector<std::int64_t> shape;
  DType dtype = DType::kF32;
  std::optional<std::vector<std::int64_t>> stride;  // recorded only for non-contiguous tensors
  std::int64_t numel() const;                       // the parser guarantees this fits in int64
  bool is_contiguous() const;                       // no stride, or the row-major one
};

struct Value;
struct List {
  std::vector<Value> items;
};
struct Tuple {
  std::vector<Value> items;
};

struct Value {
  using Storage = std::variant<None, bool, std::int64_t, double, std::string, DType, TensorSpec,
                               Symbol, List, Tuple>;
  Storage v;

  Value() = default;  // None
  Value(None x) : v(x) {}
  Value(bool x) : v(x) {}
  Value(int x) : v(std::int64_t{x}) {}
  Value(std::int64_t x) : v(x) {}
  Value(double x) : v(x) {}
  Value(const char* x) : v(std::string(x)) {}
  Value(std::string x) : v(std::move(x)) {}
  Value(DType x) : v(x) {}
  Value(TensorSpec x) : v(std::move(x)) {}
  Value(Symbol x) : v(std::move(x)) {}
  Value(List x) : v(std::move(x)) {}
  Value(Tuple x) : v(std::move(x)) {}

  template <class T> bool is() const { return std::holds_alternative<T>(v); }
  template <class T> const T* get_if() const { return std::get_if<T>(&v); }
  bool is_none() const { return is<None>(); }
  const char* kind() const;  // "None" "bool" "int" "float" "str" "dtype" "Tensor" "symbol" "list" "tuple"
  // A list or tuple of ints (e.g. a size argument [768]); nullopt for anything else.
  std::optional<std::vector<std::int64_t>> int_list() const;
  // An int or a float as double; nullopt for anything else.
  std::optional<double> number() const;
};

// Structural equality; a list never equals a tuple; NaN equals NaN (so round trips compare equal).
bool operator==(const Value& a, const Value& b);
inline bool operator!=(const Value& a, const Value& b) { return !(a == b); }
bool operator==(const TensorSpec& a, const TensorSpec& b);

// Prints in the log's own syntax (Python repr style): parse(to_string(v)) == v for every parsed v.
std::string to_string(const Value& value);
std::string to_string(const TensorSpec& tensor);

// Parses one value in the log's syntax, e.g. "T([2, 3], f16)" or "[1, (2,), 'a']" (no dicts).
// On failure: nullopt, and *error (if given) says what and at which 1-based column.
std::optional<Value> parse_value(std::string_view text, std::string* error = nullptr);

// ---- the log ------------------------------------------------------------------------------------

// One recorded call: positional args, keyword args, how many times it was seen.
struct OpInput {
  std::vector<Value> args;
  std::vector<std::pair<std::string, Value>> kwargs;
  std::int64_t count = 0;
  int line = 0;  // 1-based line of its "cnt:" line (the first one if identical lines were merged)
  const Value* kwarg(std::string_view key) const;  // nullptr when absent
};
std::string to_string(const OpInput& input);         // "((T([2], f16),), {'dim': 1})"
std::string format_input_line(const OpInput& input);  // "cnt: 3, ((T([2], f16),), {'dim': 1})"

struct OpEntry {
  std::string name;      // aten name after aliasing, e.g. "add", "sum"
  std::string overload;  // e.g. "Tensor", "default", "dim_IntList"
  std::string original;  // the operator as written, e.g. "aten.sum.SymInt"
  int line = 0;          // 1-based line of its "Operator:" line
  std::vector<OpInput> inputs;
  std::string qualified() const;  // "aten." + name + "." + overload
  std::int64_t total_count() const;  // sum of the counts (saturates at INT64_MAX)
};

struct ParseIssue {
  std::string file;
  int line = 0;    // 1-based; 0 for an issue with the whole file or directory
  int column = 0;  // 1-based byte column; 0 when it concerns no column
  std::string message;
  bool skipped_entry = false;  // true: the line was not used; false: a warning, the line was used
  std::string str() const;     // "file:line:column: message" (gcc style)
};

struct OpLog {
  std::string model;  // the file name without directory and extension, e.g. BertForMaskedLM_training
  std::string file;   // as given to parse_oplog / load_oplog
  std::vector<OpEntry> ops;  // in file order; a repeated operator is merged into its first entry
  std::vector<ParseIssue> issues;
  // lines_total == lines_parsed + lines_skipped + lines_blank, and lines_skipped equals the number
  // of issues with skipped_entry == true (one per skipped line).
  int lines_total = 0;    // every line of the text (a final newline does not start another line)
  int lines_parsed = 0;   // "Operator:" and "cnt:" lines that made it into ops
  int lines_skipped = 0;  // non-blank lines that did not
  int lines_blank = 0;    // empty or whitespace-only lines, ignored
  const OpEntry* find(std::string_view qualified_name) const;  // "aten.add.Tensor" (after aliasing)
  std::size_t input_count() const;                             // sum of ops[i].inputs.size()
};

OpLog parse_oplog(std::string_view text, std::string file_name);
// Reads and parses one file; a file that cannot be read gives an OpLog with one issue (line 0).
OpLog load_oplog(const std::string& path);

struct OpLogDir {
  std::vector<OpLog> logs;          // one per *.txt file, sorted by file name
  std::vector<ParseIssue> issues;   // directory-level problems (missing, unreadable)
};
OpLogDir load_oplog_dir(const std::string& dir);

// Writes a log back in its own format, operators under their original names. For a log without
// issues this reproduces the input text (modulo blank lines and trailing whitespace).
std::string format_oplog(const OpLog& log);

// "dir/BertForMaskedLM_training.txt" -> "BertForMaskedLM_training".
std::string model_name_from_path(std::string_view path);

// ---- operator renames ---------------------------------------------------------------------------

// Overloads renamed since the logs were recorded, keyed "name.overload" without the "aten." prefix.
struct OpAlias {
  std::string_view from, to, why;
};
const std::vector<OpAlias>& operator_aliases();
// "sum.SymInt" -> "sum.dim_IntList"; any other name is returned unchanged.
std::string_view resolve_alias(std::string_view name_dot_overload);

}  // namespace opbench::oplog
