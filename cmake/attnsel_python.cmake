# Finds a Python interpreter that can build the module: one with its headers (Python.h), and
# pybind11 (importable from it, else pybind11-dev's CMake package). Sets ATTNSEL_PYTHON_FOUND,
# and Python3_EXECUTABLE and pybind11_DIR for find_package.
#
# -DPython3_EXECUTABLE=... is used as given (pip passes its own interpreter). Otherwise the first
# that works of the python3 on PATH and the system's /usr/bin/python3: a python3 on PATH may be a
# pyenv without pybind11 or headers, while python3-dev and pybind11-dev belong to /usr/bin/python3.
set(ATTNSEL_PYTHON_FOUND OFF)
if(Python3_EXECUTABLE)
  set(_attnsel_candidates "${Python3_EXECUTABLE}")
else()
  set(_attnsel_candidates "")
  find_program(_attnsel_path_python3 NAMES python3)
  if(_attnsel_path_python3)
    list(APPEND _attnsel_candidates "${_attnsel_path_python3}")
  endif()
  unset(_attnsel_path_python3 CACHE)
  if(EXISTS /usr/bin/python3)
    list(APPEND _attnsel_candidates /usr/bin/python3)
  endif()
  list(REMOVE_DUPLICATES _attnsel_candidates)
  # The tests run pytest with the interpreter the module is built for: one that has pytest comes
  # first, so a pyenv python3 without it does not turn python.pytest into a skip.
  set(_attnsel_with_pytest "")
  set(_attnsel_without_pytest "")
  foreach(_py IN LISTS _attnsel_candidates)
    execute_process(COMMAND "${_py}" -c "import pytest" RESULT_VARIABLE _attnsel_pytest OUTPUT_QUIET ERROR_QUIET)
    if(_attnsel_pytest EQUAL 0)
      list(APPEND _attnsel_with_pytest "${_py}")
    else()
      list(APPEND _attnsel_without_pytest "${_py}")
    endif()
  endforeach()
  set(_attnsel_candidates ${_attnsel_with_pytest} ${_attnsel_without_pytest})
endif()
# pybind11's CMake package without Python (pybind11-dev: /usr/lib/cmake/pybind11).
find_file(_attnsel_pybind11_config pybind11Config.cmake PATH_SUFFIXES lib/cmake/pybind11 share/cmake/pybind11)

# First an interpreter pybind11 is importable from (Debian's python3-pybind11 belongs to
# /usr/bin/python3), then one with headers and pybind11's CMake package.
foreach(_attnsel_pass import package)
  foreach(_py IN LISTS _attnsel_candidates)
    execute_process(
      COMMAND "${_py}" -c "import os, sysconfig; assert os.path.exists(os.path.join(sysconfig.get_paths()['include'], 'Python.h'))"
      RESULT_VARIABLE _attnsel_headers OUTPUT_QUIET ERROR_QUIET)
    if(NOT _attnsel_headers EQUAL 0)
      continue()
    endif()
    set(_attnsel_pybind11_dir "")
    if(_attnsel_pass STREQUAL "import")
      execute_process(COMMAND "${_py}" -c "import pybind11; print(pybind11.get_cmake_dir())"
                      OUTPUT_VARIABLE _attnsel_pybind11_dir ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    elseif(_attnsel_pybind11_config)
      get_filename_component(_attnsel_pybind11_dir "${_attnsel_pybind11_config}" DIRECTORY)
    endif()
    if(NOT _attnsel_pybind11_dir)
      continue()
    endif()
    set(Python3_EXECUTABLE "${_py}" CACHE FILEPATH "The Python the attnsel module is built for" FORCE)
    if(NOT pybind11_DIR)
      set(pybind11_DIR "${_attnsel_pybind11_dir}" CACHE PATH "pybind11's CMake package" FORCE)
    endif()
    set(ATTNSEL_PYTHON_FOUND ON)
    break()
  endforeach()
  if(ATTNSEL_PYTHON_FOUND)
    break()
  endif()
endforeach()
if(NOT ATTNSEL_PYTHON_FOUND)
  message(STATUS "attnsel: no Python with its headers and pybind11 among ${_attnsel_candidates}: the Python module "
                 "is not built (apt-get install python3-dev pybind11-dev)")
endif()
unset(_attnsel_pybind11_config CACHE)
unset(_attnsel_candidates)
