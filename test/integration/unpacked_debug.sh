# Debug files with compressed DWARF (Debian's libc6-dbg) are read from a decompressed copy that
# the symbolizer keeps in the user's cache by build-id: the first traced run makes it, later runs
# open it instead of inflating 10 MB. The names and lines are the same whichever way they come:
# made now, read from the cache, with a damaged copy (made again), by the plain form's collector,
# without a cache (CTP_CACHE_DIR empty), and where the cache cannot be written.
source "$(dirname "$0")/lib.sh"

libc=$(ldd "$PROGRAMS/bench_pingpong" | awk '$1 ~ /^libc\.so/ {print $3}')
build_id=$(readelf -n "$libc" | sed -n 's/^ *Build ID: //p')
libc_debug=/usr/lib/debug/.build-id/${build_id:0:2}/${build_id:2}.debug
check "libc ($libc) has a build-id" [ -n "$build_id" ]
check "libc6-dbg's debug file of it is installed" [ -f "$libc_debug" ]
check "and its DWARF is compressed (what the cache is for)" \
	bash -c "readelf -S -W '$libc_debug' 2>/dev/null | grep -E '\.debug_info .* C ' >/dev/null"

# libc_frames NAME: the libc frames of every stack of the trace, as sym@file:line, sorted.
libc_frames() {
	q "$1" '[.[] | select(.type == "stack") | .frames[] | select(.module | test("/libc\\.so"))
		| "\(.sym)@\(.file):\(.line)"] | unique | join(" ")'
}

export CTP_CACHE_DIR=$WORK/cache
copy=$CTP_CACHE_DIR/unpacked/$build_id.debug
trace first -- "$PROGRAMS/bench_pingpong" 10
expect_eq "(first) the program runs traced" 0 "$status"
first=$(libc_frames first)
check "libc frames have their source lines ($first)" \
	bash -c "grep -q '__libc_start_call_main@[^ ]*libc_start_call_main.h:[0-9]' <<<'$first'"
check "the first run left the decompressed copy, named by build-id" [ -f "$copy" ]
check "whose DWARF is not compressed" \
	bash -c "readelf -S -W '$copy' 2>/dev/null | grep -q '\.debug_info' && ! readelf -S -W '$copy' 2>/dev/null | grep -E '\.debug_[a-z_]+ .* C ' >/dev/null"
expect_eq "it is the build that ran" "$build_id" \
	"$(readelf -n "$copy" 2>/dev/null | sed -n 's/^ *Build ID: //p')"
expect_eq "the cache is private to the user" "700 600" \
	"$(stat -c %a "$CTP_CACHE_DIR/unpacked") $(stat -c %a "$copy")"
made=$(stat -c '%i %Y' "$copy")

trace cached -- "$PROGRAMS/bench_pingpong" 10
expect_eq "(cached) the same libc frames, from the copy" "$first" "$(libc_frames cached)"
expect_eq "the copy was read, not made again" "$made" "$(stat -c '%i %Y' "$copy")"

size=$(stat -c %s "$copy")
truncate -s 4096 "$copy"
trace damaged -- "$PROGRAMS/bench_pingpong" 10
expect_eq "(damaged) a truncated copy gives the same frames" "$first" "$(libc_frames damaged)"
expect_eq "and is made whole again" "$size" "$(stat -c %s "$copy")"
expect_eq "no temporary file is left beside it" "$build_id.debug" "$(ls "$CTP_CACHE_DIR/unpacked")"

# The plain form's collector, started by the preload, reads the program's environment too.
CTP_CACHE_DIR=$WORK/plain-cache plain_trace plain -- "$PROGRAMS/bench_pingpong" 10
expect_eq "(plain) the plain form: the program runs traced" "exit 0" "$status"
expect_eq "(plain) the same libc frames" "$first" "$(libc_frames plain)"
check "(plain) its collector made the copy where CTP_CACHE_DIR says" \
	[ -f "$WORK/plain-cache/unpacked/$build_id.debug" ]

CTP_CACHE_DIR='' trace nocache -- "$PROGRAMS/bench_pingpong" 10
expect_eq "(nocache) CTP_CACHE_DIR empty: the same frames" "$first" "$(libc_frames nocache)"

: >"$WORK/a-file"
CTP_CACHE_DIR=$WORK/a-file/cache trace unwritable -- "$PROGRAMS/bench_pingpong" 10
expect_eq "(unwritable) a cache that cannot be made: the same frames" "$first" \
	"$(libc_frames unwritable)"
check "and the trace says nothing about it" bash -c "! grep -i cache '$WORK/unwritable.err'"

finish
