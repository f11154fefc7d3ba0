# What `cmake --install` and the Debian package (scripts/package: cpack -G DEB) put where,
# besides the programs, the preload, the man pages and the completion, whose rules live with
# their targets: the documentation and the example, and the package's own description.

# The same relative layout as the source tree, so that the README's links work where it lies.
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ctp/CTP.md DESTINATION ${CMAKE_INSTALL_DOCDIR}/ctp)
install(FILES docs/ctp-cat.md docs/ctp-pstack.md docs/dashboard.md docs/gdb.md docs/performance.md
    docs/report.md docs/schema.md docs/trace-format.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
install(DIRECTORY docs/img DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
install(FILES examples/lost_wakeup/README.md examples/lost_wakeup/client.c
    examples/lost_wakeup/sched.c examples/lost_wakeup/sched.h examples/lost_wakeup/server.c
  DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples/lost_wakeup)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ctp)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "ctp developers <ctp@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "tracer for programs built on stackful coroutines")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "tracer for programs built on stackful coroutines
ctp traces programs built on glibc ucontext or Boost.Context coroutines without
changing them: which coroutines exist, where each one suspended, what it waits on,
what closed that fd, and what the scheduler did over time. ctp-run runs a program
under the tracer, ctp-cat reads, reports on, converts and exports the traces.")
# The paths compiled into ctp-run and the preload are relative to the configured prefix, so
# the package installs where the build was configured for (scripts/package: /usr).
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # ctp_VERSION_ARCH.deb
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Libraries the programs link come from dpkg-shlibdeps; libunwind is dlopened by the preload
# (preload/unwind.c), which dpkg-shlibdeps cannot see.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libunwind8")
# dlopened when DEBUGINFOD_URLS is set (ctp/symbolize_debuginfod.c): shlibdeps cannot see it.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libdebuginfod1")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "bash-completion, zstd, gdb")
set(CPACK_STRIP_FILES ON)
include(CPack)
