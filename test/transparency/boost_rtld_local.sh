# Boost.Context in a plugin loaded RTLD_NOW|RTLD_LOCAL by a C program without Boost.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare boost_rtld_local --expect "exit 0" -- "$TP_BIN/boost_local" "$TP_BIN/libboost_plugin.so"
# Tracer correctness: the fibers are traced through the plugin's own Boost.Context, and the
# plugin, loaded after the program started (dlopen is not hooked), is in the module table: its
# frames in the fibers' suspend stacks are symbolized.
for mode in "${TP_MODES[@]}"; do
	pid=$(tp_app_pid boost_rtld_local "$mode" boost_local)
	check "boost_rtld_local $mode (tracer correctness): fcontext switches traced" \
		[ "$(tq boost_rtld_local "$mode" "[.[] | select(.type == \"switch\" and .pid == ${pid:-0}
			and (.how | test(\"fcontext\")))] | length")" -gt 0 ]
	check "boost_rtld_local $mode (tracer correctness): plugin frames symbolized" \
		[ "$(tq boost_rtld_local "$mode" "[.[] | select(.type == \"stack\" and .pid == ${pid:-0})
			| .frames[] | select((.module // \"\") | endswith(\"libboost_plugin.so\"))
			| select(.sym != null)] | length")" -gt 0 ]
done
finish
