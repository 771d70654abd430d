# The AOTInductor packages (chapter 05's addmm; the GeGLU MLP and its pointwise stage, in
# models/geglu): compiled at build time by the torch of this build, in its own Python process
# (chapters/export_aoti.py --model <model>), for
# WORKBOOK_AOTI_DEVICE: auto = cuda when the build's torch sees a GPU, else cpu. Gives the
# manifest's path (build/aoti/<model>.json) in <out_var> and a target <target> that builds it;
# without a Python torch the manifest says why not. Rebuilt only when the export script or the
# torch install changes.
set(WORKBOOK_AOTI_DEVICE "auto" CACHE STRING "device the AOTI packages are compiled for (auto|cpu|cuda)")
set_property(CACHE WORKBOOK_AOTI_DEVICE PROPERTY STRINGS auto cpu cuda)
if(NOT WORKBOOK_AOTI_DEVICE MATCHES "^(auto|cpu|cuda)$")
  message(FATAL_ERROR "WORKBOOK_AOTI_DEVICE must be auto, cpu or cuda (got '${WORKBOOK_AOTI_DEVICE}')")
endif()
# How many exports run at once. Each is mostly one busy core for 20-80 s. On a small machine one
# at a time, in the console pool, so its progress lines stream to the terminal; where cores are
# plenty, several at once (the H200 host: four GPU exports of 65-80 s each were a 290 s chain
# one at a time), in a pool of their own.
set(WORKBOOK_AOTI_JOBS "" CACHE STRING "AOTInductor exports at once (empty: a quarter of the cores)")
set(_wb_aoti_jobs "${WORKBOOK_AOTI_JOBS}")
if(NOT _wb_aoti_jobs)
  cmake_host_system_information(RESULT _wb_cores QUERY NUMBER_OF_LOGICAL_CORES)
  math(EXPR _wb_aoti_jobs "${_wb_cores} / 4")
endif()
if(_wb_aoti_jobs GREATER 1)
  set_property(GLOBAL APPEND PROPERTY JOB_POOLS wb_aoti=${_wb_aoti_jobs})
  set(_wb_aoti_pool JOB_POOL wb_aoti)
else()
  set(_wb_aoti_pool USES_TERMINAL)  # stream the script's progress lines while it runs
endif()
function(workbook_aoti_package target model out_var)
  set(_dir "${CMAKE_BINARY_DIR}/aoti")
  set(_manifest "${_dir}/${model}.json")
  set(_script "${WORKBOOK_ROOT}/chapters/export_aoti.py")
  if(WORKBOOK_TORCH_PYTHON)
    # torch/version.py is rewritten by every torch install: depending on it rebuilds the package
    # when torch changes. (Torch_DIR is <site-packages>/torch/share/cmake/Torch.)
    get_filename_component(_torch_version_py "${Torch_DIR}/../../../version.py" ABSOLUTE)
    set(_depends "${_script}")
    if(EXISTS "${_torch_version_py}")
      list(APPEND _depends "${_torch_version_py}")
    endif()
    add_custom_command(
      OUTPUT "${_manifest}"
      BYPRODUCTS "${_dir}/${model}.pt2" "${_dir}/${model}.wrapper.cpp"
      COMMAND "${WORKBOOK_TORCH_PYTHON}" -u "${_script}" --out-dir "${_dir}" --model ${model}
              --device ${WORKBOOK_AOTI_DEVICE}
      DEPENDS ${_depends}
      COMMENT "AOTInductor: compiling the ${model} package with ${WORKBOOK_TORCH_PYTHON} (about a minute)"
      ${_wb_aoti_pool}
      VERBATIM)
  else()
    # No Python torch: the chapter still builds and reports its aoti variant as unavailable.
    file(MAKE_DIRECTORY "${_dir}")
    file(WRITE "${_manifest}"
         "{\"available\": false, \"reason\": \"no Python with torch was found when configuring "
         "(set -DWORKBOOK_TORCH_PYTHON=/path/to/python that imports torch ${Torch_VERSION})\"}\n")
  endif()
  add_custom_target(${target} DEPENDS "${_manifest}")
  set(${out_var} "${_manifest}" PARENT_SCOPE)
endfunction()
