#!/usr/bin/env bash
# Moves the debug information of a built library into a separate file, where a symbolizer looks
# for it by build-id: DEBUG_DIR/.build-id/xx/rest.debug, then strips it from the library.
#   split_debug.sh OBJCOPY READELF LIB DEBUG_DIR [DEBUG_FILE]
# With DEBUG_FILE, that file (the debug information of another build) goes where LIB's own
# would, to test that a debug file of the wrong build is refused. LIB's own debug information is
# kept as LIB.debug either way.
set -euo pipefail
objcopy=$1 readelf=$2 lib=$3 debug_dir=$4 debug_file=${5:-}
id=$("$readelf" -n "$lib" | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p')
if [ ${#id} -lt 4 ]; then
	echo "split_debug.sh: $lib has no build-id" >&2
	exit 1
fi
"$objcopy" --only-keep-debug "$lib" "$lib.debug"
mkdir -p "$debug_dir/.build-id/${id:0:2}"
cp "${debug_file:-$lib.debug}" "$debug_dir/.build-id/${id:0:2}/${id:2}.debug"
"$objcopy" --strip-debug "$lib"
