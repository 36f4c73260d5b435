# Installing kbq (included from CMakeLists.txt; docs/install.md):
#   bin/kbq, bin/kbc                       stripped; their debug info split off into
#   lib/debug/.build-id/NN/REST.debug      (found by gdb through the build ID, and the
#                                           .gnu_debuglink names the file)
#   share/man/man1/kbq.1, kbc.1            generated at build time from their --help (help2man)
#   share/bash-completion/completions/     kbq, kbc
#   share/zsh/vendor-completions/_kbq      (and _kbc, the same file)
#   share/fish/vendor_completions.d/       kbq.fish
#   share/doc/kbq/                         README.md and docs/
#   share/kbq/extractor/                   the code extractor kbc runs (CMakeLists.txt)
# `cmake --install` writes install_manifest.txt in the build folder (the
# split debug files are added to it), each path as on the target system
# (without DESTDIR); `make install` keeps a copy in share/kbq/, and `make
# uninstall` removes what it lists, under DESTDIR when one is given.
include(GNUInstallDirs)

find_program(HELP2MAN help2man)
if(HELP2MAN)
  set(KB_MAN_DIR ${CMAKE_BINARY_DIR}/man)
  set(KB_MAN_PAGES)
  foreach(prog kbq kbc)
    if(prog STREQUAL "kbq")
      set(description "recipes, launch commands and sizing-rule checks for Megatron Bridge")
    else()
      set(description "compile the Megatron Bridge recipe knowledge base")
    endif()
    add_custom_command(
      OUTPUT ${KB_MAN_DIR}/${prog}.1
      COMMAND ${CMAKE_COMMAND} -DPROG=$<TARGET_FILE:${prog}> -DNAME=${prog} "-DDESCRIPTION=${description}"
              -DHELP2MAN=${HELP2MAN} -DOUT=${KB_MAN_DIR}/${prog}.1 -P ${CMAKE_SOURCE_DIR}/packaging/man.cmake
      DEPENDS ${prog} ${CMAKE_SOURCE_DIR}/packaging/man.cmake
      COMMENT "Writing the man page ${prog}(1) from ${prog} --help"
      VERBATIM)
    list(APPEND KB_MAN_PAGES ${KB_MAN_DIR}/${prog}.1)
  endforeach()
  add_custom_target(man ALL DEPENDS ${KB_MAN_PAGES})
  install(FILES ${KB_MAN_PAGES} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(WARNING "help2man not found: no man pages (make deps installs it)")
  add_custom_target(man)
endif()

install(TARGETS kbq kbc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES packaging/completions/kbq.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME kbq)
install(FILES packaging/completions/kbq.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME kbc)
install(FILES packaging/completions/_kbq DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
install(FILES packaging/completions/_kbq DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions RENAME _kbc)
install(FILES packaging/completions/kbq.fish DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)

# Strip the installed programs, their debug info kept beside in lib/debug
# (objcopy --only-keep-debug, then strip, then --add-gnu-debuglink).
find_program(KB_OBJCOPY NAMES objcopy ${CMAKE_OBJCOPY})
find_program(KB_STRIP NAMES strip ${CMAKE_STRIP})
install(CODE "
  set(objcopy \"${KB_OBJCOPY}\")
  set(strip \"${KB_STRIP}\")
  set(root \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}\")
  foreach(prog kbq kbc)
    set(bin \"\${root}/${CMAKE_INSTALL_BINDIR}/\${prog}\")
    if(DEFINED ENV{KB_INSTALL_NO_DEBUG_FILES})
      execute_process(COMMAND \"\${strip}\" --strip-debug --strip-unneeded \"\${bin}\" RESULT_VARIABLE rc)
      if(NOT rc EQUAL 0)
        message(FATAL_ERROR \"cannot strip \${bin}\")
      endif()
      message(STATUS \"Stripped: \${bin} (debug info left out)\")
      continue()
    endif()
    execute_process(COMMAND readelf -n \"\${bin}\" OUTPUT_VARIABLE notes)
    if(notes MATCHES \"Build ID: ([0-9a-f][0-9a-f])([0-9a-f]+)\")
      set(debug \"\${root}/${CMAKE_INSTALL_LIBDIR}/debug/.build-id/\${CMAKE_MATCH_1}/\${CMAKE_MATCH_2}.debug\")
    else()
      set(debug \"\${root}/${CMAKE_INSTALL_LIBDIR}/debug/${CMAKE_INSTALL_BINDIR}/\${prog}.debug\")
    endif()
    get_filename_component(dir \"\${debug}\" DIRECTORY)
    file(MAKE_DIRECTORY \"\${dir}\")
    execute_process(COMMAND \"\${objcopy}\" --only-keep-debug \"\${bin}\" \"\${debug}\" RESULT_VARIABLE rc1)
    execute_process(COMMAND \"\${strip}\" --strip-debug --strip-unneeded \"\${bin}\" RESULT_VARIABLE rc2)
    execute_process(COMMAND \"\${objcopy}\" --add-gnu-debuglink=\${debug} \"\${bin}\" RESULT_VARIABLE rc3)
    if(NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0 OR NOT rc3 EQUAL 0)
      message(FATAL_ERROR \"cannot split the debug info of \${bin}\")
    endif()
    file(CHMOD \"\${debug}\" PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
    message(STATUS \"Stripped: \${bin} (debug info: \${debug})\")
    # As CMake lists the other files: the path on the target system, without DESTDIR.
    string(LENGTH \"\$ENV{DESTDIR}\" destdir_length)
    string(SUBSTRING \"\${debug}\" \${destdir_length} -1 installed)
    list(APPEND CMAKE_INSTALL_MANIFEST_FILES \"\${installed}\")
  endforeach()
")

# `make deb`: a Debian package of the same install (CPack), kbq_VERSION_ARCH.deb
# in the build folder, installed under /usr; its dependencies from
# dpkg-shlibdeps on the binaries. The split debug info stays out of it (a
# Debian package ships it in a separate -dbgsym package): the install step
# above leaves it out when KB_INSTALL_NO_DEBUG_FILES is set, as `make deb` does.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME kbq)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "offline recipe recommender for Megatron Bridge: kbq (query) and kbc (compiler)")
set(CPACK_PACKAGE_CONTACT "kbq maintainers <kbq@example.invalid>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# kbc extract-code and kbc build --mbridge run the extractor with Python 3.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3")
include(CPack)
