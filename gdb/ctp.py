# ctp's gdb extension: the coroutines of a program traced by ctp, in a live process or a core.
#
#   source /usr/share/ctp/gdb/ctp.py     (or auto-loaded with libctp_preload.so: docs/gdb.md)
#   ctp coroutines      every coroutine: id, kind, state, thread, what it waits on, entry, call site
#   ctp bt N [COUNT]    coroutine N's backtrace, unwound by gdb from the registers its switch saved
#   ctp switch N        gdb's frames become coroutine N's: bt, frame, up, info locals work on it
#   ctp restore         back to the thread's own frames
#
# It reads the process's cTP segment (ctp/CTP.md), the shared memfd the preload maps, found in
# `info proc mappings` both live and in a core (the default coredump_filter dumps it: a memfd is
# anonymous shared memory). Everything read there is untrusted, as in ctp/segment_view.c: each
# offset and count is checked against the segment's size before use.
#
# Switching: on a live process `ctp switch` writes the coroutine's saved registers into the
# selected thread (the originals are kept, and put back by `ctp restore` or when gdb exits), as
# gdb's own `set $rip` would. A core's registers cannot be written: there, and for `ctp bt`
# everywhere, a frame unwinder makes the thread's innermost frame return into the coroutine, so
# that the frames above it (#1 and up, or further up when gdb shows functions inlined into it as
# frames of their own) are the coroutine's, and the process is never touched.
#
# Run as `python3 ctp.py --layout` (outside gdb) it prints the layout below, which
# test/gdb/layout.sh compares with offsetof() of the C structs.
import re
import struct
import sys

try:
    import gdb
    import gdb.unwinder
    from gdb.FrameDecorator import FrameDecorator
except ImportError:  # `python3 ctp.py --layout`
    gdb = None

# ---- The cTP v2 layout -----------------------------------------------------------------------
# Mirrors ctp/segment.h (struct ctp_header, ctp_block, ctp_station_chunk, ctp_station and the
# enums) and glibc's <sys/ucontext.h> (ucontext_t's gregs); checked by test/gdb/layout.sh.
# Each field: (offset, struct format), little-endian like the host that wrote it.

MAGIC = 0x434F524F54524352  # "COROTRCR"
VERSION = 2
MAX_STACK_DEPTH = 64
CACHE_LINE = 64

HEADER = {
    "magic": (0x00, "Q"),
    "version": (0x08, "I"),
    "header_size": (0x0C, "I"),
    "station_count": (0x10, "I"),
    "pid": (0x18, "I"),
    "segment_size": (0x20, "Q"),
    "blocks_head": (0x30, "Q"),
    "station_size": (0x38, "I"),
    "stack_depth": (0x3C, "I"),
}
HEADER_SIZE = 256

BLOCK = {
    "kind": (0, "I"),
    "size": (8, "Q"),
    "next": (16, "Q"),
}
BLOCK_SIZE = 32
BLOCK_STATIONS = 0x53544E53  # "STNS"

STATION_CHUNK = {
    "first": (32, "I"),
    "count": (36, "I"),
    "stations_off": (40, "Q"),
}
STATION_CHUNK_SIZE = 48

STATION = {
    "seq": (0, "I"),
    "state": (4, "I"),
    "coro": (8, "Q"),
    "kind": (16, "I"),
    "tid": (20, "I"),
    "entry": (24, "Q"),
    "last_switch": (40, "Q"),
    "switches": (48, "Q"),
    "stack_lo": (56, "Q"),
    "stack_hi": (64, "Q"),
    "wait_fd": (72, "i"),
    "wait_op": (76, "I"),
    "stack_len": (80, "I"),
    "saved_ctx": (88, "Q"),
    "ctx_kind": (96, "I"),
    "stack_kind": (100, "I"),
    "ended_to": (120, "I"),
    "frames": (128, "Q"),  # stack_depth of them
}
STATION_FIXED = 128  # sizeof(struct ctp_station)

STATES = {0: "free", 1: "created", 2: "running", 3: "suspended", 4: "exited", 5: "left"}
STATE_CREATED = 1
STATE_RUNNING = 2
STATE_SUSPENDED = 3
STATE_EXITED = 4
STATE_LEFT = 5
KINDS = {1: "thread", 2: "ucontext", 3: "fcontext", 4: "simgrid_raw"}
KIND_THREAD = 1
WAIT_OPS = {1: "read", 2: "write", 3: "accept", 4: "connect", 5: "poll"}
WAIT_OP_MASK = 0x7F
WAIT_CLOSED = 0x80
WAIT_EPOCH_SHIFT = 8
WAIT_EPOCH_MASK = 0xFFFFFF
CTX_UCONTEXT = 1
CTX_FCONTEXT = 2
CTX_SIMGRID_RAW = 3

# ucontext_t: uc_mcontext.gregs (greg_t[23]) and the REG_* indices of <sys/ucontext.h>.
UCONTEXT_GREGS = 40
GREGS = {"r12": 4, "r13": 5, "r14": 6, "r15": 7, "rbp": 10, "rbx": 11, "rsp": 15, "rip": 16}
# The frames a switch leaves on the suspended coroutine's stack (ctp/saved_frame.h, CTP.md "Saved
# contexts"): per context kind, how many 8-byte words, and the word of each register; the caller's
# rsp is right above the frame. Boost.Context's fcontext: 8 bytes of control words first. SimGrid's
# raw context: twelve registers pushed by raw_swapcontext.
SAVED_FRAMES = {
    CTX_FCONTEXT: (8, {"r12": 1, "r13": 2, "r14": 3, "r15": 4, "rbx": 5, "rbp": 6, "rip": 7}),
    CTX_SIMGRID_RAW: (13, {"r15": 0, "r14": 1, "r13": 2, "r12": 3, "rbx": 4, "rbp": 5, "rip": 12}),
}

# The memfd the preload creates (preload/segment.c), as /proc/PID/maps and a core name it.
SEGMENT_MAPPING = "/memfd:ctp-segment"

# The registers a switch saves and `ctp switch` replaces; orig_rax is kept and put back too:
# writing registers of a thread stopped in a system call must not change whether the kernel
# restarts that call.
SWITCH_REGS = ("rip", "rsp", "rbp", "rbx", "r12", "r13", "r14", "r15")
KEPT_REGS = SWITCH_REGS + ("orig_rax",)

# A swapcontext hook's own frames above the call site: ctp bt starts at the call site.
OWN_FRAMES_MAX = 8


def layout_lines():
    """The layout as `name value` lines, in the form test/gdb/layout.sh compares with C."""
    out = []
    for prefix, fields in (("header", HEADER), ("block", BLOCK), ("chunk", STATION_CHUNK),
                           ("station", STATION)):
        for name, (off, _) in fields.items():
            out.append("%s.%s %d" % (prefix, name, off))
    out.append("sizeof.header %d" % HEADER_SIZE)
    out.append("sizeof.block %d" % BLOCK_SIZE)
    out.append("sizeof.chunk %d" % STATION_CHUNK_SIZE)
    out.append("sizeof.station %d" % STATION_FIXED)
    out.append("const.magic %d" % MAGIC)
    out.append("const.version %d" % VERSION)
    out.append("const.max_stack_depth %d" % MAX_STACK_DEPTH)
    out.append("const.cache_line %d" % CACHE_LINE)
    out.append("const.block_stations %d" % BLOCK_STATIONS)
    for value, name in STATES.items():
        out.append("state.%s %d" % (name, value))
    for value, name in KINDS.items():
        out.append("kind.%s %d" % (name, value))
    for value, name in WAIT_OPS.items():
        out.append("op.%s %d" % (name, value))
    out.append("wait.op_mask %d" % WAIT_OP_MASK)
    out.append("wait.closed %d" % WAIT_CLOSED)
    out.append("wait.epoch_shift %d" % WAIT_EPOCH_SHIFT)
    out.append("wait.epoch_mask %d" % WAIT_EPOCH_MASK)
    out.append("ctx.ucontext %d" % CTX_UCONTEXT)
    out.append("ctx.fcontext %d" % CTX_FCONTEXT)
    out.append("ctx.simgrid_raw %d" % CTX_SIMGRID_RAW)
    for kind, (words, regs) in sorted(SAVED_FRAMES.items()):
        out.append("frame.%d.words %d" % (kind, words))
        for name in ("r12", "r13", "r14", "r15", "rbx", "rbp", "rip"):
            out.append("frame.%d.%s %d" % (kind, name, regs[name]))
    out.append("ucontext.gregs %d" % UCONTEXT_GREGS)
    for name, index in GREGS.items():
        out.append("greg.%s %d" % (name, index))
    return out


def station_size(depth):
    raw = STATION_FIXED + 8 * depth
    return (raw + CACHE_LINE - 1) & ~(CACHE_LINE - 1)


def unpack_fields(fields, data, base=0):
    return {name: struct.unpack_from("<" + fmt, data, base + off)[0]
            for name, (off, fmt) in fields.items() if name != "frames"}


class CtpError(Exception):
    """A reason the segment cannot be read, said to the user as it is."""


# ---- Reading the segment from the inferior ---------------------------------------------------

class Segment:
    """The segment of the selected inferior: its memfd mapped in one or more extents, each a
    range of the file at an address (CTP.md "Lifetime of a segment"); read by file offset."""

    def __init__(self, inferior):
        self.inferior = inferior
        self.extents = self._find_extents()  # [(file offset, address, size)]
        head = self.read(0, HEADER_SIZE)
        h = unpack_fields(HEADER, head)
        if h["magic"] != MAGIC:
            raise CtpError("the ctp segment has a bad magic 0x%016x" % h["magic"])
        if h["version"] != VERSION:
            raise CtpError("ctp segment version %d, this extension reads %d"
                           % (h["version"], VERSION))
        if h["header_size"] != HEADER_SIZE:
            raise CtpError("ctp segment header size %d, expected %d"
                           % (h["header_size"], HEADER_SIZE))
        if h["stack_depth"] > MAX_STACK_DEPTH or h["station_size"] != station_size(h["stack_depth"]):
            raise CtpError("ctp segment station size %d does not fit stack depth %d"
                           % (h["station_size"], h["stack_depth"]))
        self.header = h
        # The segment's bounds: what the header says is committed, within what is mapped.
        mapped = max(off + size for off, _, size in self.extents)
        self.size = min(h["segment_size"], mapped)

    def _find_extents(self):
        try:
            text = gdb.execute("info proc mappings", to_string=True)
        except gdb.error as e:
            raise CtpError("cannot list the process's mappings (%s)" % e)
        extents = []
        for line in text.splitlines():
            fields = line.split()
            # Start, end, size, offset[, perms] and the file: live and core list the same way.
            if len(fields) < 5 or not fields[0].startswith("0x"):
                continue
            name = " ".join(fields[4:])
            if re.match(r"^[r-][w-][x-][sp-]\s", name):
                name = name[5:].lstrip()
            if not name.startswith(SEGMENT_MAPPING):
                continue
            start, _, size, offset = (int(f, 16) for f in fields[:4])
            extents.append((offset, start, size))
        if not extents:
            raise CtpError("process %d is not traced by ctp (no %s mapping): run it under "
                           "ctp-run or with LD_PRELOAD=libctp_preload.so"
                           % (self.inferior.pid, SEGMENT_MAPPING))
        return sorted(extents)

    def address_of(self, off):
        for ext_off, start, size in self.extents:
            if ext_off <= off < ext_off + size:
                return start + (off - ext_off)
        return None

    def read(self, off, length):
        """length bytes at file offset off, which may span extents mapped one after another."""
        out = bytearray()
        while length > 0:
            addr = self.address_of(off)
            if addr is None:
                raise CtpError("offset 0x%x of the ctp segment is not mapped" % off)
            ext_off, start, size = next(e for e in self.extents if e[1] <= addr < e[1] + e[2])
            n = min(length, start + size - addr)
            try:
                out += self.inferior.read_memory(addr, n).tobytes()
            except gdb.MemoryError:
                raise CtpError("cannot read the ctp segment at 0x%x: in a core file, it is "
                               "there only when the process's coredump_filter had bit 0x2 "
                               "(anonymous shared memory) set" % addr)
            off += n
            length -= n
        return bytes(out)

    def stations(self):
        """Every station in use, read consistently (seqlock) or marked torn."""
        h = self.header
        result = []
        off = h["blocks_head"]
        steps = 0
        while off != 0 and steps < self.size // BLOCK_SIZE:
            steps += 1
            if off % 8 or off + STATION_CHUNK_SIZE > self.size:
                break
            block = unpack_fields(BLOCK, self.read(off, BLOCK_SIZE))
            if block["size"] < BLOCK_SIZE or block["size"] > self.size - off:
                break
            if block["kind"] == BLOCK_STATIONS and block["size"] >= STATION_CHUNK_SIZE:
                chunk = unpack_fields(STATION_CHUNK, self.read(off, STATION_CHUNK_SIZE))
                result += self._chunk_stations(chunk)
            off = block["next"]
        return sorted(finish_switches(result), key=lambda s: s.coro)

    def _chunk_stations(self, chunk):
        size = self.header["station_size"]
        depth = self.header["stack_depth"]
        count, first, soff = chunk["count"], chunk["first"], chunk["stations_off"]
        if soff % 8 or count * size > self.size or soff > self.size - count * size:
            return []
        # Only the stations the process handed out: a slot never written is a hole of the
        # segment's memfd, and reading it in a live process makes the kernel give the program
        # a page of zeros it would hold from then on.
        count = max(0, min(count, self.header["station_count"] - first))
        if count == 0:
            return []
        data = self.read(soff, count * size)
        out = []
        for i in range(count):
            s = Station(first + i, data, i * size, depth)
            if s.state != 0:
                out.append(s)
        return out


TOUCHED_NOW = (1 << 64) - 1  # finish_switches: a torn station's time, after every other


def finish_switches(stations):
    """Marks running, on each thread stopped inside the tracer's switch hook, what runs there.

    A hook updates two stations, one after the other: the coroutine it leaves (suspended), then
    the one it resumes (running). A thread stopped between the two (a breakpoint or a Ctrl-C in
    the hook, a core dumped there) has no station running on it, though a coroutine runs there:
    the one the switch was leaving, since the jump that follows the hook has not happened, or,
    in a coroutine's end, the station the ended one names as resumed next (ended_to). The same
    rule as the collector's final states and ctp-pstack --core (ctp/unfinished_switch.c). Left
    as it stood, the coroutine being left would read suspended, and ctp bt would unwind the
    registers of its previous suspend: its switch has not saved this one's yet."""
    alive, running, last = set(), set(), {}
    for s in sorted(stations, key=lambda s: s.index):
        if s.tid == 0:
            continue
        if s.kind == KIND_THREAD and s.state != STATE_EXITED:
            alive.add(s.tid)  # the thread's own stack has not ended: the thread lives
        if s.state == STATE_RUNNING:
            running.add(s.tid)
        # The station the thread touched last: a switch's two updates share one time, and
        # every earlier switch of the thread came before it. A torn one is the station the
        # thread was writing when it stopped: the last, whatever its time says yet (a suspend
        # writes its state first).
        touched = TOUCHED_NOW if s.torn else s.last_switch
        if touched and (s.tid not in last or touched >= last[s.tid][0]):
            last[s.tid] = (touched, s)
    by_index = {s.index: s for s in stations}
    for tid, (_, s) in last.items():
        if tid not in alive or tid in running:
            continue
        if s.state == STATE_EXITED:
            s = by_index.get(s.ended_to - 1) if s.ended_to else None
            if s is None or s.state not in (STATE_SUSPENDED, STATE_LEFT, STATE_CREATED):
                continue
        elif s.state not in (STATE_SUSPENDED, STATE_LEFT):
            continue
        s.state, s.tid, s.mid_switch = STATE_RUNNING, tid, True
    return stations


class Station:
    """One coroutine's station (ctp/segment.h struct ctp_station)."""

    def __init__(self, index, data, base, depth):
        self.index = index
        self.__dict__.update(unpack_fields(STATION, data, base))
        n = min(self.stack_len, depth)
        self.frames = list(struct.unpack_from("<%dQ" % n, data, base + STATION["frames"][0]))
        # A stopped process or a core does not write: an odd sequence is a writer that was
        # stopped (or died) in the middle of an update.
        self.torn = self.seq % 2 == 1
        self.mid_switch = False  # finish_switches: shown running, its thread in the hook

    @property
    def state_name(self):
        return STATES.get(self.state, "state %d" % self.state)

    @property
    def kind_name(self):
        return KINDS.get(self.kind, "kind %d" % self.kind)

    def wait(self):
        """(op name, fd, closed) while the wait is current (ctp_wait_current), else None."""
        op = self.wait_op & WAIT_OP_MASK
        epoch = self.wait_op >> WAIT_EPOCH_SHIFT
        if self.wait_fd < 0 or op == 0 or epoch != self.switches & WAIT_EPOCH_MASK:
            return None
        return WAIT_OPS.get(op, "op %d" % op), self.wait_fd, bool(self.wait_op & WAIT_CLOSED)

    @property
    def suspended(self):
        return self.state in (STATE_SUSPENDED, STATE_LEFT)

    def call_site(self):
        return self.frames[0] if self.frames else 0


def saved_registers(inferior, station):
    """The registers station's switch saved (ctp/stackwalk.c ctp_regs_from_context), or None."""
    try:
        if station.ctx_kind == CTX_UCONTEXT:
            raw = inferior.read_memory(station.saved_ctx + UCONTEXT_GREGS, 8 * 23).tobytes()
            g = struct.unpack("<23Q", raw)
            return {name: g[i] for name, i in GREGS.items()}
        if station.ctx_kind in SAVED_FRAMES:
            words, where = SAVED_FRAMES[station.ctx_kind]
            raw = inferior.read_memory(station.saved_ctx, 8 * words).tobytes()
            w = struct.unpack("<%dQ" % words, raw)
            regs = {name: w[i] for name, i in where.items()}
            regs["rsp"] = station.saved_ctx + 8 * words
            return regs
    except gdb.MemoryError:
        raise CtpError("cannot read coroutine %d's saved context at 0x%x"
                       % (station.coro, station.saved_ctx))
    return None


# ---- Naming addresses --------------------------------------------------------------------------

def symbol_of(pc):
    """function+0xoff for a code address, from debug info or the ELF symbols; None if unknown."""
    try:
        block = gdb.block_for_pc(pc)
    except RuntimeError:
        block = None
    while block is not None and block.function is None:
        block = block.superblock
    if block is not None:
        return block.function.print_name, pc - block.start
    try:
        text = gdb.execute("info symbol 0x%x" % pc, to_string=True)
    except gdb.error:
        return None
    m = re.match(r"^(\S+)(?: \+ (\d+))? in section", text)
    if not m:
        return None
    return m.group(1), int(m.group(2) or 0)


# Operators whose angle brackets are no template's (the list of ctp/cxx_name.c).
ANGLE_OPERATORS = ("operator<=>", "operator<<=", "operator>>=", "operator<<", "operator>>",
                   "operator<=", "operator>=", "operator->*", "operator->", "operator<",
                   "operator>")


def short_name(name):
    """A C++ name with each outermost template argument list written as <...>, as ctp-pstack's
    text view and ctp-cat's report write them (ctp/cxx_name.c): a Boost.Fiber entry function is
    hundreds of characters of template arguments otherwise."""
    out = []
    depth = 0
    i = 0
    while i < len(name):
        op = None
        if depth == 0 and name.startswith("operator", i):
            op = next((o for o in ANGLE_OPERATORS if name.startswith(o, i)), None)
        if op:
            out.append(op)
            i += len(op)
            continue
        if name.startswith("->", i):  # an arrow inside decltype(), not a bracket
            if depth == 0:
                out.append("->")
            i += 2
            continue
        c = name[i]
        if c == "<":
            if depth == 0:
                out.append("<...")
            depth += 1
        elif c == ">" and depth:
            depth -= 1
            if depth == 0:
                out.append(">")
        elif depth == 0:
            out.append(c)
        i += 1
    return "".join(out)


def describe_pc(pc, return_address=True, full=True):
    """`func+0x1a (file.c:88)` for a code address; a return address is looked up at pc - 1, the
    call instruction it follows. Not `full`: C++ names shortened (short_name)."""
    sym = symbol_of(pc)
    if sym and not full:
        sym = (short_name(sym[0]), sym[1])
    text = "%s+0x%x" % sym if sym else "0x%x" % pc
    sal = gdb.find_pc_line(pc - 1 if return_address else pc)
    if sal.symtab is not None and sal.line:
        text += " (%s:%d)" % (sal.symtab.filename.rsplit("/", 1)[-1], sal.line)
    return text


def function_name(pc, full=True):
    sym = symbol_of(pc)
    if not sym:
        return "0x%x" % pc
    name = sym[0] if full else short_name(sym[0])
    return name if sym[1] == 0 else "%s+0x%x" % (name, sym[1])


def thread_of(inferior, tid):
    """`thread 2 (LWP 1234)` for a thread id of the process."""
    for t in inferior.threads():
        if t.ptid[1] == tid:
            return t
    return None


def describe_thread(inferior, tid):
    if tid == 0:
        return "-"
    t = thread_of(inferior, tid)
    return "LWP %d (gone)" % tid if t is None else "%d (LWP %d)" % (t.num, tid)


# ---- Frames from a coroutine's saved registers -----------------------------------------------

class CoroutineUnwinder(gdb.unwinder.Unwinder if gdb else object):
    """Makes the innermost frame of one thread return into a coroutine's saved registers.

    The thread's innermost frame stays the thread's (gdb reads it from the thread, which cannot
    be changed in a core), and its caller is the coroutine's innermost frame: gdb unwinds the
    rest from there with the CFI of each module. The innermost frame is #0, or, where the
    thread stopped in code inlined into it (a breakpoint in an inline function), the frame after
    the ones gdb makes of the inlined calls, which gdb numbers first and never asks an unwinder
    for. It is given the coroutine's stack pointer as its identity, so that the frames above it
    lie outward of it as gdb requires."""

    def __init__(self):
        super().__init__("ctp-coroutine")
        self.thread = None  # gdb.InferiorThread whose innermost frame is redirected
        self.regs = None
        self.level = 0  # that frame's level: the number of inlined frames before it

    def __call__(self, pending_frame):
        if self.regs is None or pending_frame.level() != self.level:
            return None
        if gdb.selected_thread() != self.thread:
            return None
        u64 = pending_frame.architecture().integer_type(64, False)
        frame_id = FrameId(gdb.Value(self.regs["rsp"] - 8).cast(u64),
                           pending_frame.read_register("rip"))
        info = pending_frame.create_unwind_info(frame_id)
        for name in SWITCH_REGS:
            info.add_saved_register(name, gdb.Value(self.regs[name]).cast(u64))
        return info

    def redirect(self, thread, regs):
        # The thread's own frames first, unredirected, to count the inlined ones.
        self.thread, self.regs, self.level = thread, None, 0
        gdb.invalidate_cached_frames()
        if regs is not None:
            self.level = innermost_frame().level()
            self.regs = regs
            gdb.invalidate_cached_frames()

    def clear(self):
        self.thread, self.regs = None, None
        gdb.invalidate_cached_frames()


def innermost_frame():
    """The selected thread's innermost frame that is not a call inlined into it."""
    frame = gdb.newest_frame()
    while frame.type() == gdb.INLINE_FRAME and frame.older() is not None:
        frame = frame.older()
    return frame


def first_coroutine_frame():
    """While the unwinder redirects the selected thread: the coroutine's innermost frame."""
    return innermost_frame().older()


class FrameId:
    def __init__(self, sp, pc):
        self.sp = sp
        self.pc = pc


class ThreadFrameLabel(FrameDecorator if gdb else object):
    """A frame of a thread redirected into a coroutine that is the thread's own, named as such."""

    def __init__(self, base, label):
        super().__init__(base)
        self.label = label

    def function(self):
        return self.label

    def frame_args(self):
        return None

    def frame_locals(self):
        return None

    def filename(self):
        return None

    def line(self):
        return None


class RedirectedFrameFilter:
    """In `bt` after `ctp switch` on a core, says that frame #0 (and any inlined into the same
    function) is not the coroutine's: its registers are the thread's, and what gdb would show of
    its arguments is meaningless."""

    def __init__(self, state, unwinder):
        self.name = "ctp-coroutine"
        self.priority = 100
        self.enabled = True
        self.state = state
        self.unwinder = unwinder

    def filter(self, frames):
        st = self.state
        if not st.active() or st.saved is not None or gdb.selected_thread() != st.thread:
            return frames
        own = self.unwinder.level
        label = "[thread %d's own frame; coroutine %d starts at #%d]" % (
            st.thread.num, st.coro, own + 1)
        return (ThreadFrameLabel(f, label) if f.inferior_frame().level() <= own else f
                for f in frames)


# ---- State across commands ----------------------------------------------------------------------

class SwitchState:
    """What `ctp switch` changed, for `ctp restore`."""

    def __init__(self):
        self.coro = None
        self.thread = None
        self.saved = None  # the thread's own registers, when they were written (live)

    def active(self):
        return self.coro is not None


def read_registers(names):
    frame = gdb.newest_frame()
    return {name: int(frame.read_register(name)) & 0xFFFFFFFFFFFFFFFF for name in names}


def write_registers(regs, order):
    gdb.newest_frame().select()
    for name in order:
        gdb.execute("set $%s = %d" % (name, regs[name]), to_string=True)


def restore_switch(state, unwinder):
    """Puts the thread's own registers back (or drops the redirection); True if there was a
    switch to undo."""
    if not state.active():
        return False
    if state.saved is not None:
        previous = gdb.selected_thread()
        if state.thread.is_valid():
            state.thread.switch()
            # rip before orig_rax: a write of the pc may reset orig_rax; the original goes last.
            write_registers(state.saved, KEPT_REGS)
            if previous is not None and previous.is_valid():
                previous.switch()
    unwinder.clear()
    state.__init__()
    return True


# ---- Commands --------------------------------------------------------------------------------

def find_station(stations, coro):
    for s in stations:
        if s.coro == coro:
            return s
    raise CtpError("no coroutine %d in this process (ctp coroutines lists them)" % coro)


def parse_coro(arg, usage):
    args = gdb.string_to_argv(arg)
    if not args:
        raise gdb.GdbError("usage: " + usage)
    try:
        return int(args[0], 0), args[1:]
    except ValueError:
        raise gdb.GdbError("not a coroutine id: %s (usage: %s)" % (args[0], usage))


def inferior_or_error():
    inf = gdb.selected_inferior()
    if inf.pid == 0:
        raise gdb.GdbError("ctp: no process: attach to one (gdb -p PID) or open a core file")
    return inf


class CtpCommand(gdb.Command if gdb else object):
    """ctp: the coroutines of a program traced by ctp (live or in a core file).

ctp coroutines       list every coroutine: id, kind, state, thread, wait, entry, call site
ctp bt N [COUNT]     backtrace of suspended coroutine N, unwound from its saved registers
ctp switch N         make gdb's frames coroutine N's (bt, frame, up, info locals)
ctp restore          back to the thread's own frames

See docs/gdb.md."""

    def __init__(self):
        super().__init__("ctp", gdb.COMMAND_STACK, gdb.COMPLETE_NONE, True)


class CtpSubcommand(gdb.Command if gdb else object):
    """A ctp subcommand: errors of the segment become gdb errors, said once."""

    def invoke(self, arg, from_tty):
        try:
            self.run(arg, inferior_or_error())
        except CtpError as e:
            raise gdb.GdbError("ctp: %s" % e)


class CoroutinesCommand(CtpSubcommand):
    """List the coroutines of the process: id, kind, state, thread, wait, entry, call site.

Usage: ctp coroutines [--full-names]
Each line: the coroutine's id, its kind (thread: a thread's own stack; ucontext; fcontext), its
state, the gdb thread running it (or the last that did), the fd and operation it waits on
("closed" when the fd was closed under it), its entry function and where it suspended (the call
site of its switch). A state reads "running (mid-switch)" on a thread stopped inside the
tracer's switch hook, for the coroutine that runs there until the switch is made. C++ names are
shortened, each outermost template argument list written as <...>; --full-names keeps them."""

    def __init__(self):
        super().__init__("ctp coroutines", gdb.COMMAND_STACK, gdb.COMPLETE_NONE)

    def run(self, arg, inf):
        words = arg.split()
        if words not in ([], ["--full-names"]):
            raise gdb.GdbError("usage: ctp coroutines [--full-names]")
        full = words == ["--full-names"]
        seg = Segment(inf)
        # An exited coroutine's station waits to be recycled: it is no longer a coroutine.
        every = seg.stations()
        stations = [s for s in every if s.state != STATE_EXITED]
        counts = {}
        for s in stations:
            counts[s.state_name] = counts.get(s.state_name, 0) + 1
        summary = ", ".join("%d %s" % (n, name) for name, n in sorted(counts.items()))
        ended = len(every) - len(stations)
        gdb.write("ctp: process %d, %d coroutines and threads (%s)%s\n"
                  % (seg.header["pid"], len(stations), summary or "none",
                     "; %d ended, not listed" % ended if ended else ""))
        rows = [("id", "kind", "state", "thread", "waits on", "entry", "suspended at")]
        for s in stations:
            wait = s.wait()
            waits = "-" if wait is None else "%s fd %d%s" % (
                wait[0], wait[1], " (closed)" if wait[2] else "")
            entry = function_name(s.entry, full) if s.entry else "-"
            site = (describe_pc(s.call_site(), full=full)
                    if s.suspended and s.call_site() else "-")
            state = (s.state_name + (" (torn)" if s.torn else "") +
                     (" (mid-switch)" if s.mid_switch else ""))
            rows.append(("#%d" % s.coro, s.kind_name, state, describe_thread(inf, s.tid),
                         waits, entry, site))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
        for r in rows:
            gdb.write("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1] + "\n")


def frame_line(level, frame):
    """`#N  0x... in func (args) at file:line`, as gdb's bt prints a frame."""
    pc = frame.pc()
    name = frame.name() or "??"
    args = []
    try:
        block = frame.block()
        while block.function is None and block.superblock is not None:
            block = block.superblock
        for sym in block:
            if sym.is_argument:
                try:
                    args.append("%s=%s" % (sym.print_name, frame.read_var(sym, block)))
                except (gdb.error, ValueError):
                    args.append("%s=<unavailable>" % sym.print_name)
    except RuntimeError:
        pass
    text = "#%-2d 0x%016x in %s (%s)" % (level, pc, name, ", ".join(args))
    sal = frame.find_sal()
    if sal.symtab is not None and sal.line:
        text += " at %s:%d" % (sal.symtab.filename, sal.line)
    elif gdb.solib_name(pc):
        text += " from %s" % gdb.solib_name(pc)
    return text


class BtCommand(CtpSubcommand):
    """Backtrace of a suspended coroutine, unwound by gdb from the registers its switch saved.

Usage: ctp bt N [COUNT]
N is a coroutine id of `ctp coroutines`; COUNT limits the frames (default: all). Works on a
live process and on a core file, and changes nothing in the process: gdb unwinds the coroutine's
stack from its saved context. The first frame is the code that called the switch (the tracer's
own hook is left out). A running coroutine's stack is its thread's: `thread T` and `bt`."""

    def __init__(self, unwinder):
        super().__init__("ctp bt", gdb.COMMAND_STACK, gdb.COMPLETE_NONE)
        self.unwinder = unwinder

    def run(self, arg, inf):
        coro, rest = parse_coro(arg, "ctp bt N [COUNT]")
        limit = None
        if rest:
            try:
                limit = int(rest[0], 0)
            except ValueError:
                raise gdb.GdbError("not a frame count: %s" % rest[0])
        station = find_station(Segment(inf).stations(), coro)
        if not station.suspended:
            raise CtpError(not_suspended(inf, station))
        regs = saved_registers(inf, station)
        if regs is None:
            self.recorded_stack(station)
            return
        thread = gdb.selected_thread()
        previous = self.unwinder.thread, self.unwinder.regs
        self.unwinder.redirect(thread, regs)
        try:
            lines = self.walk(station, limit)
        finally:
            self.unwinder.redirect(*previous)
        for line in lines:
            gdb.write(line + "\n")

    def walk(self, station, limit):
        frame = first_coroutine_frame()
        # Skip the tracer's hook: the stack proper starts at the switch's call site.
        skipped = 0
        site = station.call_site()
        while site and frame is not None and frame.pc() != site and skipped < OWN_FRAMES_MAX:
            frame = frame.older()
            skipped += 1
        if frame is None or (site and frame.pc() != site):
            frame = first_coroutine_frame()  # not found: show all, hook included
        lines = []
        while frame is not None and (limit is None or len(lines) < limit):
            lines.append(frame_line(len(lines), frame))
            try:
                frame = frame.older()
            except gdb.error as e:
                lines.append("(unwinding stopped: %s)" % e)
                break
        if not lines:
            raise CtpError("gdb could not unwind coroutine %d from its saved context"
                           % station.coro)
        return lines

    def recorded_stack(self, station):
        gdb.write("coroutine %d has no saved context (it left with setcontext); the stack the "
                  "tracer recorded:\n" % station.coro)
        for i, pc in enumerate(station.frames):
            gdb.write("#%-2d %s\n" % (i, describe_pc(pc)))


def not_suspended(inf, station):
    if station.state == STATE_RUNNING:
        t = thread_of(inf, station.tid)
        how = "`thread %d`, then `bt`" % t.num if t else "its thread is gone"
        return ("coroutine %d is running on thread %s: its stack is the thread's (%s)"
                % (station.coro, describe_thread(inf, station.tid), how))
    return "coroutine %d is %s, not suspended" % (station.coro, station.state_name)


class SwitchCommand(CtpSubcommand):
    """Make gdb's frames a suspended coroutine's, so that bt, frame, up and info locals work on it.

Usage: ctp switch N
On a live process the selected thread's registers are replaced by those coroutine N's switch
saved (the thread's own are kept): frame #0 is then the coroutine's. Run `ctp restore` before
continuing or detaching (gdb's exit restores them too). On a core file, whose registers cannot be
written, the thread's innermost frame is made to return into the coroutine: frame #1 and up are
the coroutine's (further up where the thread stopped in code inlined into its innermost frame,
which gdb shows as frames of their own), and the coroutine's first frame is selected."""

    def __init__(self, state, unwinder):
        super().__init__("ctp switch", gdb.COMMAND_STACK, gdb.COMPLETE_NONE)
        self.state = state
        self.unwinder = unwinder

    def run(self, arg, inf):
        coro, rest = parse_coro(arg, "ctp switch N")
        if rest:
            raise gdb.GdbError("usage: ctp switch N")
        station = find_station(Segment(inf).stations(), coro)
        if not station.suspended:
            raise CtpError(not_suspended(inf, station))
        regs = saved_registers(inf, station)
        if regs is None:
            raise CtpError("coroutine %d has no saved context (it left with setcontext): "
                           "`ctp bt %d` shows the stack the tracer recorded" % (coro, coro))
        thread = gdb.selected_thread()
        if self.state.active() and self.state.thread != thread:
            restore_switch(self.state, self.unwinder)
        if self.write_live(thread, regs):
            mode = "registers of thread %d set to coroutine %d's; `ctp restore` puts them back " \
                   "(do it before continuing or detaching)" % (thread.num, coro)
        else:
            self.unwinder.redirect(thread, regs)
            first_coroutine_frame().select()
            own = self.unwinder.level
            mode = "the registers cannot be written here (a core file): frame%s stay%s " \
                   "thread %d's, frame #%d and up are coroutine %d's" % (
                       " #0" if own == 0 else "s #0-#%d" % own, "s" if own == 0 else "",
                       thread.num, own + 1, coro)
        self.state.coro, self.state.thread = coro, thread
        gdb.write("ctp: switched to coroutine %d: %s\n" % (coro, mode))
        gdb.execute("frame", to_string=False)

    def write_live(self, thread, regs):
        """Writes regs into thread; False (and nothing changed) where registers are read-only."""
        first_switch = self.state.saved is None
        if first_switch:
            self.unwinder.clear()
            self.state.saved = read_registers(KEPT_REGS)
        try:
            # rip differs from the thread's own, so this first write is a real one (gdb skips
            # writing a register its own value): a core file refuses it, before anything changed.
            write_registers(regs, SWITCH_REGS[:1])
        except gdb.error:
            if first_switch:
                self.state.saved = None
                return False
            raise
        try:
            write_registers(regs, SWITCH_REGS[1:])
        except gdb.error:
            write_registers(self.state.saved, KEPT_REGS)
            self.state.saved = None
            raise
        return True


class RestoreCommand(CtpSubcommand):
    """Back to the thread's own frames after `ctp switch`.

Usage: ctp restore"""

    def __init__(self, state, unwinder):
        super().__init__("ctp restore", gdb.COMMAND_STACK, gdb.COMPLETE_NONE)
        self.state = state
        self.unwinder = unwinder

    def invoke(self, arg, from_tty):
        if arg.strip():
            raise gdb.GdbError("usage: ctp restore")
        coro, thread = self.state.coro, self.state.thread
        if not restore_switch(self.state, self.unwinder):
            raise gdb.GdbError("ctp: not switched to a coroutine (ctp switch N)")
        gdb.write("ctp: back from coroutine %d to thread %d's own frames\n" % (coro, thread.num))
        gdb.newest_frame().select()
        gdb.execute("frame", to_string=False)


def install():
    """Registers the commands and the unwinder; sourcing the file again replaces them."""
    old = getattr(gdb, "_ctp_extension", None)
    if old is not None:
        restore_switch(old["state"], old["unwinder"])
        gdb.events.gdb_exiting.disconnect(old["on_exit"])
    state = SwitchState()
    unwinder = CoroutineUnwinder()
    gdb.unwinder.register_unwinder(None, unwinder, replace=True)

    def on_exit(event):
        # gdb is leaving (quit, end of -batch) and may detach from the process: never leave
        # its thread running on a coroutine's registers.
        try:
            restore_switch(state, unwinder)
        except gdb.error:
            pass

    gdb.events.gdb_exiting.connect(on_exit)
    gdb.frame_filters["ctp-coroutine"] = RedirectedFrameFilter(state, unwinder)
    CtpCommand()
    CoroutinesCommand()
    BtCommand(unwinder)
    SwitchCommand(state, unwinder)
    RestoreCommand(state, unwinder)
    gdb._ctp_extension = {"state": state, "unwinder": unwinder, "on_exit": on_exit}


if gdb is not None:
    install()
elif __name__ == "__main__":
    if sys.argv[1:] != ["--layout"]:
        sys.exit("usage: python3 ctp.py --layout   (in gdb: source ctp.py; then help ctp)")
    print("\n".join(layout_lines()))
