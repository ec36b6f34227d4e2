# SPDX-License-Identifier: Apache-2.0
# cudaload-check-needed.cmake -- the switch's post-link check (cudaload-cuda-stubs.cmake adds it
# to every executable, shared library and module of a switched project as a POST_BUILD step):
# reads the file's DT_NEEDED and, where an NVIDIA library is still there, names it, the link
# items of the configure that bring it and why they were left, then fails the build (removing
# the file, so that the next build links it again) or warns.
#
#   cmake -DFILE=<linked file> -DTARGET=<target> -DMODE=FAIL|WARN -DREADELF=<readelf or objdump>
#         -DNVIDIA=<the NVIDIA libraries' link names, comma-separated> -DLEFT=<the configure's
#         left items, one "<owner> TAB <item> TAB <why>" a line> -P cudaload-check-needed.cmake
foreach(v FILE TARGET MODE READELF NVIDIA LEFT)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "cudaload-check-needed.cmake: -D${v}= not given")
  endif()
endforeach()
string(REPLACE "," ";" NVIDIA "${NVIDIA}")

# DT_NEEDED, from readelf -d ("(NEEDED) Shared library: [libx.so.1]") or objdump -p ("NEEDED libx.so.1")
get_filename_component(tool "${READELF}" NAME)
if(tool MATCHES "objdump")
  execute_process(COMMAND "${READELF}" -p "${FILE}" OUTPUT_VARIABLE out RESULT_VARIABLE rc ERROR_VARIABLE err)
  string(REGEX MATCHALL "NEEDED +[^\n ]+" lines "${out}")
else()
  execute_process(COMMAND "${READELF}" -d "${FILE}" OUTPUT_VARIABLE out RESULT_VARIABLE rc ERROR_VARIABLE err)
  string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*\\[[^]\n]+\\]" lines "${out}")
endif()
if(NOT rc EQUAL 0)
  message(WARNING "cudaload: ${TARGET}: ${READELF} could not read ${FILE} (${rc}: ${err}): its DT_NEEDED is not checked")
  return()
endif()

set(found "")
foreach(line IN LISTS lines)
  string(REGEX REPLACE "^.*[[ ]([^] ]+)\\]?$" "\\1" soname "${line}")
  foreach(name IN LISTS NVIDIA)
    if(soname MATCHES "^lib${name}\\.so")
      list(APPEND found "${name}=${soname}")
      break()
    endif()
  endforeach()
endforeach()
if(NOT found)
  return()
endif()

# each NVIDIA SONAME, with the configure's left items that name its library (the file's lines:
# <owner> TAB <item> TAB <why>)
file(STRINGS "${LEFT}" left_lines)
set(text "")
foreach(f IN LISTS found)
  string(REGEX MATCH "^([^=]+)=(.*)$" _ "${f}")
  set(name "${CMAKE_MATCH_1}")
  set(soname "${CMAKE_MATCH_2}")
  set(by "")
  set(by_others "")
  foreach(l IN LISTS left_lines)
    string(REPLACE "\t" ";" fields "${l}")
    list(GET fields 0 owner)
    list(GET fields 1 item)
    list(GET fields 2 why)
    # the library in a link item: lib<name>.so or .a, -l<name>, -l:lib<name>..., a bare <name>
    if(item MATCHES "(^|[^A-Za-z0-9_])(-l|-l:lib|lib)${name}(_static)?([^A-Za-z0-9_]|$)" OR item STREQUAL name)
      if(owner STREQUAL TARGET)
        string(APPEND by "\n    ${owner}: ${item}: ${why}")
      else()  # an imported target's, a variable's: perhaps in TARGET's link graph
        string(APPEND by_others "\n    ${owner}: ${item}: ${why}")
      endif()
    endif()
  endforeach()
  if(NOT by)
    set(by "${by_others}")
  endif()
  if(NOT by)
    set(by "\n    no link item the switch saw names it (a linker flag of the toolchain, a library \
the project builds that links it, or a link line the switch does not read)")
  endif()
  string(APPEND text "\n  ${soname}, brought by:${by}")
endforeach()
set(what "cudaload: ${TARGET} (${FILE}) still needs NVIDIA's libraries after the switch:${text}\n\
(docs/stubs.md, \"Switching a project\"; -DCUDALOAD_STUBS_CHECK=WARN makes this a warning)")
if(MODE STREQUAL "WARN")
  message(WARNING "${what}")
else()
  file(REMOVE "${FILE}")  # so that the next build links and checks it again
  message(FATAL_ERROR "${what}")
endif()
