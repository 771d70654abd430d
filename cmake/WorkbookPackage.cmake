# The profiler wrapper as a CMake package:
#
#   cmake --install build --prefix /opt/wb
#   # in your project:
#   find_package(TorchProfilerWorkbook REQUIRED)      # -DCMAKE_PREFIX_PATH="/opt/wb;<torch cmake prefix>"
#   target_link_libraries(app PRIVATE workbook::profiler)   # wb::Profiler, LibTorch side
#   target_link_libraries(tool PRIVATE workbook::trace)     # torch-free: reader, table, lessons, SVG
#
# Installed: the static libraries, every header of common/*/include/workbook/, and
# lib/cmake/TorchProfilerWorkbook/ (config, version, targets). The config file finds the
# dependencies itself (find_dependency): Torch, spdlog, nlohmann_json, simdjson, CLI11, ZLIB,
# and CUDAToolkit when the census was built with CUPTI.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# workbook::trace: everything that reads traces, without LibTorch.
add_library(wb_trace INTERFACE)
target_link_libraries(wb_trace INTERFACE wb_core wb_lessons wb_render)
set_target_properties(wb_trace PROPERTIES EXPORT_NAME trace)
# The same names inside this build, so examples/ link the same way in-tree and from the package.
add_library(workbook::trace ALIAS wb_trace)
add_library(workbook::profiler ALIAS wb_torch)
add_library(workbook::cupti ALIAS wb_cupti)

set(_wb_cmake_dir "${CMAKE_INSTALL_LIBDIR}/cmake/TorchProfilerWorkbook")
install(TARGETS wb_core wb_lessons wb_render wb_trace wb_torch wb_cupti
        EXPORT TorchProfilerWorkbookTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")
get_property(_wb_header_dirs GLOBAL PROPERTY WORKBOOK_HEADER_DIRS)
foreach(_dir IN LISTS _wb_header_dirs)
  install(DIRECTORY "${_dir}/" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}" FILES_MATCHING PATTERN "*.hpp")
endforeach()
install(EXPORT TorchProfilerWorkbookTargets NAMESPACE workbook:: DESTINATION "${_wb_cmake_dir}")

# What the config file needs to know about this build.
get_target_property(_wb_cupti_links wb_cupti LINK_LIBRARIES)
if("CUDA::cupti" IN_LIST _wb_cupti_links)
  set(WORKBOOK_PACKAGE_NEEDS_CUDATOOLKIT ON)
else()
  set(WORKBOOK_PACKAGE_NEEDS_CUDATOOLKIT OFF)
endif()
set(WORKBOOK_PACKAGE_TORCH_VERSION "${Torch_VERSION}")
configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/TorchProfilerWorkbookConfig.cmake.in"
  "${CMAKE_BINARY_DIR}/package/TorchProfilerWorkbookConfig.cmake"
  INSTALL_DESTINATION "${_wb_cmake_dir}")
write_basic_package_version_file("${CMAKE_BINARY_DIR}/package/TorchProfilerWorkbookConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMinorVersion)
install(FILES "${CMAKE_BINARY_DIR}/package/TorchProfilerWorkbookConfig.cmake"
              "${CMAKE_BINARY_DIR}/package/TorchProfilerWorkbookConfigVersion.cmake"
        DESTINATION "${_wb_cmake_dir}")
