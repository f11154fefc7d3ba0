# makecontext with 20 arguments: the entry sees all 20, and returns through uc_link.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare makecontext20 --expect "exit 0" -- "$TP_BIN/makecontext20"
check "makecontext20: untraced, the entry saw 1..20" \
	grep -qx "entry got: $(seq -s ' ' 1 20)" "$WORK/makecontext20.native.out"
finish
