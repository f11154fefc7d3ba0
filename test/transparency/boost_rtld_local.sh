# Boost.Context in a plugin loaded RTLD_NOW|RTLD_LOCAL by a C program without Boost.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare boost_rtld_local --expect "exit 0" -- "$TP_BIN/boost_local" "$TP_BIN/libboost_plugin.so"
finish
