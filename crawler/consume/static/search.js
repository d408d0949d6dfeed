(function () {
  "use strict";
  // The matcher below reads no page: errcatResults answers a paste as plain data, and only the
  // last part of this file puts that answer on the page. tests/consume/node_search.js runs it
  // under Node against errcat match (tests/consume/test_search_parity.py).
  var data = window.ERRCAT_SEARCH || {entries: []};
  // Bounds on what one search reads, so that no query (a link's ?q= included) can hang the page:
  // as errcat match (match.MAX_INPUT), the last MAX_INPUT characters of a paste, where the error
  // is, counted as Python counts them (code points: a character beyond the BMP is one, not the
  // two UTF-16 units of its surrogate pair), and never a pair cut in half.
  var MAX_INPUT = 256 * 1024, MAX_WORDS = 256;
  function lastChars(text, most) { return text.length <= most ? text : text.slice(back(text, text.length, most)); }
  // A text's length as Python's len() counts it (a surrogate pair is one character), and the
  // index ``n`` characters back from ``at`` so counted: every count below is Python's.
  function chars(text) { return text.length - (text.match(/[\ud800-\udbff][\udc00-\udfff]/g) || []).length; }
  function back(text, at, n) {
    var i = at;
    while (i > 0 && n > 0) {
      var c = text.charCodeAt(i - 1), h = i > 1 ? text.charCodeAt(i - 2) : 0;
      i -= c >= 0xdc00 && c <= 0xdfff && h >= 0xd800 && h <= 0xdbff ? 2 : 1;
      n--;
    }
    return i;
  }
  var BEGINNING = "no full match: the message is its beginning";
  // White space is Python's in every pattern and strip here (str.isspace, re's \s: paste.SPACE,
  // the very same class text), never ECMA-262's: its \s and trim() take \ufeff and leave
  // \x1c-\x1f and \x85, so a paste would read otherwise than errcat match reads it.
  var SPACE = "\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
  var PY_STRIP = new RegExp("^[" + SPACE + "]+|[" + SPACE + "]+$", "gu"), PY_RUNS = new RegExp("[" + SPACE + "]+", "gu");
  var PY_TRAIL = new RegExp("[" + SPACE + "]+$", "u");
  function pyStrip(t) { return t.replace(PY_STRIP, ""); }
  function pyRstrip(t) { return t.replace(PY_TRAIL, ""); }
  function pyCollapse(t) { return pyStrip(t).replace(PY_RUNS, " "); }
  // A pattern as Python's re reads the same text (crawler/consume/paste.py, match.py), in
  // Unicode mode (counts are of code points, as Python's): \s, \S and [^\S\n] of SPACE; \b
  // between Python's word characters (letters, digits, _) and others; with the m flag, ^ and $
  // at a \n only (ECMA-262's are at \r, \u2028 and \u2029 too), and . anything but \n.
  var PY_WORD = "[\\p{L}\\p{N}_]";
  function py(pattern, flags) {
    var src = typeof pattern === "string" ? pattern : pattern.source, out = "", inClass = false;
    flags = flags === undefined ? (typeof pattern === "string" ? "" : pattern.flags) : flags;
    var multi = flags.indexOf("m") >= 0;
    src = src.split("[\\s\\S]").join("[^]").split("[^\\S\\n]").join("[" + SPACE.replace("\\n", "") + "]");
    for (var i = 0; i < src.length; i++) {
      var c = src[i];
      if (c === "\\") {
        var n = src[i + 1];
        i++;
        if (n === "s") out += inClass ? SPACE : "[" + SPACE + "]";
        else if (n === "S" && !inClass) out += "[^" + SPACE + "]";
        else if (n === "b" && !inClass) out += "(?:(?<=" + PY_WORD + ")(?!" + PY_WORD + ")|(?<!" + PY_WORD + ")(?=" + PY_WORD + "))";
        else if (n === "S") throw new Error("no Python class for \\S in [...] but [^\\S\\n]: " + src);
        else out += c + n;
        continue;
      }
      if (inClass) { if (c === "]") inClass = false; out += c; continue; }
      if (c === "[") inClass = true;
      if (c === ".") out += "[^\\n]";
      else if (multi && c === "^") out += "(?<![^\\n])";
      else if (multi && c === "$") out += "(?![^\\n])";
      else out += c;
    }
    return new RegExp(out, flags.replace("m", "").replace("u", "") + "u");
  }
  // sink.visible (crawler/base/sink.py) on one line, as every page shows crawled text: C0 and C1
  // controls but tab, bidi controls (a right-to-left override reorders the results after it),
  // line separators and lone surrogates become escapes (\u202e, \x1b, \n), never characters.
  var HIDDEN = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]/gu;
  function visible(text) {
    return String(text).replace(HIDDEN, function (c) {
      if (c === "\n") return "\\n";
      if (c === "\r") return "\\r";
      var n = c.charCodeAt(0);
      return n < 0x100 ? "\\x" + ("0" + n.toString(16)).slice(-2) : "\\u" + ("000" + n.toString(16)).slice(-4);
    });
  }
  window.errcatVisible = visible;
  // Where the variable parts of a template lie in a message ([start, end] pairs), or null if it
  // does not match: each literal fragment at its leftmost occurrence after the previous one, the
  // first at the start when startsLiteral, the last at the end when endsLiteral. The same function
  // as fragment_gaps in crawler/match.py; linear, where the entry's regex backtracks exponentially
  // on adjacent fields.
  function errcatGaps(frags, startsLiteral, endsLiteral, message) {
    var n = message.length, k = frags.length, pos = 0, first = 0, limit = n, last = k, gaps = [];
    if (!k) return [[0, n]];
    if (startsLiteral) {
      if (!message.startsWith(frags[0])) return null;
      pos = frags[0].length; first = 1;
    }
    if (endsLiteral) {
      if (startsLiteral && k === 1) return n === frags[0].length ? [] : null;
      if (!message.endsWith(frags[k - 1])) return null;
      limit = n - frags[k - 1].length; last = k - 1;
    }
    for (var i = first; i < last; i++) {
      var j = message.indexOf(frags[i], pos);
      if (j < 0 || j + frags[i].length > limit) return null;
      gaps.push([pos, j]);
      pos = j + frags[i].length;
    }
    if (pos > limit) return null;
    gaps.push([pos, limit]);
    return gaps;
  }
  window.errcatGaps = errcatGaps;
  // What a paste may have lost of a template's last literal: its trailing whitespace and a full
  // stop before it (not an ellipsis). The same function as _dropped_tail in crawler/match.py.
  function droppedTail(fragment) {
    var bare = pyRstrip(fragment);
    if (bare.endsWith(".") && !bare.endsWith("..")) bare = bare.slice(0, -1);
    return fragment.slice(bare.length);
  }
  window.errcatDroppedTail = droppedTail;
  function words(s) { return (s.toLowerCase().match(/[\p{L}\p{N}_]+/gu) || []); }
  // The query's distinct words (the first MAX_WORDS) with their counts, as [" w ", " w", count]:
  // tokens hold no spaces, so in " " + tokens.join(" ") + " " the first is a whole token and the
  // second the start of one.
  function queryWords(q) {
    var counts = new Map();
    words(q).forEach(function (w) {
      if (counts.has(w)) counts.set(w, counts.get(w) + 1);
      else if (counts.size < MAX_WORDS) counts.set(w, 1);
    });
    var out = [];
    counts.forEach(function (c, w) { out.push([" " + w + " ", " " + w, c]); });
    return out;
  }
  // Reading a paste as match.py's paste_readings does (paste.py for the lines): known line
  // prefixes stripped (each anchored and bounded, tried once per line), then the readings, each
  // {m: message, x: exception named, src: where it was read, f: [path, line, function] of the
  // traceback frame it follows, t: cut short, ln: its line (a later line is nearer the end)}.
  var PREFIXES = [
    py(/^[│|┃]\s?/),
    py(/^[\w.-]{1,64}\s{1,8}\|\s?/),
    py(/^\[rank\d{1,6}\]:\s?/),
    py(/^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S{1,64} [\w.-]{1,64}\[\d{1,10}\]: /),
    py(/^\((?:[\w.=:-]{1,64} ){0,4}pid=\d{1,10}(?:, [^()\n]{0,200})?\)\s?/),
    py(/^ray::[\w.]{1,200}\(\)(?: \(pid=\d{1,10}(?:, [^()\n]{0,500})?\))?:?\s?/),
    /^(?:\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d{1,6})? )?(?:(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)(?: \d{1,10})?(?: \d\d-\d\d)?(?: \d\d:\d\d:\d\d(?:\.\d{1,6})?)? )?\[?[\w.\/-]{1,200}\.py:\d{1,7}(?:\]|\[\]) ?/,
    py(/^(?:DEBUG|ERROR|INFO|WARNING|CRITICAL):\s{1,8}/),
    /^\[?[0-9A-Fa-f.:]{2,45}\]?:\d{1,5} - /,
    /^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)? /,
    py(/^\[\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?\]\s?/),
    /^(?:- )?[\w.<>-]{1,64} - (?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) - /,
    /^E {3,16}/
  ];
  var EXC_END = /(?:Error|Exception|Exit|Interrupt|Warning|Failure|Fault)$/, LEVEL = py(/\b(WARNING|WARN|ERROR|CRITICAL)\b/);
  var MAX_CANDIDATES = 12, MAX_CONTINUATION = 12, MAX_LOG_LINES = 12, MAX_READINGS = 64;
  var FIELD_WEIGHT = 16, MIN_SUPPORT = 0.5, AGREE = 0.1, LIMIT = 10;
  var ELLIPSIS = /(?:\.\.\.|\u2026)$/;
  // paste._unmarked: the Markdown a paste was wrapped in, before anything else on the line
  var QUOTE_OR_HEADING = /^(?:[ \t]{0,8}(?:>[ \t]?){1,16}|[ \t]{0,3}#{1,6}[ \t]{1,8})/, FENCE = /^(?:```|~~~)[\w+.-]{0,32}$/;
  var WRAPPERS = ["```", "**", "__", "`", "*"];
  var EXC_HEAD = /^[A-Za-z_][\w.]{0,200}(?:Error|Exception|Exit|Interrupt|Warning|Failure|Fault): /;
  var MARKED_NAME = py(/(?<![^\s\]:])(`{1,3}|\*{1,2}|_{2})([A-Za-z_][\w.]{0,200})\1(?=: )/);
  function unmarked(line) {
    var m = QUOTE_OR_HEADING.exec(line);
    if (m && m[0].length) line = line.slice(m[0].length);
    if (FENCE.test(pyStrip(line))) return "";
    // paste._MARKED_NAME: an exception's name marked alone before its message ("`ValueError`: ...")
    var mk = (line.indexOf("`") >= 0 || line.indexOf("*") >= 0 || line.indexOf("__") >= 0) ? MARKED_NAME.exec(line) : null;
    if (mk && EXC_END.test(mk[2])) line = line.slice(0, mk.index) + mk[2] + line.slice(mk.index + mk[0].length);
    for (var i = 0; i < WRAPPERS.length; i++) {
      var mark = WRAPPERS[i];
      if (!line.startsWith(mark)) continue;
      var inner = line.length > 2 * mark.length && line.endsWith(mark) ? line.slice(mark.length, -mark.length) : null;
      if (inner && pyStrip(inner) === inner && (inner.indexOf(mark) < 0 || EXC_HEAD.test(inner))) return inner;
      break;
    }
    // an exception line a reporter put in double quotes, as paste._unmarked reads it
    if (line.length > 2 && line[0] === '"' && line[line.length - 1] === '"') {
      var quoted = line.slice(1, -1);
      if (pyStrip(quoted) === quoted && EXC_HEAD.test(quoted)) return quoted;
    }
    return line;
  }
  // paste.plain_typography: typographic quotes, primes, dashes, an ellipsis and fixed-width
  // spaces as ASCII, zero-width characters dropped
  var TYPOGRAPHY = [[/[\u2018\u2019\u201a\u201b\u2032\u02bc]/g, "'"], [/[\u201c\u201d\u201e\u201f\u2033]/g, '"'],
                    [/[\u2010-\u2015\u2212]/g, "-"], [/\u2026/g, "..."], [/[\u00a0\u2007\u202f\u2002\u2003\u2009\u200a\u3000]/g, " "],
                    [/[\u200b\u200c\u200d\u2060\ufeff\u00ad]/g, ""]];
  function plainTypography(text) { TYPOGRAPHY.forEach(function (t) { text = text.replace(t[0], t[1]); }); return text; }
  window.errcatPlainTypography = plainTypography;
  // match.fold_case: ASCII letters in lower case, every position kept
  function foldCase(text) { return text.replace(/[A-Z]+/g, function (c) { return c.toLowerCase(); }); }
  // [the line without its prefixes, the level the prefixes name (paste.logged) or null]
  function stripLine(line) {
    var level = null;
    line = unmarked(pyRstrip(line.replace(/\r$/, "").replace(/\^M$/, "")));
    for (var n = 0; n < 8; n++) {
      // paste._prefix_end: indentation goes with a prefix after it, and stays before anything else
      var hit = false, rest = line.replace(/^[ \t]*/, "");
      for (var i = 0; i < PREFIXES.length && !hit; i++) {
        var m = PREFIXES[i].exec(rest);
        if (m && m[0].length) {
          var l = LEVEL.exec(m[0]);
          if (l) level = l[1] === "WARN" ? "WARNING" : l[1];
          line = rest.slice(m[0].length); hit = true;
        }
      }
      if (!hit) break;
    }
    return [line, level];
  }
  // and a product's actor tag after an exception's name, as paste.clean drops it (_ACTOR_TAG)
  function cleanLine(line) {
    return pyRstrip(stripLine(line)[0].replace(/[│┃]$/, "")).replace(ACTOR_TAG, "$1");
  }
  var ACTOR_TAG = py(/(: )\[address=[^\]\s]{1,100}, pid=\d{1,10}\] /g);
  function leaf(name) { return name.slice(name.lastIndexOf(".") + 1); }
  var WORKER = py(/^Exception in worker \S{1,100} while processing method \w{1,100}: ([\s\S]*?)(?:, Traceback \(most recent call last\):)?$/);
  var ARGPARSE = py(/^[\w.\- ]{1,100}: error: (?:argument [^\s:]{1,100}: )?([\s\S]*)$/);
  function exceptionLine(line) {
    var t = pyStrip(line), m;
    if ((m = WORKER.exec(t))) return exceptionLine(m[1]) || [null, m[1]];
    if ((m = /^([A-Za-z_][\w.]{0,200}?(?:Error|Exception))\((['"])([\s\S]*?)\2?\)?$/.exec(t))) return [leaf(m[1]), m[3]];
    if ((m = /^([A-Za-z_][\w.]{0,200}?)(?:\(([A-Za-z_]\w{0,100})\))?: ([\s\S]*)$/.exec(t))) {
      if (m[2] && leaf(m[1]).indexOf("RayTaskError") === 0) return [m[2], m[3]];
      if (!m[2] && EXC_END.test(leaf(m[1]))) return [leaf(m[1]), leaf(m[1]) === "KeyError" ? unrepr(m[3]) : firstArgument(m[3])];
    }
    if ((m = ARGPARSE.exec(t))) return ["ArgumentError", m[1]];
    // paste._INNER_EXC: after a prefix no pattern strips, the first exception named
    var inner = /(?<=[ \t\]|)])([A-Za-z_][\w.]*)(?:\(([A-Za-z_]\w{0,100})\))?: /g;
    while ((m = inner.exec(t))) {
      var name = leaf(m[1]), after = t.slice(m.index + m[0].length);
      if (m[2] && name.indexOf("RayTaskError") === 0) return [m[2], after];
      if (!m[2] && EXC_END.test(name)) return [name, after];
    }
    return null;
  }
  // paste.unrepr: a KeyError's line is its message's repr ("KeyError: 'no model named x'")
  var REPR_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t", "r": "\r"};
  function unrepr(m) {
    var q = m.charAt(0);
    if (m.length < 2 || (q !== "'" && q !== '"') || m.charAt(m.length - 1) !== q) return m;
    var body = m.slice(1, -1), out = [], i = 0;
    while (i < body.length) {
      var c = body.charAt(i);
      if (c === q) return m;
      if (c !== "\\") { out.push(c); i++; continue; }
      var n = body.charAt(i + 1);
      if (n && Object.prototype.hasOwnProperty.call(REPR_ESCAPES, n)) { out.push(REPR_ESCAPES[n]); i += 2; continue; }
      var w = n === "x" ? 2 : n === "u" ? 4 : n === "U" ? 8 : 0, digits = body.substr(i + 2, w);
      if (!w || digits.length !== w || !/^[0-9a-fA-F]+$/.test(digits)) return m;
      var code = parseInt(digits, 16);
      if (code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return m;
      out.push(String.fromCodePoint(code)); i += 2 + w;
    }
    return out.join("");
  }
  // paste.first_argument: an exception raised with several arguments prints their tuple; its
  // first element, a string's repr, is the message (read by unrepr, never evaluated)
  var FIRST_OF_TUPLE = /^\(('[^'\\\n]{0,4096}(?:\\.[^'\\\n]{0,4096}){0,512}'|"[^"\\\n]{0,4096}(?:\\.[^"\\\n]{0,4096}){0,512}"), /u;
  function firstArgument(m) {
    if (m.charAt(0) !== "(" || m.charAt(m.length - 1) !== ")" || chars(m) > 8192) return m;
    var t = FIRST_OF_TUPLE.exec(m);
    if (!t) return m;
    var first = unrepr(t[1]);
    return first === t[1] ? m : first;
  }
  function withoutParameter(m) { return m.replace(/ \(parameter=[^()\n]{0,200}, value=[^\n]{0,1000}\)$/u, ""); }
  // paste.without_warning: the message without a Python warning run on after it on its line
  // ("<file>.py:<line>: <Category>Warning: ..."), read at the first 8 "Warning: " only
  var WARNING_HEAD = / (?:[^ \t\n\r\f\v:]{1,1000}\.py):[0-9]{1,9}: [A-Z][A-Za-z0-9_]{0,100}Warning$/u;  // ASCII classes, as paste.py spells them
  function withoutWarning(m) {
    var at = -1;
    for (var k = 0; k < 8; k++) {
      at = m.indexOf("Warning: ", at + 1);
      if (at < 0) return m;
      var from = back(m, at, 1120), head = WARNING_HEAD.exec(m.slice(from, at + "Warning".length));
      if (head && pyStrip(m.slice(0, from + head.index))) return m.slice(0, from + head.index).replace(PY_TRAIL, "");
    }
    return m;
  }
  // paste.py's _raise_message: a traceback cut before its exception line ends in a frame whose
  // `raise X("...", "...")` holds the message as string literals.
  var FRAME = py(/^\s*File "([^"\n]{1,1000})", line (\d{1,9}), in (\S{1,200})/), RAISE = py(/^\s*raise ([A-Za-z_][\w.]{0,200})\(/);
  var FRAME_START = py(/^\s*File "[^"\n]+", line \d+/);
  var CHAIN = /^(?:The above exception was the direct cause|During handling of the above exception|Traceback \(most recent call last\))/;
  var LITERAL = /[rRbBfFuU]{0,2}(?:"([^"\\\n]*(?:\\.[^"\\\n]*)*)"?|'([^'\\\n]*(?:\\.[^'\\\n]*)*)'?)/g;
  function raiseMessage(lines) {
    var m = lines.length ? RAISE.exec(lines[0]) : null;
    if (!m) return null;
    var parts = [];
    for (var k = 0; k < lines.length; k++) {
      var line = pyStrip(k ? lines[k] : lines[0].slice(m[0].length));
      if (k && !/^(?:'|"|f'|f"|r'|r")/.test(line)) break;
      line.replace(LITERAL, function (all, dq, sq) { parts.push(dq !== undefined ? dq : (sq || "")); return all; });
    }
    var message = pyStrip(parts.join(""));
    return message.length >= 4 ? [leaf(m[1]), message] : null;
  }
  // paste.candidates: every exception line, the last first, with the lines continuing it and the
  // frame printed before it; and the message of the raise a cut traceback ends in.
  function lineCandidates(lines) {
    var found = [], frame = null;
    for (var i = 0; i < lines.length; i++) {
      var f = FRAME.exec(lines[i]);
      if (f) {
        // paste.candidates: the frame's code line, the next line when indented and no frame itself
        var after = i + 1 < lines.length ? lines[i + 1] : "";
        frame = [i, [f[1], +f[2], f[3], (after[0] === " " || after[0] === "\t") && !FRAME.test(after) ? pyStrip(after) : ""]];
        continue;
      }
      var c = exceptionLine(lines[i]), bare = /^([A-Za-z_][\w.]{0,200})$/.exec(lines[i]);
      // a bare "raise X" or "assert" prints the exception's name alone, just after its frame
      if (!c && bare && frame && i - frame[0] <= 3 && EXC_END.test(bare[1])) c = [leaf(bare[1]), ""];
      if (!c) continue;
      var more = [];
      for (var j = i + 1; j < lines.length && j <= i + MAX_CONTINUATION; j++) {
        var nxt = lines[j];
        if (!pyStrip(nxt) || FRAME_START.test(nxt) || CHAIN.test(nxt) || exceptionLine(nxt)) break;
        more.push(nxt);
      }
      found.push({x: c[0], m: pyStrip(c[1]), ln: i, cont: more.length ? pyStrip([c[1]].concat(more).join("\n")) : "",
                  f: frame ? frame[1] : null, src: "line"});
      frame = null;
    }
    if (frame) {
      var raised = raiseMessage(lines.slice(frame[0] + 1, frame[0] + 10));
      if (raised) found.push({x: raised[0], m: raised[1], ln: frame[0], cont: "", f: frame[1], src: "raise"});
    }
    return found.reverse().slice(0, MAX_CANDIDATES);
  }
  // match.py's _last_traceback: [exception, message, last frame] of the text's last traceback
  var TB = "Traceback (most recent call last):";
  function lastTraceback(text) {
    var start = text.lastIndexOf(TB);
    if (start < 0) return null;
    var block = text.slice(start + TB.length), frames = py(/^[^\S\n]*File "([^"\n]{1,1000})", line (\d{1,9}), in (\S{1,200})/gm), f, last = null;
    while ((f = frames.exec(block))) last = f;
    if (last) block = block.slice(last.index + last[0].length);
    var lines = block.split("\n"), i = last ? 1 : 0;
    while (i < lines.length && (!pyStrip(lines[i]) || lines[i][0] === " " || lines[i][0] === "\t")) i++;
    var rest = pyRstrip(lines.slice(i).join("\n")), nl = rest.indexOf("\n");
    var m = /^([A-Za-z_][\w.]*)(?::(?: ([\s\S]*))?)?$/.exec(nl < 0 ? rest : rest.slice(0, nl));
    if (!m) return null;
    // the frame's code line (match.Frame.code): the line after it, when indented
    var code = last && lines.length > 1 && (lines[1][0] === " " || lines[1][0] === "\t") ? pyStrip(lines[1]) : "";
    return [m[1], (m[2] || "") + (nl < 0 ? "" : "\n" + rest.slice(nl + 1)), last ? [last[1], +last[2], last[3], code] : null];
  }
  var EXC_PREFIX = /^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Iteration|Failure|Fault)): ?([\s\S]*)$/;
  var ANY_PREFIX = /^([A-Za-z_][\w.]*): ([\s\S]*)$/;
  var PYDANTIC_MORE = py(/^[^\S\n]*For further information visit \S*$/), PYDANTIC_LINE = py(/^[^\S\n]*(Value error|Assertion failed), ([\s\S]*)$/);
  var PYDANTIC_END = py(/ \[type=(?:value_error|assertion_error)\b/);
  // match.py's _inner_readings: a pydantic listing's errors, and a server's JSON error body's
  // message (the first "message" of the text, Python's repr of one included)
  function innerReadings(message, outer, depth) {
    var out = [], head = py(/^[^\S\n]*(Value error|Assertion failed), /gm), h, pos = 0;
    while ((h = head.exec(message)) && out.length < 32) {
      if (h.index < pos) continue;
      var end = py(/ \[type=(?:value_error|assertion_error)\b/g);
      end.lastIndex = h.index + h[0].length;
      var e = end.exec(message);
      if (!e) break;
      var inner = pyStrip(message.slice(h.index + h[0].length, e.index));
      out.push(reading(inner, h[1] === "Value error" ? "ValueError" : "AssertionError", "pydantic", outer.f, ELLIPSIS.test(inner)));
      pos = e.index + e[0].length;
    }
    // match._PYDANTIC_V1: pydantic v1's "  <message> (type=value_error)" lines
    if (message.indexOf("(type=") >= 0) {
      var v1re = py(/^[^\S\n]{1,8}(\S[^\n]{0,4096}?) \(type=(value_error|assertion_error)[^()\n]{0,200}\)[^\S\n]*$/gm), v1, nv1 = 0;
      while ((v1 = v1re.exec(message)) && nv1++ < MAX_READINGS) out.push(reading(pyStrip(v1[1]), v1[2] === "value_error" ? "ValueError" : "AssertionError", "pydantic", outer.f, false));
    }
    // match._PYDANTIC_MSG: FastAPI's 422 body, cut: "'msg': 'Value error, <message>'"
    if (message.indexOf("msg") >= 0) {
      var msgre = /['"]msg['"]: (['"])(Value error|Assertion failed), ([^\n'"]{1,4096})\1/gu, mg, nmg = 0;
      while ((mg = msgre.exec(message)) && nmg++ < MAX_READINGS) out.push(reading(pyStrip(mg[3]), mg[2] === "Value error" ? "ValueError" : "AssertionError", "pydantic", outer.f, false));
    }
    // match._pydantic_unmarked: the last line alone, without its [type=...] marker
    var lines = pyRstrip(message).split("\n");
    if (lines.length > 1 && PYDANTIC_MORE.test(lines[lines.length - 1])) lines.pop();
    var u = PYDANTIC_LINE.exec(lines[lines.length - 1]);
    if (u && !PYDANTIC_END.test(u[2]) && pyStrip(u[2]) && out.length < 32) {
      out.push(reading(pyStrip(u[2]), u[1] === "Value error" ? "ValueError" : "AssertionError", "pydantic", outer.f, ELLIPSIS.test(pyStrip(u[2]))));
    }
    var j = depth < 2 && message.indexOf("{") >= 0 && /['"](?:message|detail)['"]: ?(?:"((?:[^"\\\n]|\\.){0,4096})"|'((?:[^'\\\n]|\\.){0,4096})')/.exec(message);
    if (j) {
      var body = j[1] !== undefined ? j[1] : j[2];
      try { body = j[1] !== undefined ? JSON.parse('"' + body + '"') : body.replace(/\\(['\\])/g, "$1"); } catch (err) { /* kept as written */ }
      var r = reading(pyStrip(body), null, "json", outer.f, ELLIPSIS.test(pyStrip(body)));
      out.push(r);
      out = out.concat(innerReadings(r.m, r, depth + 1));
      var x = EXC_PREFIX.exec(r.m);
      if (x) out.push(reading(pyStrip(x[2]), leaf(x[1]), "json", outer.f, false));
    }
    return out;
  }
  function reading(m, x, src, f, t, ln) {
    return {m: m, x: x, src: src, f: f || null, t: !!t, ln: ln === undefined ? -1 : ln};
  }
  // match.paste_readings: the paste's readings, then (when it has typographic quotes, dashes or
  // spaces) those of it in ASCII too, each at most half the readings
  function readingsOf(text) {
    text = lastChars(text, MAX_INPUT);
    var read = readingsAsPasted(text, MAX_READINGS), plain = plainTypography(text);
    if (plain === text) return read;
    var half = readingsAsPasted(text, MAX_READINGS / 2), seen = new Set(half.readings.map(key));
    readingsAsPasted(plain, MAX_READINGS / 2).readings.forEach(function (r) { if (!seen.has(key(r))) { seen.add(key(r)); half.readings.push(r); } });
    return half;
  }
  // (a frame's code line is no part of what a reading is: match.Frame.code, compare=False)
  function key(r) { return JSON.stringify([r.m, r.x, r.src, r.f ? r.f.slice(0, 3) : null, r.t, r.ln]); }
  function readingsAsPasted(text, most) {
    var raw = text.replace(/\r\n/g, "\n").split("\n"), lines = raw.map(cleanLine);
    var out = [], seen = new Set();
    function push(r) {
      var k = key(r);
      if (!seen.has(k) && out.length < most) { seen.add(k); out.push(r); }
    }
    function add(message, x, src, f) {
      message = pyStrip(message);
      var r = reading(message, x ? leaf(x) : null, src, f, ELLIPSIS.test(message));
      // each also without VLLMValidationError's "(parameter=..., value=...)" (a server's body has it)
      [r].concat(innerReadings(message, r, 0)).forEach(function (one) {
        push(one);
        var bare = withoutParameter(one.m);
        if (bare !== one.m) push(reading(bare, one.x, one.src, one.f, one.t, one.ln));
      });
    }
    var text2 = lines.join("\n").replace(/^\n+|\n+$/g, ""), tb = lastTraceback(text2);
    if (tb) add(tb[1], tb[0], "traceback", tb[2]);
    else {
      var stripped = pyStrip(text2), m = EXC_PREFIX.exec(stripped) || ANY_PREFIX.exec(stripped);
      if (m) add(m[2], m[1], "plain");
      else {
        var ls = stripped.split("\n");
        for (var i = ls.length - 1; i > 0; i--) {
          var mm = EXC_PREFIX.exec(ls[i]);
          if (mm) { add([mm[2]].concat(ls.slice(i + 1)).join("\n"), mm[1], "plain"); break; }
        }
      }
      add(stripped, null, "plain");
      // match.read_query: a message pasted alone under other lines, read by the last line too
      var lastLine = pyStrip(stripped.slice(stripped.lastIndexOf("\n") + 1));
      if (lastLine && lastLine !== stripped) add(lastLine, null, "plain");
    }
    // a log line's level says what it is: the message of a log entry of that level
    raw.filter(function (l) { return pyStrip(l); }).slice(-MAX_LOG_LINES).reverse().forEach(function (l) {
      var s = stripLine(l);
      if (s[1] && pyStrip(s[0]) && !exceptionLine(s[0])) push(reading(pyStrip(s[0]), s[1], "log"));
    });
    lineCandidates(lines).forEach(function (c) {
      var bare = withoutParameter(c.m), unwarned = withoutWarning(c.m);
      // (an empty message: a bare name after its frame, a message-less raise)
      [c.m, bare, unwarned, c.cont].filter(function (m, k, all) { return (m || (!k && c.f)) && all.indexOf(m) === k; }).forEach(function (m) {
        push(reading(m, c.x, c.src, c.f, ELLIPSIS.test(m) || c.src === "raise", c.ln));
      });
    });
    return {readings: out, cleaned: lines.join("\n"), raw: text};
  }
  window.errcatReadings = function (t) { return readingsOf(t).readings; };
  // match.py's _prefix_cover: literal characters matched when the message is the start of one
  // this template makes (it may end inside a fragment; the first MAX_OVERLAP characters of one
  // are looked for at its end); -covered-1 when it ends inside a field with more to come; null
  // when it cannot be such a start.
  var MAX_OVERLAP = 1024;
  function prefixCover(frags, startsLiteral, endsLiteral, message) {
    var pos = 0, covered = 0, afterVar = !startsLiteral, n = message.length;
    if (!frags.length) return 0;
    for (var i = 0; i < frags.length; i++) {
      var text = frags[i];
      if (i > 0) afterVar = true;
      if (pos >= n) return covered;
      if (!afterVar) {
        if (message.startsWith(text, pos)) { pos += text.length; covered += text.length; }
        else if (text.startsWith(message.slice(pos))) return covered + n - pos;
        else return null;
      } else {
        var j = message.indexOf(text, pos);
        if (j < 0) {
          for (var k = Math.min(text.length - 1, n - pos, MAX_OVERLAP); k > 0; k--) {
            if (message.endsWith(text.slice(0, k))) return covered + k;
          }
          return n - pos > 1 ? -covered - 1 : covered;
        }
        pos = j + text.length; covered += text.length;
      }
      afterVar = false;
    }
    return (!endsLiteral || pos === n) ? covered : null;
  }
  // difflib.SequenceMatcher(None, a, b).ratio() and .quick_ratio() over code points, as
  // match.py's nearest computes them (autojunk: in a b of 200 or more, elements more frequent
  // than 1% + 1 are left out of the index, as difflib does).
  function seqMatcher(a, b) {
    a = Array.from(a); b = Array.from(b);
    var b2j = new Map(), n = b.length;
    b.forEach(function (c, j) { if (!b2j.has(c)) b2j.set(c, []); b2j.get(c).push(j); });
    if (n >= 200) {
      var ntest = Math.floor(n / 100) + 1;
      Array.from(b2j.keys()).forEach(function (c) { if (b2j.get(c).length > ntest) b2j.delete(c); });
    }
    function longest(alo, ahi, blo, bhi) {
      var besti = alo, bestj = blo, bestsize = 0, j2len = new Map();
      for (var i = alo; i < ahi; i++) {
        var next = new Map(), js = b2j.get(a[i]) || [];
        for (var t = 0; t < js.length; t++) {
          var j = js[t];
          if (j < blo) continue;
          if (j >= bhi) break;
          var k = (j2len.get(j - 1) || 0) + 1;
          next.set(j, k);
          if (k > bestsize) { besti = i - k + 1; bestj = j - k + 1; bestsize = k; }
        }
        j2len = next;
      }
      while (besti > alo && bestj > blo && a[besti - 1] === b[bestj - 1]) { besti--; bestj--; bestsize++; }
      while (besti + bestsize < ahi && bestj + bestsize < bhi && a[besti + bestsize] === b[bestj + bestsize]) bestsize++;
      return [besti, bestj, bestsize];
    }
    return {
      ratio: function () {
        var total = a.length + b.length, matched = 0, queue = [[0, a.length, 0, n]];
        if (!total) return 1;
        while (queue.length) {
          var q = queue.pop(), m = longest(q[0], q[1], q[2], q[3]);
          if (!m[2]) continue;
          matched += m[2];
          if (q[0] < m[0] && q[2] < m[1]) queue.push([q[0], m[0], q[2], m[1]]);
          if (m[0] + m[2] < q[1] && m[1] + m[2] < q[3]) queue.push([m[0] + m[2], q[1], m[1] + m[2], q[3]]);
        }
        return 2 * matched / total;
      }
    };
  }
  window.errcatRatio = function (a, b) { return seqMatcher(a, b).ratio(); };
  // match.py's Matcher.nearest: among the NEAREST_POOL entries sharing the message's rarest
  // words (idf-weighted), the most similar wordings: the template as a message shows it
  // (fields as "…"), whole and cut to the message's length.
  var NEAREST_POOL = 12, postings = null;
  // An assembled message with no literal text of its own ("\n".join(errors)) is matched by its
  // pieces, as match.py's Matcher does: each piece's fragments in order, anywhere in the message.
  // match.Prepared.as_pasted: for a paste with no backtick at all, the shape with its template's
  // backticks read as absent (a tracker's Markdown drops a pair of them), unless a fragment empties
  function asPasted(s, msg) {
    if (msg.indexOf("`") >= 0) return s;
    if (s.unticked === undefined) {
      var bare = s.fragments.map(function (f) { return f.split("`").join(""); });
      var differs = bare.some(function (f, i) { return f !== s.fragments[i]; }), empty = bare.some(function (f) { return !f; });
      s.unticked = differs && !empty ? {fragments: bare, anchors: s.anchors, starts_literal: s.starts_literal, ends_literal: s.ends_literal, f: fieldCount(s), unticked: null} : null;
    }
    return s.unticked || s;
  }
  function shapes(e) {
    if (!e.shapes) e.shapes = [e].concat((e.alternatives || []).map(function (a) {
      // (match.expanded: a piece has no fields of its own, its key's field count is 0)
      return {fragments: a.fragments, anchors: a.anchors, starts_literal: false, ends_literal: false, f: 0};
    }));
    return e.shapes;
  }
  // match.expanded: what the word lookups number, as [entry, shape] pairs: every entry, then
  // every piece of every assembled message (a piece is looked up by its own words, as in match.py)
  var numbered = null;
  function items() {
    if (!numbered) {
      numbered = data.entries.map(function (e) { return [e, shapes(e)[0]]; });
      data.entries.forEach(function (e) { shapes(e).slice(1).forEach(function (s) { numbered.push([e, s]); }); });
    }
    return numbered;
  }
  function postingLists() {
    if (postings) return postings;
    postings = new Map();
    items().forEach(function (p, n) {
      new Set(words(p[1].fragments.join(" "))).forEach(function (w) {
        if (!postings.has(w)) postings.set(w, []);
        postings.get(w).push(n);
      });
    });
    return postings;
  }
  // match.Matcher._sharing_words: the [entry, shape] pairs sharing the message's rarest words
  function sharingWords(message, limit) {
    var lists = postingLists(), total = data.entries.length || 1, scores = new Map();
    var mine = Array.from(new Set(words(message))).sort().filter(function (w) { return lists.has(w); });
    mine.sort(function (x, y) { return lists.get(x).length - lists.get(y).length; });
    mine.slice(0, 12).forEach(function (w) {
      var plist = lists.get(w), idf = Math.log(1 + total / plist.length);
      plist.forEach(function (n) { scores.set(n, (scores.get(n) || 0) + idf); });
    });
    return Array.from(scores.keys()).sort(function (x, y) { return scores.get(y) - scores.get(x); }).slice(0, limit)
      .map(function (n) { return items()[n]; });
  }
  function nearest(message) {
    message = Array.from(message).slice(0, 500).join("");
    var size = Array.from(message).length;
    return sharingWords(message, NEAREST_POOL).map(function (p) {
      var e = p[0], s = p[1], literal = Array.from(s.fragments.length ? s.fragments.join("\u2026") : e.text);
      var whole = seqMatcher(message, literal.slice(0, 500).join("")).ratio();
      var cut = seqMatcher(message, literal.slice(0, size + 5).join("")).ratio();
      return [e, Math.max(whole, 0.95 * cut)];
    });
  }
  window.errcatNearest = function (m) { return nearest(m).map(function (p) { return [p[0].id, p[1]]; }); };
  // Ranking as match.py's: each (entry, reading) that fits gets match.Match.key, compared
  // element by element: [strong, full, raised by the release the paste names (1, -1 not, 0 not
  // known: set in answer), coverage, exception named (2 same, 1 an ancestor),
  // frame in the entry's function, not a Rust check in a Python traceback, raise > response >
  // log, fewer fields]; the best per entry, ties in id order.
  var DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", encoder = new TextEncoder();
  // site_search.code: FNV-1a over the UTF-8 bytes, folded to 24 bits, as four characters
  function siteCode(text) {
    var h = 0x811c9dc5, bytes = encoder.encode(text);
    for (var i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193) >>> 0;
    h = ((h >>> 24) ^ (h & 0xffffff)) >>> 0;
    return DIGITS[(h >> 18) & 63] + DIGITS[(h >> 12) & 63] + DIGITS[(h >> 6) & 63] + DIGITS[h & 63];
  }
  window.errcatSiteCode = siteCode;
  var KIND_RANK = {log: 0, response: 1};
  function kind(e) { return e.k || "raise"; }
  var catchTable = null;
  function catchAs(e) {
    if (!catchTable) catchTable = new Map(data.catch || []);
    return e.c || catchTable.get(e.exception) || [];
  }
  function fieldCount(s) {
    if (s.f !== undefined) return s.f;
    var k = s.fragments.length;
    return k ? k - 1 + (s.starts_literal ? 0 : 1) + (s.ends_literal ? 0 : 1) : 1;
  }
  // A frame's codes: of each suffix of its path (match.py: path.endswith("/" + site path)) with
  // its function, and of the function alone.
  function frameCodes(f) {
    if (!f) return null;
    if (!f.codes) {
      var path = f[0].replace(/\\/g, "/"), fn = leaf(f[2]), at = new Set([siteCode(path + "\0" + fn)]);
      for (var i = path.indexOf("/"); i >= 0; i = path.indexOf("/", i + 1)) at.add(siteCode(path.slice(i + 1) + "\0" + fn));
      f.codes = {at: at, fn: siteCode(fn)};
    }
    return f.codes;
  }
  // site_search.site_codes: "s" the sites' codes, "n" their functions' (entries with no words)
  function codes(text) { var out = []; for (var i = 0; i + 4 <= (text || "").length; i += 4) out.push(text.slice(i, i + 4)); return out; }
  function siteCodes(e) { if (!e.atCodes) e.atCodes = codes(e.s); return e.atCodes; }
  function functionCodes(e) { if (!e.fnCodes) e.fnCodes = codes(e.n); return e.fnCodes; }
  function inNamedFunction(f, e) { var c = frameCodes(f); return !!c && functionCodes(e).indexOf(c.fn) >= 0; }
  function sameFunction(f, e) { var c = frameCodes(f); return !!c && siteCodes(e).some(function (code) { return c.at.has(code); }); }
  // An assert with no message is keyed by its condition: q true when the title ("assert <condition>") holds it whole
  function conditionOf(e) { return e.q === undefined ? null : (e.q === true ? e.title.slice("assert ".length) : e.q); }
  // match._condition_said: for a frame that shows its code line, whether that line asserts the
  // entry's condition; false too for a raise at a line that asserts; null when it cannot tell
  function conditionSaid(f, e) {
    var code = pyCollapse(f[3] || ""), condition = conditionOf(e);
    if (!code) return null;
    if (condition === null) return kind(e) === "raise" && code.startsWith("assert ") ? false : null;
    if (!code.startsWith("assert ")) return false;  // no assert (a `raise AssertionError` beside one)
    if (code === "assert " + condition) return true;
    if (!/[(\[{\\,]$/.test(code)) return false;
    var begun = code.slice("assert ".length).replace(/[\\ ]+$/, "").replace(/^[( ]+/, "");
    return condition.replace(/^[( ]+/, "").startsWith(begun) ? null : false;
  }
  // match.site_match as far as the box sees (sites have no lines here): 1 in the entry's function
  // (its file), 0 not; an assert's frame showing its very condition 3 in its file, 2 in a
  // function of its name elsewhere (the file moved); 0 at a line that asserts another condition
  function siteMatch(f, e) {
    if (!f) return 0;
    var said = conditionSaid(f, e);
    if (said === false) return 0;
    var site = sameFunction(f, e) ? 1 : 0;
    if (said && (site || inNamedFunction(f, e))) return site ? 3 : 2;
    return site;
  }
  function rust(e) { return kind(e) === "rust"; }
  function python(r) { return r.src === "traceback" || r.src === "raise" || !!r.f; }
  function exceptionMatch(e, r, fold) {
    if (!r.x) return 0;
    if (fold) {
      var x = foldCase(r.x);
      return x === foldCase(e.exception) ? 2 : (catchAs(e).some(function (c) { return foldCase(c) === x; }) ? 1 : 0);
    }
    return r.x === e.exception ? 2 : (catchAs(e).indexOf(r.x) >= 0 ? 1 : 0);
  }
  // match.agreement: how well the entry agrees with what the reading names, from -1 to 1
  function agreement(e, r) {
    if (!r) return 0;
    if (r.src === "log") return kind(e) === "log" && e.exception === r.x ? 1 : 0;
    if (kind(e) === "log") return -1;
    if (rust(e) && python(r)) return -1;
    var x = exceptionMatch(e, r);
    return x === 2 ? 1 : (x === 1 ? 0.5 : 0);
  }
  function umbrella(e) {
    var t = e.text.toLowerCase();
    return e.exception === "EngineDeadError" || t.indexOf("root cause") >= 0 || t.indexOf("see stack trace") >= 0 ||
      t.indexOf("check the logs for more details") >= 0 || t.indexOf("error raised in subprocess") === 0;
  }
  function inOrder(pieces, text) {
    var pos = 0;
    for (var i = 0; i < pieces.length; i++) {
      var j = text.indexOf(pieces[i], pos);
      if (j < 0) return false;
      pos = j + pieces[i].length;
    }
    return true;
  }
  function wordSet(r) { if (!r.words) r.words = new Set(r.m.match(/[\p{L}\p{N}_]+/gu) || []); return r.words; }
  // match.Matcher._score: a fit of shape s (the entry or one of its pieces) to reading r
  function scored(e, s, r, how, covered, gaps, foreignMsgs, fold) {
    var x = exceptionMatch(e, r, fold), site = siteMatch(r.f, e), n = r.m.length, weighed = n;
    (gaps || []).forEach(function (g) { weighed -= Math.max(0, g[1] - g[0] - FIELD_WEIGHT); });
    var coverage = n ? covered / n : 1, support = weighed > 0 ? covered / weighed : 0, anchored;
    if (fold) {
      var low = new Set(foldCase(r.m).match(/[\p{L}\p{N}_]+/gu) || []);
      anchored = s.anchors.some(function (a) { return low.has(foldCase(a)); });
    } else {
      var have = wordSet(r);
      anchored = s.anchors.some(function (a) { return have.has(a); });
    }
    if (!s.fragments.length && ((!n && (!r.f || site) && (x || !r.x || site === 3)) || (site && x))) { support = 1; anchored = true; }
    // the last frame is evidence: the whole template fits, the exception agrees, the frame is in its function
    var framed = how === "full" && !!site && !!x;
    if (foreignMsgs.has(r.m)) anchored = framed = false;  // a line the project does not raise: only weak
    var strong = (anchored && support >= MIN_SUPPORT) || framed;
    return {e: e, r: r, full: how === "full", coverage: coverage, support: support, site: site, strong: strong, anchored: anchored,
            key: [strong ? 1 : 0, how === "full" ? 1 : 0, 0, Math.round(coverage * 1e6) / 1e6, x, site,
                  rust(e) ? (python(r) ? 0 : 1) : 2, KIND_RANK[kind(e)] === undefined ? 2 : KIND_RANK[kind(e)],
                  e.r ? 0 : 1,  // match.Match.current: alike in all else, an entry raised today before a retired one
                  -fieldCount(s)]};
  }
  function keyCmp(a, b) {
    for (var i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] > b[i] ? 1 : -1;
    return 0;
  }
  // match.Matcher's lookups: shapes by the rarest word of their anchors, those with literal
  // text but no whole word, those with none, and by the code of each site's function
  var lookups = null;
  function lookup() {
    if (lookups) return lookups;
    var df = new Map(), all = [];
    data.entries.forEach(function (e) { shapes(e).forEach(function (s) { all.push([e, s]); s.anchors.forEach(function (a) { df.set(a, (df.get(a) || 0) + 1); }); }); });
    lookups = {buckets: new Map(), loose: [], blank: [], byFunction: new Map()};
    all.forEach(function (p) {
      var s = p[1];
      if (s.anchors.length) {
        var anchor = s.anchors.slice().sort(function (a, b) { return df.get(a) - df.get(b) || b.length - a.length || (a < b ? -1 : a > b ? 1 : 0); })[0];
        if (!lookups.buckets.has(anchor)) lookups.buckets.set(anchor, []);
        lookups.buckets.get(anchor).push(p);
      } else (s.fragments.length ? lookups.loose : lookups.blank).push(p);
      functionCodes(p[0]).forEach(function (code) {
        if (!lookups.byFunction.has(code)) lookups.byFunction.set(code, []);
        lookups.byFunction.get(code).push(p);
      });
    });
    return lookups;
  }
  function tried(r) {
    var L = lookup(), out = new Set();
    wordSet(r).forEach(function (w) { (L.buckets.get(w) || []).forEach(function (p) { out.add(p); }); });
    L.loose.forEach(function (p) { out.add(p); });
    if (r.f) (L.byFunction.get(frameCodes(r.f).fn) || []).forEach(function (p) { out.add(p); });
    if (!r.m) L.blank.forEach(function (p) { out.add(p); });
    return out;
  }
  // match.Matcher.full_matches
  // (fold: ignoring the case of ASCII letters, among the entries sharing the message's rarest words)
  function fullMatches(r, foreignMsgs, fold) {
    var out = [], pool = tried(r);
    if (fold) {
      pool = [];
      sharingWords(r.m, 200).forEach(function (p) { if (/[\p{L}\p{N}]/u.test(p[1].fragments.join(""))) pool.push(p); });
    }
    pool.forEach(function (p) {
      var e = p[0], s = asPasted(p[1], r.m), msg = r.m, frags = s.fragments;
      if (r.x && kind(e) === "log" && r.src !== "log") return;  // named an exception: raised, not logged
      var named = r.f && inNamedFunction(r.f, e), agrees = r.x === e.exception || catchAs(e).indexOf(r.x) >= 0;
      if (!frags.length) {
        // an opaque entry matches anything: only where the traceback points, for the exception it names
        if (msg && !named) return;
        if (r.x && !agrees && !sameFunction(r.f, e)) return;
        if (!msg && r.f && !siteMatch(r.f, e)) return;  // a message-less error raised elsewhere
      }
      if (frags.length && !/[\p{L}\p{N}]/u.test(frags.join("")) && !named && !(r.x && agrees)) return;
      if (frags.length && s.ends_literal) {
        var tail = droppedTail(frags[frags.length - 1]);
        if (tail && !msg.endsWith(tail)) msg = pyRstrip(msg) + tail;
      }
      if (!frags.length && !fieldCount(s) && msg) return;
      var gaps = fold ? errcatGaps(frags.map(foldCase), s.starts_literal, s.ends_literal, foldCase(msg))
        : errcatGaps(frags, s.starts_literal, s.ends_literal, msg);
      if (!gaps) return;
      var m = scored(e, s, r, "full", frags.join("").length, gaps, foreignMsgs, fold);
      m.values = gaps.map(function (g) { return msg.slice(g[0], g[1]); });  // match.Match.values: what each field holds
      out.push(m);
    });
    return out;
  }
  // match._stops_where_it_goes_on: the message (its full stop taken off) ends a word inside a
  // literal fragment, with more words of it after (24: match.STOPPED_TAIL, in characters)
  function stopsWhereItGoesOn(frags, stopped) {
    var chars = Array.from(stopped), tail = chars.slice(-24).join("");
    if (chars.length < 24 || !/[\p{L}\p{N}]$/u.test(tail)) return false;
    for (var f = 0; f < frags.length; f++) {
      var i = frags[f].indexOf(tail);
      while (i >= 0) {
        var rest = frags[f].slice(i + tail.length), c = rest ? String.fromCodePoint(rest.codePointAt(0)) : "";
        if (c && !/[\p{L}\p{N}]/u.test(c) && c !== "." && pyStrip(rest)) return true;
        i = frags[f].indexOf(tail, i + 1);
      }
    }
    return false;
  }
  // match.Matcher.prefix_matches: the message as the start of one the template makes
  function prefixMatches(r, foreignMsgs, fold) {
    var msg = r.m;
    ["...", "\u2026"].forEach(function (mark) { if (msg.endsWith(mark)) msg = pyRstrip(msg.slice(0, -mark.length)); });
    if (msg.length < 4) return [];
    var cut = reading(msg, r.x, r.src, r.f, true, r.ln), out = [];
    // an older wording that ended its sentence where today's message goes on
    var stopped = msg.endsWith(".") && !msg.endsWith("..") && !r.t ? msg.slice(0, -1) : null;
    sharingWords(msg, 200).forEach(function (p) {
      var e = p[0];
      if (r.x && kind(e) === "log" && r.src !== "log") return;
      [asPasted(p[1], msg)].forEach(function (s) {
        var frags = fold ? s.fragments.map(foldCase) : s.fragments, m0 = fold ? foldCase(msg) : msg;
        var st = stopped !== null && fold ? foldCase(stopped) : stopped;
        var covered = prefixCover(frags, s.starts_literal, s.ends_literal, m0);
        if (covered === null && st !== null && stopsWhereItGoesOn(frags, st)) {
          covered = prefixCover(frags, s.starts_literal, s.ends_literal, st);
        }
        if (covered === null) return;
        var inField = covered < 0;
        covered = inField ? -covered - 1 : covered;
        if (covered < Math.max(4, 0.4 * msg.length)) return;
        var m = scored(e, s, cut, "prefix", covered, null, foreignMsgs, fold);
        if (inField && !r.t) { m.strong = false; m.key[0] = 0; }  // as likely another message sharing this one's start
        out.push(m);
      });
    });
    return out;
  }
  // match._weak_score: likeness of wording, then within AGREE of it what the paste names
  function weakScore(w) {
    if (w.near) return w.similarity + AGREE * agreement(w.e, w.r);
    return (w.site ? 1 : 0) + (w.full ? Math.max(w.support, w.coverage) : w.coverage) + AGREE * agreement(w.e, w.r);
  }
  // match._repeats: the Rust frontend's check repeats the other entry's message (its literal text starts it)
  function repeats(r, o) {
    var rf = r.fragments, of = o.fragments, k = rf.length;
    if (!k || rust(o) || r.starts_literal !== o.starts_literal || of.length < k) return false;
    for (var i = 0; i < k - 1; i++) if (rf[i] !== of[i]) return false;
    return of[k - 1].startsWith(rf[k - 1]);
  }
  // match._repeated_first: the Python entry a Rust check repeats just before the check
  function repeatedFirst(weak) {
    var out = weak.slice();
    for (var i = 0; i < out.length; i++) {
      if (!rust(out[i].e)) continue;
      for (var j = i + 1; j < out.length; j++) {
        if (repeats(out[i].e, out[j].e)) { out.splice(i, 0, out.splice(j, 1)[0]); i++; break; }
      }
    }
    return out;
  }
  function byId(a, b) { return a.e.id < b.e.id ? -1 : a.e.id > b.e.id ? 1 : 0; }
  // paste.named_version: the one release of the project (its repository's name) a paste names:
  // a server's startup line, an engine's, a wheel's path or a pin; null for none or several
  // (ASCII letters, digits and \b, as paste.py's re.ASCII reads them; Python's white space)
  var RELEASE = "(v?\\d{1,4}(?:\\.\\d{1,6}){1,3}(?:(?:\\.?post|\\.?dev|rc|a|b)\\d{1,6})?)(?:\\+[A-Za-z0-9.]{1,40})?";
  function namedVersion(text, name) {
    if (!name || !/^[\w.-]{1,100}$/.test(name)) return null;
    var n = name.replace(/[.*+?^${}()|[\]\\-]/g, "\\$&"), found = new Map();
    ["\\b" + n + "\\b[\\w ]{0,40}? version:? " + RELEASE + "(?![\\w.])", "\\bLLM engine \\(" + RELEASE + "\\)",
     "(?<![\\w-])" + n + "(?:-|==|/)" + RELEASE + "(?![0-9]|\\.[0-9])(?=[./" + SPACE + ",;)\\]'\"-]|$)"].forEach(function (pattern) {
      var re = new RegExp(pattern, "gi"), m;
      while ((m = re.exec(text))) {
        var k = m[1].match(/\d+/g).map(Number).join(".");
        if (!found.has(k)) found.set(k, m[1]);
      }
    });
    return found.size === 1 ? found.values().next().value : null;
  }
  window.errcatNamedVersion = namedVersion;
  // base.releases.release_key: PEP 440's order for the versions lineage.VERSION reads (a dev
  // release before its pre-releases, those before the release, its post-releases after it);
  // anything else by its numbers
  var PHASE = {a: 0, alpha: 0, b: 1, beta: 1, c: 2, rc: 2, pre: 2, preview: 2};
  var PEP440 = /^v?(\d{1,9}(?:\.\d{1,9})*)(?:[-_.]?(alpha|beta|preview|pre|rc|a|b|c)[-_.]?(\d{0,9}))?(?:-(\d{1,9})|[-_.]?(?:post|rev|r)[-_.]?(\d{0,9}))?(?:[-_.]?dev[-_.]?(\d{0,9}))?$/i;
  function versionKey(v) {
    var m = PEP440.exec(pyStrip(String(v)).split("+")[0]);
    var rel = (m ? m[1].split(".") : (String(v).match(/\d+/g) || ["0"]).slice(0, 8).map(function (d) { return d.slice(0, 9); })).map(Number);
    while (rel.length > 1 && rel[rel.length - 1] === 0) rel.pop();
    if (!m) return [rel, [Infinity], -Infinity, Infinity];
    var post = m[4] !== undefined ? +m[4] : m[5] !== undefined ? +(m[5] || 0) : undefined, dev = m[6] !== undefined ? +(m[6] || 0) : undefined;
    var pre = m[2] ? [PHASE[m[2].toLowerCase()], +(m[3] || 0)] : (dev !== undefined && post === undefined ? [-Infinity] : [Infinity]);
    return [rel, pre, post !== undefined ? post : -Infinity, dev !== undefined ? dev : Infinity];
  }
  function cmpList(a, b) {
    for (var i = 0; i < Math.max(a.length, b.length); i++) {
      var x = i < a.length ? a[i] : 0, y = i < b.length ? b[i] : 0;
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  }
  function cmpVersion(a, b) {
    return cmpList(a[0], b[0]) || cmpList(a[1], b[1]) || (a[2] === b[2] ? 0 : a[2] < b[2] ? -1 : 1) || (a[3] === b[3] ? 0 : a[3] < b[3] ? -1 : 1);
  }
  window.errcatCompareVersions = function (a, b) { return cmpVersion(versionKey(a), versionKey(b)); };
  var releaseKeys = null;
  function released(e, i) {
    if (!releaseKeys) releaseKeys = (data.releases || []).map(versionKey);
    return e.v && e.v[i] >= 0 ? releaseKeys[e.v[i]] : null;
  }
  // lineage.live_in: whether the release raised the entry, null when its history does not say
  function liveIn(e, version) {
    if (!e.v || !/\d/.test(version)) return null;
    var want = versionKey(version), first = released(e, 0), last = released(e, 1), gone = released(e, 2);
    if (!first && !last && !gone) return null;
    if (first && cmpVersion(want, first) < 0) return false;
    if (e.r && ((gone && cmpVersion(want, gone) >= 0) || (!gone && last && cmpVersion(want, last) > 0))) return false;
    return true;
  }
  // lineage.Releases.text: "v1.0", "v1.0 to v1.1" (retired), "since v2.0" (live)
  function raisedIn(e) {
    var first = e.v && e.v[0] >= 0 ? data.releases[e.v[0]] : null, last = e.r && e.v && e.v[1] >= 0 ? data.releases[e.v[1]] : null;
    if (!first && !last) return "";
    if (!e.r) return first ? "since " + first : "";
    if (first && last && cmpVersion(versionKey(first), versionKey(last)) !== 0) return first + " to " + last;
    return first || last || "";
  }
  // match.match: matches (root causes before umbrellas) and weak candidates, best first
  function answer(read, foreign, foreignMsgs) {
    var found = [];
    read.readings.forEach(function (r) {
      function any() { return full.some(function (m) { return m.strong; }); }
      var full = fullMatches(r, foreignMsgs);
      if (!any()) full = full.concat(prefixMatches(r, foreignMsgs));
      // another letter case (an issue's title), only when nothing matched as pasted
      if (!any()) full = full.concat(fullMatches(r, foreignMsgs, true));
      if (!any()) full = full.concat(prefixMatches(r, foreignMsgs, true));
      found = found.concat(full);
    });
    var best = new Map();
    found.forEach(function (m) { var b = best.get(m.e.id); if (!b || keyCmp(m.key, b.key) > 0) best.set(m.e.id, m); });
    var ranked = Array.from(best.values()).sort(function (a, b) { return keyCmp(b.key, a.key) || byId(a, b); });
    var strong = ranked.filter(function (m) { return m.strong; });
    // match._swallowed: a strong whole-template match's field holding a sentence an entry's whole
    // template fits (anchored): that sentence is the root cause, the match holding it its umbrella
    var held = [];
    strong.forEach(function (m) { if (m.full) (m.values || []).forEach(function (v) { if (v) held.push(v); }); });
    var swallowed = ranked.filter(function (w) {
      return !w.strong && w.full && w.anchored && w.r.m && !strong.some(function (m) { return m.e.id === w.e.id; }) &&
        held.some(function (v) { return v.indexOf(w.r.m) >= 0; });
    });
    swallowed.forEach(function (w) { w.strong = true; w.key[0] = 1; });
    strong = swallowed.concat(strong);
    var weak = ranked.filter(function (m) { return !m.strong; });
    var wrappers = new Set(strong.filter(function (m) {
      return m.full && (m.values || []).some(function (v) { return swallowed.some(function (w) { return v.indexOf(w.r.m) >= 0; }); });
    }));
    // match._prefer_release: of the strong matches, those the release the paste names raised first
    var version = namedVersion(read.raw, (data.repo || "").slice((data.repo || "").lastIndexOf("/") + 1));
    if (version) {
      strong.forEach(function (m) { var l = liveIn(m.e, version); m.live = l === null ? 0 : l ? 1 : -1; m.key[2] = m.live; });
      strong.sort(function (a, b) { return keyCmp(b.key, a.key) || byId(a, b); });
    }
    // match._before_traceback: a line a traceback follows (logger.exception) says only that something failed
    var lines = read.cleaned.split("\n").map(pyStrip).filter(function (l) { return l; }), beforeTb = new Set();
    for (var k = 0; k + 1 < lines.length; k++) if (lines[k + 1] === TB) beforeTb.add(lines[k]);
    function umbrellaMatch(m) { return umbrella(m.e) || (kind(m.e) === "log" && beforeTb.has(m.r.m)) || wrappers.has(m); }
    var umbrellas = strong.filter(umbrellaMatch), causes = strong.filter(function (m) { return !umbrellaMatch(m); });
    if (umbrellas.length && (causes.length || foreign.length)) {
      causes.forEach(function (m) { m.role = "root cause"; });
      strong = causes.concat(umbrellas);
    }
    umbrellas.forEach(function (m) { m.role = "umbrella"; });
    var near = [];
    if (read.readings.length && !foreign.length && !causes.length) {
      // nothing but umbrellas (or nothing at all): the nearest wordings to the paste's other
      // lines may be the root cause, reworded since the release the paste came from
      var seen = new Set(), umbrellaLines = umbrellas.map(function (m) { return m.r.m; }), nearBest = new Map();
      var answered = new Set(umbrellas.map(function (m) { return m.e.id; }));
      read.readings.map(function (r, i) { return [r, i]; }).sort(function (a, b) {
        return ((a[0].src !== "line") - (b[0].src !== "line")) || (b[0].ln - a[0].ln) || (a[1] - b[1]);
      }).slice(0, 4).forEach(function (ri) {
        var r = ri[0];
        if (seen.has(r.m) || umbrellaLines.some(function (u) { return r.m.endsWith(u); })) return;
        seen.add(r.m);
        nearest(r.m).sort(function (a, b) { return b[1] - a[1] || (a[0].id < b[0].id ? -1 : 1); }).slice(0, 5).forEach(function (p) {
          if (answered.has(p[0].id)) return;
          var w = {near: true, e: p[0], similarity: p[1], r: null}, top = -2;
          read.readings.forEach(function (q) { if (q.m === r.m && agreement(p[0], q) > top) { top = agreement(p[0], q); w.r = q; } });
          var b = nearBest.get(w.e.id);
          if (!b || weakScore(w) > weakScore(b)) nearBest.set(w.e.id, w);
        });
      });
      near = Array.from(nearBest.values()).sort(function (a, b) { return b.similarity - a.similarity || byId(a, b); }).slice(0, 5);
    }
    var weakAll = repeatedFirst(weak.slice(0, LIMIT).concat(near).sort(function (a, b) { return weakScore(b) - weakScore(a) || byId(a, b); })).slice(0, LIMIT);
    return {strong: strong, weak: weakAll, causes: causes.length > 0, version: version};
  }
  // A word search for what is not a paste ("kv cache"): the entries whose words the query has.
  function wordScore(e, q, qw) {
    var s = 0;
    if (e.spaced === undefined) e.spaced = " " + e.tokens.join(" ") + " ";
    qw.forEach(function (w) {
      if (e.spaced.indexOf(w[0]) >= 0) s += 3 * w[2];
      else if (e.spaced.indexOf(w[1]) >= 0) s += w[2];
    });
    if (e.id.indexOf(pyStrip(q)) === 0 && pyStrip(q).length >= 4) s += 50;
    return s;
  }
  // A result's title: the entry's title, or where the title is cut at a field ("Total number
  // of attention heads (…"), its message template on one line, as errcat match prints it, around
  // the first word of the query it holds; the query's words marked. Text nodes only.
  var SHOWN_CHARS = 120;
  function shownTitle(a, e, qw) {
    var text = visible(e.title);
    if (/\u2026$/.test(e.title) && e.text) {
      text = visible(e.text.replace(PY_RUNS, " "));
      var words = qw.map(function (w) { return pyStrip(w[0]); }).filter(function (w) { return w.length > 2; });
      var lower = text.toLowerCase(), at = -1;
      words.forEach(function (w) { var i = lower.indexOf(w); if (i >= 0 && (at < 0 || i < at)) at = i; });
      if (text.length > SHOWN_CHARS) {
        var start = at > SHOWN_CHARS - 30 ? Math.max(0, at - 30) : 0, space = text.indexOf(" ", start);
        if (start && space >= 0 && space < at) start = space + 1;  // from a word's beginning
        text = (start ? "\u2026" : "") + text.slice(start, start + SHOWN_CHARS) + (start + SHOWN_CHARS < text.length ? "\u2026" : "");
      }
    }
    var marks = qw.map(function (w) { return pyStrip(w[0]); }).filter(function (w) { return w.length > 2; }), low = text.toLowerCase(), i = 0;
    while (i < text.length) {
      var next = -1, len = 0;
      marks.forEach(function (w) { var j = low.indexOf(w, i); if (j >= 0 && (next < 0 || j < next || (j === next && w.length > len))) { next = j; len = w.length; } });
      if (next < 0) { a.appendChild(document.createTextNode(text.slice(i))); break; }
      if (next > i) a.appendChild(document.createTextNode(text.slice(i, next)));
      var m = document.createElement("mark"); m.textContent = text.slice(next, next + len); a.appendChild(m);
      i = next + len;
    }
  }
  // The box's answer to a paste, as data: the foreign errors it names, then rows of [entry,
  // badge] (matches, weak candidates when nothing matches, entries sharing its words), at most
  // LIMIT of them, and how many more matched.
  function results(raw) {
    raw = pyStrip(lastChars(raw, MAX_INPUT));
    if (!raw) return {foreign: [], rows: [], more: 0, qw: [], version: null};
    var read = readingsOf(raw), messages = read.readings.map(function (r) { return r.m; });
    var foreign = (data.foreign || []).filter(function (f) {
      return inOrder(f.match, read.cleaned) || messages.some(function (m) { return inOrder(f.match, m); });
    });
    var foreignMsgs = new Set(messages.filter(function (m) { return foreign.some(function (f) { return inOrder(f.match, m); }); }));
    var got = answer(read, foreign, foreignMsgs), shown = new Set(), rows = [];
    // As errcat match answers: the entries that match and nothing else; weak candidates (worded
    // alike, not a match) only when none does; and for words that are no paste ("kv cache"),
    // the entries that share them, labelled so, only when nothing matched.
    got.strong.forEach(function (m) {
      if (shown.has(m.e.id)) return;
      shown.add(m.e.id);
      // what errcat match says of its lineage: retired, the releases that raised it, whether the
      // release the paste names did, and (on the page) the entry that raises its error today
      var said = m.e.r ? " \u00b7 retired" + (raisedIn(m.e) ? ", raised in " + raisedIn(m.e) : "") : "";
      if (got.version && m.live) said += " \u00b7 " + (m.live > 0 ? "raised by " : "not raised by ") + got.version;
      rows.push([m.e, (m.full ? " \u00b7 matches" : " \u00b7 " + BEGINNING) + (m.role ? " \u00b7 " + m.role : "") + said, m.e.t || null]);
    });
    // (and under umbrellas alone, as errcat match offers the nearest wording: the root cause may be reworded)
    var umbrellasOnly = got.strong.length && got.strong.every(function (m) { return m.role === "umbrella"; });
    if (!rows.length || umbrellasOnly) got.weak.forEach(function (w) { if (!shown.has(w.e.id)) { shown.add(w.e.id); rows.push([w.e, " \u00b7 weak"]); } });
    var q = read.readings.length ? read.readings[read.readings.length - 1].m : raw, qw = queryWords(read.cleaned);
    if (!got.strong.length && !foreign.length) data.entries.map(function (e) { return [shown.has(e.id) ? 0 : wordScore(e, q, qw), e]; })
      .filter(function (p) { return p[0] > 0; })
      .sort(function (a, b) { return b[0] - a[0] || (a[1].id < b[1].id ? -1 : 1); })
      .slice(0, Math.max(0, LIMIT - rows.length)).forEach(function (p) { rows.push([p[1], " \u00b7 shares words"]); });
    return {foreign: foreign, rows: rows.slice(0, LIMIT), more: rows.length - LIMIT, qw: qw, version: got.version};
  }
  var ids = null;
  function entryById(id) {
    if (!ids) { ids = new Map(); data.entries.forEach(function (e) { ids.set(e.id, e); }); }
    return ids.get(id) || null;
  }
  // The answer as ids and badges, as the page shows them (what the Node parity test compares).
  window.errcatResults = function (raw) {
    var got = results(raw);
    return {foreign: got.foreign.map(function (f) { return f.name; }), more: got.more,
            rows: got.rows.map(function (row) { return [row[0].id, row[0].exception + row[1], row[2] || null]; }), version: got.version};
  };

  // --------------------------------------------------------------- the page: the box and its list
  var box = typeof document === "undefined" ? null : document.getElementById("search");
  var list = box && document.getElementById("results");
  if (!box || !list) return;
  var base = document.body.getAttribute("data-root") || "";
  function run() {
    list.textContent = "";
    var got = results(box.value), qw = got.qw;
    got.foreign.forEach(function (f) {
      var li = document.createElement("li");
      li.className = "foreign";
      li.textContent = visible("Not raised by " + data.repo + ": raised by " + f.origin + " (" + f.name + "). " + f.explanation);
      // what to check, as errcat match prints it under the line
      if ((f.check || []).length) {
        f.check.forEach(function (c) { var item = document.createElement("div"); item.className = "check"; item.textContent = visible("Check: " + c); li.appendChild(item); });
      }
      list.appendChild(li);
    });
    if (got.version && got.rows.length) {
      var note = document.createElement("li"); note.className = "muted release";
      note.textContent = visible("Release " + got.version + ", named by the paste: the entries it raised come first.");
      list.appendChild(note);
    }
    got.rows.forEach(function (row) {
      var e = row[0], li = document.createElement("li"), a = document.createElement("a");
      a.href = base + "errors/" + e.id + ".html";
      shownTitle(a, e, qw);
      var small = document.createElement("span");
      small.className = "badge";
      small.textContent = visible(e.exception + row[1]);
      li.appendChild(a); li.appendChild(document.createTextNode(" ")); li.appendChild(small);
      var today = row[2] && entryById(row[2]);
      if (today) {  // a retired wording: what raises the error today, as errcat match names it
        var now = document.createElement("a"), line = document.createElement("div");
        now.href = base + "errors/" + today.id + ".html"; now.className = "today"; now.textContent = visible(today.title);
        line.className = "check"; line.appendChild(document.createTextNode("Raised today by ")); line.appendChild(now);
        li.appendChild(line);
      }
      list.appendChild(li);
    });
    if (got.more > 0) {
      var rest = document.createElement("li"); rest.className = "muted";
      rest.textContent = got.more + " more entr" + (got.more === 1 ? "y matches" : "ies match") + ": paste more of the message to narrow them down.";
      list.appendChild(rest);
    }
    if (!got.rows.length && !got.foreign.length && pyStrip(box.value)) {
      var li = document.createElement("li"); li.className = "muted"; li.textContent = "No entry found.";
      list.appendChild(li);
    }
  }
  box.addEventListener("input", run);
  // Keyboard: Down from the box to the first result, Up/Down between results, Escape back to
  // the box; Enter follows the focused link (a plain link: Tab reaches each one too).
  function links() { return Array.prototype.slice.call(list.querySelectorAll("a")); }
  box.addEventListener("keydown", function (ev) {
    if (ev.key === "ArrowDown" && links().length) { ev.preventDefault(); links()[0].focus(); }
  });
  list.addEventListener("keydown", function (ev) {
    var all = links(), i = all.indexOf(document.activeElement);
    if (i < 0) return;
    if (ev.key === "ArrowDown" && i + 1 < all.length) { ev.preventDefault(); all[i + 1].focus(); }
    else if (ev.key === "ArrowUp") { ev.preventDefault(); (i ? all[i - 1] : box).focus(); }
    else if (ev.key === "Escape") { ev.preventDefault(); box.focus(); }
  });
  var params = new URLSearchParams(window.location.search);
  if (params.get("q")) { box.value = params.get("q"); run(); }
})();
