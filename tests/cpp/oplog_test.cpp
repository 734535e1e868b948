// The operator-input log parser (replay/oplog): the real Bert log, malformed lines, aliases, round trips.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "replay/oplog/oplog.h"
#include "test_files.h"

#ifndef OPBENCH_SHARED_DIR
#error "OPBENCH_SHARED_DIR must name the shared directory (../shared of the repository)"
#endif

namespace ol = opbench::oplog;

namespace {

const std::string kBertPath = std::string(OPBENCH_SHARED_DIR) + "/data/oplogs/BertForMaskedLM_training.txt";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

void expect_accounting(const ol::OpLog& log) {
  EXPECT_EQ(log.lines_total, log.lines_parsed + log.lines_skipped + log.lines_blank);
  int skipped_issues = 0;
  for (const auto& i : log.issues) skipped_issues += i.skipped_entry ? 1 : 0;
  EXPECT_EQ(skipped_issues, log.lines_skipped);
}

const ol::TensorSpec& tensor(const ol::Value& v) {
  static const ol::TensorSpec kNone;
  auto* t = v.get_if<ol::TensorSpec>();
  EXPECT_NE(t, nullptr) << "not a tensor: " << ol::to_string(v);
  return t ? *t : kNone;
}

// The issue reported for `line`, or a failure.
const ol::ParseIssue* issue_at(const ol::OpLog& log, int line) {
  for (const auto& i : log.issues)
    if (i.line == line) return &i;
  ADD_FAILURE() << "no issue at line " << line;
  return nullptr;
}

}  // namespace

TEST(OpLogBert, ParsesCompletely) {
  if (!std::filesystem::exists(kBertPath)) GTEST_SKIP() << "the shared Bert log is absent: " << kBertPath;
  const ol::OpLog log = ol::load_oplog(kBertPath);
  for (const auto& i : log.issues) ADD_FAILURE() << i.str();
  EXPECT_EQ(log.model, "BertForMaskedLM_training");
  EXPECT_EQ(log.ops.size(), 25u);
  EXPECT_EQ(log.input_count(), 56u);
  EXPECT_EQ(log.lines_total, 81);
  EXPECT_EQ(log.lines_parsed, 81);
  EXPECT_EQ(log.lines_skipped, 0);
  EXPECT_EQ(log.lines_blank, 0);
  std::int64_t calls = 0;
  for (const auto& op : log.ops) calls += op.total_count();
  EXPECT_EQ(calls, 707);
  expect_accounting(log);

  // _to_copy: an f32 mask cast with the kwarg dtype=f16.
  const ol::OpEntry* to_copy = log.find("aten._to_copy.default");
  ASSERT_NE(to_copy, nullptr);
  ASSERT_EQ(to_copy->inputs.size(), 1u);
  const ol::OpInput& cast = to_copy->inputs[0];
  ASSERT_EQ(cast.args.size(), 1u);
  EXPECT_EQ(tensor(cast.args[0]).shape, (std::vector<std::int64_t>{64, 1, 1, 128}));
  EXPECT_EQ(tensor(cast.args[0]).dtype, ol::DType::kF32);
  ASSERT_NE(cast.kwarg("dtype"), nullptr);
  EXPECT_EQ(*cast.kwarg("dtype"), ol::Value(ol::DType::kF16));
  EXPECT_EQ(cast.count, 1);
  EXPECT_EQ(cast.line, 10);

  // addmm: the transposed weight carries stride=(1, 768).
  const ol::OpEntry* addmm = log.find("aten.addmm.default");
  ASSERT_NE(addmm, nullptr);
  ASSERT_EQ(addmm->inputs.size(), 4u);
  const ol::OpInput& a0 = addmm->inputs[0];
  EXPECT_EQ(a0.count, 49);
  ASSERT_EQ(a0.args.size(), 3u);
  const ol::TensorSpec& w = tensor(a0.args[2]);
  EXPECT_EQ(w.shape, (std::vector<std::int64_t>{768, 768}));
  ASSERT_TRUE(w.stride.has_value());
  EXPECT_EQ(*w.stride, (std::vector<std::int64_t>{1, 768}));
  EXPECT_FALSE(w.is_contiguous());
  EXPECT_TRUE(tensor(a0.args[1]).is_contiguous());
  EXPECT_EQ(addmm->total_count(), 49 + 12 + 12 + 1);

  // sum.SymInt, recorded under its old name, is listed as sum.dim_IntList.
  EXPECT_EQ(log.find("aten.sum.SymInt"), nullptr);
  const ol::OpEntry* sum = log.find("aten.sum.dim_IntList");
  ASSERT_NE(sum, nullptr);
  EXPECT_EQ(sum->original, "aten.sum.SymInt");
  EXPECT_EQ(sum->name, "sum");
  EXPECT_EQ(sum->overload, "dim_IntList");
  ASSERT_EQ(sum->inputs.size(), 4u);
  EXPECT_EQ(sum->inputs[1].count, 61);
  EXPECT_EQ(sum->inputs[1].args[1].int_list(), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(sum->inputs[1].args[2], ol::Value(true));

  // Scalars: eps 1e-12, the -65504.0 mask fill, None and -100 in nll_loss, a 0-d tensor.
  const ol::OpEntry* ln = log.find("aten.native_layer_norm.default");
  ASSERT_NE(ln, nullptr);
  EXPECT_EQ(ln->inputs[0].args[4], ol::Value(1e-12));
  EXPECT_EQ(ln->inputs[0].args[1].int_list(), (std::vector<std::int64_t>{768}));
  EXPECT_TRUE(ln->inputs[0].args[1].is<ol::List>());
  const ol::OpEntry* mul = log.find("aten.mul.Tensor");
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(mul->inputs[0].args[1].number(), -65504.0);
  EXPECT_TRUE(mul->inputs[0].args[1].is<double>());
  const ol::OpEntry* nll = log.find("aten.nll_loss_backward.default");
  ASSERT_NE(nll, nullptr);
  const auto& nll_args = nll->inputs[0].args;
  ASSERT_EQ(nll_args.size(), 7u);
  EXPECT_TRUE(tensor(nll_args[0]).shape.empty());
  EXPECT_EQ(tensor(nll_args[0]).numel(), 1);
  EXPECT_TRUE(nll_args[3].is_none());
  EXPECT_EQ(nll_args[5], ol::Value(-100));
  const ol::OpEntry* lnb = log.find("aten.native_layer_norm_backward.default");
  ASSERT_NE(lnb, nullptr);
  EXPECT_EQ(ol::to_string(lnb->inputs[0].args.back()), "[True, True, True]");
  const ol::OpEntry* emb = log.find("aten.embedding.default");
  ASSERT_NE(emb, nullptr);
  EXPECT_EQ(tensor(emb->inputs[1].args[1]).dtype, ol::DType::kI64);
  EXPECT_EQ(tensor(emb->inputs[1].args[1]).stride, (std::vector<std::int64_t>{0, 1}));
}

TEST(OpLogBert, PrintsBackByteForByte) {
  if (!std::filesystem::exists(kBertPath)) GTEST_SKIP() << "the shared Bert log is absent: " << kBertPath;
  const std::string text = read_file(kBertPath);
  const ol::OpLog log = ol::parse_oplog(text, kBertPath);
  EXPECT_EQ(ol::format_oplog(log), text);
  const auto lines = split_lines(text);
  for (const auto& op : log.ops)
    for (const auto& in : op.inputs) EXPECT_EQ(ol::format_input_line(in), lines[in.line - 1]);
  // ... and what was printed parses to the same log.
  const ol::OpLog again = ol::parse_oplog(ol::format_oplog(log), "again.txt");
  ASSERT_EQ(again.ops.size(), log.ops.size());
  for (std::size_t i = 0; i < log.ops.size(); ++i) {
    ASSERT_EQ(again.ops[i].inputs.size(), log.ops[i].inputs.size());
    for (std::size_t j = 0; j < log.ops[i].inputs.size(); ++j) {
      EXPECT_EQ(again.ops[i].inputs[j].args, log.ops[i].inputs[j].args);
      EXPECT_EQ(again.ops[i].inputs[j].kwargs, log.ops[i].inputs[j].kwargs);
    }
  }
}

TEST(OpLogMalformed, EachBadLineIsReportedAndParsingContinues) {
  const std::string text =
      "cnt: 1, ((T([2], f16),), {})\n"                                   // 1 before any Operator
      "Operator: aten.add.Tensor\n"                                      // 2
      "cnt: 1, ((T([2, 3], f16), T([2, 3], f16)), {}\n"                  // 3 unclosed outer (
      "cnt: 2, ((T([2, 3], f17),), {})\n"                                // 4 bad dtype
      "cnt: 3, ((ST([4, 4], f32, torch.sparse_coo, True, 8),), {})\n"    // 5 sparse
      "cnt: 4, ((T([2], f16),), {}) trailing\n"                          // 6 garbage after
      "cnt: 5, ((T([2], f16),), {})\n"                                   // 7 fine
      "\n"                                                               // 8 blank
      "Operator: add\n"                                                  // 9 no dot
      "cnt: 6, ((T([2], f16),), {})\n"                                   // 10 under a rejected op
      "Operator: aten.mul.Tensor\n"                                      // 11
      "cnt: 7, ((T([2, 3, f16),), {})\n"                                 // 12 ) where ] belongs
      "cnt: 8, ((T([2], f16)), {})\n"                                    // 13 args not a tuple
      "cnt: 9, ((T([2], f16),), {'device': device(type='cuda')})\n"      // 14 device(...)
      "hello\n"                                                          // 15 unrecognized
      "cnt: x, ((T([2], f16),), {})\n"                                   // 16 bad count
      "cnt: 10, ((T([2], f16), 2.5), {'alpha': 2})\n";                   // 17 fine
  const ol::OpLog log = ol::parse_oplog(text, "logs/bad.txt");
  expect_accounting(log);
  EXPECT_EQ(log.model, "bad");
  EXPECT_EQ(log.lines_total, 17);
  EXPECT_EQ(log.lines_blank, 1);
  EXPECT_EQ(log.lines_parsed, 4);  // lines 2, 7, 11, 17
  EXPECT_EQ(log.lines_skipped, 12);

  struct Expected {
    int line, column;
    const char* words;
  };
  const Expected expected[] = {
      {1, 1, "before any 'Operator:'"},
      {3, 9, "unclosed '('"},
      {4, 21, "unknown dtype 'f17'"},
      {5, 11, "sparse tensor ST(...) is not supported"},
      {6, 30, "unexpected text after the input: 'trailing'"},
      {9, 11, "has no '.'"},
      {10, 1, "rejected at line 9"},
      {12, 23, "expected ',' or ']' in the list"},
      {13, 10, "trailing comma"},
      {14, 37, "device(...) is not supported"},
      {15, 1, "unrecognized line"},
      {16, 6, "expected the count"},
  };
  for (const auto& e : expected) {
    const ol::ParseIssue* issue = issue_at(log, e.line);
    if (!issue) continue;
    EXPECT_EQ(issue->column, e.column) << issue->str();
    EXPECT_NE(issue->message.find(e.words), std::string::npos) << issue->str();
    EXPECT_TRUE(issue->skipped_entry) << issue->str();
    EXPECT_EQ(issue->file, "logs/bad.txt");
  }
  EXPECT_EQ(issue_at(log, 4)->str(), "logs/bad.txt:4:21: unknown dtype 'f17' (known: f16 f32 f64 bf16 i8 i16 "
                                     "i32 i64 b8 u8 c32 c64 c128)");

  ASSERT_EQ(log.ops.size(), 2u);
  EXPECT_EQ(log.ops[0].qualified(), "aten.add.Tensor");
  ASSERT_EQ(log.ops[0].inputs.size(), 1u);
  EXPECT_EQ(log.ops[0].inputs[0].count, 5);
  EXPECT_EQ(log.ops[0].inputs[0].line, 7);
  EXPECT_EQ(log.ops[1].qualified(), "aten.mul.Tensor");
  ASSERT_EQ(log.ops[1].inputs.size(), 1u);
  EXPECT_EQ(ol::to_string(log.ops[1].inputs[0]), "((T([2], f16), 2.5), {'alpha': 2})");
}

TEST(OpLogMalformed, OperatorNames) {
  const char* bad[] = {
      "Operator: ",                        // missing
      "Operator: aten.add",                // no overload
      "Operator: aten..default",           // empty part
      "Operator: prims.add.default",       // not aten
      "Operator: aten.add.Tensor(x)",      // junk
      "Operator: torch.ops.aten.add.Tensor",
  };
  for (const char* line : bad) {
    const ol::OpLog log = ol::parse_oplog(std::string(line) + "\ncnt: 1, ((T([2], f16),), {})\n", "x.txt");
    EXPECT_TRUE(log.ops.empty()) << line;
    EXPECT_EQ(log.lines_skipped, 2) << line;
    ASSERT_FALSE(log.issues.empty()) << line;
    EXPECT_EQ(log.issues[0].line, 1);
    EXPECT_GE(log.issues[0].column, 10) << log.issues[0].str();
  }
  const ol::OpLog junk = ol::parse_oplog("Operator: aten.add.Tensor(x)\n", "x.txt");
  ASSERT_EQ(junk.issues.size(), 1u);
  EXPECT_EQ(junk.issues[0].column, 26);
}

TEST(OpLogMalformed, NoCrashOnHostileInput) {
  std::string deep = "cnt: 1, ((" + std::string(5000, '[') + "1" + std::string(5000, ']') + ",), {})";
  const ol::OpLog log = ol::parse_oplog("Operator: aten.add.Tensor\n" + deep + "\n", "deep.txt");
  ASSERT_EQ(log.lines_skipped, 1);
  EXPECT_NE(log.issues[0].message.find("nested deeper"), std::string::npos);
  static const char kNul[] = "cnt: 1, ((\0,), {})";
  const std::vector<std::string> hostile = {"cnt: 1, (", "cnt: 1, ((", "cnt: 1, ((),", "cnt: 1, ((), {", "cnt: 1, ((), {'a'",
                           "cnt: 1, ((), {'a':", "cnt: 1, ((), {'a': 1", "cnt: 1, ((), {'a': 1}",
                           "cnt: 1, (('\\", "cnt: 1, (('\\x4", "cnt: 99999999999999999999, ((), {})",
                           "cnt: 0, ((), {})", "cnt: 1, ((T(),), {})", "cnt: 1, ((T([1], f16, stride=(1, 2)),), {})",
                           "cnt: 1, ((T([-1], f16),), {})", "cnt: 1, ((T([4294967296, 4294967296], f16),), {})",
                           "cnt: 1, ((1e999999999999999999999,), {})", "cnt: 1, ((-True,), {})",
                           std::string(kNul, sizeof kNul - 1)};
  for (const std::string& h : hostile) {
    const ol::OpLog l = ol::parse_oplog("Operator: aten.add.Tensor\n" + h + "\n", "h.txt");
    expect_accounting(l);
    if (h.find("1e999999") != std::string::npos) {
      EXPECT_EQ(l.lines_skipped, 0) << h;  // overflows to inf, as in Python
      continue;
    }
    EXPECT_EQ(l.lines_skipped, 1) << h;
  }
}

TEST(OpLogFormat, KwargsForms) {
  const ol::OpLog log = ol::parse_oplog(
      "Operator: aten.new_empty_strided.default\n"
      "cnt: 2, ((T([60, 60, 256], f16, stride=(60, 1, 3600)), [60, 60, 256], [15360, 256, 1]), "
      "{'dtype': f16, 'layout': torch.strided, 'device': 'cuda'})\n"
      "Operator: aten.clone.default\n"
      "cnt: 1, ((T([2, 3], f32),), {'memory_format': th.contiguous_format, \"dtype\": torch.float16})\n",
      "kw.txt");
  for (const auto& i : log.issues) ADD_FAILURE() << i.str();
  ASSERT_EQ(log.ops.size(), 2u);
  const ol::OpInput& in = log.ops[0].inputs[0];
  ASSERT_EQ(in.kwargs.size(), 3u);
  EXPECT_EQ(*in.kwarg("layout"), ol::Value(ol::Symbol{"torch.strided"}));
  EXPECT_EQ(*in.kwarg("device"), ol::Value("cuda"));
  EXPECT_EQ(in.kwarg("pin_memory"), nullptr);
  const ol::OpInput& clone = log.ops[1].inputs[0];
  EXPECT_EQ(ol::to_string(clone), "((T([2, 3], f32),), {'memory_format': torch.contiguous_format, 'dtype': f16})");
}

TEST(OpLogFormat, DuplicatesMergeAndBlankLinesCount) {
  const ol::OpLog log = ol::parse_oplog(
      "Operator: aten.sum.SymInt\r\n"
      "cnt: 2, ((T([8, 4], f16), [0], True), {})\r\n"
      "   \r\n"
      "cnt: 3, ((T([8,4],f16),[0],True),{})\n"
      "Operator: aten.sum.dim_IntList\n"
      "cnt: 4, ((T([8, 4], f16), [1], True), {})\n"
      "Operator: aten.relu.default\n",
      "dup.txt");
  expect_accounting(log);
  EXPECT_EQ(log.lines_total, 7);
  EXPECT_EQ(log.lines_blank, 1);
  EXPECT_EQ(log.lines_parsed, 6);
  EXPECT_EQ(log.lines_skipped, 0);
  ASSERT_EQ(log.ops.size(), 2u);
  const ol::OpEntry& sum = log.ops[0];
  EXPECT_EQ(sum.qualified(), "aten.sum.dim_IntList");
  ASSERT_EQ(sum.inputs.size(), 2u);
  EXPECT_EQ(sum.inputs[0].count, 5);  // lines 2 and 4 are the same input
  EXPECT_EQ(sum.inputs[0].line, 2);
  EXPECT_EQ(sum.inputs[1].count, 4);
  EXPECT_EQ(sum.total_count(), 9);
  // Warnings: the repeated input, the second spelling of sum, relu with no inputs.
  ASSERT_EQ(log.issues.size(), 3u);
  for (const auto& i : log.issues) EXPECT_FALSE(i.skipped_entry) << i.str();
  EXPECT_EQ(log.issues[0].line, 4);
  EXPECT_EQ(log.issues[1].line, 5);
  EXPECT_NE(log.issues[1].message.find("already listed at line 1"), std::string::npos);
  EXPECT_EQ(log.issues[2].line, 7);
  EXPECT_EQ(log.issues[1].str().rfind("dup.txt:5:11: warning: ", 0), 0u) << log.issues[1].str();
}

TEST(OpLogAlias, Table) {
  const auto& aliases = ol::operator_aliases();
  ASSERT_EQ(aliases.size(), 1u);
  EXPECT_EQ(aliases[0].from, "sum.SymInt");
  EXPECT_EQ(aliases[0].to, "sum.dim_IntList");
  EXPECT_EQ(ol::resolve_alias("sum.SymInt"), "sum.dim_IntList");
  EXPECT_EQ(ol::resolve_alias("sum.default"), "sum.default");
  EXPECT_EQ(ol::resolve_alias("add.Tensor"), "add.Tensor");
  const ol::OpLog log = ol::parse_oplog("Operator: aten.sum.SymInt\ncnt: 1, ((T([2], f16), [0]), {})\n", "a.txt");
  ASSERT_EQ(log.ops.size(), 1u);
  EXPECT_EQ(log.ops[0].original, "aten.sum.SymInt");
  EXPECT_EQ(log.ops[0].qualified(), "aten.sum.dim_IntList");
  EXPECT_EQ(ol::format_oplog(log), "Operator: aten.sum.SymInt\ncnt: 1, ((T([2], f16), [0]), {})\n");
}

TEST(OpLogValue, CanonicalFormsRoundTrip) {
  const char* canonical[] = {
      "None", "True", "False", "0", "-100", "9223372036854775807", "-9223372036854775808",
      "8.0", "-65504.0", "1e-05", "1e-12", "0.0001", "1.5", "-0.0", "0.0", "123456789.125",
      "1e+16", "1000000000000000.0", "2.5e-300", "1.7976931348623157e+308", "5e-324", "inf", "-inf", "nan",
      "'cuda'", "''", "\"it's\"", "'say \"hi\"'", "'both \\' and \"'", "'tab\\there\\n'", "'\\x00\\x7f'",
      "f16", "bf16", "c128", "b8", "torch.strided", "torch.contiguous_format",
      "T([], f16)", "T([8192, 30522], f16)", "T([768, 768], f16, stride=(1, 768))", "T([3], i64, stride=(1,))",
      "[]", "()", "(1,)", "(1, 2)", "[1, [2, (3,)], 'x']", "[True, True, True]", "[f16, None, 1.0]",
  };
  for (const char* text : canonical) {
    std::string error;
    auto v = ol::parse_value(text, &error);
    ASSERT_TRUE(v.has_value()) << text << ": " << error;
    EXPECT_EQ(ol::to_string(*v), text);
    auto again = ol::parse_value(ol::to_string(*v));
    ASSERT_TRUE(again.has_value()) << text;
    EXPECT_EQ(*again, *v) << text;
  }
  EXPECT_TRUE(std::isnan(*ol::parse_value("nan")->number()));
  EXPECT_EQ(ol::parse_value("-9223372036854775808")->get_if<std::int64_t>()[0],
            std::numeric_limits<std::int64_t>::min());
}

TEST(OpLogValue, OtherSpellingsNormalize) {
  const std::pair<const char*, const char*> cases[] = {
      {"( 1 )", "1"},
      {"(1 ,)", "(1,)"},
      {"[1,2,]", "[1, 2]"},
      {"1E5", "100000.0"},
      {"5.", "5.0"},
      {".5", "0.5"},
      {"1e400", "inf"},
      {"-1e-400", "-0.0"},
      {"- -3", "3"},
      {"-inf", "-inf"},
      {"\"cuda\"", "'cuda'"},
      {"'\\u00e9'", "'\xc3\xa9'"},
      {"'\\101'", "'A'"},
      {"th.strided", "torch.strided"},
      {"torch . strided", "torch.strided"},
      {"torch.float16", "f16"},
      {"torch.long", "i64"},
      {"T(size=[2], dtype=f16)", "T([2], f16)"},
      {"T((2, 3), f32, (3, 1))", "T([2, 3], f32, stride=(3, 1))"},
      {"T([2], f16, stride=None)", "T([2], f16)"},
      {"T([2, 3], f16, stride = [3, 1],)", "T([2, 3], f16, stride=(3, 1))"},
  };
  for (const auto& c : cases) {
    std::string error;
    auto v = ol::parse_value(c.first, &error);
    ASSERT_TRUE(v.has_value()) << c.first << ": " << error;
    EXPECT_EQ(ol::to_string(*v), c.second) << c.first;
  }
}

TEST(OpLogValue, ErrorsNameTheColumn) {
  const std::pair<const char*, const char*> cases[] = {
      {"[1, 2", "column 1: unclosed '['"},
      {"(1, 2", "column 1: unclosed '('"},
      {"1 2", "column 3: unexpected text after the value"},
      {"[1 2]", "column 4: expected ',' or ']'"},
      {"-True", "column 1: a sign must be followed by a number"},
      {"99999999999999999999", "column 1: integer '99999999999999999999' out of the int64 range"},
      {"1_000", "column 1: malformed number '1_000'"},
      {"0x10", "column 1: malformed number"},
      {"1.2.3", "column 1: malformed number '1.2.3'"},
      {"'abc", "column 1: unterminated string"},
      {"'\\q'", "column 2: unsupported escape"},
      {"'\\x4'", "column 2: truncated \\x escape"},
      {"{}", "column 1: a dict is only allowed as the kwargs"},
      {"foo", "column 1: unknown name 'foo'"},
      {"f17", "column 1: unknown dtype 'f17'"},
      {"T", "column 1: T must be called"},
      {"T([2])", "column 2: T() needs a shape and a dtype"},
      {"T([2], 3)", "column 8: T(): expected a dtype such as f16, got an int"},
      {"T([2.5], f16)", "column 3: T(): the shape must be a list of ints, got a list"},
      {"T([-1], f16)", "column 3: T(): negative dimension -1"},
      {"T([2, 3], f16, stride=(1,))", "column 16: T(): stride has 1 entries for a shape of 2"},
      {"T([2], f16, stride=(-1,))", "column 13: T(): negative stride -1"},
      {"T([2], f16, layout=1)", "column 13: T() has no parameter 'layout'"},
      {"T(dtype=f16, [2])", "column 14: T(): a positional argument follows a keyword argument"},
      {"T([2], f16, (1,), 4)", "column 19: T() takes at most 3 arguments"},
      {"T([65536, 65536, 65536, 65536], f16)", "column 3: T(): the shape's element count overflows int64"},
      {"ST([2], f16)", "column 1: sparse tensor ST(...) is not supported"},
      {"device(type='cuda')", "column 1: device(...) is not supported"},
      {"torch", "column 1: a bare 'torch' is not a value"},
      {"torch.", "column 7: expected a name after '.'"},
      {"torch.empty(2)", "column 1: calls such as torch.empty(...) are not supported"},
      {"", "column 1: expected a value, found the end of the line"},
      {"-", "column 2: expected a number after the sign"},
  };
  for (const auto& c : cases) {
    std::string error;
    EXPECT_FALSE(ol::parse_value(c.first, &error).has_value()) << c.first;
    EXPECT_EQ(error.rfind(c.second, 0), 0u) << c.first << " -> " << error;
  }
  std::string deep(200, '(');
  std::string error;
  EXPECT_FALSE(ol::parse_value(deep, &error).has_value());
  EXPECT_NE(error.find("nested deeper than 64"), std::string::npos) << error;
}

TEST(OpLogValue, Helpers) {
  EXPECT_EQ(ol::dtype_abbr(ol::DType::kBF16), std::string("bf16"));
  EXPECT_EQ(ol::dtype_from_abbr("c64"), ol::DType::kC64);
  EXPECT_FALSE(ol::dtype_from_abbr("f8").has_value());
  EXPECT_EQ(ol::dtype_itemsize(ol::DType::kC128), 16);
  EXPECT_EQ(ol::dtype_itemsize(ol::DType::kB8), 1);
  EXPECT_TRUE(ol::dtype_is_floating(ol::DType::kBF16));
  EXPECT_FALSE(ol::dtype_is_floating(ol::DType::kI64));
  EXPECT_TRUE(ol::dtype_is_complex(ol::DType::kC32));
  EXPECT_EQ(ol::Value(3).kind(), std::string("int"));
  EXPECT_EQ(ol::Value(ol::Tuple{{ol::Value(1), ol::Value(2)}}).int_list(), (std::vector<std::int64_t>{1, 2}));
  EXPECT_FALSE(ol::Value(ol::List{{ol::Value(1.5)}}).int_list().has_value());
  EXPECT_NE(ol::Value(ol::List{}), ol::Value(ol::Tuple{}));
  EXPECT_NE(ol::Value(1), ol::Value(1.0));
  ol::TensorSpec t{{2, 1, 3}, ol::DType::kF16, std::vector<std::int64_t>{3, 99, 1}};
  EXPECT_TRUE(t.is_contiguous());  // the stride of a size-1 dim does not matter
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(ol::model_name_from_path("a/b/GPT2_training.txt"), "GPT2_training");
  EXPECT_EQ(ol::model_name_from_path("plain"), "plain");
}

TEST(OpLogFiles, MissingFileAndDirectory) {
  const ol::OpLog missing = ol::load_oplog("/nonexistent/dir/Foo_training.txt");
  EXPECT_EQ(missing.model, "Foo_training");
  ASSERT_EQ(missing.issues.size(), 1u);
  EXPECT_EQ(missing.issues[0].line, 0);
  EXPECT_NE(missing.issues[0].str().find("cannot open"), std::string::npos);
  EXPECT_TRUE(missing.ops.empty());

  const ol::OpLogDir none = ol::load_oplog_dir("/nonexistent/dir");
  EXPECT_TRUE(none.logs.empty());
  ASSERT_EQ(none.issues.size(), 1u);

  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("oplog_test_" + std::to_string(::getpid()));
  fs::create_directories(dir / "sub.txt");  // a directory named like a log: ignored
  std::ofstream(dir / "b_training.txt") << "Operator: aten.relu.default\ncnt: 1, ((T([2], f16),), {})\n";
  std::ofstream(dir / "a_training.txt") << "Operator: aten.gelu.default\ncnt: 2, ((T([4], f32),), {})\n";
  std::ofstream(dir / "notes.md") << "not a log\n";
  const ol::OpLogDir logs = ol::load_oplog_dir(dir.string());
  EXPECT_TRUE(logs.issues.empty());
  ASSERT_EQ(logs.logs.size(), 2u);
  EXPECT_EQ(logs.logs[0].model, "a_training");
  EXPECT_EQ(logs.logs[1].model, "b_training");
  EXPECT_EQ(logs.logs[1].ops.at(0).qualified(), "aten.relu.default");
  EXPECT_EQ(ol::load_oplog((dir / "sub.txt").string()).issues.size(), 1u);
  opbench::testing::remove_tree(dir);
}
