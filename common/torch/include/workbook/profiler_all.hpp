// The one header for profiling your own code: everything docs/profiler-in-cpp.md uses.
//
//   #include <workbook/profiler_all.hpp>      // link workbook::profiler (and workbook::trace)
//
//   wb::Profiler, wb::ProfilerOptions, wb::Annotation, wb::CycleResult,
//   wb::tensorboard_trace_handler                     profiler.hpp  (LibTorch side)
//   wb::Schedule                                      schedule.hpp  (torch.profiler.schedule)
//   wb::key_averages_table, wb::TableOptions          table.hpp     (key_averages().table())
//   wb::write_file_atomic                             fs_util.hpp
//   wb::read_trace, wb::TraceModel                    trace_reader.hpp, trace_model.hpp
//   wb::inspect_trace, wb::render_lessons             lessons.hpp   (the rules, on your trace)
//   wb::diff_traces, wb::render_diff                  trace_diff.hpp
//   wb::render_timeline_svg                           timeline_svg.hpp
//
// The chapters' harness (chapter.hpp) and the CUPTI census are not in it: they are the
// workbook's own machinery, not what your program needs.
#pragma once

#include "workbook/fs_util.hpp"
#include "workbook/lessons.hpp"
#include "workbook/profiler.hpp"
#include "workbook/schedule.hpp"
#include "workbook/table.hpp"
#include "workbook/timeline_svg.hpp"
#include "workbook/trace.hpp"
#include "workbook/trace_diff.hpp"
#include "workbook/trace_model.hpp"
#include "workbook/trace_reader.hpp"
