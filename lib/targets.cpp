#include "opbench/targets.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "opbench/bounded_read.h"
#include "opbench/check.h"

namespace opbench {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& path, const std::string& where, const std::string& what) {
  throw Error("targets file " + path + ": " + where + ": " + what);
}

// 1-based line:column of a byte offset, for JSON syntax errors.
std::string line_column(const std::string& text, size_t offset) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < std::min(offset, text.size()); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return std::to_string(line) + ":" + std::to_string(column);
}

std::string string_field(const json& object, const std::string& key, const std::string& path,
                         const std::string& where) {
  if (!object.contains(key)) bad(path, where, "missing \"" + key + "\"");
  if (!object[key].is_string() || object[key].get<std::string>().empty())
    bad(path, where + "." + key, "expected a non-empty string");
  return object[key].get<std::string>();
}

// Refuses keys outside `known`: a misspelt key ("backnd") would otherwise silently widen a target.
void only_known_keys(const json& object, std::initializer_list<const char*> known, const std::string& path,
                     const std::string& where) {
  for (const auto& item : object.items()) {
    bool ok = false;
    for (const char* k : known) ok = ok || item.key() == k;
    if (!ok) {
      std::string list;
      for (const char* k : known) list += std::string(list.empty() ? "" : ", ") + k;
      bad(path, where, "unknown key \"" + item.key() + "\" (expected: " + list + ")");
    }
  }
}

// The parser's callback that refuses a key given twice in one object: JSON keeps the last silently, so
// a second "target" would override the first unseen.
class DuplicateKeys {
 public:
  bool operator()(int /*depth*/, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) keys_.emplace_back();
    if (event == json::parse_event_t::object_end && !keys_.empty()) keys_.pop_back();
    if (event == json::parse_event_t::key && !keys_.empty() && !keys_.back().insert(parsed.get<std::string>()).second)
      throw Error("the key \"" + parsed.get<std::string>() + "\" appears twice in one object");
    return true;
  }

 private:
  std::vector<std::set<std::string>> keys_;
};

const std::set<std::string>& torch_dtype_names() {
  static const std::set<std::string> names = {"bfloat16", "float16", "float32", "float64",
                                              "int8",     "uint8",   "int32",   "int64",  "int4"};
  return names;
}

Target parse_target(const json& entry, const std::string& path, const std::string& where) {
  if (!entry.is_object()) bad(path, where, "expected an object");
  only_known_keys(entry, {"experiment", "metric", "dtype", "backend", "target", "bound_fraction"}, path, where);
  Target t;
  t.experiment = string_field(entry, "experiment", path, where);
  t.metric = string_field(entry, "metric", path, where);
  t.dtype = string_field(entry, "dtype", path, where);
  if (!torch_dtype_names().count(t.dtype))
    bad(path, where + ".dtype", "unknown dtype \"" + t.dtype + "\" (torch's names: bfloat16, float16, float32, int8, ...)");
  t.backend = entry.contains("backend") ? string_field(entry, "backend", path, where) : "aten";
  if (entry.contains("target") == entry.contains("bound_fraction"))
    bad(path, where, "expected one of \"target\" (the number) and \"bound_fraction\" (a share of the row's bound)");
  if (entry.contains("bound_fraction")) {
    const json& fraction = entry["bound_fraction"];
    if (!fraction.is_number() || !(fraction.get<double>() > 0 && fraction.get<double>() <= 1))
      bad(path, where + ".bound_fraction", "expected a number in (0, 1], got " + fraction.dump());
    if (t.metric != "token_per_sec" && t.metric != "memory_bandwidth(GB/s)")
      bad(path, where + ".bound_fraction", "applies to token_per_sec and memory_bandwidth(GB/s) rows, not " + t.metric);
    t.bound_fraction = fraction.get<double>();
    return t;
  }
  if (!entry["target"].is_number() || entry["target"].get<double>() <= 0)
    bad(path, where + ".target", "expected a positive number, got " + entry["target"].dump());
  t.value = entry["target"].get<double>();
  return t;
}

}  // namespace

TargetFile load_target_file(const std::string& path) {
  FileText file = read_bounded(path, kTableLimitBytes, "a targets file");
  if (!file.error.empty()) throw Error("targets file " + path + ": " + file.error);
  return parse_target_text(file.text, path);
}

TargetFile parse_target_text(const std::string& text, const std::string& path) {
  json doc;
  try {
    doc = json::parse(text, DuplicateKeys());
  } catch (const Error& e) {
    bad(path, "JSON", e.what());
  } catch (const json::parse_error& e) {
    bad(path, line_column(text, e.byte > 0 ? e.byte - 1 : 0), "invalid JSON");
  } catch (const json::exception& e) {   // e.g. a number out of range (1e400)
    bad(path, "JSON", std::string("unusable number or value (") + e.what() + ")");
  }
  if (!doc.is_object()) bad(path, "top level", "expected an object");
  only_known_keys(doc, {"devices", "rule", "targets"}, path, "top level");
  TargetFile file;
  file.path = path;
  if (!doc.contains("devices") || !doc["devices"].is_array() || doc["devices"].empty())
    bad(path, "devices", "expected a non-empty list of device names");
  for (size_t i = 0; i < doc["devices"].size(); ++i) {
    if (!doc["devices"][i].is_string()) bad(path, "devices[" + std::to_string(i) + "]", "expected a string");
    file.devices.push_back(doc["devices"][i].get<std::string>());
  }
  file.rule = string_field(doc, "rule", path, "top level");
  if (!doc.contains("targets") || !doc["targets"].is_array()) bad(path, "targets", "expected a list");
  std::set<std::string> seen;
  for (size_t i = 0; i < doc["targets"].size(); ++i) {
    std::string where = "targets[" + std::to_string(i) + "]";
    Target t = parse_target(doc["targets"][i], path, where);
    if (!seen.insert(t.experiment + "|" + t.metric + "|" + t.dtype + "|" + t.backend).second)
      bad(path, where, "duplicate of an earlier entry for " + t.experiment + " " + t.dtype + " " + t.backend);
    file.targets.push_back(t);
  }
  return file;
}

std::vector<TargetFile> load_targets(const std::string& file_or_dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> paths;
  std::error_code error;
  if (fs::is_directory(file_or_dir, error)) {
    for (fs::directory_iterator it(file_or_dir, error), end; !error && it != end; it.increment(error))
      if (it->path().extension() == ".json") paths.push_back(it->path().string());
    if (error) throw Error("targets folder " + file_or_dir + ": cannot be listed: " + error.message());
    std::sort(paths.begin(), paths.end());
    if (paths.empty()) throw Error("targets folder " + file_or_dir + ": holds no *.json targets file");
  } else {
    paths.push_back(file_or_dir);
  }
  std::vector<TargetFile> files;
  std::map<std::string, std::string> owner;
  for (const auto& path : paths) {
    files.push_back(load_target_file(path));
    for (const auto& device : files.back().devices) {
      auto [it, fresh] = owner.emplace(device, path);
      if (!fresh) bad(path, "devices", "\"" + device + "\" is also named by " + it->second);
    }
  }
  return files;
}

std::vector<std::string> unknown_target_names(const std::vector<TargetFile>& files, const KnownNames& known) {
  std::vector<std::string> problems;
  auto check = [&](const TargetFile& file, size_t i, const char* field, const std::string& value,
                   const std::set<std::string>& names) {
    if (!names.count(value))
      problems.push_back("targets file " + file.path + ": targets[" + std::to_string(i) + "]." + field + ": \"" +
                         value + "\" is not a registered " + field + " (bench_ops --opbench_list)");
  };
  auto per_world = [&](const std::string& row_name) {
    for (const auto& stem : known.per_world_experiments)
      if (per_world_row_name(stem, row_name)) return true;
    return false;
  };
  for (const auto& file : files)
    for (size_t i = 0; i < file.targets.size(); ++i) {
      const Target& t = file.targets[i];
      if (!per_world(t.experiment)) check(file, i, "experiment", t.experiment, known.experiments);
      check(file, i, "metric", t.metric, known.metrics);
      check(file, i, "backend", t.backend, known.backends);
    }
  return problems;
}

bool per_world_row_name(const std::string& stem, const std::string& row_name) {
  std::string prefix = stem + "_n";
  if (row_name.size() <= prefix.size() || row_name.compare(0, prefix.size(), prefix) != 0) return false;
  std::string count = row_name.substr(prefix.size());
  return count[0] != '0' && count.find_first_not_of("0123456789") == std::string::npos;
}

std::optional<Target> find_target(const std::vector<TargetFile>& files, const std::string& device_name,
                                  const std::string& experiment, const std::string& metric,
                                  const std::string& dtype, const std::string& backend) {
  for (const auto& file : files) {
    if (std::find(file.devices.begin(), file.devices.end(), device_name) == file.devices.end()) continue;
    for (const auto& t : file.targets)
      if (t.experiment == experiment && t.metric == metric && t.dtype == dtype && t.backend == backend)
        return t;
  }
  return std::nullopt;
}

std::string torch_dtype_name(const std::string& case_dtype) {
  static const std::map<std::string, std::string> names = {
      {"bf16", "bfloat16"}, {"fp16", "float16"}, {"fp32", "float32"}, {"fp64", "float64"},
      {"int8", "int8"},     {"uint8", "uint8"},  {"int32", "int32"},  {"int64", "int64"},
      {"int4", "int4"}};
  auto it = names.find(case_dtype);
  return it == names.end() ? case_dtype : it->second;
}

}  // namespace opbench
