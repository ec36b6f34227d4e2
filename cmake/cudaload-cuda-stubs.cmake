# cudaload-cuda-stubs.cmake -- an unchanged CMake project's CUDA libraries switched to
# libcudaload's stubs, by one configure option (docs/stubs.md, "Switching a project"):
#
#   cmake -DCMAKE_PROJECT_TOP_LEVEL_INCLUDES=<libdir>/cmake/cudaload/cudaload-cuda-stubs.cmake ...
#   (scikit-build-core: -Ccmake.define.CMAKE_PROJECT_TOP_LEVEL_INCLUDES=$(python -m cudaload --cmake-stubs))
#
# The project's own find_package(CUDAToolkit) runs as always (its version, its components, its
# include directories); then each FindCUDAToolkit target that has a stub (CUDA::cudart,
# CUDA::cudart_static, CUDA::cuda_driver, CUDA::cublas(_static), ...) names the stub's archive
# instead of the real library, keeping FindCUDAToolkit's own links between them. CUDA code
# gets no runtime from nvcc (CUDA_RUNTIME_LIBRARY None): the cudart stub and the toolkit's
# cudadevrt (device code only, for separable compilation) take its place. The result has no
# DT_NEEDED and no RPATH on any CUDA library. Targets without a stub are left as they were,
# and the configure output says which.
#
# Mechanism: CMake 3.24's dependency provider, which CMake lets only a file given in
# CMAKE_PROJECT_TOP_LEVEL_INCLUDES install. It wraps every find_package(CUDAToolkit) of the
# project, in the caller's scope, so the targets are switched where FindCUDAToolkit made them.
# At the end of the top-level directory, a deferred pass gives every target that compiles CUDA
# (or links a static or object library of the project that does) the stub runtime, and turns a
# CUDA_RUNTIME_LIBRARY the project set itself (Static, Shared) to None.
#
# What it leaves in the cache (for scripts and tests; INTERNAL):
#   CUDALOAD_STUBS_SWITCHED      the FindCUDAToolkit targets switched to stubs
#   CUDALOAD_STUBS_LEFT          the FindCUDAToolkit targets left as they were (no stub)
#   CUDALOAD_STUBS_RUNTIME       the project's targets that got the stub runtime
#   CUDALOAD_STUBS_BY_PATH       "<target>: <item>" for each link to a stubbed library by path or
#                                name (find_library's result, -lcudart) switched to the stub
if(CMAKE_VERSION VERSION_LESS 3.24)
  # (an older CMake never reads CMAKE_PROJECT_TOP_LEVEL_INCLUDES; this is for include() or -C)
  message(FATAL_ERROR "cudaload-cuda-stubs.cmake needs CMake 3.24 or newer (a dependency provider, "
                      "given through CMAKE_PROJECT_TOP_LEVEL_INCLUDES); this is CMake ${CMAKE_VERSION}")
endif()
if(NOT CMAKE_PROJECT_TOP_LEVEL_INCLUDES MATCHES "cudaload-cuda-stubs\\.cmake")
  message(FATAL_ERROR "cudaload-cuda-stubs.cmake works only as -DCMAKE_PROJECT_TOP_LEVEL_INCLUDES=${CMAKE_CURRENT_LIST_FILE} "
                      "(CMake installs a dependency provider from no other place)")
endif()
include_guard(GLOBAL)

find_package(cudaload CONFIG REQUIRED PATHS "${CMAKE_CURRENT_LIST_DIR}" NO_DEFAULT_PATH)
foreach(_cudaload_s IN LISTS cudaload_STUBS)
  # GLOBAL: the deferred pass links them to targets of every directory
  set_property(TARGET cudaload::stub_${_cudaload_s} PROPERTY IMPORTED_GLOBAL TRUE)
endforeach()
set_property(TARGET cudaload::static PROPERTY IMPORTED_GLOBAL TRUE)

# Targets made from here on compile CUDA without a runtime of nvcc's; a project that sets the
# variable itself after this is turned back by the deferred pass.
set(CMAKE_CUDA_RUNTIME_LIBRARY None)
set(CUDALOAD_STUBS_SWITCHED "" CACHE INTERNAL "")
set(CUDALOAD_STUBS_LEFT "" CACHE INTERNAL "")
set(CUDALOAD_STUBS_RUNTIME "" CACHE INTERNAL "")
set(CUDALOAD_STUBS_BY_PATH "" CACHE INTERNAL "")

# FindCUDAToolkit's target names for stub S: CUDA::<target> and CUDA::<target>_static (the
# target is the row's name but where FindCUDAToolkit's differs: cuda_driver, cuFile).
function(_cudaload_targets_of stub out)
  set(t "${cudaload_STUB_TARGET_${stub}}")
  set(${out} "CUDA::${t};CUDA::${t}_static" PARENT_SCOPE)
endfunction()

# The archives' symbols stay out of the exports of a shared library or module that links them
# (the stubs define cudaMalloc, ...: exported, they would take NVIDIA's own calls).
set(_cudaload_exclude "libcudaload.a")
foreach(_cudaload_s IN LISTS cudaload_STUBS)
  string(APPEND _cudaload_exclude ":libcudaload-${_cudaload_s}.a")
endforeach()
set_property(TARGET cudaload::static APPEND PROPERTY INTERFACE_LINK_OPTIONS
             "$<$<PLATFORM_ID:Linux>:LINKER:--exclude-libs=${_cudaload_exclude}>")
unset(_cudaload_exclude)

# Switch the targets the project's find_package(CUDAToolkit) just made (in its scope).
function(_cudaload_switch_toolkit_targets)
  set(switched "")  # every target that has a stub, first: the links kept below name them
  foreach(s IN LISTS cudaload_STUBS)
    _cudaload_targets_of(${s} names)
    foreach(t IN LISTS names)
      if(TARGET ${t})
        list(APPEND switched ${t})
      endif()
    endforeach()
  endforeach()
  foreach(s IN LISTS cudaload_STUBS)
    _cudaload_targets_of(${s} names)
    foreach(t IN LISTS names)
      if(NOT TARGET ${t})
        continue()
      endif()
      get_target_property(loc ${t} IMPORTED_LOCATION)
      if(loc MATCHES "libcudaload-")
        continue()  # a second find_package(CUDAToolkit) in the same scope: done already
      endif()
      # FindCUDAToolkit's links, kept where they name another switched target; the rest
      # (culibos, cusolver's metis and lapack archives, cudart_static's rt) are parts of the
      # real static libraries, which the stubs do not need
      get_target_property(links ${t} INTERFACE_LINK_LIBRARIES)
      set(kept "")
      foreach(l IN LISTS links)
        if(l IN_LIST switched)
          list(APPEND kept ${l})
        endif()
      endforeach()
      list(APPEND kept cudaload::stub_${s})
      set_target_properties(${t} PROPERTIES
        IMPORTED_LOCATION "${cudaload_LIBRARY_DIR}/libcudaload-${s}.a"
        INTERFACE_LINK_LIBRARIES "${kept}")
    endforeach()
  endforeach()
  # every other CUDA:: target FindCUDAToolkit made: left as it was
  get_directory_property(imported IMPORTED_TARGETS)
  set(left "")
  foreach(t IN LISTS imported)
    if(t MATCHES "^CUDA::" AND NOT t IN_LIST switched AND NOT t MATCHES "^CUDA::(toolkit|cudart_static_deps)$")
      get_target_property(type ${t} TYPE)
      if(NOT type STREQUAL "INTERFACE_LIBRARY")
        list(APPEND left ${t})
      endif()
    endif()
  endforeach()
  set(all_switched ${CUDALOAD_STUBS_SWITCHED} ${switched})
  set(all_left ${CUDALOAD_STUBS_LEFT} ${left})
  list(REMOVE_DUPLICATES all_switched)
  list(REMOVE_DUPLICATES all_left)
  set(CUDALOAD_STUBS_SWITCHED "${all_switched}" CACHE INTERNAL "")
  set(CUDALOAD_STUBS_LEFT "${all_left}" CACHE INTERNAL "")
  list(JOIN switched " " s_text)
  list(JOIN left " " l_text)
  message(STATUS "cudaload: switched to libcudaload's stubs (${cudaload_LIBRARY_DIR}): ${s_text}")
  if(left)
    message(STATUS "cudaload: left as they were (no stub): ${l_text}")
  endif()
endfunction()

# The dependency provider: only CUDAToolkit is ours; every other package goes on as usual.
macro(_cudaload_provide_dependency method package)
  if("${package}" STREQUAL "CUDAToolkit")
    find_package(CUDAToolkit ${ARGN} BYPASS_PROVIDER)
    if(CUDAToolkit_FOUND)
      _cudaload_switch_toolkit_targets()
    endif()
  endif()
endmacro()
cmake_language(SET_DEPENDENCY_PROVIDER _cudaload_provide_dependency SUPPORTED_METHODS FIND_PACKAGE)

# Does target T compile CUDA, itself or through a static or object library of the project?
# SEEN: the targets already asked on this path (static libraries may link each other in a cycle).
function(_cudaload_uses_cuda t seen out)
  set(${out} FALSE PARENT_SCOPE)
  list(APPEND seen ${t})
  set(deps "")  # the project's object, static and interface libraries T takes code from
  get_target_property(sources ${t} SOURCES)
  foreach(src IN LISTS sources)
    if(src MATCHES "^\\$<TARGET_OBJECTS:([^>]+)>$")
      list(APPEND deps "${CMAKE_MATCH_1}")
    elseif(src MATCHES "\\.cu$")
      set(${out} TRUE PARENT_SCOPE)
      return()
    elseif(NOT src MATCHES "^\\$<")
      get_source_file_property(lang "${src}" TARGET_DIRECTORY ${t} LANGUAGE)
      if(lang STREQUAL "CUDA")
        set(${out} TRUE PARENT_SCOPE)
        return()
      endif()
    endif()
  endforeach()
  get_target_property(links ${t} LINK_LIBRARIES)
  get_target_property(ilinks ${t} INTERFACE_LINK_LIBRARIES)
  foreach(l IN LISTS links ilinks)
    if(l MATCHES "^\\$<LINK_ONLY:([^>]+)>$")
      set(l "${CMAKE_MATCH_1}")
    endif()
    if(l AND TARGET "${l}")
      get_target_property(imported "${l}" IMPORTED)
      get_target_property(type "${l}" TYPE)
      if(NOT imported AND type MATCHES "^(STATIC_LIBRARY|OBJECT_LIBRARY|INTERFACE_LIBRARY)$")
        list(APPEND deps "${l}")
      endif()
    endif()
  endforeach()
  foreach(dep IN LISTS deps)
    if(TARGET "${dep}" AND NOT dep IN_LIST seen)
      _cudaload_uses_cuda("${dep}" "${seen}" dep_uses)
      if(dep_uses)
        set(${out} TRUE PARENT_SCOPE)
        return()
      endif()
    endif()
  endforeach()
endfunction()

function(_cudaload_collect_targets dir out)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    _cudaload_collect_targets("${sub}" more)
    list(APPEND targets ${more})
  endforeach()
  set(${out} "${targets}" PARENT_SCOPE)
endfunction()

# A link item naming a stubbed library by path or by name, not through a CUDA:: target
# (find_library(... nvJitLink) then its path, -lcudart, cublas): the stub's id, or "".
function(_cudaload_stub_of_item item out)
  set(${out} "" PARENT_SCOPE)
  if(TARGET "${item}" OR item MATCHES "^\\$<|^::@")
    return()  # a target (the switched CUDA:: ones included), or a generator expression
  endif()
  get_filename_component(name "${item}" NAME)
  if(NOT (item MATCHES "^-l" OR IS_ABSOLUTE "${item}" OR name MATCHES "^lib.*\\.(so|a)"))
    return()  # a bare word: a project's own library name; only -l, paths and library files count
  endif()
  string(REGEX REPLACE "^-l" "" name "${name}")
  string(REGEX REPLACE "^lib" "" name "${name}")
  string(REGEX REPLACE "\\.(so|a)(\\..*)?$" "" name "${name}")
  string(REGEX REPLACE "_static$" "" name "${name}")
  foreach(s IN LISTS cudaload_STUBS)
    if(name STREQUAL "${cudaload_STUB_LIB_${s}}")  # the SONAME's name: nvidia-ml for NVML's row
      set(${out} ${s} PARENT_SCOPE)
      return()
    endif()
  endforeach()
endfunction()

# A target's links to stubbed libraries by path or name, replaced by the stubs; returns the
# replaced items.
function(_cudaload_replace_paths t out)
  set(replaced "")
  foreach(prop LINK_LIBRARIES INTERFACE_LINK_LIBRARIES)
    get_target_property(items ${t} ${prop})
    if(NOT items)
      continue()
    endif()
    set(new "")
    set(changed FALSE)
    foreach(item IN LISTS items)
      _cudaload_stub_of_item("${item}" s)
      if(s)
        list(APPEND new cudaload::stub_${s})
        list(APPEND replaced "${item}")
        set(changed TRUE)
      else()
        list(APPEND new "${item}")
      endif()
    endforeach()
    if(changed)
      set_property(TARGET ${t} PROPERTY ${prop} "${new}")
    endif()
  endforeach()
  set(${out} "${replaced}" PARENT_SCOPE)
endfunction()

# The deferred pass: the runtime of every target that compiles CUDA is the cudart stub, and
# links to stubbed libraries by path or name go to the stubs.
function(_cudaload_give_stub_runtime)
  _cudaload_collect_targets("${CMAKE_SOURCE_DIR}" targets)
  set(by_path "")
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    if(NOT type STREQUAL "UTILITY")
      _cudaload_replace_paths(${t} replaced)
      foreach(item IN LISTS replaced)
        list(APPEND by_path "${t}: ${item}")
      endforeach()
    endif()
  endforeach()
  set(CUDALOAD_STUBS_BY_PATH "${by_path}" CACHE INTERNAL "")
  if(by_path)
    list(JOIN by_path ", " text)
    message(STATUS "cudaload: links by path or name switched to the stubs: ${text}")
  endif()

  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(NOT "CUDA" IN_LIST languages)
    return()  # the project never enabled CUDA: no nvcc-compiled code, no runtime to replace
  endif()
  # cudadevrt: the toolkit's device runtime (an archive of device code for the device link
  # step; its few host objects need only the runtime the stub gives), next to nvcc's toolkit.
  # (CUDA may have been enabled in a subdirectory, whose variables this scope does not see:
  # the compiler's path is in the cache.)
  get_filename_component(nvcc_dir "${CMAKE_CUDA_COMPILER}" DIRECTORY)
  file(GLOB target_dirs LIST_DIRECTORIES true "${nvcc_dir}/../targets/*/lib")
  find_library(CUDALOAD_CUDADEVRT cudadevrt
               HINTS ${CMAKE_CUDA_IMPLICIT_LINK_DIRECTORIES} "${nvcc_dir}/../lib64" "${nvcc_dir}/../lib" ${target_dirs}
               NO_DEFAULT_PATH)
  set(runtime cudaload::stub_cudart)
  if(CUDALOAD_CUDADEVRT)
    list(APPEND runtime "${CUDALOAD_CUDADEVRT}")
  endif()
  set(given "")
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    if(NOT type MATCHES "^(EXECUTABLE|SHARED_LIBRARY|MODULE_LIBRARY|STATIC_LIBRARY|OBJECT_LIBRARY)$")
      continue()
    endif()
    get_target_property(rt ${t} CUDA_RUNTIME_LIBRARY)
    set(project_runtime FALSE)
    if(rt MATCHES "^([Ss][Tt][Aa][Tt][Ii][Cc]|[Ss][Hh][Aa][Rr][Ee][Dd])$")
      set(project_runtime TRUE)  # the project chose nvcc's runtime for this target itself
    endif()
    set_property(TARGET ${t} PROPERTY CUDA_RUNTIME_LIBRARY None)
    if(type MATCHES "^(EXECUTABLE|SHARED_LIBRARY|MODULE_LIBRARY)$")
      _cudaload_uses_cuda(${t} "" uses)
      if(uses OR project_runtime)
        set_property(TARGET ${t} APPEND PROPERTY LINK_LIBRARIES ${runtime})
        list(APPEND given ${t})
      endif()
    endif()
  endforeach()
  set(CUDALOAD_STUBS_RUNTIME "${given}" CACHE INTERNAL "")
  list(JOIN given " " text)
  message(STATUS "cudaload: CUDA runtime from libcudaload's cudart stub for: ${text}")
endfunction()
cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _cudaload_give_stub_runtime)
