# SPDX-License-Identifier: Apache-2.0
# cudaload-cuda-stubs.cmake -- an unchanged CMake project's CUDA libraries switched to
# libcudaload's stubs, by one configure option (docs/stubs.md, "Switching a project"):
#
#   cmake -DCMAKE_PROJECT_TOP_LEVEL_INCLUDES=<libdir>/cmake/cudaload/cudaload-cuda-stubs.cmake ...
#   (scikit-build-core: -Ccmake.define.CMAKE_PROJECT_TOP_LEVEL_INCLUDES=$(python -m cudaload --cmake-stubs))
#
# Every way the project (and what it vendors: add_subdirectory, FetchContent) names an NVIDIA
# library that has a stub is switched to the stub's archive, keeping the link graph:
# - FindCUDAToolkit's targets (CUDA::cudart, CUDA::cudart_static, CUDA::cuda_driver,
#   CUDA::cublas(_static), ...), where the project's own find_package(CUDAToolkit) made them;
# - every other imported target (UNKNOWN, SHARED, STATIC, INTERFACE; a Find module's, a config
#   package's, the project's own), whenever it is made: its IMPORTED_LOCATION(_<CONFIG>) and its
#   INTERFACE_LINK_LIBRARIES;
# - the project's targets' link items: paths, bare names (cublas), -lcublas, -l:libcublas.so.13,
#   the same inside generator expressions, and -l items of target_link_options;
# - the runtime: every target that compiles CUDA gets CUDA_RUNTIME_LIBRARY None and the cudart
#   stub, whatever CMAKE_CUDA_RUNTIME_LIBRARY or the target's property said.
# The configure output lists every item switched and every NVIDIA item left, with its target and
# the reason; then every executable, shared library and module gets a post-link check of its
# DT_NEEDED (cudaload-check-needed.cmake), which fails the build where an NVIDIA library is still
# needed (CUDALOAD_STUBS_CHECK: FAIL, the default; WARN; OFF).
#
# Mechanism: CMake 3.24's dependency provider, which CMake lets only a file given in
# CMAKE_PROJECT_TOP_LEVEL_INCLUDES install. It wraps every find_package(CUDAToolkit) of the
# project, in the caller's scope, so the targets are switched where FindCUDAToolkit made them.
# add_library and add_executable are wrapped (CMake's own stay reachable as _add_library and
# _add_executable): an imported target is switched at the end of the directory that made it,
# where it is visible and complete; a linked target gets its post-link check there. At the end of
# the top-level directory a deferred pass rewrites the project's targets' links and gives the
# stub runtime.
#
# What it leaves in the cache (for scripts and tests; INTERNAL):
#   CUDALOAD_STUBS_SWITCHED      the FindCUDAToolkit targets switched to stubs
#   CUDALOAD_STUBS_BY_PATH       "<target>: <item>" for every other link item switched to a stub
#                                (an imported target's location or link, a path, a name, a word of
#                                a generator expression, a -l link option)
#   CUDALOAD_STUBS_LEFT          "<target>: <item>: <reason>" for every NVIDIA item left as it was;
#                                reasons: no-stub, genex, link-option, linker-flags (the owner of a
#                                linker-flags item is the variable or property)
#   CUDALOAD_STUBS_RUNTIME       the project's targets that got the stub runtime
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

set(CUDALOAD_STUBS_CHECK FAIL CACHE STRING
    "cudaload's post-link check of DT_NEEDED: FAIL (an NVIDIA library left fails the build), WARN, OFF")
set_property(CACHE CUDALOAD_STUBS_CHECK PROPERTY STRINGS FAIL WARN OFF)
if(NOT CUDALOAD_STUBS_CHECK MATCHES "^(FAIL|WARN|OFF)$")
  message(FATAL_ERROR "cudaload: CUDALOAD_STUBS_CHECK is '${CUDALOAD_STUBS_CHECK}': FAIL, WARN or OFF")
endif()
# (functions read these where CMAKE_CURRENT_LIST_DIR is the caller's)
set_property(GLOBAL PROPERTY _CUDALOAD_CHECK_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/cudaload-check-needed.cmake")
set_property(GLOBAL PROPERTY _CUDALOAD_LEFT_FILE "${CMAKE_BINARY_DIR}/cudaload-stubs-left.tsv")
file(WRITE "${CMAKE_BINARY_DIR}/cudaload-stubs-left.tsv" "")

# (CMAKE_CUDA_RUNTIME_LIBRARY stays as the project has it: the configure's own checks, such as
# FindOpenMP's CUDA test program, link with nvcc's runtime as without the switch; the deferred
# pass gives every target of the build the stub runtime instead.)
foreach(_cudaload_v SWITCHED LEFT RUNTIME BY_PATH)
  set(CUDALOAD_STUBS_${_cudaload_v} "" CACHE INTERNAL "")
endforeach()

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

# ---- what a link item names ----------------------------------------------------------------

# The records: "<owner>\t<item>" switched, "<owner>\t<item>\t<reason>" left (global properties,
# turned into the cache lists, the configure output and the post-link check's file at the end).
function(_cudaload_record_switched owner item)
  set_property(GLOBAL APPEND PROPERTY _CUDALOAD_SWITCHED_ITEMS "${owner}\t${item}")
endfunction()
function(_cudaload_record_left owner item reason)
  set_property(GLOBAL APPEND PROPERTY _CUDALOAD_LEFT_ITEMS "${owner}\t${item}\t${reason}")
endfunction()

# The reasons' text, rendered here only.
function(_cudaload_reason_text reason out)
  if(reason STREQUAL "no-stub")
    set(t "libcudaload has no stub for this library")
  elseif(reason STREQUAL "genex")
    set(t "inside a generator expression where the switch can't tell a library from a word")
  elseif(reason STREQUAL "link-option")
    set(t "in a link option the switch does not rewrite (only a whole -l<name> or -l:<file> option is)")
  elseif(reason STREQUAL "linker-flags")
    set(t "in linker flags, which the switch does not rewrite")
  else()
    set(t "${reason}")
  endif()
  set(${out} "${t}" PARENT_SCOPE)
endfunction()

# ITEM, one link item: KIND_OUT "stub" (STUB_OUT the stub's id), "nvidia" (an NVIDIA library
# libcudaload has no stub for) or "" (a target, a flag, anything not NVIDIA's). A path, a
# library file's name, -l<name>, -l:<file> or a bare name (the linker's -l<name>); the library
# is known by its name in a link line (cudaload_NVIDIA_LIBS, from the catalogue), _static
# archives as their library.
function(_cudaload_classify item kind_out stub_out)
  set(${kind_out} "" PARENT_SCOPE)
  set(${stub_out} "" PARENT_SCOPE)
  get_property(imported GLOBAL PROPERTY _CUDALOAD_IMPORTED_NAMES)
  if(item STREQUAL "" OR item MATCHES "::|^\\$<" OR TARGET "${item}" OR item IN_LIST imported)
    return()  # a target (in scope here or not), a directory marker (::@), an expression
  endif()
  if(item MATCHES "^-l:(.+)$")
    set(file "${CMAKE_MATCH_1}")
  elseif(item MATCHES "^-l(.+)$")
    set(file "lib${CMAKE_MATCH_1}.so")
  elseif(item MATCHES "^-")
    return()  # another flag
  else()
    get_filename_component(file "${item}" NAME)
    if(NOT (item MATCHES "/" OR file MATCHES "^lib.+\\.(so|a)(\\.[0-9.]*)?$"))
      set(file "lib${item}.so")  # a bare name: -l<name> on the link line
    endif()
  endif()
  if(NOT file MATCHES "^lib(.+)\\.(so|a)(\\.[0-9.]*)?$")
    return()
  endif()
  string(REGEX REPLACE "_static$" "" name "${CMAKE_MATCH_1}")
  foreach(s IN LISTS cudaload_STUBS)
    if(name STREQUAL "${cudaload_STUB_LIB_${s}}")  # the SONAME's name: nvidia-ml for NVML's row
      set(${kind_out} stub PARENT_SCOPE)
      set(${stub_out} ${s} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  if(name IN_LIST cudaload_NVIDIA_LIBS)
    set(${kind_out} nvidia PARENT_SCOPE)
  endif()
endfunction()

# Does TEXT (a link option, linker flags) name an NVIDIA library (-l<name>, -l:lib<name>...,
# lib<name>.so or .a)? OUT: the first such name, or "".
function(_cudaload_nvidia_in_text text out)
  set(${out} "" PARENT_SCOPE)
  foreach(name IN LISTS cudaload_NVIDIA_LIBS)
    if(text MATCHES "(^|[^A-Za-z0-9_])(-l|-l:lib|lib)${name}(_static)?([^A-Za-z0-9_]|$)")
      set(${out} "${name}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
endfunction()

# A generator expression of OWNER's links, ITEM, with each NVIDIA path, file or -l word inside
# it, and each bare name in a value's place ($<...:cublas>, $<IF:...,cublas,...>), replaced by
# its stub's target: OUT. Words it can't replace are recorded as left.
function(_cudaload_rewrite_genex owner item out)
  string(REGEX MATCHALL "([^$<>:,]|::)+|[$<>:,]" pieces "${item}")
  list(LENGTH pieces n)
  set(result "")
  set(prev "")
  set(i 0)
  foreach(p IN LISTS pieces)
    math(EXPR i "${i} + 1")
    set(next "")
    if(i LESS n)
      list(GET pieces ${i} next)
    endif()
    set(word "${p}")
    if(NOT p MATCHES "^[$<>:,]$" AND NOT prev STREQUAL "<")  # a word, not an expression's name
      _cudaload_classify("${p}" kind stub)
      set(value FALSE)  # a bare name where the expression gives its result
      if(prev MATCHES "^[:,]$" AND next MATCHES "^(>|,|)$")
        set(value TRUE)
      endif()
      if(kind STREQUAL "stub" AND (value OR p MATCHES "/|^-l|^lib.+\\.(so|a)"))
        set(word "cudaload::stub_${stub}")
        _cudaload_record_switched("${owner}" "${p}")
      elseif(kind STREQUAL "stub")
        _cudaload_record_left("${owner}" "${p}" genex)
      elseif(kind)
        _cudaload_record_left("${owner}" "${p}" no-stub)
      endif()
    endif()
    string(APPEND result "${word}")
    set(prev "${p}")
  endforeach()
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

# Target T's link list PROP rewritten: each item naming a stubbed library becomes its stub's
# target (a whole item, or a word of a generator expression); NVIDIA items without a stub are
# recorded as left.
function(_cudaload_rewrite_links t prop)
  get_target_property(items ${t} ${prop})
  if(NOT items)
    return()
  endif()
  set(new "")
  set(changed FALSE)
  foreach(item IN LISTS items)
    if(item MATCHES "\\$<")
      _cudaload_rewrite_genex("${t}" "${item}" rewritten)
    else()
      set(rewritten "${item}")
      _cudaload_classify("${item}" kind stub)
      if(kind STREQUAL "stub")
        set(rewritten cudaload::stub_${stub})
        _cudaload_record_switched("${t}" "${item}")
      elseif(kind)
        _cudaload_record_left("${t}" "${item}" no-stub)
      endif()
    endif()
    if(NOT rewritten STREQUAL item)
      set(changed TRUE)
    endif()
    list(APPEND new "${rewritten}")
  endforeach()
  if(changed)
    set_property(TARGET ${t} PROPERTY ${prop} "${new}")
  endif()
endfunction()

# Target T's link options PROP: a whole -l<name> or -l:<file> option of a stubbed library moves
# to the link list LIBS_PROP as its stub (an archive among the options would come before the
# objects that need it); any other option naming an NVIDIA library is recorded as left.
function(_cudaload_rewrite_options t prop libs_prop)
  get_target_property(opts ${t} ${prop})
  if(NOT opts)
    return()
  endif()
  set(kept "")
  set(moved "")
  foreach(o IN LISTS opts)
    if(o MATCHES "^-l")
      _cudaload_classify("${o}" kind stub)
      if(kind STREQUAL "stub")
        list(APPEND moved cudaload::stub_${stub})
        _cudaload_record_switched("${t}" "${o}")
        continue()
      endif()
    endif()
    _cudaload_nvidia_in_text("${o}" name)
    if(name)
      _cudaload_record_left("${t}" "${o}" link-option)
    endif()
    list(APPEND kept "${o}")
  endforeach()
  if(moved)
    set_property(TARGET ${t} PROPERTY ${prop} "${kept}")
    set_property(TARGET ${t} APPEND PROPERTY ${libs_prop} ${moved})
  endif()
endfunction()

# ---- FindCUDAToolkit's targets -------------------------------------------------------------

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
  # every other CUDA:: target FindCUDAToolkit made that names a library: left as it was, said
  # (the generic pass for imported targets skips them all: FindCUDAToolkit's graph is handled here)
  get_directory_property(imported IMPORTED_TARGETS)
  set(left "")
  foreach(t IN LISTS imported)
    if(t MATCHES "^CUDA::")
      set_property(GLOBAL APPEND PROPERTY _CUDALOAD_TOOLKIT_TARGETS ${t})
      get_target_property(type ${t} TYPE)
      if(NOT t IN_LIST switched AND NOT type STREQUAL "INTERFACE_LIBRARY")
        get_target_property(loc ${t} IMPORTED_LOCATION)
        _cudaload_classify("${loc}" kind stub)
        if(kind)
          _cudaload_record_left("${t}" "${loc}" no-stub)
          list(APPEND left ${t})
        endif()
      endif()
    endif()
  endforeach()
  set(all_switched ${CUDALOAD_STUBS_SWITCHED} ${switched})
  list(REMOVE_DUPLICATES all_switched)
  set(CUDALOAD_STUBS_SWITCHED "${all_switched}" CACHE INTERNAL "")
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

# ---- every other imported target -----------------------------------------------------------

# Imported target T (in scope: the end of the directory that made it): each location naming a
# stubbed library becomes the stub's archive, which brings its graph (INTERFACE_LINK_LIBRARIES);
# its link lists are rewritten as a project target's are.
function(_cudaload_switch_imported t)
  get_property(toolkit GLOBAL PROPERTY _CUDALOAD_TOOLKIT_TARGETS)
  if(NOT TARGET "${t}" OR t MATCHES "^cudaload::" OR t IN_LIST toolkit)
    return()
  endif()
  get_target_property(type ${t} TYPE)
  get_target_property(configs ${t} IMPORTED_CONFIGURATIONS)
  set(stubs "")
  if(NOT type STREQUAL "INTERFACE_LIBRARY")
    # the configurations a location may be given for: the target's, the build's, CMake's four
    set(props IMPORTED_LOCATION)
    foreach(c IN LISTS configs CMAKE_CONFIGURATION_TYPES CMAKE_BUILD_TYPE ITEMS DEBUG RELEASE RELWITHDEBINFO MINSIZEREL NOCONFIG)
      string(TOUPPER "${c}" c)
      if(c)
        list(APPEND props IMPORTED_LOCATION_${c})
      endif()
    endforeach()
    list(REMOVE_DUPLICATES props)
    foreach(prop IN LISTS props)
      get_target_property(loc ${t} ${prop})
      if(NOT loc)
        continue()
      endif()
      _cudaload_classify("${loc}" kind stub)
      if(kind STREQUAL "stub")
        set_property(TARGET ${t} PROPERTY ${prop} "${cudaload_LIBRARY_DIR}/libcudaload-${stub}.a")
        string(REPLACE "IMPORTED_LOCATION" "IMPORTED_SONAME" soname_prop "${prop}")
        set_property(TARGET ${t} PROPERTY ${soname_prop})  # an archive now: linked by its path
        list(APPEND stubs ${stub})
        _cudaload_record_switched("${t}" "${loc}")
      elseif(kind)
        _cudaload_record_left("${t}" "${loc}" no-stub)
      endif()
    endforeach()
  endif()
  _cudaload_rewrite_links(${t} INTERFACE_LINK_LIBRARIES)
  _cudaload_rewrite_links(${t} IMPORTED_LINK_INTERFACE_LIBRARIES)  # (CMake 2.8's, per configuration too)
  foreach(c IN LISTS configs)
    string(TOUPPER "${c}" c)
    _cudaload_rewrite_links(${t} IMPORTED_LINK_INTERFACE_LIBRARIES_${c})
  endforeach()
  list(REMOVE_DUPLICATES stubs)
  foreach(s IN LISTS stubs)
    set_property(TARGET ${t} APPEND PROPERTY INTERFACE_LINK_LIBRARIES cudaload::stub_${s})
  endforeach()
endfunction()

# The imported targets made in directory DIR that are still to be switched (it is ending).
function(_cudaload_switch_imported_in dir)
  get_property(pending DIRECTORY "${dir}" PROPERTY _CUDALOAD_PENDING)
  set_property(DIRECTORY "${dir}" PROPERTY _CUDALOAD_PENDING "")
  foreach(t IN LISTS pending)
    _cudaload_switch_imported("${t}")
  endforeach()
endfunction()

# ---- the wrapped commands ------------------------------------------------------------------

# A linked target's post-link check of its DT_NEEDED (ELF platforms; CUDALOAD_STUBS_CHECK).
function(_cudaload_add_check t)
  if(CUDALOAD_STUBS_CHECK STREQUAL "OFF" OR NOT CMAKE_SYSTEM_NAME MATCHES "Linux")
    return()
  endif()
  set(reader "${CMAKE_READELF}")
  if(NOT reader)
    set(reader "${CMAKE_OBJDUMP}")
  endif()
  if(NOT reader)
    get_property(said GLOBAL PROPERTY _CUDALOAD_NO_READER_SAID)
    if(NOT said)
      message(WARNING "cudaload: neither readelf nor objdump found (CMAKE_READELF, CMAKE_OBJDUMP): no post-link check of DT_NEEDED")
      set_property(GLOBAL PROPERTY _CUDALOAD_NO_READER_SAID TRUE)
    endif()
    return()
  endif()
  get_property(script GLOBAL PROPERTY _CUDALOAD_CHECK_SCRIPT)
  get_property(left GLOBAL PROPERTY _CUDALOAD_LEFT_FILE)
  string(REPLACE ";" "," nvidia "${cudaload_NVIDIA_LIBS}")
  add_custom_command(TARGET ${t} POST_BUILD
    COMMAND "${CMAKE_COMMAND}" "-DFILE=$<TARGET_FILE:${t}>" "-DTARGET=${t}" "-DMODE=${CUDALOAD_STUBS_CHECK}"
            "-DREADELF=${reader}" "-DNVIDIA=${nvidia}" "-DLEFT=${left}" -P "${script}"
    VERBATIM)
endfunction()

# After CMake's own command made target NAME: an imported target is switched at the end of this
# directory (when the project has set its properties); a linked one gets its check.
function(_cudaload_after_add name)
  if(NOT TARGET "${name}")
    return()
  endif()
  get_target_property(aliased ${name} ALIASED_TARGET)
  if(aliased)
    return()
  endif()
  get_target_property(imported ${name} IMPORTED)
  get_target_property(type ${name} TYPE)
  if(imported)
    set_property(GLOBAL APPEND PROPERTY _CUDALOAD_IMPORTED_NAMES "${name}")
    get_property(pending DIRECTORY PROPERTY _CUDALOAD_PENDING)
    if(NOT pending AND NOT CMAKE_CURRENT_SOURCE_DIR STREQUAL CMAKE_SOURCE_DIR)
      # (the top-level directory's are switched by the deferred pass itself, first)
      cmake_language(EVAL CODE "cmake_language(DEFER CALL _cudaload_switch_imported_in [==[${CMAKE_CURRENT_SOURCE_DIR}]==])")
    endif()
    set_property(DIRECTORY APPEND PROPERTY _CUDALOAD_PENDING "${name}")
  elseif(type MATCHES "^(EXECUTABLE|SHARED_LIBRARY|MODULE_LIBRARY)$")
    _cudaload_add_check(${name})
  endif()
endfunction()

function(add_library name)
  _add_library(${ARGV})
  _cudaload_after_add("${name}")
endfunction()

function(add_executable name)
  _add_executable(${ARGV})
  _cudaload_after_add("${name}")
endfunction()

# Imported targets made before this file ran (a toolchain file's, the project's before its
# first project()): switched with the top-level directory's.
get_directory_property(_cudaload_before IMPORTED_TARGETS)
foreach(_cudaload_t IN LISTS _cudaload_before)
  if(NOT _cudaload_t MATCHES "^cudaload::")
    set_property(GLOBAL APPEND PROPERTY _CUDALOAD_IMPORTED_NAMES "${_cudaload_t}")
    set_property(DIRECTORY APPEND PROPERTY _CUDALOAD_PENDING "${_cudaload_t}")
  endif()
endforeach()
unset(_cudaload_before)
unset(_cudaload_t)

# ---- the deferred pass ---------------------------------------------------------------------

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

# DIR and every directory below it: OUT_DIRS; the project targets made there: OUT_TARGETS.
function(_cudaload_collect dir out_dirs out_targets)
  set(dirs "${dir}")
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    _cudaload_collect("${sub}" more_dirs more_targets)
    list(APPEND dirs ${more_dirs})
    list(APPEND targets ${more_targets})
  endforeach()
  set(${out_dirs} "${dirs}" PARENT_SCOPE)
  set(${out_targets} "${targets}" PARENT_SCOPE)
endfunction()

# Linker flags the switch does not rewrite, each directory's and each target's: every NVIDIA
# library they name is recorded as left (the post-link check then says which file needs it).
function(_cudaload_scan_linker_flags dirs targets)
  set(vars "")
  foreach(kind EXE SHARED MODULE)
    list(APPEND vars CMAKE_${kind}_LINKER_FLAGS)
    foreach(c IN LISTS CMAKE_CONFIGURATION_TYPES CMAKE_BUILD_TYPE)
      string(TOUPPER "${c}" c)
      list(APPEND vars CMAKE_${kind}_LINKER_FLAGS_${c})
    endforeach()
  endforeach()
  foreach(lang C CXX CUDA)
    list(APPEND vars CMAKE_${lang}_STANDARD_LIBRARIES)
  endforeach()
  set(seen "")
  foreach(dir IN LISTS dirs)
    foreach(v IN LISTS vars)
      get_directory_property(value DIRECTORY "${dir}" DEFINITION ${v})
      _cudaload_nvidia_in_text("${value}" name)
      if(name AND NOT "${v}=${value}" IN_LIST seen)
        list(APPEND seen "${v}=${value}")
        _cudaload_record_left("${v}" "${value}" linker-flags)
      endif()
    endforeach()
  endforeach()
  foreach(t IN LISTS targets)
    get_target_property(value ${t} LINK_FLAGS)
    _cudaload_nvidia_in_text("${value}" name)
    if(name)
      _cudaload_record_left("${t} LINK_FLAGS" "${value}" linker-flags)
    endif()
  endforeach()
endfunction()

# The configure's account: the cache lists, the post-link check's file and the output.
function(_cudaload_report)
  get_property(switched GLOBAL PROPERTY _CUDALOAD_SWITCHED_ITEMS)
  get_property(left GLOBAL PROPERTY _CUDALOAD_LEFT_ITEMS)
  list(REMOVE_DUPLICATES switched)
  list(REMOVE_DUPLICATES left)
  set(by_path "")
  set(text "")
  foreach(r IN LISTS switched)
    string(REPLACE "\t" ": " r "${r}")
    list(APPEND by_path "${r}")
    string(APPEND text "\n   ${r}")
  endforeach()
  set(CUDALOAD_STUBS_BY_PATH "${by_path}" CACHE INTERNAL "")
  if(text)
    message(STATUS "cudaload: link items switched to the stubs (<target>: <item>):${text}")
  endif()
  set(left_list "")
  set(file_text "")
  set(text "")
  foreach(r IN LISTS left)
    string(REGEX MATCH "^([^\t]*)\t(.*)\t([^\t]*)$" _ "${r}")
    list(APPEND left_list "${CMAKE_MATCH_1}: ${CMAKE_MATCH_2}: ${CMAKE_MATCH_3}")
    _cudaload_reason_text("${CMAKE_MATCH_3}" why)
    string(APPEND text "\n   ${CMAKE_MATCH_1}: ${CMAKE_MATCH_2}: ${why}")
    string(APPEND file_text "${CMAKE_MATCH_1}\t${CMAKE_MATCH_2}\t${why}\n")
  endforeach()
  set(CUDALOAD_STUBS_LEFT "${left_list}" CACHE INTERNAL "")
  get_property(left_file GLOBAL PROPERTY _CUDALOAD_LEFT_FILE)
  file(WRITE "${left_file}" "${file_text}")
  if(text)
    message(STATUS "cudaload: NVIDIA items left as they were (<target>: <item>: why):${text}")
  endif()
endfunction()

# The deferred pass, at the end of the top-level directory: the imported targets made there;
# the project's targets' link items (lists, options) switched; linker flags read; the runtime of
# every target that compiles CUDA the cudart stub; then the account.
function(_cudaload_switch_project)
  _cudaload_switch_imported_in("${CMAKE_SOURCE_DIR}")
  _cudaload_collect("${CMAKE_SOURCE_DIR}" dirs targets)
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    if(NOT type STREQUAL "UTILITY")
      _cudaload_rewrite_links(${t} LINK_LIBRARIES)
      _cudaload_rewrite_links(${t} INTERFACE_LINK_LIBRARIES)
      _cudaload_rewrite_options(${t} LINK_OPTIONS LINK_LIBRARIES)
      _cudaload_rewrite_options(${t} INTERFACE_LINK_OPTIONS INTERFACE_LINK_LIBRARIES)
    endif()
  endforeach()
  _cudaload_scan_linker_flags("${dirs}" "${targets}")
  _cudaload_give_stub_runtime("${targets}")
  _cudaload_report()
endfunction()

# The runtime of every target of TARGETS that compiles CUDA: the cudart stub.
function(_cudaload_give_stub_runtime targets)
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
cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _cudaload_switch_project)
