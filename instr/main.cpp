// bench_instr: the instruction-count worker. Each definition is measured in its own process; the
// pool runner (opbench-instr, tools/opbench_tools/instr_*.py) drives them and turns the callgrind dumps
// into results JSON.
//
//   bench_instr --list [--json]
//   bench_instr --run LABEL [--variant fwd|fwdbwd] [--threads 1,2] [--iters N] [--repeats R]
//               [--extra-work] [--out FILE] [--stderr FILE]
//   bench_instr --serve
// --run under valgrind --tool=callgrind --instr-atstart=no --collect-atstart=no writes one callgrind
// dump per measured loop and prints their labels; natively it prints wall ns per call. Either way
// the result is one JSON document (stdout, or --out FILE).
//
// --serve is a fork server: LibTorch is loaded once (under valgrind that is most of a worker's
// time: reading its symbols and running its static initialisers), then every line read from stdin
// (tab-separated --run arguments) is run in a forked child, a process of its own. The server
// answers "started <pid>" and "exited <pid> <status>" (status: exit code, or -signal). Between
// forks it neither allocates nor frees, so every child starts from the same heap whatever ran
// before it: a count does not depend on which server ran the definition, or after what.
#include <nlohmann/json.hpp>
#include <torch/headeronly/version.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "definitions.h"
#include "measure.h"

namespace {

using nlohmann::json;
using namespace opbench::instr;

const char* kUsage =
    "usage: bench_instr --list [--json]\n"
    "       bench_instr --run LABEL [--variant fwd|fwdbwd] [--threads 1,2] [--iters N]\n"
    "                   [--repeats R] [--extra-work] [--out FILE] [--stderr FILE]\n"
    "       bench_instr --serve      (fork server: one tab-separated --run command per stdin line)\n"
    "One definition per process. Under callgrind (valgrind --tool=callgrind --instr-atstart=no\n"
    "--collect-atstart=no) it dumps one callgrind profile per measured loop; natively it times\n"
    "the loop. The whole set, in a worker pool, with results JSON: opbench-instr run.\n";

std::string torch_version() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
         std::to_string(TORCH_VERSION_PATCH);
}

int parse_positive(const std::string& flag, const std::string& value) {
  size_t used = 0;
  int n = 0;
  try {
    n = std::stoi(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || n <= 0)
    throw std::invalid_argument(flag + " needs a positive integer, got '" + value + "'");
  return n;
}

std::vector<int> parse_threads(const std::string& value) {
  std::vector<int> out;
  std::stringstream ss(value);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(parse_positive("--threads", item));
  if (out.empty()) throw std::invalid_argument("--threads needs a list like 1,2");
  return out;
}

json list_json() {
  json out = json::array();
  for (const auto& d : definitions())
    out.push_back({{"label", d.label},
                   {"group", d.group},
                   {"stmt", d.stmt},
                   {"variants", variants_of(d)},
                   {"iters", d.iters > 0 ? d.iters : kDefaultIters}});
  return out;
}

void print_list(bool as_json) {
  if (as_json) {
    std::cout << list_json().dump(1) << "\n";
    return;
  }
  for (const auto& d : definitions()) {
    std::string vs;
    for (const auto& v : variants_of(d)) vs += (vs.empty() ? "" : ",") + v;
    std::cout << d.group << "/" << d.label << "  [" << vs << "]  " << d.stmt << "\n";
  }
}

struct Cli {
  bool list = false, as_json = false, serve = false;
  std::string label, out, err;
  MeasureOptions opts;
};

Cli parse(const std::vector<std::string>& args) {
  Cli cli;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw std::invalid_argument(a + " needs a value");
      return args[++i];
    };
    if (a == "--list") {
      cli.list = true;
    } else if (a == "--json") {
      cli.as_json = true;
    } else if (a == "--serve") {
      cli.serve = true;
    } else if (a == "--run") {
      cli.label = value();
    } else if (a == "--variant") {
      std::string v = value();
      if (v != "all") cli.opts.variants = {v};
    } else if (a == "--threads") {
      cli.opts.threads = parse_threads(value());
    } else if (a == "--iters") {
      cli.opts.iters = parse_positive(a, value());
    } else if (a == "--repeats") {
      cli.opts.repeats = parse_positive(a, value());
    } else if (a == "--extra-work") {
      cli.opts.extra_work = true;
    } else if (a == "--out") {
      cli.out = value();
    } else if (a == "--stderr") {
      cli.err = value();
    } else {
      throw std::invalid_argument("unknown argument '" + a + "'");
    }
  }
  if (cli.list + cli.serve + !cli.label.empty() != 1)
    throw std::invalid_argument("give one of --list, --run LABEL, --serve");
  return cli;
}

// One definition: measure, then write the JSON document. Returns the exit status.
int run_definition(const Cli& cli) {
  const Definition* def = find_definition(cli.label);
  if (!def) {
    std::cerr << "bench_instr: no definition '" << cli.label << "' (see bench_instr --list)\n";
    return 2;
  }
  try {
    auto results = measure(*def, cli.opts);
    json out = {{"label", def->label},
                {"group", def->group},
                {"stmt", def->stmt},
                {"mode", on_callgrind() ? "callgrind" : "wall"},
                {"extra_work", cli.opts.extra_work},
                {"torch_version", torch_version()},
                {"pid", static_cast<int>(getpid())},
                {"results", json::array()}};
    for (const auto& r : results)
      out["results"].push_back({{"variant", r.variant},
                                {"threads", r.threads},
                                {"iters", r.iters},
                                {"dumps", r.dumps},
                                {"wall_ns", r.wall_ns}});
    if (cli.out.empty()) {
      std::cout << out.dump() << std::endl;
    } else {
      std::ofstream f(cli.out);
      f << out.dump() << "\n";
      if (!f) throw std::runtime_error("cannot write " + cli.out);
    }
  } catch (const std::exception& e) {
    std::cerr << "bench_instr: " << cli.label << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}

// Runs a command line of the fork server in this (child) process.
int run_child(const char* line) {
  std::vector<std::string> args;
  std::string cur;
  for (const char* p = line;; ++p) {
    if (*p == '\t' || *p == '\0') {
      if (!cur.empty()) args.push_back(cur);
      cur.clear();
      if (*p == '\0') break;
    } else {
      cur += *p;
    }
  }
  Cli cli;
  try {
    cli = parse(args);
    if (cli.label.empty()) throw std::invalid_argument("the server runs --run commands only");
  } catch (const std::invalid_argument& e) {
    std::cerr << "bench_instr: " << e.what() << "\n";
    return 2;
  }
  if (!cli.err.empty()) {
    int fd = open(cli.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 2);
      close(fd);
    }
  }
  // The server's stdout is its protocol: with the result going to a file, anything the child
  // prints goes to its stderr.
  if (!cli.out.empty()) dup2(2, 1);
  return run_definition(cli);
}

void say(const char* text) {
  size_t n = std::strlen(text);
  while (n > 0) {
    ssize_t w = write(1, text, n);
    if (w <= 0) return;
    text += w;
    n -= static_cast<size_t>(w);
  }
}

int serve() {
  static char line[1 << 14];
  say("ready\n");
  for (;;) {
    size_t n = 0;
    char c = 0;
    for (;;) {
      ssize_t r = read(0, &c, 1);
      if (r <= 0) return 0;  // stdin closed: done
      if (c == '\n') break;
      if (n + 1 < sizeof(line)) line[n++] = c;
    }
    line[n] = '\0';
    pid_t pid = fork();
    if (pid == 0) {
      int rc = run_child(line);
      std::cout.flush();
      std::cerr.flush();
      std::fflush(nullptr);
      _exit(rc);
    }
    char msg[96];
    if (pid < 0) {
      std::snprintf(msg, sizeof(msg), "exited -1 -1\n");
      say(msg);
      continue;
    }
    std::snprintf(msg, sizeof(msg), "started %d\n", static_cast<int>(pid));
    say(msg);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    std::snprintf(msg, sizeof(msg), "exited %d %d\n", static_cast<int>(pid), code);
    say(msg);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  for (const auto& a : args)
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    }
  Cli cli;
  try {
    cli = parse(args);
  } catch (const std::invalid_argument& e) {
    std::cerr << "bench_instr: " << e.what() << "\n" << kUsage;
    return 2;
  }
  if (cli.serve) return serve();
  if (cli.list) {
    print_list(cli.as_json);
    return 0;
  }
  return run_definition(cli);
}
