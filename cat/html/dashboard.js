/* The dashboard's script: reads the trace's data from the page's JSON block and builds the
 * summary, the findings, the stuck groups, the per-thread timeline and the per-coroutine view.
 * Every string from the trace goes into the page as text (textContent, text nodes), never as
 * markup. The data's layout is written by cat/html_data.c and described in docs/dashboard.md. */
"use strict";

(function () {
	var started = performance.now();
	var D = JSON.parse(document.getElementById("ctp-data").textContent);

	/* Coroutine fields, by position in each `coros` entry (see html_data.c). */
	var C_PID = 0, C_ID = 1, C_KIND = 2, C_ENTRY = 3, C_PARENT = 4, C_TID = 5, C_CREATED = 6,
		C_CSTACK = 7, C_STATE = 8, C_SINCE = 9, C_SSTACK = 10, C_RESUMES = 11, C_ENDED = 12,
		C_FD = 13, C_OP = 14, C_HIST = 15, C_OMIT_AT = 16, C_OMITTED = 17;
	/* History events, 5 numbers each: time, event, thread, stack, other coroutine. */
	var EV_NAMES = ["created", "resumed", "suspended", "ended"];
	var ROW_LIMIT = 2000;

	var coros = D.coros;
	var selected = -1;

	/* ---- small helpers ---- */

	function el(tag, cls, text) {
		var e = document.createElement(tag);
		if (cls)
			e.className = cls;
		if (text !== undefined && text !== null)
			e.textContent = String(text);
		return e;
	}

	function add(parent) {
		for (var i = 1; i < arguments.length; i++) {
			var c = arguments[i];
			if (c === null || c === undefined)
				continue;
			parent.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
		}
		return parent;
	}

	function fmtInt(n) {
		return Number(n).toLocaleString("en-US");
	}

	function fmtDur(ns) {
		if (ns === null || ns === undefined || ns < 0)
			return "?";
		if (ns < 1000)
			return Math.round(ns) + " ns";
		if (ns < 1e6)
			return (ns / 1e3).toPrecision(3) + " µs";
		if (ns < 1e9)
			return (ns / 1e6).toPrecision(3) + " ms";
		return (ns / 1e9).toFixed(ns < 1e11 ? 3 : 1) + " s";
	}

	function fmtTime(rel) {
		return rel === null || rel === undefined || rel < 0 ? "?" : "+" + fmtDur(rel);
	}

	/* A C++ name for people, as the text report writes it: each outermost template argument
	 * list as <...> (an Asio frame's name runs to thousands of characters). Operators whose
	 * brackets are no template's (operator<<, operator->) stay. The full name is the title. */
	var ANGLE_OPERATOR = /^operator(<=>|<<=|>>=|<<|>>|<=|>=|->\*|->|<|>)/;
	function shortName(name) {
		if (!name)
			return name;
		var out = "", depth = 0, i = 0;
		while (i < name.length) {
			var op = depth ? null : ANGLE_OPERATOR.exec(name.slice(i, i + 11));
			if (op) {
				out += op[0];
				i += op[0].length;
				continue;
			}
			if (name[i] === "-" && name[i + 1] === ">") {
				if (!depth)
					out += "->";
				i += 2;
				continue;
			}
			var ch = name[i++];
			if (ch === "<" && depth++ === 0)
				out += "<...";
			else if (ch === ">" && depth && --depth === 0)
				out += ">";
			else if (!depth)
				out += ch;
		}
		return out;
	}

	/* A coroutine the page refers to but does not list (an ended one past the page's cap). */
	var NOT_LISTED = -2;

	function coroName(i) {
		if (i === NOT_LISTED)
			return "an ended coroutine not listed";
		if (i < 0 || i >= coros.length)
			return "unknown coroutine";
		var c = coros[i];
		return "coroutine " + c[C_ID] + (c[C_ENTRY] ? " (" + shortName(c[C_ENTRY]) + ")" :
			c[C_KIND] === "thread" ? " (thread " + c[C_TID] + ")" : "");
	}

	function coroLink(i) {
		if (i === NOT_LISTED)
			return el("span", "none", coroName(i));
		if (i < 0 || i >= coros.length)
			return el("span", "none", "unknown");
		var a = el("a", "coro-link", coroName(i));
		a.addEventListener("click", function (ev) {
			ev.preventDefault();
			select(i, true);
		});
		return a;
	}

	function basename(p) {
		if (!p)
			return "";
		var k = p.lastIndexOf("/");
		return k < 0 ? p : p.slice(k + 1);
	}

	/* A symbolized stack as a table, innermost frame first. The tracer's own frames and the
	 * C library's context start are greyed: they are how every coroutine begins. */
	function stackTable(idx) {
		if (idx === null || idx === undefined || idx < 0 || !D.stacks[idx])
			return el("span", "none", "no stack recorded");
		var t = el("table", "stack");
		D.stacks[idx].forEach(function (f, n) {
			/* f: [sym, off, file, line, module, addr, module_off if known] */
			var mod = basename(f[4]);
			var tr = el("tr", isForeign(f) ? "foreign" : "");
			var where = f[0] ? shortName(f[0]) + "+0x" + Number(f[1]).toString(16) : place(f);
			var name = el("td", "", where);
			if (f[0])
				name.title = f[0];
			add(tr, el("td", "", "#" + n), name,
				el("td", "file", f[2] ? f[2] + (f[3] ? ":" + f[3] : "") : ""),
				el("td", "file", mod));
			t.appendChild(tr);
		});
		return t;
	}

	/* A frame without a name: its module's file and its address there (what addr2line takes
	 * once the process is gone), else its address. */
	function place(f) {
		return f[4] && f[6] ? basename(f[4]) + "+" + f[6] : f[5];
	}

	function isForeign(f) {
		return basename(f[4]).indexOf("libctp_preload") === 0 || f[0] === "__start_context";
	}

	/* Where a stack is, in one line: its innermost frames of the program itself. */
	function where(idx) {
		var frames = (idx >= 0 && D.stacks[idx]) || [];
		var names = frames.filter(function (f) {
			return !isForeign(f);
		}).slice(0, 3).map(function (f) {
			return shortName(f[0]) || place(f);
		});
		return names.length ? names.join(" ← ") : "an unknown place";
	}

	function stackDetails(idx, label) {
		if (idx === null || idx === undefined || idx < 0)
			return el("span", "none", "no stack");
		var d = el("details");
		var top = D.stacks[idx] && D.stacks[idx][0];
		add(d, el("summary", "", label || where(idx)), stackTable(idx));
		return d;
	}

	/* ---- header and summary ---- */

	function renderHeader() {
		document.getElementById("source").textContent = D.source || "";
		document.title = "ctp dashboard: " + (D.source || "trace");
		document.getElementById("tool").textContent = "written by " + (D.tool || "?") +
			"; trace from " + (D.trace_tool || "?");
		var notes = [];
		if (D.end_note)
			notes.push(D.end_note);
		if (D.summary.lost > 0)
			notes.push(fmtInt(D.summary.lost) + " events were lost: the timeline and " +
				"histories miss them, and findings may be wrong.");
		else if (D.uncertain)
			notes.push("Some processes have no recorded end: findings may be incomplete.");
		if (notes.length) {
			var b = document.getElementById("banner");
			b.hidden = false;
			b.textContent = notes.join(" ");
		}
	}

	function renderSummary() {
		var s = D.summary;
		var cards = [
			["processes", "Processes", fmtInt(s.processes), s.processes],
			["coroutines", "Coroutines", fmtInt(s.coroutines), s.coroutines],
			["threads", "Threads", fmtInt(s.threads), s.threads],
			["switches", "Switches", fmtInt(s.switches), s.switches],
			["lost", "Events lost", fmtInt(s.lost), s.lost],
			["duration", "Duration", fmtDur(s.duration_ns), s.duration_ns],
			["findings", "Findings", fmtInt(s.findings), s.findings],
		];
		var box = document.getElementById("summary");
		cards.forEach(function (c) {
			var card = el("div", "card");
			if ((c[0] === "lost" || c[0] === "findings") && c[3] > 0)
				card.className += " bad";
			var v = el("div", "value", c[2]);
			v.id = "sum-" + c[0];
			v.setAttribute("data-value", String(c[3]));
			add(card, v, el("div", "label", c[1]));
			box.appendChild(card);
		});

		var t = document.getElementById("processes");
		var head = el("tr");
		["pid", "program", "arguments", "end", "coroutines", "switches"].forEach(function (h) {
			head.appendChild(el("th", "", h));
		});
		t.appendChild(head);
		D.procs.forEach(function (p) {
			var tr = el("tr");
			add(tr, el("td", "mono", p.pid), el("td", "mono", p.exe || "?"),
				el("td", "mono", (p.argv || []).join(" ")),
				el("td", "", p.exit || "no exit recorded"),
				el("td", "", fmtInt(p.coroutines)), el("td", "", fmtInt(p.switches)));
			t.appendChild(tr);
		});
	}

	/* ---- findings ---- */

	var SEVERITY = {
		crash: "failure", lost_wakeup: "failure", missed_readiness: "failure",
		stuck: "stuck", never_yielded: "note", leak: "note",
	};

	function fdText(f) {
		return "fd " + f.fd + (f.op ? " (" + f.op + ")" : "");
	}

	function findingText(f, p) {
		switch (f.kind) {
		case "crash":
			add(p, "Process " + f.pid + " died by signal " + f.signal);
			if (f.tid)
				add(p, " on thread " + f.tid);
			if (f.coro >= 0)
				add(p, " in ", coroLink(f.coro));
			if (f.addr)
				add(p, " at " + f.addr);
			add(p, ".");
			break;
		case "lost_wakeup":
			add(p, coroLink(f.coro), " waits on " + fdText(f) + " since " + fmtTime(f.ts) +
				"; the fd was closed");
			if (f.close) {
				add(p, " at " + fmtTime(f.close.ts));
				if (f.close.coro >= 0)
					add(p, " by ", coroLink(f.close.coro));
				if (f.close.tid)
					add(p, " on thread " + f.close.tid);
			}
			add(p, ", and nothing resumed it (" + fmtDur(f.dur) + " until the end).");
			break;
		case "missed_readiness":
			add(p, fdText(f) + " was ready at " + fmtTime(f.ts) + " but ", coroLink(f.coro),
				f.at_end ? " was not resumed by the end (" + fmtDur(f.dur) + ")." :
					" was resumed only " + fmtDur(f.dur) + " later.");
			break;
		case "stuck":
			add(p, f.members.length + " coroutine" + (f.members.length === 1 ? "" : "s") +
				" suspended at the same place and never resumed, for up to " +
				fmtDur(f.dur) + ".");
			break;
		case "never_yielded":
			add(p, coroLink(f.coro), " ran for " + fmtDur(f.dur) + " from " + fmtTime(f.ts) +
				" without switching" + (f.tid ? " on thread " + f.tid : "") +
				(f.at_end ? ", and was still running at the end." : "."));
			break;
		case "leak":
			add(p, f.members.length + " coroutine" + (f.members.length === 1 ? "" : "s") +
				" created at the same place never ended.");
			break;
		default:
			add(p, "Finding of a kind this page does not know.");
		}
	}

	function members(f) {
		var box = el("div", "members");
		f.members.forEach(function (m, k) {
			var b = el("button", "chip", m >= 0 && m < coros.length ? coros[m][C_ID] : "?");
			b.type = "button";
			if (f.fds && f.fds[k] >= 0)
				b.title = "waits on fd " + f.fds[k];
			b.addEventListener("click", function () {
				select(m, true);
			});
			box.appendChild(b);
		});
		return box;
	}

	function renderFindings() {
		var box = document.getElementById("findings");
		document.getElementById("findings-count").textContent = "(" + D.findings.length + ")";
		if (!D.findings_available) {
			box.appendChild(el("p", "none", "The analysis did not run: no findings."));
			return;
		}
		if (!D.findings.length) {
			box.appendChild(el("p", "none", "No findings: no crash, lost wakeup, missed " +
				"readiness, stuck coroutine, long run or leak was seen."));
			return;
		}
		/* Findings alike (same kind, process and stacks) make one card: a server that strands
		 * 47 readers has one bug to show, not 47. */
		var groups = [], byKey = {};
		D.findings.forEach(function (f) {
			var k = [f.kind, f.pid, f.stack, f.op, f.close ? f.close.stack : -2,
				f.kind === "stuck" || f.kind === "leak" || f.kind === "crash" ?
					groups.length : ""].join("/");
			if (!byKey[k]) {
				byKey[k] = [];
				groups.push(byKey[k]);
			}
			byKey[k].push(f);
		});
		groups.forEach(function (g) {
			box.appendChild(g.length === 1 ? findingCard(g[0]) : findingGroupCard(g));
		});
	}

	function stackLabel(f) {
		return (f.kind === "leak" ? "created at" : f.kind === "crash" ? "died at" :
			f.kind === "never_yielded" ? "switched away at" : "suspended at") + " " +
			where(f.stack);
	}

	function findingStacks(d, f) {
		if (f.stack >= 0)
			d.appendChild(stackDetails(f.stack, stackLabel(f)));
		if (f.close && f.close.stack >= 0)
			d.appendChild(stackDetails(f.close.stack, "closed at " + where(f.close.stack)));
	}

	function findingCard(f) {
		var d = el("div", "finding sev-" + (SEVERITY[f.kind] || "note"));
		d.setAttribute("data-kind", f.kind);
		d.setAttribute("data-count", "1");
		var p = el("div");
		add(p, el("span", "kind", f.kind), "pid " + f.pid + ": ");
		findingText(f, p);
		if (f.uncertain)
			add(p, el("span", "tag", "uncertain: events lost or end not seen"));
		d.appendChild(p);
		if (f.members && f.members.length && f.kind !== "stuck")
			d.appendChild(members(f));
		findingStacks(d, f);
		return d;
	}

	var GROUP_TEXT = {
		lost_wakeup: "coroutines wait on an fd that was closed while they waited, and " +
			"nothing resumed them",
		missed_readiness: "coroutines were not resumed in time after their fd became ready",
		never_yielded: "coroutines ran a long time without switching",
	};

	function findingGroupCard(g) {
		var f = g[0];
		var d = el("div", "finding sev-" + (SEVERITY[f.kind] || "note"));
		d.setAttribute("data-kind", f.kind);
		d.setAttribute("data-count", String(g.length));
		var p = el("div");
		add(p, el("span", "kind", f.kind + " × " + g.length), "pid " + f.pid + ": " + g.length +
			" " + (GROUP_TEXT[f.kind] || "findings alike") + ".");
		var fds = g.filter(function (x) {
			return x.fd >= 0;
		}).map(function (x) {
			return x.fd;
		});
		if (fds.length)
			add(p, " fds " + fds.slice(0, 12).join(", ") + (fds.length > 12 ? ", …" : "") +
				(f.op ? " (" + f.op + ")" : "") + ".");
		var closers = {};
		g.forEach(function (x) {
			if (x.close)
				closers[x.close.coro + "/" + x.close.tid] = x.close;
		});
		var keys = Object.keys(closers);
		if (keys.length === 1) {
			var c = closers[keys[0]];
			add(p, " All closed by ", coroLink(c.coro), c.tid ? " on thread " + c.tid : "", ".");
		}
		if (g.some(function (x) {
			return x.uncertain;
		}))
			add(p, el("span", "tag", "uncertain: events lost or end not seen"));
		d.appendChild(p);
		d.appendChild(members({
			members: g.map(function (x) {
				return x.coro;
			}),
			fds: g.map(function (x) {
				return x.fd;
			}),
		}));
		findingStacks(d, f);
		/* Each one's own sentence, made when asked for. */
		var each = el("details");
		each.appendChild(el("summary", "", "each of the " + g.length));
		each.addEventListener("toggle", function () {
			if (!each.open || each.childNodes.length > 1)
				return;
			g.forEach(function (x) {
				var line = el("div", "each");
				findingText(x, line);
				each.appendChild(line);
			});
		});
		d.appendChild(each);
		return d;
	}

	/* ---- stuck groups ---- */

	function renderStuck() {
		var box = document.getElementById("stuck");
		var groups = D.findings.filter(function (f) {
			return f.kind === "stuck";
		});
		var n = 0;
		groups.forEach(function (g) {
			n += g.members.length;
		});
		document.getElementById("stuck-count").textContent =
			"(" + n + " in " + groups.length + " group" + (groups.length === 1 ? "" : "s") + ")";
		if (!groups.length) {
			box.appendChild(el("p", "none", D.findings_available ?
				"No coroutine was left suspended." : "The analysis did not run."));
			return;
		}
		groups.forEach(function (g) {
			var d = el("div", "group");
			d.setAttribute("data-members", String(g.members.length));
			var h = el("div");
			add(h, el("strong", "", g.members.length + " × " + where(g.stack)),
				" in pid " + g.pid + ", suspended since " + fmtTime(g.ts) + ", up to " +
				fmtDur(g.dur));
			if (g.uncertain)
				add(h, el("span", "tag", "uncertain"));
			add(d, h, stackTable(g.stack), members(g));
			box.appendChild(d);
		});
	}

	/* ---- timeline ---- */

	var canvas = document.getElementById("timeline");
	var tooltip = document.getElementById("tooltip");
	var LABEL_W = 170, AXIS_H = 22, ROW_H = 22, ROW_GAP = 4;
	var rows = D.threads.map(function (th) {
		/* Segments come as [start delta, duration, coroutine, runs] from html_timeline.c. */
		var n = th.segs.length / 4;
		var start = new Float64Array(n), end = new Float64Array(n);
		var coro = new Int32Array(n), runs = new Int32Array(n);
		var t = 0;
		for (var i = 0; i < n; i++) {
			t += th.segs[4 * i];
			start[i] = t;
			end[i] = t + th.segs[4 * i + 1];
			coro[i] = th.segs[4 * i + 2];
			runs[i] = th.segs[4 * i + 3];
		}
		return {pid: th.pid, tid: th.tid, start: start, end: end, coro: coro, runs: runs};
	});
	var full = [0, Math.max(1, D.t1)];
	var view = full.slice();

	function coroColor(i) {
		if (i === NOT_LISTED)
			return "#b3bfcf";
		if (i < 0 || i >= coros.length)
			return "#d0d4d8";
		if (coros[i][C_KIND] === "thread")
			return "#aab3bc"; /* a thread's own stack: the scheduler, in grey */
		return "hsl(" + Math.round((i * 137.508) % 360) + ",62%,52%)";
	}

	function plotWidth() {
		return canvas.clientWidth - LABEL_W;
	}

	function xOf(t) {
		return LABEL_W + (t - view[0]) / (view[1] - view[0]) * plotWidth();
	}

	function tOf(x) {
		return view[0] + (x - LABEL_W) / plotWidth() * (view[1] - view[0]);
	}

	/* First segment of `r` that ends at or after `t`. */
	function firstEndingAfter(r, t) {
		var lo = 0, hi = r.end.length;
		while (lo < hi) {
			var mid = (lo + hi) >> 1;
			if (r.end[mid] < t)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo;
	}

	function niceStep(span, px) {
		var raw = span / Math.max(1, px / 110);
		var p = Math.pow(10, Math.floor(Math.log10(raw)));
		var m = raw / p;
		return (m < 2 ? 2 : m < 5 ? 5 : 10) * p;
	}

	function draw() {
		var dpr = window.devicePixelRatio || 1;
		var w = canvas.clientWidth;
		var h = AXIS_H + Math.max(1, rows.length) * (ROW_H + ROW_GAP) + 4;
		canvas.style.height = h + "px";
		if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
			canvas.width = Math.round(w * dpr);
			canvas.height = Math.round(h * dpr);
		}
		var g = canvas.getContext("2d");
		g.setTransform(dpr, 0, 0, dpr, 0, 0);
		g.clearRect(0, 0, w, h);
		g.font = "11px system-ui, sans-serif";
		g.textBaseline = "middle";

		/* time axis */
		var span = view[1] - view[0];
		var step = niceStep(span, w - LABEL_W);
		g.fillStyle = "#5b6672";
		g.strokeStyle = "#e6eaee";
		for (var t = Math.ceil(view[0] / step) * step; t <= view[1]; t += step) {
			var x = xOf(t);
			g.beginPath();
			g.moveTo(x + 0.5, AXIS_H - 4);
			g.lineTo(x + 0.5, h);
			g.stroke();
			g.fillText(fmtTime(t), x + 3, AXIS_H / 2);
		}

		rows.forEach(function (r, k) {
			var y = AXIS_H + k * (ROW_H + ROW_GAP);
			g.fillStyle = "#1d232a";
			g.fillText("pid " + r.pid + " · tid " + r.tid, 6, y + ROW_H / 2);
			g.save();
			g.beginPath();
			g.rect(LABEL_W, y, w - LABEL_W, ROW_H);
			g.clip();
			var lastPx = -1;
			for (var i = firstEndingAfter(r, view[0]); i < r.start.length; i++) {
				if (r.start[i] > view[1])
					break;
				var x0 = xOf(r.start[i]), x1 = xOf(r.end[i]);
				/* Many runs inside one pixel: draw the first, skip the rest. */
				if (x1 - x0 < 1) {
					var px = Math.floor(x0);
					if (px === lastPx)
						continue;
					lastPx = px;
				}
				var c = r.coro[i];
				g.globalAlpha = selected < 0 || c === selected ? 1 : 0.22;
				g.fillStyle = coroColor(c);
				g.fillRect(x0, y, Math.max(1, x1 - x0), ROW_H);
				if (r.runs[i] > 1) {
					/* A bucket of several short runs, shown by its main coroutine:
					 * marked with a dark band. */
					g.fillStyle = "rgba(0,0,0,0.35)";
					g.fillRect(x0, y, Math.max(1, x1 - x0), 3);
				}
			}
			g.globalAlpha = 1;
			g.restore();
		});
		document.getElementById("timeline-range").textContent =
			"(" + fmtTime(view[0]) + " – " + fmtTime(view[1]) + ")";
	}

	function hit(mx, my) {
		var k = Math.floor((my - AXIS_H) / (ROW_H + ROW_GAP));
		if (k < 0 || k >= rows.length || mx < LABEL_W)
			return null;
		if ((my - AXIS_H) - k * (ROW_H + ROW_GAP) > ROW_H)
			return null;
		var r = rows[k];
		/* Half a pixel of slack, so that runs narrower than a pixel can be hovered. */
		var slack = (view[1] - view[0]) / plotWidth() / 2;
		var t = tOf(mx);
		var i = firstEndingAfter(r, t - slack);
		if (i >= r.start.length || r.start[i] > t + slack)
			return null;
		return {row: r, i: i};
	}

	var drag = null;

	function setupTimeline() {
		if (!rows.length) {
			document.getElementById("timeline-note").textContent = "No switches were recorded.";
		} else if (D.bucket_ns > 0) {
			document.getElementById("timeline-note").textContent =
				"Runs shorter than " + fmtDur(D.bucket_ns) + " are merged into buckets " +
				"(dark band on top), shown by the coroutine that ran longest in them.";
		}
		canvas.addEventListener("wheel", function (ev) {
			ev.preventDefault();
			var rect = canvas.getBoundingClientRect();
			var mx = ev.clientX - rect.left;
			var t = tOf(Math.max(LABEL_W, mx));
			var f = Math.exp(ev.deltaY * 0.0015);
			var span = Math.min(full[1] - full[0], Math.max(50, (view[1] - view[0]) * f));
			var a = t - (t - view[0]) * span / (view[1] - view[0]);
			a = Math.max(full[0], Math.min(a, full[1] - span));
			view = [a, a + span];
			draw();
		}, {passive: false});
		canvas.addEventListener("mousedown", function (ev) {
			drag = {x: ev.clientX, v: view.slice(), moved: false};
			canvas.classList.add("dragging");
		});
		window.addEventListener("mouseup", function (ev) {
			if (!drag)
				return;
			var wasClick = !drag.moved;
			drag = null;
			canvas.classList.remove("dragging");
			if (wasClick && ev.target === canvas) {
				var rect = canvas.getBoundingClientRect();
				var h = hit(ev.clientX - rect.left, ev.clientY - rect.top);
				if (h)
					select(h.row.coro[h.i], false);
			}
		});
		canvas.addEventListener("mousemove", function (ev) {
			var rect = canvas.getBoundingClientRect();
			var mx = ev.clientX - rect.left, my = ev.clientY - rect.top;
			if (drag) {
				var dx = ev.clientX - drag.x;
				if (Math.abs(dx) > 2)
					drag.moved = true;
				var span = drag.v[1] - drag.v[0];
				var a = drag.v[0] - dx / plotWidth() * span;
				a = Math.max(full[0], Math.min(a, full[1] - span));
				view = [a, a + span];
				draw();
				tooltip.hidden = true;
				return;
			}
			var h = hit(mx, my);
			if (!h) {
				tooltip.hidden = true;
				return;
			}
			var r = h.row, i = h.i;
			var text = coroName(r.coro[i]) + "\n" + fmtTime(r.start[i]) + " – " +
				fmtTime(r.end[i]) + " (" + fmtDur(r.end[i] - r.start[i]) + ")\npid " +
				r.pid + ", thread " + r.tid;
			if (r.runs[i] > 1)
				text += "\n" + fmtInt(r.runs[i]) + " runs merged; the one shown ran longest";
			tooltip.textContent = text;
			tooltip.hidden = false;
			tooltip.style.left = Math.min(mx + 14, canvas.clientWidth - 260) + "px";
			tooltip.style.top = (my + 14) + "px";
		});
		canvas.addEventListener("mouseleave", function () {
			tooltip.hidden = true;
		});
		document.getElementById("timeline-reset").addEventListener("click", function () {
			view = full.slice();
			draw();
		});
		window.addEventListener("resize", draw);
		draw();
	}

	/* ---- coroutines: list and history ---- */

	var filterText = coros.map(function (c) {
		return [c[C_PID], c[C_ID], c[C_KIND], c[C_ENTRY] || "", c[C_STATE] || ""].join(" ")
			.toLowerCase();
	});
	var rowOf = {};

	function renderCoroList() {
		var q = document.getElementById("coro-filter").value.trim().toLowerCase();
		var t = document.getElementById("coros");
		t.textContent = "";
		rowOf = {};
		var head = el("tr");
		["pid", "coro", "kind", "entry", "state", "resumes", "created", "last switch"]
			.forEach(function (h) {
				head.appendChild(el("th", "", h));
			});
		t.appendChild(head);
		var shown = 0, matched = 0;
		for (var i = 0; i < coros.length; i++) {
			if (q && filterText[i].indexOf(q) < 0)
				continue;
			matched++;
			if (shown >= ROW_LIMIT)
				continue;
			shown++;
			var c = coros[i];
			var tr = el("tr", "coro-row" + (i === selected ? " selected" : ""));
			tr.setAttribute("data-idx", String(i));
			var st = el("td", "state-" + (c[C_STATE] || "unknown"), c[C_STATE] || "?");
			add(tr, el("td", "mono", c[C_PID]), el("td", "mono", c[C_ID]),
				el("td", "", c[C_KIND] || "?"),
				el("td", "mono", shortName(c[C_ENTRY]) || (c[C_KIND] === "thread" ?
					"(thread " + c[C_TID] + ")" : "")), st,
				el("td", "", fmtInt(c[C_RESUMES])), el("td", "", fmtTime(c[C_CREATED])),
				el("td", "", fmtTime(c[C_SINCE])));
			rowOf[i] = tr;
			t.appendChild(tr);
		}
		document.getElementById("coro-count").textContent = D.coros_unlisted > 0 ?
			"(" + fmtInt(coros.length) + " of " + fmtInt(coros.length + D.coros_unlisted) +
			": " + fmtInt(D.coros_unlisted) + " ended coroutines not listed, past the first " +
			"and the last " + fmtInt(D.ended_rows / 2) + " to end)" :
			"(" + fmtInt(coros.length) + ")";
		document.getElementById("coro-note").textContent = matched > shown ?
			"Showing " + fmtInt(shown) + " of " + fmtInt(matched) + "; filter to narrow." :
			q ? fmtInt(matched) + " match" + (matched === 1 ? "" : "es") + "." : "";
	}

	function kv(box, k, v) {
		add(box, el("div", "k", k), add(el("div", "v"), v));
	}

	function renderDetail(i) {
		var box = document.getElementById("coro-detail");
		box.textContent = "";
		var c = coros[i];
		box.appendChild(el("h3", "", coroName(i) + " of pid " + c[C_PID]));
		var g = el("div", "kv");
		kv(g, "kind", c[C_KIND] || "?");
		kv(g, "entry", c[C_ENTRY] || "unknown"); /* the full name, in the details */
		kv(g, "parent", c[C_PARENT] >= 0 || c[C_PARENT] === NOT_LISTED ?
			coroLink(c[C_PARENT]) : "none");
		kv(g, "created", c[C_CREATED] >= 0 ? fmtTime(c[C_CREATED]) + " on thread " + c[C_TID] :
			"before the trace began, or not seen");
		kv(g, "creation stack", stackDetails(c[C_CSTACK], "show"));
		var st = el("span", "state-" + (c[C_STATE] || "unknown"), c[C_STATE] || "unknown");
		kv(g, "final state", add(el("span"), st, c[C_SINCE] >= 0 ? " since " +
			fmtTime(c[C_SINCE]) : ""));
		if (c[C_SSTACK] >= 0)
			kv(g, "suspended at", stackTable(c[C_SSTACK]));
		if (c[C_FD] >= 0)
			kv(g, "waits on", "fd " + c[C_FD] + (c[C_OP] ? " (" + c[C_OP] + ")" : ""));
		if (c[C_ENDED] >= 0)
			kv(g, "ended", fmtTime(c[C_ENDED]));
		kv(g, "resumed", fmtInt(c[C_RESUMES]) + " times");
		box.appendChild(g);

		var t = el("table", "grid history");
		var head = el("tr");
		["time", "event", "thread", "with", "stack"].forEach(function (h) {
			head.appendChild(el("th", "", h));
		});
		t.appendChild(head);
		var hist = c[C_HIST];
		var n = hist.length / 5;
		for (var k = 0; k < n; k++) {
			if (c[C_OMITTED] > 0 && k === c[C_OMIT_AT]) {
				var o = el("tr", "ev-omitted");
				var td = el("td", "", "… " + fmtInt(c[C_OMITTED]) + " events not kept …");
				td.colSpan = 5;
				add(t, add(o, td));
			}
			var ev = hist[5 * k + 1];
			var tr = el("tr", "ev-" + EV_NAMES[ev]);
			var peer = hist[5 * k + 4];
			/* Creation names its creator; a resume, who switched to it; a suspend or an end,
			 * whom it switched to. */
			var with_ = peer >= 0 || peer === NOT_LISTED ? add(el("span"), ev === 0 ? "by " :
				ev === 1 ? "from " : "to ", coroLink(peer)) : "";
			add(tr, el("td", "", fmtTime(hist[5 * k])), el("td", "", EV_NAMES[ev] || "?"),
				el("td", "mono", hist[5 * k + 2] || ""), add(el("td"), with_),
				add(el("td"), hist[5 * k + 3] >= 0 ? stackDetails(hist[5 * k + 3]) : ""));
			t.appendChild(tr);
		}
		if (c[C_OMITTED] > 0 && c[C_OMIT_AT] >= n) {
			var o2 = el("tr", "ev-omitted");
			var td2 = el("td", "", n ? "… " + fmtInt(c[C_OMITTED]) + " later events not kept …" :
				"… its " + fmtInt(c[C_OMITTED]) + " events were not kept: the page keeps " +
				"those of the first and the last " + fmtInt(D.ended_rows / 2) +
				" coroutines to end …");
			td2.colSpan = 5;
			add(t, add(o2, td2));
		}
		add(box, el("h3", "", "History"), t);
	}

	function select(i, scroll) {
		if (i < 0 || i >= coros.length)
			return;
		try {
			/* The address names the coroutine shown, so that it can be passed on. */
			var rest = location.hash.replace(/[#&]?coro=[\d:]*/, "");
			history.replaceState(null, "", (rest ? rest + "&" : "#") + "coro=" +
				coros[i][C_PID] + ":" + coros[i][C_ID]);
		} catch (e) {
			/* some browsers refuse it for file: pages; the address is a nicety */
		}
		if (rowOf[selected])
			rowOf[selected].classList.remove("selected");
		selected = i;
		if (rowOf[i]) {
			rowOf[i].classList.add("selected");
			/* Scroll the list only, never the page (scrollIntoView would move both). */
			var box = rowOf[i].closest(".scroll");
			var r = rowOf[i].getBoundingClientRect(), b = box.getBoundingClientRect();
			if (r.top < b.top + 24 || r.bottom > b.bottom)
				box.scrollTop += r.top - b.top - b.height / 2;
		}
		renderDetail(i);
		draw();
		if (scroll)
			document.getElementById("coroutines-section").scrollIntoView();
	}

	function setupCoros() {
		renderCoroList();
		document.getElementById("coro-filter").addEventListener("input", renderCoroList);
		document.getElementById("coros").addEventListener("click", function (ev) {
			var tr = ev.target.closest("tr.coro-row");
			if (tr)
				select(Number(tr.getAttribute("data-idx")), false);
		});
	}

	/* #coro=PID:ID (or #coro=ID) in the address opens that coroutine; t=FROM-TO (ms after
	 * the start) zooms the timeline there. */
	function selectFromAddress() {
		var t = /t=([\d.]+)-([\d.]+)/.exec(location.hash);
		if (t && Number(t[2]) > Number(t[1])) {
			view = [Math.max(full[0], Number(t[1]) * 1e6), Math.min(full[1], Number(t[2]) * 1e6)];
			draw();
		}
		var m = /coro=(?:(\d+):)?(\d+)/.exec(location.hash);
		if (!m)
			return;
		for (var i = 0; i < coros.length; i++)
			if (String(coros[i][C_ID]) === m[2] && (!m[1] || String(coros[i][C_PID]) === m[1])) {
				select(i, false);
				return;
			}
	}

	renderHeader();
	renderSummary();
	renderFindings();
	renderStuck();
	setupTimeline();
	setupCoros();
	selectFromAddress();
	document.documentElement.setAttribute("data-ctp-ready", "1");
	document.documentElement.setAttribute("data-ctp-init-ms",
		String(Math.round(performance.now() - started)));
})();
