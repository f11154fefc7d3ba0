# Own fds: after closefrom(3), a raw close_range(3, ~0U), or a close loop over 3..1023, the
# program uses fds 900/901 (also from a forked child), closes them and finds them closed.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
for how in closefrom close_range loop; do
	compare "own_fds_$how" --expect "exit 0" -- "$TP_BIN/own_fds" "$how"
done
finish
