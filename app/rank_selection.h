// The rank selection: which of the selected cases a rank of a distributed launch runs (torchrun's
// RANK, WORLD_SIZE, ...; opbench/world.h), and where it writes. Every rank runs the cases of the
// families that run on every rank (Family::every_rank: the collectives), in the same order; rank 0
// runs the rest and alone writes the rows and the summary.
#pragma once
#include <set>
#include <string>

#include "opbench/cases.h"
#include "opbench/world.h"

namespace opbench {

// The cases of `selected` this rank runs: all on rank 0 (or a world of one), those of `every_rank`
// families elsewhere.
std::set<std::string> cases_for_rank(const CaseRegistry& cases, const std::set<std::string>& selected,
                                     const World& world, const std::set<std::string>& every_rank);

// "out/x.json" -> "out/x.rank3.json": where a rank other than 0 writes --benchmark_out.
std::string per_rank_path(const std::string& path, int rank);

}  // namespace opbench
