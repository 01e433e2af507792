# cmake/embed.cmake — a text file as a C array, at build time (an `xxd -i`
# written in CMake, so the build needs no other tool):
#
#   cmake -DIN=report/page.js -DOUT=page_js.h -DNAME=report_page_js -P embed.cmake
#
# writes `static const char NAME[] = {0x.., ..., 0};` (the file's bytes and a
# terminating zero, so the array is also a C string) and NAME_len, the
# file's length.  report/html.c writes report/page.css and report/page.js
# into the page this way (docs/design.md, "add a chart").
if(NOT IN OR NOT OUT OR NOT NAME)
  message(FATAL_ERROR "embed.cmake: IN, OUT and NAME are required")
endif()
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" n)
math(EXPR len "${n} / 2")
# 16 bytes a line.
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n" body "${body}")
get_filename_component(base "${IN}" NAME)
file(WRITE "${OUT}"
     "/* generated from ${base} by cmake/embed.cmake: do not edit */\n"
     "static const char ${NAME}[] = {\n${body}0};\n"
     "#define ${NAME}_len ((size_t)${len})\n")
