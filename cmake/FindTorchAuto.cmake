# Locates LibTorch without the user having to say where it is. Order:
#   1. Torch_DIR / CMAKE_PREFIX_PATH (plain find_package)
#   2. the workbook's shared venv: ${XDG_CACHE_HOME:-~/.cache}/libtorch-workbook/torch-<ver>
#   3. an importable torch in python3 (the GPU machine's case)
# Sets WORKBOOK_TORCH_PYTHON to a python that can import this torch (if any; chapter 05 uses it).
# The torch version the workbook pins: scripts/torch_version.txt, the one place that names it.
file(READ "${CMAKE_CURRENT_LIST_DIR}/../scripts/torch_version.txt" _wb_pinned_torch)
string(STRIP "${_wb_pinned_torch}" _wb_pinned_torch)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${CMAKE_CURRENT_LIST_DIR}/../scripts/torch_version.txt")
set(WORKBOOK_TORCH_VERSION "${_wb_pinned_torch}" CACHE STRING "torch version the setup installs")

function(_wb_torch_prefix_from_python py out)
  execute_process(COMMAND "${py}" -c "import torch,sys;sys.stdout.write(torch.utils.cmake_prefix_path)"
                  OUTPUT_VARIABLE _p RESULT_VARIABLE _rc ERROR_QUIET)
  if(_rc EQUAL 0 AND EXISTS "${_p}/Torch/TorchConfig.cmake")
    set(${out} "${_p}" PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

find_program(_wb_python3 NAMES python3 python)
# The python of the venv ./workbook setup installs torch into.
if(DEFINED ENV{XDG_CACHE_HOME})
  set(_wb_venv_python "$ENV{XDG_CACHE_HOME}")
else()
  set(_wb_venv_python "$ENV{HOME}/.cache")
endif()
string(APPEND _wb_venv_python "/libtorch-workbook/torch-${WORKBOOK_TORCH_VERSION}/bin/python")

find_package(Torch QUIET)
if(NOT Torch_FOUND)
  set(_candidates "${_wb_venv_python}")
  if(_wb_python3)
    list(APPEND _candidates "${_wb_python3}")
  endif()
  foreach(py IN LISTS _candidates)
    if(EXISTS "${py}")
      _wb_torch_prefix_from_python("${py}" _prefix)
      if(_prefix)
        list(APPEND CMAKE_PREFIX_PATH "${_prefix}")
        set(WORKBOOK_TORCH_PYTHON "${py}" CACHE FILEPATH "python that imports the torch we build against")
        break()
      endif()
    endif()
  endforeach()
  find_package(Torch QUIET)
endif()

if(NOT Torch_FOUND)
  message(FATAL_ERROR
    "LibTorch not found.\n"
    "Fix it with one of:\n"
    "  ./workbook setup                       (installs torch==${WORKBOOK_TORCH_VERSION} from PyPI into a shared venv)\n"
    "  cmake -DTorch_DIR=/path/to/libtorch/share/cmake/Torch ...\n"
    "  cmake -DCMAKE_PREFIX_PATH=\"$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')\" ...")
endif()

if(NOT WORKBOOK_TORCH_PYTHON)
  # Torch came from Torch_DIR/CMAKE_PREFIX_PATH (./workbook setup passes the venv's that way):
  # find a python whose torch is this one (optional). A wheel's Torch_DIR is
  # <env>/lib/pythonX.Y/site-packages/torch/share/cmake/Torch, so <env>/bin/python comes first.
  get_filename_component(_tdir "${Torch_DIR}" REALPATH)
  get_filename_component(_env "${_tdir}/../../../../../../.." ABSOLUTE)
  foreach(py IN ITEMS "${_env}/bin/python" "${_wb_venv_python}" "${_wb_python3}")
    if(py AND EXISTS "${py}")
      _wb_torch_prefix_from_python("${py}" _prefix)
      if(_prefix)
        get_filename_component(_p "${_prefix}/Torch" REALPATH)
        if(_p STREQUAL _tdir)
          set(WORKBOOK_TORCH_PYTHON "${py}" CACHE FILEPATH "python that imports the torch we build against")
          break()
        endif()
      endif()
    endif()
  endforeach()
endif()

# Does this LibTorch carry CUDA? (The PyPI wheel does; then CUPTI code is compiled too.)
set(WORKBOOK_WITH_CUDA OFF)
if(TARGET torch_cuda OR TORCH_CUDA_LIBRARIES OR CAFFE2_USE_CUDA)
  set(WORKBOOK_WITH_CUDA ON)
endif()
message(STATUS "workbook: Torch ${Torch_VERSION} from ${Torch_DIR} (CUDA: ${WORKBOOK_WITH_CUDA}; python: ${WORKBOOK_TORCH_PYTHON})")
