# SPDX-License-Identifier: Apache-2.0
# cudaload-cuda-toolkit.cmake -- an unchanged CMake project's CUDA language and
# find_package(CUDAToolkit) pointed at a CUDA toolkit root libcudaload answers: pip's CUDA
# wheels (nvidia-cuda-nvcc, nvidia-nvvm, nvidia-cuda-runtime, ...) as a tree of links, when
# there is no system toolkit (docs/toolkit.md). One configure option:
#
#   cmake -DCMAKE_PROJECT_TOP_LEVEL_INCLUDES=<libdir>/cmake/cudaload/cudaload-cuda-toolkit.cmake ...  (CMake 3.24+)
#   cmake -DCMAKE_TOOLCHAIN_FILE=<libdir>/cmake/cudaload/cudaload-cuda-toolkit.cmake ...             (older CMake)
#   (scikit-build-core: -Ccmake.define.CMAKE_PROJECT_TOP_LEVEL_INCLUDES=$(python -m cudaload --cmake-toolkit))
#
# With libcudaload's stubs too, this file first:
#   -DCMAKE_PROJECT_TOP_LEVEL_INCLUDES="<this file>;<libdir>/cmake/cudaload/cudaload-cuda-stubs.cmake"
#
# It sets CMAKE_CUDA_COMPILER to <root>/bin/nvcc and CUDAToolkit_ROOT to <root>, each unless
# the user set it (-D, or CUDACXX / CUDAToolkit_ROOT in the environment). The root, in order:
#   1. CUDALOAD_CUDA_ROOT: -DCUDALOAD_CUDA_ROOT=<dir> or the environment variable;
#   2. `<python> -m cudaload --cuda-root`, for ${Python_EXECUTABLE}, ${Python3_EXECUTABLE}
#      (scikit-build-core passes them), then python3 on PATH: the cudaload Python package;
#   3. `cudaload-probe --cuda-root` of an installed libcudaload: <prefix>/bin beside this file's
#      <prefix>/lib/cmake/cudaload, then PATH; given as --root each directory of that python's
#      sys.path holding nvidia/ (the wheels of an interpreter without the cudaload package).
# None works: a FATAL_ERROR with each one's answer (the parts missing and the pip packages
# that have them). The root found is kept in the cache (CUDALOAD_CUDA_ROOT) and in the
# environment of this CMake process, so a re-read costs nothing: CMake reads a toolchain file
# again for every try_compile project, in the same process.

# the root asked for, or found by an earlier read
if(DEFINED CUDALOAD_CUDA_ROOT AND NOT CUDALOAD_CUDA_ROOT STREQUAL "")
  set(_cudaload_tk_root "${CUDALOAD_CUDA_ROOT}")
  set(_cudaload_tk_how "CUDALOAD_CUDA_ROOT")
elseif(DEFINED ENV{CUDALOAD_CUDA_ROOT} AND NOT "$ENV{CUDALOAD_CUDA_ROOT}" STREQUAL "")
  set(_cudaload_tk_root "$ENV{CUDALOAD_CUDA_ROOT}")
  set(_cudaload_tk_how "environment CUDALOAD_CUDA_ROOT")
else()
  set(_cudaload_tk_root "")
  set(_cudaload_tk_tried "")
  # a command's failure as text: its exit status and stderr, or why it did not run
  macro(_cudaload_tk_why out)
    if(_cudaload_tk_rc MATCHES "^[0-9]+$")
      set(${out} "exit ${_cudaload_tk_rc}: ${_cudaload_tk_err}")
    else()
      set(${out} "${_cudaload_tk_rc}")
    endif()
  endmacro()

  # A path in a list is escaped (each ';' as '\;': a list would split it there); an element taken
  # from the list (foreach IN LISTS) comes back as it was.
  # A path printed by a command is its line as it is (python -m cudaload and cudaload-probe
  # print it unquoted, on a line of its own): only the newline that ends the line comes off (not
  # OUTPUT_STRIP_TRAILING_WHITESPACE: a directory name may end in a blank).

  # 2. the cudaload Python package of the build's interpreter: each interpreter once, in order
  set(_cudaload_tk_pythons "")
  foreach(_cudaload_tk_py IN ITEMS "${Python_EXECUTABLE}" "${Python3_EXECUTABLE}" python3)  # python3: on PATH
    set(_cudaload_tk_new 1)
    if(_cudaload_tk_py STREQUAL "")
      set(_cudaload_tk_new 0)
    endif()
    foreach(_cudaload_tk_seen IN LISTS _cudaload_tk_pythons)
      if(_cudaload_tk_seen STREQUAL _cudaload_tk_py)
        set(_cudaload_tk_new 0)
      endif()
    endforeach()
    if(_cudaload_tk_new)
      string(REPLACE ";" "\\;" _cudaload_tk_item "${_cudaload_tk_py}")
      list(APPEND _cudaload_tk_pythons "${_cudaload_tk_item}")
    endif()
  endforeach()
  foreach(_cudaload_tk_py IN LISTS _cudaload_tk_pythons)
    execute_process(COMMAND "${_cudaload_tk_py}" -m cudaload --cuda-root
                    RESULT_VARIABLE _cudaload_tk_rc OUTPUT_VARIABLE _cudaload_tk_out ERROR_VARIABLE _cudaload_tk_err
                    ERROR_STRIP_TRAILING_WHITESPACE)
    string(REGEX REPLACE "\n$" "" _cudaload_tk_out "${_cudaload_tk_out}")
    if(_cudaload_tk_rc EQUAL 0 AND IS_DIRECTORY "${_cudaload_tk_out}")
      set(_cudaload_tk_root "${_cudaload_tk_out}")
      set(_cudaload_tk_how "${_cudaload_tk_py} -m cudaload --cuda-root")
      break()
    endif()
    _cudaload_tk_why(_cudaload_tk_why_text)
    string(APPEND _cudaload_tk_tried "\n  ${_cudaload_tk_py} -m cudaload --cuda-root: ${_cudaload_tk_why_text}")
  endforeach()

  # 3. an installed cudaload-probe, with the wheels of the first of those interpreters that runs
  if(_cudaload_tk_root STREQUAL "")
    set(_cudaload_tk_probe_args "")
    set(_cudaload_tk_probe_text "")  # the same, as words for the messages
    foreach(_cudaload_tk_py IN LISTS _cudaload_tk_pythons)
      execute_process(COMMAND "${_cudaload_tk_py}" -c
                      "import os, sys\nfor p in sys.path:\n    if os.path.isabs(p) and '\\n' not in p and os.path.isdir(os.path.join(p, 'nvidia')): print(p)"
                      RESULT_VARIABLE _cudaload_tk_rc OUTPUT_VARIABLE _cudaload_tk_out ERROR_QUIET)
      if(_cudaload_tk_rc EQUAL 0)
        # a line a directory: the list of lines, a ';' in one escaped first
        string(REGEX REPLACE "\n$" "" _cudaload_tk_out "${_cudaload_tk_out}")
        string(REPLACE ";" "\\;" _cudaload_tk_sites "${_cudaload_tk_out}")
        string(REPLACE "\n" ";" _cudaload_tk_sites "${_cudaload_tk_sites}")
        foreach(_cudaload_tk_site IN LISTS _cudaload_tk_sites)
          if(NOT _cudaload_tk_site STREQUAL "")
            string(APPEND _cudaload_tk_probe_text " --root ${_cudaload_tk_site}")
            string(REPLACE ";" "\\;" _cudaload_tk_site "${_cudaload_tk_site}")
            list(APPEND _cudaload_tk_probe_args --root "${_cudaload_tk_site}")
          endif()
        endforeach()
        break()
      endif()
    endforeach()
    # <prefix>/lib/cmake/cudaload (or <prefix>/lib/<triple>/cmake/cudaload) -> <prefix>/bin
    set(_cudaload_tk_probes "")
    foreach(_cudaload_tk_up IN ITEMS ../../../bin ../../../../bin)
      get_filename_component(_cudaload_tk_p "${CMAKE_CURRENT_LIST_DIR}/${_cudaload_tk_up}/cudaload-probe" ABSOLUTE)
      if(EXISTS "${_cudaload_tk_p}")
        string(REPLACE ";" "\\;" _cudaload_tk_p "${_cudaload_tk_p}")
        list(APPEND _cudaload_tk_probes "${_cudaload_tk_p}")
      endif()
    endforeach()
    list(APPEND _cudaload_tk_probes cudaload-probe)  # on PATH
    foreach(_cudaload_tk_p IN LISTS _cudaload_tk_probes)
      execute_process(COMMAND "${_cudaload_tk_p}" ${_cudaload_tk_probe_args} --cuda-root
                      RESULT_VARIABLE _cudaload_tk_rc OUTPUT_VARIABLE _cudaload_tk_out ERROR_VARIABLE _cudaload_tk_err
                      ERROR_STRIP_TRAILING_WHITESPACE)
      string(REGEX REPLACE "\n$" "" _cudaload_tk_out "${_cudaload_tk_out}")
      set(_cudaload_tk_cmd "${_cudaload_tk_p}${_cudaload_tk_probe_text} --cuda-root")
      if(_cudaload_tk_rc EQUAL 0 AND IS_DIRECTORY "${_cudaload_tk_out}")
        set(_cudaload_tk_root "${_cudaload_tk_out}")
        set(_cudaload_tk_how "${_cudaload_tk_cmd}")
        break()
      endif()
      _cudaload_tk_why(_cudaload_tk_why_text)
      string(APPEND _cudaload_tk_tried "\n  ${_cudaload_tk_cmd}: ${_cudaload_tk_why_text}")
    endforeach()
  endif()

  if(_cudaload_tk_root STREQUAL "")
    message(FATAL_ERROR "cudaload-cuda-toolkit.cmake: no CUDA toolkit root. Tried:${_cudaload_tk_tried}\n"
                        "Install pip's CUDA wheels (pip install nvidia-cuda-nvcc nvidia-cuda-crt nvidia-nvvm "
                        "nvidia-cuda-runtime nvidia-cuda-cccl) and cudaload where that python runs, or give the root: "
                        "-DCUDALOAD_CUDA_ROOT=<dir> (docs/toolkit.md)")
  endif()
  # STRING, not PATH: CMake turns every '\' of a PATH or FILEPATH cache value into '/'
  set(CUDALOAD_CUDA_ROOT "${_cudaload_tk_root}" CACHE STRING
      "the CUDA toolkit root of cudaload-cuda-toolkit.cmake (found by ${_cudaload_tk_how})")
  message(STATUS "cudaload: CUDA toolkit root ${_cudaload_tk_root} (${_cudaload_tk_how})")
endif()
# a re-read in this process (a try_compile project reads the toolchain file again) takes it here
set(ENV{CUDALOAD_CUDA_ROOT} "${_cudaload_tk_root}")

if(NOT EXISTS "${_cudaload_tk_root}/bin/nvcc")
  message(FATAL_ERROR "cudaload-cuda-toolkit.cmake: ${_cudaload_tk_root} (${_cudaload_tk_how}) has no bin/nvcc: "
                      "not a CUDA toolkit root (a tree of links removed since? unset CUDALOAD_CUDA_ROOT, or remove "
                      "it from CMakeCache.txt, to find it again)")
endif()
# CMake reads both as lists (the compiler and its arguments; the prefixes to search): the root's
# ';' escaped, so that each is one element, the path as it is. STRING, not FILEPATH or PATH, for
# the same reason as above (a '\' turned into '/' would also undo the escape).
string(REPLACE ";" "\\;" _cudaload_tk_root_item "${_cudaload_tk_root}")
if(NOT DEFINED CMAKE_CUDA_COMPILER AND "$ENV{CUDACXX}" STREQUAL "")
  set(CMAKE_CUDA_COMPILER "${_cudaload_tk_root_item}/bin/nvcc" CACHE STRING "CUDA compiler (cudaload-cuda-toolkit.cmake)")
endif()
if(NOT DEFINED CUDAToolkit_ROOT AND "$ENV{CUDAToolkit_ROOT}" STREQUAL "")
  set(CUDAToolkit_ROOT "${_cudaload_tk_root_item}" CACHE STRING "the CUDA toolkit for find_package(CUDAToolkit) (cudaload-cuda-toolkit.cmake)")
endif()
