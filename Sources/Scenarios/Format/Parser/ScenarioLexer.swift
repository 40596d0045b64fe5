/// A word or a string on one line of a scenario file. Positions are offsets in the line's
/// Unicode scalars; ``ScenarioLine/column(_:)`` turns them into 1-based `Character` columns.
struct ScenarioToken: Sendable {
  /// The word as written, or a string's decoded value.
  var text: String
  /// Offset of the first scalar (the opening quote for a string).
  var start: Int
  /// Offset just past the last scalar (past the closing quote for a string).
  var end: Int
  var isString: Bool
  /// No white space between this token and the one before it (`title="x"`: the string is glued).
  var glued: Bool

  var isWord: Bool { !isString }

  /// Whether this is the bare word `word`.
  func `is`(_ word: String) -> Bool { !isString && text == word }
}

/// One line of a scenario file, lexed: its tokens, where its comment starts, whether it is
/// indented (a field line), and whether lexing failed (then it has been reported already).
struct ScenarioLine: Sendable {
  /// 1-based.
  var number: Int
  /// The line as written, without its line ending.
  var text: String
  var scalars: [Unicode.Scalar]
  var tokens: [ScenarioToken] = []
  /// Offset where the comment starts (or the end of the line).
  var contentEnd: Int
  /// Starts with a space or a tab.
  var indented: Bool
  /// A string was unterminated or had a bad escape; the line is not parsed further.
  var lexFailed = false
  /// Scalar offset → 0-based `Character` index, for lines with non-ASCII text; `nil` when every
  /// scalar is its own character.
  var _characterIndex: [Int]?
  var _characterCount: Int
  /// Scalar offset → UTF-8 offset in `text` (one more entry for the end), for non-ASCII lines.
  var _utf8Offset: [Int]?

  /// A line from its text (as written) and that text's scalars.
  init(number: Int, text: String, scalars: [Unicode.Scalar]) {
    self.number = number
    self.scalars = scalars
    self.text = text
    self.contentEnd = scalars.count
    self.indented = scalars.first.map { $0 == " " || $0 == "\t" } ?? false
    if text.utf8.count == scalars.count {
      _characterCount = scalars.count
    } else {
      var map: [Int] = []
      map.reserveCapacity(scalars.count + 1)
      var count = 0
      for ch in text {
        for _ in ch.unicodeScalars { map.append(count) }
        count += 1
      }
      // Defensive: the map must cover every scalar.
      while map.count < scalars.count { map.append(count) }
      _characterIndex = map
      _characterCount = count
      var utf8: [Int] = [0]
      utf8.reserveCapacity(scalars.count + 1)
      var total = 0
      for s in scalars {
        total += UTF8.width(s)
        utf8.append(total)
      }
      _utf8Offset = utf8
    }
  }

  init(number: Int, scalars: [Unicode.Scalar]) {
    self.init(number: number, text: String(String.UnicodeScalarView(scalars)), scalars: scalars)
  }

  /// The 1-based column of a scalar offset (offsets past the end count on, one per scalar).
  func column(_ offset: Int) -> Int {
    let o = max(0, offset)
    if o >= scalars.count { return _characterCount + (o - scalars.count) + 1 }
    guard let map = _characterIndex else { return o + 1 }
    return map[o] + 1
  }

  /// The text between two scalar offsets.
  func slice(_ from: Int, _ to: Int) -> String {
    let a = min(max(0, from), scalars.count)
    let b = min(max(a, to), scalars.count)
    let ua = _utf8Offset.map { $0[a] } ?? a
    let ub = _utf8Offset.map { $0[b] } ?? b
    let u = text.utf8
    return String(text[u.index(u.startIndex, offsetBy: ua)..<u.index(u.startIndex, offsetBy: ub)])
  }

  /// The line without its comment, trimmed of white space (an expectation's `text`).
  var trimmedContent: String {
    var a = 0
    var b = contentEnd
    while a < b, ScenarioLexer.isSpace(scalars[a]) { a += 1 }
    while b > a, ScenarioLexer.isSpace(scalars[b - 1]) { b -= 1 }
    return slice(a, b)
  }

  /// Offset just after the last token: where a missing word is reported.
  var endOfContent: Int { tokens.last.map { $0.end + 1 } ?? 0 }
}

/// Splits a scenario file into lines and each line into tokens.
enum ScenarioLexer {
  /// A problem found while lexing: a line and a scalar offset in it.
  struct Problem {
    var line: Int
    var offset: Int
    var message: String
  }

  static func isSpace(_ s: Unicode.Scalar) -> Bool {
    s == " " || s == "\t" || s == "\r" || s == "\u{0B}" || s == "\u{0C}"
  }

  /// Lines of `text`: split at `\n`, a `\r` before it dropped, a leading byte-order mark dropped.
  static func lines(_ text: String) -> [ScenarioLine] {
    var result: [ScenarioLine] = []
    let view = text.unicodeScalars
    var current: [Unicode.Scalar] = []
    var start = view.startIndex
    if view.first == "\u{FEFF}" { start = view.index(after: start) }
    var i = start
    func finish(_ end: String.Index) {
      var end = end
      if current.last == "\r" {
        current.removeLast()
        end = view.index(before: end)
      }
      result.append(ScenarioLine(number: result.count + 1, text: String(Substring(view[start..<end])), scalars: current))
      current.removeAll(keepingCapacity: true)
    }
    while i < view.endIndex {
      let s = view[i]
      if s == "\n" {
        finish(i)
        i = view.index(after: i)
        start = i
      } else {
        current.append(s)
        i = view.index(after: i)
      }
    }
    if !current.isEmpty || result.isEmpty { finish(view.endIndex) }
    return result
  }

  /// Fills in the line's tokens; returns the first problem (then `lexFailed` is set).
  static func lex(_ line: inout ScenarioLine) -> Problem? {
    let s = line.scalars
    let n = s.count
    var i = 0
    var lastEnd = -1
    var problem: Problem?
    while i < n {
      let c = s[i]
      if isSpace(c) {
        i += 1
        continue
      }
      if c == "#" {
        line.contentEnd = i
        break
      }
      if c == "\"" {
        let start = i
        var value = String.UnicodeScalarView()
        var j = i + 1
        var closed = false
        while j < n {
          let d = s[j]
          if d == "\"" {
            closed = true
            j += 1
            break
          }
          if d == "\\" {
            guard j + 1 < n else { break }
            let e = s[j + 1]
            switch e {
            case "\"": value.append("\"")
            case "\\": value.append("\\")
            case "n": value.append("\n")
            default:
              if problem == nil {
                problem = Problem(
                  line: line.number, offset: j,
                  message: "unknown escape '\\\(String(Character(e)))' in a string; the escapes are \\\" \\\\ and \\n")
              }
            }
            j += 2
            continue
          }
          value.append(d)
          j += 1
        }
        if !closed {
          if problem == nil {
            problem = Problem(line: line.number, offset: start, message: "unterminated string: add a closing '\"'")
          }
          line.lexFailed = true
          return problem
        }
        line.tokens.append(ScenarioToken(text: String(value), start: start, end: j, isString: true, glued: lastEnd == start))
        lastEnd = j
        i = j
        continue
      }
      let start = i
      var j = i
      while j < n, !isSpace(s[j]), s[j] != "\"", s[j] != "#" { j += 1 }
      line.tokens.append(ScenarioToken(text: line.slice(start, j), start: start, end: j, isString: false, glued: lastEnd == start))
      lastEnd = j
      i = j
    }
    if problem != nil { line.lexFailed = true }
    return problem
  }
}
