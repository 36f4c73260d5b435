# Writes a man page from a program's own --help (one source: the CLI11
# definitions), with help2man. Each subcommand's --help becomes a
# subsection of SUBCOMMANDS, so the page holds everything `PROG SUB --help`
# prints. Run by the build (CMakeLists.txt):
#   cmake -DPROG=path -DNAME=kbq -DDESCRIPTION=... -DHELP2MAN=path -DOUT=kbq.1 -P man.cmake
foreach(var PROG NAME DESCRIPTION HELP2MAN OUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "man.cmake: ${var} is not set")
  endif()
endforeach()

execute_process(COMMAND ${PROG} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "man.cmake: ${PROG} --help exited ${rc}")
endif()

# The subcommands: the lines of the "Subcommands:" block of --help.
string(REPLACE "\n" ";" lines "${help}")
set(in_block OFF)
set(subcommands)
foreach(line IN LISTS lines)
  if(line STREQUAL "Subcommands:")
    set(in_block ON)
  elseif(in_block AND line MATCHES "^  ([a-z][a-z0-9-]*)( |$)")
    list(APPEND subcommands ${CMAKE_MATCH_1})
  elseif(in_block AND NOT line MATCHES "^ ")
    set(in_block OFF)
  endif()
endforeach()

# roff: a backslash is \e; a line starting with . or ' is protected by \&.
function(roff_verbatim text out)
  string(REPLACE "\\" "\\e" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

set(include "[SUBCOMMANDS]\n")
foreach(sub IN LISTS subcommands)
  execute_process(COMMAND ${PROG} ${sub} --help OUTPUT_VARIABLE sub_help RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "man.cmake: ${PROG} ${sub} --help exited ${rc}")
  endif()
  roff_verbatim("${sub_help}" sub_help)
  string(APPEND include ".SS \"${NAME} ${sub}\"\n.nf\n${sub_help}.fi\n")
endforeach()
if(subcommands STREQUAL "")
  set(include "")
endif()
get_filename_component(out_dir "${OUT}" DIRECTORY)
file(MAKE_DIRECTORY "${out_dir}")
file(WRITE "${OUT}.include" "${include}")

execute_process(
  COMMAND ${HELP2MAN} --no-info --no-discard-stderr --section=1 "--name=${DESCRIPTION}" "--include=${OUT}.include" --output=${OUT}.tmp ${PROG}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "man.cmake: help2man failed on ${PROG} (${rc})")
endif()
file(RENAME "${OUT}.tmp" "${OUT}")
