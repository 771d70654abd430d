# LibTorch's tensor headers, parsed once per build instead of once per program.
#
# <torch/types.h> (the tensor, its options and every ATen op) takes ~15 s of one core to parse,
# and every chapter, exercise and LibTorch test paid it again. Here it is precompiled once into
# wb_torch_pch, and each program that includes LibTorch reuses that precompiled header
# (REUSE_FROM): its own main.cpp then compiles in a few seconds.
#
#   workbook_torch_pch(<target>)   the target's C++ sources start from the precompiled header
#                                  (a no-op with -DWORKBOOK_PCH=OFF)
#
# Why only <torch/types.h>: a precompiled header is loaded whole by every compile that uses it.
# Measured on 2 cores (docs/performance.md): types.h's loads in ~1.6 s, <torch/torch.h>'s (the
# nn/optim/data frontend too, 700 MB) in ~5 s, which costs a chapter more than it saves.
#
# Why -fPIC everywhere it is used: GCC accepts a precompiled header only from a compile with the
# same code model ("created and used with different settings of -fpie"). The workbook's
# libraries are position-independent (the installed package may be linked into a shared
# library), so the header is precompiled with -fPIC, and every target that reuses it is compiled
# with -fPIC too (a program so compiled links as usual). One precompiled header then serves the
# libraries and the programs, instead of one each (~20 s of a core per copy).
#
# A source still includes what it uses: the precompiled header only makes that include cheap,
# so every file also compiles with -DWORKBOOK_PCH=OFF. A precompiled header that GCC refuses is
# not an error (it parses the headers instead, as slowly as before); CMake adds -Winvalid-pch,
# so a refused one shows as a warning in the build log.
option(WORKBOOK_PCH "Precompile LibTorch's tensor headers once for every program that includes them" ON)
set(WORKBOOK_PCH_HEADERS <torch/types.h>)

if(WORKBOOK_PCH)
  set(_pch_src "${CMAKE_BINARY_DIR}/pch/wb_torch_pch.cpp")
  file(CONFIGURE OUTPUT "${_pch_src}" CONTENT "// The precompiled header's own translation unit (cmake/WorkbookPch.cmake).\n")
  add_library(wb_torch_pch OBJECT "${_pch_src}")
  set_target_properties(wb_torch_pch PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_link_libraries(wb_torch_pch PRIVATE torch)
  target_precompile_headers(wb_torch_pch PRIVATE ${WORKBOOK_PCH_HEADERS})
endif()

function(workbook_torch_pch target)
  if(NOT WORKBOOK_PCH)
    return()
  endif()
  get_target_property(_type ${target} TYPE)
  if(_type STREQUAL "EXECUTABLE")  # POSITION_INDEPENDENT_CODE would give a program -fPIE
    target_compile_options(${target} PRIVATE -fPIC)
  else()
    set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  endif()
  target_precompile_headers(${target} REUSE_FROM wb_torch_pch)
endfunction()
