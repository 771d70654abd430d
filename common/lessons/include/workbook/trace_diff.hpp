// Two traces side by side, step by step: which ops, kernels and launch calls one has and the
// other does not (or has a different number of), and the CPU and GPU time of each step.
// The habit it teaches: same kernel name = same GPU work. A kernel whose name changed is
// different GPU work, even when it does the same job (a GEMM is still a GEMM): its time must be
// read again. Used by the `diff` tool and by chapters that compare variants (05: eager vs
// addmm; Part 2: fusion).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "workbook/lessons.hpp"
#include "workbook/trace_model.hpp"

namespace wb {

enum class DiffKind { Same, Changed, Added, Removed };  // B relative to A
std::string_view diff_kind_name(DiffKind k);            // "same", "changed", "added", "removed"

// One name (an op, a kernel or a launch call), counted per step on each side.
struct DiffRow {
  std::string name;
  std::string kernel_class;                     // kernels: "gemm", "elementwise", ... (rules.hpp); else ""
  double a_per_step = 0, b_per_step = 0;        // calls per step
  double a_us_per_step = 0, b_us_per_step = 0;  // time per step (ops: CPU; kernels: GPU)
  DiffKind kind = DiffKind::Same;
};

// A kernel of A replaced by one of another name in B, in the same class (gemm -> gemm): the
// same job done by different GPU code.
struct KernelRename {
  std::string kernel_class, a_name, b_name;
  double a_us_per_step = 0, b_us_per_step = 0;
};

struct StepTimes {
  int number = -1;    // ProfilerStep#N; -1 for the whole trace when it has no steps
  double cpu_us = 0;  // the step's width on the CPU (ProfilerStep range)
  double gpu_us = 0;  // device work launched in the step (kernels, copies, memsets)
};

struct TraceSide {
  std::string source;
  std::vector<StepTimes> steps;
  double cpu_us_per_step = 0, gpu_us_per_step = 0;  // means over the steps
};

struct TraceDiff {
  TraceSide a, b;
  std::vector<DiffRow> ops, kernels, launches;  // every name seen on either side
  std::vector<KernelRename> renamed;
  // The names on both sides whose time per step moved most, largest |B - A| first (at most
  // DiffOptions::time_changes each): a bigger batch keeps every name and count and doubles the
  // time, which the rows above, about names and counts, do not show.
  std::vector<DiffRow> op_time_changes, kernel_time_changes;
  int changes() const;  // rows that are not Same, plus renames (names and counts, not times)
};

struct DiffOptions {
  // Counts per step differing by less than this are the same (0.5: a whole call).
  double count_tolerance = 0.5;
  int time_changes = 5;  // rows in each "largest time changes" list
};

TraceDiff diff_traces(const TraceModel& a, const TraceModel& b, const DiffOptions& o = {});
// Text (the changes first, then the per-step times) or JSON.
std::string render_diff(const TraceDiff& d, Format f, bool show_same = false);

}  // namespace wb
