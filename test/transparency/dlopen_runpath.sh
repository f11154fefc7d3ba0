# dlopen by bare name through the caller's DT_RUNPATH, and dlmopen(LM_ID_NEWLM) the same way.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
check "dlopen_runpath carries DT_RUNPATH \$ORIGIN/plugins" \
	bash -c "readelf -d '$TP_BIN/dlopen_runpath' | grep -q 'RUNPATH.*\\\$ORIGIN/plugins'"
compare dlopen_runpath --expect "exit 0" -- "$TP_BIN/dlopen_runpath"
finish
