// What bench_ops' writers keep and its readers refuse: whole-file replacement and all-or-none appends
// (atomic_file.h) keep links, modes and a user's files and survive a full disk (RLIMIT_FSIZE stands in
// for it: writes past the limit fail with EFBIG); the rows file keeps cells a user added; bounded reads
// (opbench/bounded_read.h) stop at their limit on /dev/zero and refuse a FIFO without blocking; a
// targets file with a key twice is refused; after SIGINT no run is reported.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>

#include "atomic_file.h"
#include "csv_format.h"
#include "forwarding_reporter.h"
#include "opbench/bounded_read.h"
#include "opbench/check.h"
#include "opbench/interrupt.h"
#include "opbench/targets.h"
#include "row_csv.h"
#include "row_file_append.h"
#include "test_files.h"

namespace opbench {
namespace {

namespace fs = std::filesystem;
using testing::read_text;
using testing::write_text;

class OutputFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("opbench_output_files_" + std::to_string(::getpid()));
    testing::remove_tree(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { testing::remove_tree(dir_); }

  // The names in the folder: a temporary file left behind shows here.
  std::vector<std::string> names() const {
    std::vector<std::string> all;
    for (const auto& entry : fs::directory_iterator(dir_)) all.push_back(entry.path().filename().string());
    std::sort(all.begin(), all.end());
    return all;
  }

  fs::path dir_;
};

// Writes past `bytes` fail with EFBIG (not SIGXFSZ) while it lives: a disk that is full.
class SmallDisk {
 public:
  explicit SmallDisk(rlim_t bytes) {
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    ::getrlimit(RLIMIT_FSIZE, &old_);
    rlimit small = old_;
    small.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &small);
  }
  ~SmallDisk() {
    ::setrlimit(RLIMIT_FSIZE, &old_);
    std::signal(SIGXFSZ, old_handler_);
  }

 private:
  rlimit old_{};
  void (*old_handler_)(int) = nullptr;
};

std::string error_of(const std::function<void()>& write) {
  try {
    write();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST_F(OutputFiles, AReplacementFollowsLinksKeepsTheModeAndLeavesTheUsersFiles) {
  write_text(dir_ / "real.md", "old\n");
  ::chmod((dir_ / "real.md").c_str(), 0664);
  fs::create_symlink("real.md", dir_ / "link.md");
  write_text(dir_ / "link.md.tmp", "the user's\n");
  write_file_atomically((dir_ / "link.md").string(), "new\n");
  EXPECT_TRUE(fs::is_symlink(dir_ / "link.md"));
  EXPECT_EQ(read_text(dir_ / "real.md"), "new\n");
  EXPECT_EQ(fs::status(dir_ / "real.md").permissions(), static_cast<fs::perms>(0664));
  EXPECT_EQ(read_text(dir_ / "link.md.tmp"), "the user's\n");
  fs::create_hard_link(dir_ / "real.md", dir_ / "hard.md");
  write_file_atomically((dir_ / "real.md").string(), "newer\n");
  EXPECT_EQ(read_text(dir_ / "hard.md"), "newer\n");   // one file still: the link was not split
  EXPECT_EQ(names(), (std::vector<std::string>{"hard.md", "link.md", "link.md.tmp", "real.md"}));
}

TEST_F(OutputFiles, AFullDiskLeavesTheOldTextAndNoTemporaryFile) {
  write_text(dir_ / "summary.md", "old\n");
  write_text(dir_ / "hard.md", "linked\n");
  fs::create_hard_link(dir_ / "hard.md", dir_ / "hard2.md");
  std::string message, linked;
  {
    SmallDisk disk(64);
    message = error_of([&] { write_file_atomically((dir_ / "summary.md").string(), std::string(1000, 'x')); });
    linked = error_of([&] { write_file_atomically((dir_ / "hard.md").string(), std::string(1000, 'x')); });
  }
  EXPECT_NE(message.find("summary.md: cannot be written: File too large (left as it was)"), std::string::npos) << message;
  EXPECT_NE(linked.find("File too large (its previous text restored)"), std::string::npos) << linked;
  EXPECT_EQ(read_text(dir_ / "summary.md"), "old\n");
  EXPECT_EQ(read_text(dir_ / "hard2.md"), "linked\n");
  EXPECT_EQ(names(), (std::vector<std::string>{"hard.md", "hard2.md", "summary.md"}));
}

TEST_F(OutputFiles, AnAppendThatFailsAnywhereLeavesEveryFileAsItWas) {
  write_text(dir_ / "a.csv", "header\nrow\n");
  const std::string big(200, 'r');
  std::string message;
  {
    SmallDisk disk(100);   // a.csv's append fits, b.json (new) cannot hold its text
    message = error_of([&] {
      append_all_or_none({{(dir_ / "a.csv").string(), "row2\n"}, {(dir_ / "b.json").string(), big}});
    });
  }
  EXPECT_NE(message.find("b.json: cannot be written: File too large (every file of this append left as it was)"),
            std::string::npos) << message;
  EXPECT_EQ(read_text(dir_ / "a.csv"), "header\nrow\n");
  EXPECT_EQ(names(), (std::vector<std::string>{"a.csv"}));
}

TEST_F(OutputFiles, RowsAppendedKeepTheCellsAUserAddedAndAnOlderHeaderIsRepaired) {
  const std::vector<std::string> header = csv_header();
  std::vector<std::string> row(header.size(), "v");
  row.push_back("the user's note");
  write_text(dir_ / "rows.csv", csv_line(header) + csv_line(row));
  RowFile((dir_ / "rows.csv").string()).append({std::vector<std::string>(header.size(), "n")}, {"{}"});
  auto table = read_csv((dir_ / "rows.csv").string());
  ASSERT_EQ(table.size(), 3u);
  EXPECT_EQ(table[1].back(), "the user's note");
  const std::vector<std::string> older(header.begin(), header.begin() + 8);
  std::vector<std::string> old_row(8, "o");
  old_row.push_back("note");   // longer than the older header: kept through the repair
  write_text(dir_ / "old.csv", csv_line(older) + csv_line(std::vector<std::string>(8, "o")) + csv_line(old_row));
  RowFile((dir_ / "old.csv").string()).append({std::vector<std::string>(header.size(), "n")}, {"{}"});
  table = read_csv((dir_ / "old.csv").string());
  ASSERT_EQ(table.size(), 4u);
  EXPECT_EQ(table[0], header);
  EXPECT_EQ(table[1].size(), header.size());
  EXPECT_EQ(table[2][8], "note");
}

TEST_F(OutputFiles, BoundedReadsStopAtTheLimitAndRefuseFifosAtOnce) {
  FileText zeros = read_bounded("/dev/zero", kMiB, "a test input");
  EXPECT_EQ(zeros.error, "is larger than 1 MiB, the limit for a test input");
  EXPECT_TRUE(zeros.text.empty());
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0644), 0);
  EXPECT_EQ(read_bounded((dir_ / "fifo").string(), kMiB, "x").error, "is a FIFO, not a regular file");
  EXPECT_EQ(read_bounded(dir_.string(), kMiB, "x").error, "is a folder, not a file");
  write_text(dir_ / "small", "text");
  EXPECT_EQ(read_bounded((dir_ / "small").string(), 4, "x").text, "text");
  EXPECT_NE(read_bounded((dir_ / "small").string(), 3, "x").error.find("larger than"), std::string::npos);
  EXPECT_NE(read_bounded((dir_ / "none").string(), 3, "x").error.find("cannot open: No such file"), std::string::npos);
  EXPECT_EQ(kOplogLimitBytes, 256 * kMiB);
  EXPECT_EQ(kTableLimitBytes, 64 * kMiB);
}

TEST_F(OutputFiles, ATargetsKeyGivenTwiceIsRefused) {
  write_text(dir_ / "t.json", R"({"devices": ["X"], "rule": "r", "targets": [{"experiment": "e", "metric": "m",
    "dtype": "int8", "target": 1, "target": 2}]})");
  EXPECT_NE(error_of([&] { load_target_file((dir_ / "t.json").string()); }).find("the key \"target\" appears twice"),
            std::string::npos);
  write_text(dir_ / "u.json", R"({"devices": ["X"], "devices": ["Y"], "rule": "r", "targets": []})");
  EXPECT_NE(error_of([&] { load_target_file((dir_ / "u.json").string()); }).find("\"devices\" appears twice"),
            std::string::npos);
}

// Counts what reaches it.
class Counting : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override { seen += static_cast<int>(runs.size()); }
  void Finalize() override { finalized = true; }
  int seen = 0;
  bool finalized = false;
};

TEST(Interrupt, NoRunIsReportedAfterTheSignalButTheOutputsAreFinalized) {
  Counting counting;
  ForwardingReporter forward({&counting});
  benchmark::BenchmarkReporter::Run run;
  run.run_name.function_name = "LayerNorm/fp32/64x1024/aten";
  forward.ReportRuns({run});
  set_interrupt_signal_for_test(SIGINT);
  forward.ReportRuns({run});   // the case in flight when the signal came
  forward.Finalize();
  set_interrupt_signal_for_test(0);
  EXPECT_EQ(counting.seen, 1);
  EXPECT_TRUE(counting.finalized);
}

}  // namespace
}  // namespace opbench
