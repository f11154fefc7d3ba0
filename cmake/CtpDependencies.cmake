# The libraries ctp is built on, found through pkg-config (every one ships a .pc on Debian).
# Each becomes an imported target ctp::NAME.
find_package(PkgConfig REQUIRED)

function(ctp_require_pkg name module)
  pkg_check_modules(${name} REQUIRED IMPORTED_TARGET ${module})
  add_library(ctp::${name} ALIAS PkgConfig::${name})
endfunction()

ctp_require_pkg(zstd libzstd)
ctp_require_pkg(elf libelf)
ctp_require_pkg(dw libdw)
# Debug files fetched by build-id from debuginfod servers (DEBUGINFOD_URLS).
ctp_require_pkg(debuginfod libdebuginfod)
ctp_require_pkg(jansson jansson)
ctp_require_pkg(cmocka cmocka)
# ctp-cat's export into databases.
ctp_require_pkg(sqlite3 sqlite3)
ctp_require_pkg(pq libpq)
ctp_require_pkg(mariadb libmariadb)
# The preload dlopens libunwind at run time (see preload/unwind.c) and needs only its header.
pkg_check_modules(unwind REQUIRED libunwind)
