# Chapter 05: the AOTInductor package (built at build time by the torch of this build), a small
# library shared with tests/test_05_compiled_addmm.cpp, and the chapter program.
set(_ch05_dir "${CMAKE_CURRENT_LIST_DIR}")

# ---- the AOTI package -------------------------------------------------------------------------
# Compiled for the build machine's device unless told: auto = cuda when the build's torch sees a
# GPU, else cpu. Rebuilt only when the export script or the torch install changes.
set(WORKBOOK_AOTI_DEVICE "auto" CACHE STRING "device chapter 05's AOTI package is compiled for (auto|cpu|cuda)")
set_property(CACHE WORKBOOK_AOTI_DEVICE PROPERTY STRINGS auto cpu cuda)
if(NOT WORKBOOK_AOTI_DEVICE MATCHES "^(auto|cpu|cuda)$")
  message(FATAL_ERROR "WORKBOOK_AOTI_DEVICE must be auto, cpu or cuda (got '${WORKBOOK_AOTI_DEVICE}')")
endif()
set(_aoti_dir "${CMAKE_BINARY_DIR}/aoti")
set(_aoti_manifest "${_aoti_dir}/matmul_add.json")
if(WORKBOOK_TORCH_PYTHON)
  # torch/version.py is rewritten by every torch install: depending on it rebuilds the package
  # when torch changes. (Torch_DIR is <site-packages>/torch/share/cmake/Torch.)
  get_filename_component(_torch_version_py "${Torch_DIR}/../../../version.py" ABSOLUTE)
  set(_aoti_depends "${_ch05_dir}/export_aoti.py")
  if(EXISTS "${_torch_version_py}")
    list(APPEND _aoti_depends "${_torch_version_py}")
  endif()
  add_custom_command(
    OUTPUT "${_aoti_manifest}"
    BYPRODUCTS "${_aoti_dir}/matmul_add.pt2" "${_aoti_dir}/matmul_add.wrapper.cpp"
    COMMAND "${WORKBOOK_TORCH_PYTHON}" -u "${_ch05_dir}/export_aoti.py"
            --out-dir "${_aoti_dir}" --device "${WORKBOOK_AOTI_DEVICE}"
    DEPENDS ${_aoti_depends}
    COMMENT "Chapter 05: compiling the AOTInductor package with ${WORKBOOK_TORCH_PYTHON} (about a minute)"
    USES_TERMINAL  # stream the script's progress lines while it runs
    VERBATIM)
else()
  # No Python torch: the chapter still builds and reports the aoti variant as unavailable.
  file(MAKE_DIRECTORY "${_aoti_dir}")
  file(WRITE "${_aoti_manifest}"
       "{\"available\": false, \"reason\": \"no Python with torch was found when configuring "
       "(set -DWORKBOOK_TORCH_PYTHON=/path/to/python that imports torch ${Torch_VERSION})\"}\n")
endif()
add_custom_target(05_compiled_addmm_aoti DEPENDS "${_aoti_manifest}")

# ---- the chapter ------------------------------------------------------------------------------
add_library(05_compiled_addmm_lib STATIC "${_ch05_dir}/variants.cpp" "${_ch05_dir}/across.cpp")
target_include_directories(05_compiled_addmm_lib PUBLIC "${_ch05_dir}")
target_link_libraries(05_compiled_addmm_lib PUBLIC wb_torch wb_cupti)
target_compile_definitions(05_compiled_addmm_lib PUBLIC WB05_AOTI_MANIFEST="${_aoti_manifest}")
target_compile_options(05_compiled_addmm_lib PRIVATE -Wall -Wextra)
add_dependencies(05_compiled_addmm_lib 05_compiled_addmm_aoti)

workbook_add_chapter(05_compiled_addmm LIBS 05_compiled_addmm_lib)
