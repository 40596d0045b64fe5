/// A token of Swift source, as ranges into the bytes (text is made on demand).
struct SwiftToken {
  enum Kind: UInt8 {
    case identifier
    case number
    case string
    case punct
  }

  var kind: Kind
  var start: Int
  var end: Int
  var line: Int
  var column: Int
  /// The first token on its line.
  var firstOnLine: Bool
  /// A string literal with interpolation, a raw or a multi-line string.
  var complexString = false
}

/// A hand-written Swift tokenizer: enough to find declarations. Comments (line and nested block)
/// are dropped; string literals (with interpolation, raw, multi-line) are one token each.
struct SwiftLexer {
  static let maximumTokens = 2_000_000

  let bytes: [UInt8]
  var tokens: [SwiftToken] = []
  /// Problems (unterminated literals or comments), with their line and column.
  var problems: [(line: Int, column: Int, message: String)] = []
  /// Open bracket index → its matching close bracket index (or the end, when unbalanced).
  var match: [Int: Int] = [:]

  private var i = 0
  private var line = 1
  private var lineStart = 0
  private var sawNewline = true

  init(text: String) {
    bytes = Array(text.utf8)
    run()
    matchBrackets()
  }

  func text(_ t: SwiftToken) -> String { String(decoding: bytes[t.start..<t.end], as: UTF8.self) }

  func text(at index: Int) -> String { index < tokens.count ? text(tokens[index]) : "" }

  func isPunct(_ index: Int, _ c: UInt8) -> Bool {
    index < tokens.count && tokens[index].kind == .punct && bytes[tokens[index].start] == c
  }

  /// The value of a simple string literal (one line, no interpolation), with escapes decoded.
  func stringValue(_ t: SwiftToken) -> String? {
    guard t.kind == .string, !t.complexString, t.end - t.start >= 2 else { return nil }
    var out = [UInt8]()
    var k = t.start + 1
    let last = t.end - 1
    while k < last {
      let c = bytes[k]
      if c == UInt8(ascii: "\\"), k + 1 < last {
        let e = bytes[k + 1]
        switch e {
        case UInt8(ascii: "n"): out.append(10)
        case UInt8(ascii: "t"): out.append(9)
        case UInt8(ascii: "r"): out.append(13)
        case UInt8(ascii: "0"): out.append(0)
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "'"): out.append(e)
        default: return nil
        }
        k += 2
      } else {
        out.append(c)
        k += 1
      }
    }
    return String(decoding: out, as: UTF8.self)
  }

  private mutating func newline(at k: Int) {
    line += 1
    lineStart = k + 1
    sawNewline = true
  }

  private mutating func add(_ kind: SwiftToken.Kind, _ start: Int, _ end: Int, line: Int, column: Int, complex: Bool = false) {
    tokens.append(SwiftToken(kind: kind, start: start, end: end, line: line, column: column, firstOnLine: sawNewline, complexString: complex))
    sawNewline = false
  }

  private static func isIdentStart(_ c: UInt8) -> Bool {
    (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x5F || c >= 0x80 || c == 0x24
  }

  private static func isIdentChar(_ c: UInt8) -> Bool { isIdentStart(c) || (c >= 0x30 && c <= 0x39) }

  private mutating func run() {
    let n = bytes.count
    while i < n {
      if tokens.count >= Self.maximumTokens {
        problems.append((line, i - lineStart + 1, "the file has too many tokens; the rest of it is not read"))
        return
      }
      let c = bytes[i]
      let column = i - lineStart + 1
      switch c {
      case 0x0A:
        newline(at: i)
        i += 1
      case 0x20, 0x09, 0x0D, 0x0B, 0x0C:
        i += 1
      case UInt8(ascii: "/") where i + 1 < n && bytes[i + 1] == UInt8(ascii: "/"):
        while i < n && bytes[i] != 0x0A { i += 1 }
      case UInt8(ascii: "/") where i + 1 < n && bytes[i + 1] == UInt8(ascii: "*"):
        let startLine = line
        var depth = 0
        var closed = false
        while i < n {
          if bytes[i] == UInt8(ascii: "/") && i + 1 < n && bytes[i + 1] == UInt8(ascii: "*") {
            depth += 1
            i += 2
          } else if bytes[i] == UInt8(ascii: "*") && i + 1 < n && bytes[i + 1] == UInt8(ascii: "/") {
            depth -= 1
            i += 2
            if depth == 0 {
              closed = true
              break
            }
          } else {
            if bytes[i] == 0x0A { newline(at: i) }
            i += 1
          }
        }
        if !closed { problems.append((startLine, column, "unterminated block comment: the rest of the file is not read")) }
      case UInt8(ascii: "\""):
        lexString(hashes: 0, start: i, line: line, column: column)
      case UInt8(ascii: "#") where i + 1 < n && (bytes[i + 1] == UInt8(ascii: "\"") || bytes[i + 1] == UInt8(ascii: "#")):
        var k = i
        while k < n && bytes[k] == UInt8(ascii: "#") { k += 1 }
        if k < n && bytes[k] == UInt8(ascii: "\"") {
          let start = i
          i = k
          lexString(hashes: k - start, start: start, line: line, column: column)
        } else {
          add(.punct, i, i + 1, line: line, column: column)
          i += 1
        }
      case UInt8(ascii: "`"):
        var k = i + 1
        while k < n && bytes[k] != UInt8(ascii: "`") && bytes[k] != 0x0A { k += 1 }
        if k < n && bytes[k] == UInt8(ascii: "`") && k > i + 1 {
          add(.identifier, i + 1, k, line: line, column: column)
          i = k + 1
        } else {
          add(.punct, i, i + 1, line: line, column: column)
          i += 1
        }
      case 0x30...0x39:
        var k = i + 1
        while k < n {
          let d = bytes[k]
          if Self.isIdentChar(d) && d != 0x24 {
            k += 1
          } else if d == UInt8(ascii: "."), k + 1 < n, bytes[k + 1] >= 0x30, bytes[k + 1] <= 0x39 {
            k += 1
          } else if d == UInt8(ascii: "-") || d == UInt8(ascii: "+"), bytes[k - 1] | 0x20 == UInt8(ascii: "e"), k + 1 < n,
            bytes[k + 1] >= 0x30, bytes[k + 1] <= 0x39, !(k - i > 1 && bytes[i] == 0x30 && bytes[i + 1] | 0x20 == UInt8(ascii: "x"))
          {
            // The sign of a decimal exponent (`1.5e-3`); not in a hexadecimal number (`0x1E-1`).
            k += 1
          } else {
            break
          }
        }
        add(.number, i, k, line: line, column: column)
        i = k
      default:
        if Self.isIdentStart(c) {
          var k = i + 1
          while k < n && Self.isIdentChar(bytes[k]) { k += 1 }
          add(.identifier, i, k, line: line, column: column)
          i = k
        } else {
          add(.punct, i, i + 1, line: line, column: column)
          i += 1
        }
      }
    }
  }

  /// Lexes a string literal whose opening quote is at `i` (after `hashes` `#`s from `start`).
  private mutating func lexString(hashes: Int, start: Int, line startLine: Int, column: Int) {
    let n = bytes.count
    let quote = UInt8(ascii: "\"")
    let multi = i + 2 < n && bytes[i + 1] == quote && bytes[i + 2] == quote
    i += multi ? 3 : 1
    var complex = multi || hashes > 0
    var interpolationDepth = 0
    while i < n {
      let c = bytes[i]
      if c == 0x0A {
        if !multi && interpolationDepth == 0 {
          problems.append((startLine, column, "unterminated string literal"))
          add(.string, start, i, line: startLine, column: column, complex: true)
          return
        }
        newline(at: i)
        i += 1
        continue
      }
      if interpolationDepth > 0 {
        if c == UInt8(ascii: "(") {
          interpolationDepth += 1
        } else if c == UInt8(ascii: ")") {
          interpolationDepth -= 1
        } else if c == quote && !multi {
          // A nested simple string inside the interpolation.
          var k = i + 1
          while k < n && bytes[k] != quote && bytes[k] != 0x0A {
            k += bytes[k] == UInt8(ascii: "\\") ? 2 : 1
          }
          i = min(k, n - 1)
        }
        i += 1
        continue
      }
      if c == UInt8(ascii: "\\") {
        var k = i + 1
        var h = 0
        while h < hashes && k < n && bytes[k] == UInt8(ascii: "#") {
          h += 1
          k += 1
        }
        if h == hashes {
          if k < n && bytes[k] == UInt8(ascii: "(") {
            complex = true
            interpolationDepth = 1
            i = k + 1
            continue
          }
          i = k + 1
          continue
        }
        i += 1
        continue
      }
      if c == quote {
        let closesQuotes = !multi || (i + 2 < n && bytes[i + 1] == quote && bytes[i + 2] == quote)
        if closesQuotes {
          var k = i + (multi ? 3 : 1)
          var h = 0
          while h < hashes && k < n && bytes[k] == UInt8(ascii: "#") {
            h += 1
            k += 1
          }
          if h == hashes {
            i = k
            add(.string, start, k, line: startLine, column: column, complex: complex)
            return
          }
        }
      }
      i += 1
    }
    problems.append((startLine, column, "unterminated string literal: the rest of the file is not read"))
    add(.string, start, n, line: startLine, column: column, complex: true)
  }

  private mutating func matchBrackets() {
    var stack: [Int] = []
    for (index, t) in tokens.enumerated() where t.kind == .punct {
      switch bytes[t.start] {
      case UInt8(ascii: "("), UInt8(ascii: "["), UInt8(ascii: "{"):
        stack.append(index)
      case UInt8(ascii: ")"), UInt8(ascii: "]"), UInt8(ascii: "}"):
        if let open = stack.popLast() { match[open] = index }
      default:
        break
      }
    }
    for open in stack { match[open] = tokens.count }
  }

  /// The index just past the group opened at `index` (or `index + 1` when it opens none).
  func skipGroup(_ index: Int) -> Int {
    if let close = match[index] { return min(close + 1, tokens.count) }
    return index + 1
  }
}
