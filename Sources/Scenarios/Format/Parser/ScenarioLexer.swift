/// Splits each line of a scenario file into tokens (``ScenarioInput`` splits the file into lines).
enum ScenarioLexer {
  /// A problem found while lexing: a line and a scalar offset in it.
  struct Problem {
    var line: Int
    var offset: Int
    var message: String
  }

  /// Words are separated by spaces and tabs, and by nothing else.
  static func isSpace(_ s: Unicode.Scalar) -> Bool {
    s == " " || s == "\t"
  }

  /// What is wrong with a character that looks like white space but does not separate words:
  /// a carriage return, a vertical tab or a form feed (in a string, each is text).
  static func separatorProblem(_ s: Unicode.Scalar) -> String? {
    switch s {
    case "\r": carriageReturnMessage
    case "\u{0B}": "a vertical tab (\\v) cannot separate words; use spaces or tabs"
    case "\u{0C}": "a form feed (\\f) cannot separate words; use spaces or tabs"
    default: nil
    }
  }

  static let carriageReturnMessage =
    "a carriage return (\\r) inside a line; lines end with \\n or \\r\\n, and words are separated by spaces or tabs"

  static let invalidUTF8InStringMessage = "invalid UTF-8 in a string; scenario files are UTF-8 text"
  static let invalidUTF8Message = "invalid UTF-8; scenario files are UTF-8 text"

  /// For a file whose only line endings are lone carriage returns.
  static let carriageReturnLinesMessage =
    "the lines of this file end with a lone carriage return (\\r, as on classic Mac OS); scenario files end lines with \\n or \\r\\n: convert its line endings"

  /// What lexing a line found: its first problem, and its first carriage return outside a
  /// string (a sign of `\r` line endings when the file has no `\n`).
  struct Result {
    var problem: Problem?
    var carriageReturn: Int?
  }

  /// Fills in the line's tokens from its scalars; reports the line's first problem. After an
  /// unterminated string or an unknown escape, `lexFailed` is set: the line is not parsed
  /// further. A carriage return, a vertical tab or a form feed outside a string is reported but
  /// still separates words (a carriage return in a comment is reported too: it may hide a line
  /// meant to be read), so that the line is still parsed and only that is reported.
  ///
  /// `firstInvalid` is the offset of the line's first invalid UTF-8 sequence (decoded as
  /// U+FFFD). In a string or a word it is reported, and the line is still read; in a comment it
  /// is ignored (and so is every later one: the comment runs to the end of the line).
  static func lex(_ line: inout ScenarioLine, _ s: [Unicode.Scalar], firstInvalid: Int? = nil) -> Result {
    let n = s.count
    var i = 0
    var lastEnd = -1
    var problem: Problem?
    var carriageReturn: Int?
    func report(_ offset: Int, _ message: String) {
      if problem == nil { problem = Problem(line: line.number, offset: offset, message: message) }
    }
    while i < n {
      let c = s[i]
      if isSpace(c) {
        i += 1
        continue
      }
      if let message = separatorProblem(c) {
        if c == "\r", carriageReturn == nil { carriageReturn = i }
        report(i, message)
        i += 1
        continue
      }
      if c == "#" {
        line.contentEnd = i
        if let cr = s[i...].firstIndex(of: "\r") {
          if carriageReturn == nil { carriageReturn = cr }
          report(cr, carriageReturnMessage)
        }
        break
      }
      if c == "\"" {
        let string = lexString(s, from: i, firstInvalid: firstInvalid, report: report)
        guard let end = string.end else {
          report(i, "unterminated string: add a closing '\"'")
          line.lexFailed = true
          return Result(problem: problem, carriageReturn: carriageReturn)
        }
        if string.failed { line.lexFailed = true }
        line.tokens.append(ScenarioToken(text: string.value, start: i, end: end, isString: true, glued: lastEnd == i))
        lastEnd = end
        i = end
        continue
      }
      let start = i
      var j = i
      while j < n, !isSpace(s[j]), s[j] != "\"", s[j] != "#", separatorProblem(s[j]) == nil {
        if j == firstInvalid { report(j, invalidUTF8Message) }
        j += 1
      }
      line.tokens.append(ScenarioToken(text: line.slice(start, j), start: start, end: j, isString: false, glued: lastEnd == start))
      lastEnd = j
      i = j
    }
    return Result(problem: problem, carriageReturn: carriageReturn)
  }

  /// The string starting with the quote at `start`: its value, the offset past its closing
  /// quote (`nil` when there is none), and whether it had an unknown escape (which fails the
  /// line). Problems are passed to `report`.
  static func lexString(_ s: [Unicode.Scalar], from start: Int, firstInvalid: Int?, report: (Int, String) -> Void)
    -> (value: String, end: Int?, failed: Bool)
  {
    let n = s.count
    var value = String.UnicodeScalarView()
    var failed = false
    var j = start + 1
    while j < n {
      let d = s[j]
      if d == "\"" { return (String(value), j + 1, failed) }
      if j == firstInvalid { report(j, invalidUTF8InStringMessage) }
      if d == "\\" {
        guard j + 1 < n else { break }
        let e = s[j + 1]
        switch e {
        case "\"": value.append("\"")
        case "\\": value.append("\\")
        case "n": value.append("\n")
        default:
          report(j, "unknown escape '\\\(String(Character(e)))' in a string; the escapes are \\\" \\\\ and \\n")
          failed = true
        }
        j += 2
        continue
      }
      value.append(d)
      j += 1
    }
    return (String(value), nil, failed)
  }
}
