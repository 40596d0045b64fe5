import Simulator

/// How a diagnostic is shown: bounded in size and free of control characters, so that any
/// file can be checked in a terminal or a log.
extension Diagnostic {
  /// At most this many characters of the line are shown: half before the caret, half after.
  static let shownLineCharacters = 200
  /// A message or a source longer than this many characters is cut.
  static let shownTextCharacters = 1_000
  /// A character of more scalars than this (a run of combining marks) is shown as `�`.
  static let maxScalarsPerCharacter = 16

  /// The line as shown and the caret line under it (without the `^`). A line of at most
  /// ``shownLineCharacters`` characters, with the caret within them, is shown whole; otherwise
  /// the characters around the caret, with `…` for the parts cut (and a space under it).
  func excerpt() -> (line: String, caret: String) {
    let width = Self.shownLineCharacters
    let column = max(0, location.column - 1)
    let text = lineText
    let fits = text.index(text.startIndex, offsetBy: width + 1, limitedBy: text.endIndex) == nil
    if fits && column <= width { return (Self.printable(text[...]), Self.caretPrefix(text[...], column)) }
    let start = max(0, column - width / 2)
    let from = text.index(text.startIndex, offsetBy: start, limitedBy: text.endIndex) ?? text.endIndex
    let to = text.index(from, offsetBy: width, limitedBy: text.endIndex) ?? text.endIndex
    let shown = text[from..<to]
    let line = (start > 0 ? "…" : "") + Self.printable(shown) + (to < text.endIndex ? "…" : "")
    return (line, (start > 0 ? " " : "") + Self.caretPrefix(shown, column - start))
  }

  /// Spaces (a tab under a tab) up to `column` characters of `shown`, then spaces.
  static func caretPrefix(_ shown: Substring, _ column: Int) -> String {
    var caret = ""
    var remaining = column
    for ch in shown {
      if remaining == 0 { break }
      caret.append(ch == "\t" ? "\t" : " ")
      remaining -= 1
    }
    if remaining > 0 { caret += String(repeating: " ", count: remaining) }
    return caret
  }

  /// A message or a source as shown: printable, and cut after ``shownTextCharacters``
  /// characters, with `…`.
  static func shown(_ text: String) -> String {
    guard let end = text.index(text.startIndex, offsetBy: shownTextCharacters, limitedBy: text.endIndex), end < text.endIndex else {
      return printable(text[...])
    }
    return printable(text[..<end]) + "…"
  }

  /// Text as a terminal can show it (the message quotes the file too): control characters (but
  /// tabs), the invisible characters that reorder text (bidirectional controls), line and
  /// paragraph separators, and characters of more than ``maxScalarsPerCharacter`` scalars become
  /// `�`, one character for one, so the caret still lines up.
  static func printable(_ text: Substring) -> String {
    var out = ""
    for ch in text {
      var hidden = false
      var scalars = 0
      for u in ch.unicodeScalars {
        scalars += 1
        if isHidden(u) || scalars > maxScalarsPerCharacter {
          hidden = true
          break
        }
      }
      out.append(hidden ? "\u{FFFD}" : ch)
    }
    return out
  }

  /// C0 and C1 controls but the tab, bidirectional controls, U+2028 and U+2029.
  static func isHidden(_ u: Unicode.Scalar) -> Bool {
    switch u.value {
    case 0x09: false
    case 0..<0x20, 0x7F..<0xA0: true
    default: TerminalText.isInvisibleLayout(u)
    }
  }
}
