/// One problem in a scenario file: where it is, what is wrong, and the line it is on.
///
///     let d = Diagnostic(source: "demo.scenario", location: SourceLocation(line: 3, column: 9),
///                        message: "unknown device 'ipad'; did you mean 'iPad'?", lineText: "at 1s   ipad sync")
///     print(d.rendered(), terminator: "")
///     // demo.scenario:3:9: error: unknown device 'ipad'; did you mean 'iPad'?
///     // at 1s   ipad sync
///     //         ^
public struct Diagnostic: Error, Hashable, Sendable, CustomStringConvertible {
  /// The file path or name, as the caller gave it.
  public var source: String
  /// 1-based line and column; the column counts `Character`s of the line as written.
  public var location: SourceLocation
  /// What is wrong, in one sentence, with a "did you mean" suggestion where one is obvious.
  public var message: String
  /// The offending line as written (tabs kept, no line ending).
  public var lineText: String

  /// A diagnostic at `location` in `source`; `lineText` is that line as written, for the caret.
  public init(source: String, location: SourceLocation, message: String, lineText: String) {
    self.source = source
    self.location = location
    self.message = message
    self.lineText = lineText
  }

  /// `FILE:LINE:COLUMN: error: MESSAGE`, the line, and a caret under the column. A tab before
  /// the column is repeated as a tab in the caret line so that the caret lines up.
  public func rendered() -> String {
    var caret = ""
    var remaining = max(0, location.column - 1)
    for ch in lineText {
      if remaining == 0 { break }
      caret.append(ch == "\t" ? "\t" : " ")
      remaining -= 1
    }
    if remaining > 0 { caret += String(repeating: " ", count: remaining) }
    return "\(source):\(location.line):\(location.column): error: \(Self.printable(message))\n\(Self.printable(lineText))\n\(caret)^\n"
  }

  /// Text as a terminal can show it (the message quotes the file too): control characters (but
  /// tabs) become `�`, one character for one, so the caret still lines up.
  static func printable(_ line: String) -> String {
    var out = ""
    for ch in line {
      let control = ch.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\t") || ($0.value >= 0x7F && $0.value < 0xA0) }
      out.append(control ? "\u{FFFD}" : ch)
    }
    return out
  }

  public var description: String { rendered() }
}

/// Every problem found in one scenario file, in line order: the first ``ScenarioErrors/limit``
/// diagnostics, with the rest counted in ``omitted``.
public struct ScenarioErrors: Error, Hashable, Sendable, CustomStringConvertible {
  /// At most this many diagnostics are kept.
  public static let limit = 50

  /// The diagnostics, sorted by line then column.
  public var diagnostics: [Diagnostic]
  /// The file path or name, as the caller gave it.
  public var source: String
  /// How many more problems were found beyond ``limit`` (not shown).
  public var omitted: Int

  /// The problems found in `source`, given already sorted by line then column; `omitted` counts
  /// those beyond ``limit`` that were not kept.
  public init(diagnostics: [Diagnostic], source: String, omitted: Int = 0) {
    self.diagnostics = diagnostics
    self.source = source
    self.omitted = omitted
  }

  /// Every diagnostic rendered, then a last line `N error(s) in FILE`.
  public func rendered() -> String {
    var out = diagnostics.map { $0.rendered() }.joined()
    let n = diagnostics.count
    out += "\(n) \(n == 1 ? "error" : "errors") in \(source)"
    if omitted > 0 { out += " (and \(omitted) more not shown)" }
    return out + "\n"
  }

  public var description: String { rendered() }
}
