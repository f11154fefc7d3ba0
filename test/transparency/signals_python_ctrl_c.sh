# Signals 1b: Ctrl-C on a terminal to a Python program that catches KeyboardInterrupt, prints it
# and exits 0. Python's SIGINT handler must see exactly one SIGINT, as untraced.
source "$CTP_SOURCE_DIR/test/transparency/harness.sh"
compare python_ctrl_c --expect "exit 0" --pty --after-ready intr -- "$TP_PYTHON" "$TP_SRC/ctrl_c.py"
finish
