# cmake/sizes.cmake — the file-size budget (docs/design.md, "small rooms"):
#
#   cmake -DROOT=<source dir> -P sizes.cmake
#
# A source file (.c, .h, .js, .css) of the project over 1,200 lines gets a
# warning: it is a sign to split it along its sections.  One over 1,500 lines
# fails the build unless its first 40 lines give the reason, in a line that
# starts "Why above 1,500 lines" (with the reason given, it is not warned
# of).  Only the project's source folders are read (the list below, as in
# CMakeLists.txt), so no build tree and no generated file is counted.
if(NOT ROOT)
  message(FATAL_ERROR "sizes.cmake: ROOT is required")
endif()
set(warn_at 1200)
set(fail_at 1500)
set(files "")
foreach(dir base store formats sim replay synth report capture cli include tests)
  file(GLOB_RECURSE found RELATIVE "${ROOT}" "${ROOT}/${dir}/*.c" "${ROOT}/${dir}/*.h"
       "${ROOT}/${dir}/*.js" "${ROOT}/${dir}/*.css")
  list(APPEND files ${found})
endforeach()
set(failed "")
foreach(f ${files})
  file(READ "${ROOT}/${f}" text)
  string(REGEX MATCHALL "\n" newlines "${text}")
  list(LENGTH newlines n)
  if(n GREATER fail_at)
    file(STRINGS "${ROOT}/${f}" head LIMIT_COUNT 40)
    if(NOT head MATCHES "Why above 1,500 lines")
      list(APPEND failed "${f} (${n} lines)")
    endif()
    continue()
  endif()
  if(n GREATER warn_at)
    message(WARNING "gmsim: ${f} has ${n} lines, over ${warn_at}: split it along its sections")
  endif()
endforeach()
if(failed)
  string(REPLACE ";" ", " failed "${failed}")
  message(FATAL_ERROR "gmsim: over ${fail_at} lines with no 'Why above 1,500 lines' "
          "at the top: ${failed}")
endif()
