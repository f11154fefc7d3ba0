# Boost.Context in a plugin loaded RTLD_NOW|RTLD_LOCAL by a C program without Boost, and unloaded
# before the program ends.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare boost_rtld_local --expect "exit 0" -- "$TP_BIN/boost_local" "$TP_BIN/libboost_plugin.so"
# Tracer correctness: the fibers are traced through the plugin's own Boost.Context, and the
# plugin, loaded after the program started (dlopen is not hooked) and unloaded before its end,
# is in the module table (a look at its end would not find it): the
# fibers' entry functions, in the plugin, are named, and its frames in their suspend stacks are
# symbolized.
for mode in "${TP_MODES[@]}"; do
	pid=$(tp_app_pid boost_rtld_local "$mode" boost_local)
	check "boost_rtld_local $mode (tracer correctness): fcontext switches traced" \
		[ "$(tq boost_rtld_local "$mode" "[.[] | select(.type == \"switch\" and .pid == ${pid:-0}
			and (.how | test(\"fcontext\")))] | length")" -gt 0 ]
	expect_eq "boost_rtld_local $mode (tracer correctness): fibers, every entry named" "true:0" \
		"$(tq boost_rtld_local "$mode" "[.[] | select(.type == \"coro\" and .pid == ${pid:-0}
			and .kind == \"fcontext\")] | \"\\(length > 0):\\([.[] | select(.entry == null)]
			| length)\"")"
	check "boost_rtld_local $mode (tracer correctness): plugin frames symbolized" \
		[ "$(tq boost_rtld_local "$mode" "[.[] | select(.type == \"stack\" and .pid == ${pid:-0})
			| .frames[] | select((.module // \"\") | endswith(\"libboost_plugin.so\"))
			| select(.sym != null)] | length")" -gt 0 ]
done
finish
