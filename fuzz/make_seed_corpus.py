#!/usr/bin/env python3
"""Writes the seed corpus in corpus/trace_reader/: two real-looking traces plus small edge
cases, each a shape the reader must survive. Rerun after changing it; keep the whole corpus
well under 1 MB. (Reproducers of fixed crashes are added as crash-<sha1> files and kept.)"""
import gzip
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "trace_reader")
TRACES = os.path.join(HERE, "..", "tests", "data", "traces")
os.makedirs(OUT, exist_ok=True)


def put(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def ev(ph="X", **kw):
    parts = [f'"ph":"{ph}"'] + [f'"{k}":{v}' for k, v in kw.items()]
    return "{" + ",".join(parts) + "}"


def trace(*events, head=""):
    return "{" + head + '"traceEvents":[' + ",".join(events) + "]}"


shutil.copy(os.path.join(TRACES, "py_cpu_64.json"), os.path.join(OUT, "real_py_cpu_64.json"))
shutil.copy(os.path.join(TRACES, "synthetic_h200_eager64.json"),
            os.path.join(OUT, "synthetic_h200_eager64.json"))

step = trace(
    ev(cat='"user_annotation"', name='"ProfilerStep#2"', pid=1, tid=1, ts="10.000", dur="50.000",
       args='{"External id":1}'),
    ev(cat='"cpu_op"', name='"aten::mm"', pid=1, tid=1, ts="12.500", dur="20.250",
       args='{"External id":2}'),
    ev(cat='"cuda_runtime"', name='"cudaLaunchKernel"', pid=1, tid=1, ts="13.000", dur="5.000",
       args='{"External id":2,"correlation":7}'),
    ev(cat='"kernel"', name='"k"', pid=0, tid=7, ts="30.000", dur="1.900",
       args='{"External id":2,"correlation":7,"device":0,"stream":7,"registers per thread":168,'
            '"shared memory":164308,"grid":[4,2,1],"block":[384,1,1],"blocks per SM":0.06,'
            '"warps per SM":0.72}'),
    ev(ph="s", id=7, pid=1, tid=1, ts="13.000", cat='"ac2g"', name='"ac2g"'),
    ev(ph="f", id=7, pid=0, tid=7, ts="30.000", cat='"ac2g"', name='"ac2g"', bp='"e"'),
    head='"baseTimeNanoseconds":1790857026000000000,"deviceProperties":[{"id":0,"name":"NVIDIA H200",'
         '"computeMajor":9,"computeMinor":0,"totalGlobalMem":150754820096,"numSms":132}],')
put("small_step.json", step)
put("small_step.json.gz", gzip.compress(step.encode()))
half = len(step) // 2
put("two_gzip_members.gz", gzip.compress(step[:half].encode()) + gzip.compress(step[half:].encode()))
put("gzip_garbage.gz", b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage")
put("gzip_truncated.gz", gzip.compress(step.encode())[:40])
put("absolute_ts.json", trace(ev(name='"a"', ts="1790857026123456.789", dur="5.5"),
                              ev(ph="i", name='"b"', ts="1790857026123460.001", s='"t"')))
put("string_pids.json", trace(ev(cat='"Trace"', name='"PyTorch Profiler (0)"', pid='"Spans"',
                                 tid='"PyTorch Profiler"', ts=1, dur=9),
                              ev(ph="i", name='"end"', pid='""', tid='""', ts=10),
                              ev(name='"n"', pid='"123"', tid='"-4"', ts=2, dur=1)))
put("metadata_only.json", trace(ev(ph="M", name='"thread_name"', pid=1, tid=1, args='{"name":"t"}'),
                                ev(ph="C", name='"c"', ts=1, args='{"v":1}')))
put("wrong_types.json", trace(ev(name=7, cat="[1]", ts=1, dur=2, pid="{}", tid="null",
                                 args='{"External id":"x","correlation":1.5,"grid":[[1]],'
                                      '"block":"b","bytes":-1e999,"blocks per SM":"inf"}'),
                              ev(cat='"kernel"', ts=1, dur=1, args="[]")))
put("numbers.json", trace(ev(name='"e"', ts="1.5e3", dur="2E-3"), ev(name='"n"', ts="-5", dur="-1"),
                          ev(name='"z"', ts="0.0000", dur="0.99999")))
put("unicode_names.json", trace(ev(name='"caf\\u00e9 \\ud83d\\ude80 \\"q\\" \\\\ \\n"',
                                   cat='"cpu_\\u006fp"', ts=1, dur=1)))
put("deep_args.json", trace(ev(ts=1, dur=1, args='{"x":' + "[" * 500 + "]" * 500 + "}")))
put("truncated.json", step[: len(step) * 2 // 3])
put("trailing_garbage.json", step + " }")
put("empty_events.json", trace())
put("top_array.json", "[" + ev(ts=1, dur=1) + "]")
put("dur_string.json", trace(ev(ts=1, dur='"abc"')))
put("base_overflow.json", trace(ev(ph="i", ts="1e15"), head='"baseTimeNanoseconds":9000000000000000000,'))
put("graph_launch.json", trace(
    ev(cat='"cuda_runtime"', name='"cudaGraphLaunch"', pid=1, tid=1, ts=0, dur=5,
       args='{"External id":3,"correlation":11}'),
    ev(cat='"kernel"', name='"g1"', pid=0, tid=7, ts=9, dur=1, args='{"correlation":11}'),
    ev(cat='"kernel"', name='"g2"', pid=0, tid=8, ts=8, dur=1, args='{"correlation":11}'),
    ev(cat='"cpu_op"', name='"op"', pid=1, tid=1, ts=0, dur=6, args='{"External id":3}'),
    ev(cat='"user_annotation"', name='"op"', pid=1, tid=1, ts=0, dur=6, args='{"External id":3}')))
put("overlap_and_ties.json", trace(ev(name='"a"', ts=10, dur=5), ev(name='"b"', ts=12, dur=5),
                                   ev(name='"c"', ts=10, dur=5), ev(name='"d"', ts=10, dur=0)))
put("steps.json", trace(*[ev(cat='"user_annotation"', name=f'"ProfilerStep#{n}"', ts=n * 10, dur=5)
                          for n in (3, 1, 2)],
                        ev(cat='"user_annotation"', name='"ProfilerStep#99999999999"', ts=0, dur=1)))
put("nul_byte.json", trace(ev(ts=1, dur=1)) + "\0")
# Not written here: corpus/trace_reader/record_shapes_flops.json (record_shapes / with_flops
# args: input shapes, a list of tensors, conv2d's concrete inputs, args of the wrong types) is
# kept by hand, because tests/test_trace_reader.cpp checks the shapes and FLOPs read from it.
