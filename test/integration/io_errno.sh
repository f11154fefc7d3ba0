# The I/O hooks keep errno exactly (the program checks each case itself), and a run of one
# million successful non-blocking reads records nothing but the one read that would block. The
# cost of the hooks is printed (not asserted: the machine may be busy).
source "$(dirname "$0")/lib.sh"

# fd lines of the program's own calls: libunwind reads its own validation pipe while the tracer
# unwinds a switch, and those reads are not the program's.
own_fd_lines='(map(select(.type == "stack") | {key: (.id | tostring), value: .frames})
	| from_entries) as $s | [.[] | select(.type == "fd") | select(
	[$s[(.stack // 0) | tostring][]?.module // "" | test("libunwind")] | any | not)]'

trace errno -- "$PROGRAMS/io_errno"
expect_eq "errno is kept by every hook (traced)" "0 errno kept" \
	"$status $(cat "$WORK/errno.out")"
cat "$WORK/errno.err" >&2
expect_eq "the traced run recorded would_block lines for its EAGAINs" 2 \
	"$(q errno "$own_fd_lines | map(select(.event == \"would_block\")) | length")"

status=0
untraced=$("$PROGRAMS/io_bench" 1000000) || status=$?
expect_eq "io_bench runs untraced" 0 "$status"
trace bench -- "$PROGRAMS/io_bench" 1000000
expect_eq "io_bench runs traced" 0 "$status"
echo "cost untraced: $untraced"
echo "cost traced:   $(cat "$WORK/bench.out")"
expect_eq "successful reads record nothing: one fd line, the first read's would_block" \
	"would_block" "$(q bench "$own_fd_lines | map(.event) | join(\" \")")"

finish
