/// Something `sim-cli report` says about its input: a line it cannot take (an error: nothing is
/// reported), or a note (a last line cut short, duplicates counted once). Rendered in one place,
/// as compilers do: `FILE:LINE:COLUMN: error: …`.
struct ReportDiagnostic: Sendable, Equatable {
  enum Severity: String, Sendable {
    case error, note
  }

  /// The input as given on the command line (`<stdin>` for `-`).
  var file: String
  /// 1-based; nil for the file as a whole.
  var line: Int?
  /// 1-based, in characters; nil when the line as a whole is meant.
  var column: Int?
  var severity: Severity
  var message: String

  /// `shard-3.jsonl:17:42: error: expected ',' or '}', found 'x'`.
  var rendered: String {
    var place = file
    if let line { place += ":\(line)" }
    if line != nil, let column { place += ":\(column)" }
    return "\(place): \(severity.rawValue): \(message)\n"
  }
}
