import Simulator

/// One problem in a scenario file: where it is, what is wrong, and the line it is on.
///
///     let d = Diagnostic(source: "demo.scenario", location: SourceLocation(line: 3, column: 9),
///                        message: "unknown device 'ipad'; did you mean 'iPad'?", lineText: "at 1s   ipad sync",
///                        suggestion: "iPad")
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
  /// The `X` of a message's `; did you mean 'X'?` (the message still says it), for tools.
  public var suggestion: String?

  /// A diagnostic at `location` in `source`; `lineText` is that line as written, for the caret;
  /// `suggestion` is what the message suggests, if anything.
  public init(source: String, location: SourceLocation, message: String, lineText: String, suggestion: String? = nil) {
    self.source = source
    self.location = location
    self.message = message
    self.lineText = lineText
    self.suggestion = suggestion
  }

  /// The suggestion that ends `message` (`…; did you mean 'X'?` gives `X`), if any.
  static func suggestion(in message: String) -> String? {
    guard message.hasSuffix("'?") else { return nil }
    let body = message.dropLast(2)
    guard let quote = body.lastIndex(of: "'"), body[..<quote].hasSuffix("; did you mean ") else { return nil }
    let word = body[body.index(after: quote)...]
    return word.isEmpty ? nil : String(word)
  }

  /// `FILE:LINE:COLUMN: error: MESSAGE`, the line, and a caret under the column. A tab before
  /// the column is repeated as a tab in the caret line so that the caret lines up.
  ///
  /// Whatever the file, the result is small and safe to print: a line of more than 200
  /// characters is cut to 200 around the caret, with `…` where it was cut; a message or a source
  /// of more than 1,000 characters is cut, with `…`; control characters become `�`.
  public func rendered() -> String {
    let (line, caret) = excerpt()
    return "\(Self.shown(source)):\(location.line):\(location.column): error: \(Self.shown(message))\n\(line)\n\(caret)^\n"
  }

  public var description: String { rendered() }
}

extension Diagnostic {
  /// The diagnostic for tools (`check --format json`): `file`, `line`, `column`, `severity`
  /// (`error`), `message` and `suggestion` (or `null`). The file and the message are as
  /// ``rendered()`` shows them: cut when very long, control characters shown as `�`.
  package var json: JSONValue {
    [
      "file": .string(Self.shown(source)), "line": .int(Int64(location.line)), "column": .int(Int64(location.column)),
      "severity": "error", "message": .string(Self.shown(message)), "suggestion": suggestion.map { .string(Self.shown($0)) } ?? .null,
    ]
  }
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
    out += "\(n) \(n == 1 ? "error" : "errors") in \(Diagnostic.shown(source))"
    if omitted > 0 { out += " (and \(omitted) more not shown)" }
    return out + "\n"
  }

  public var description: String { rendered() }

  /// The errors for tools: `file`, `count` (every problem found), `omitted` (those beyond
  /// ``limit``) and `diagnostics` (each as ``Diagnostic/json``), in line order.
  package var json: JSONValue {
    [
      "file": .string(Diagnostic.shown(source)), "count": .int(Int64(diagnostics.count + omitted)), "omitted": .int(Int64(omitted)),
      "diagnostics": .array(diagnostics.map(\.json)),
    ]
  }
}
