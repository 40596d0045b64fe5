/// Splits each line of a scenario file into tokens (``ScenarioInput`` splits the file into lines).
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

  /// Fills in the line's tokens from its scalars; returns the first problem (then `lexFailed`
  /// is set).
  static func lex(_ line: inout ScenarioLine, _ s: [Unicode.Scalar]) -> Problem? {
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
